"""The node's ``tools_off`` preference: saved in project.json, read back, hostile values ignored; reopened
nodes keep their choice in the next request."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from test_app_support import close_window
from test_mcp_app import posts, stdio_entry, tool_names, wait_ready, write_mcp_settings

from desktop.core.store import new_node_state, project_from_dict, project_to_json
from desktop.testing import FakeProvider, Turn
from desktop.ui.node.tools import TOOLS_OFF_KEY, read_tools_off

pytest_plugins = ["test_app_support"]  # fixtures: fake, make_context, open_window


def test_tools_off_round_trips_through_the_project_format() -> None:
    from desktop.core.store import Project

    node = new_node_state("Chat")
    node.data_extra[TOOLS_OFF_KEY] = ["write_file", "mcp:files", "mcp__files__delete"]
    text = project_to_json(Project(version=1, nodes=[node], extra={}))
    back = project_from_dict(json.loads(text)).nodes[0]
    assert back.data_extra[TOOLS_OFF_KEY] == ["write_file", "mcp:files", "mcp__files__delete"]
    assert back.always_allow == []  # a preference, never a grant


def test_hostile_tools_off_values_are_ignored() -> None:
    assert read_tools_off({}) == frozenset()
    assert read_tools_off({TOOLS_OFF_KEY: "write_file"}) == frozenset()
    assert read_tools_off({TOOLS_OFF_KEY: [1, None, "", "x" * 301, "ok"]}) == frozenset({"ok"})
    assert len(read_tools_off({TOOLS_OFF_KEY: [f"t{i}" for i in range(5000)]})) == 1000


def test_reopened_node_keeps_its_switched_off_tools(qtbot: Any, open_window: Any, fake: FakeProvider,
                                                    tmp_path: Path) -> None:
    project, config = tmp_path / "project", tmp_path / "config"
    write_mcp_settings(config, fake, {"local": stdio_entry()})
    window = open_window(project, config)
    node = window.nodes()[0]
    node.node_tools.set_enabled("write_file", False)
    node.node_tools.set_enabled("mcp__local__echo", False)
    assert node.header.tools_button.text() == "Tools (2 off)"
    close_window(qtbot, window)

    window = open_window(project, config)
    wait_ready(qtbot, window, "local")
    node = window.nodes()[0]
    assert node.node_tools.tools_off == {"write_file", "mcp__local__echo"}
    fake.script(Turn(text="ok"))
    with qtbot.waitSignal(node.run_finished, timeout=10_000):
        node.submit("hi")
    names = tool_names(posts(fake)[-1])
    assert "read_file" in names and "write_file" not in names
    assert "mcp__local__add" in names and "mcp__local__echo" not in names
