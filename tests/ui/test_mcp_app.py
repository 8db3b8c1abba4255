"""MCP wired into the app, end to end with the real stdio test server (tests/mcp/servers).

Settings with a server → the window opens → the server is ready → a node's request carries its
``mcp__…`` tools → the model calls one → the permission card names server, tool and annotations →
Approve → the result reaches the transcript and the next request. Grants, the Tools menu, failures
and the window close (no process left) too.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QPushButton
from test_app_support import close_window, fake_provider_entry, write_settings

from desktop.testing import FakeProvider, ToolCallSpec, Turn
from desktop.testing.processes import wait_gone
from desktop.ui.node.chat_node import ChatNodeWidget
from desktop.ui.transcript.mcp_details import McpDetails

pytest_plugins = ["test_app_support"]  # fixtures: fake, make_context, open_window

SERVERS = Path(__file__).resolve().parents[1] / "mcp" / "servers"


def stdio_entry(**extra: Any) -> dict[str, Any]:
    return {"command": sys.executable, "args": [str(SERVERS / "stdio_server.py")], **extra}


def hostile_entry(mode: str) -> dict[str, Any]:
    return {"command": sys.executable, "args": [str(SERVERS / "hostile_server.py"), mode]}


def write_mcp_settings(config: Path, fake: FakeProvider, servers: dict[str, Any]) -> None:
    from desktop.core.config import SettingsStore, settings_from_dict

    raw = {"version": 1, "providers": [fake_provider_entry(fake)], "default_provider": "fake",
           "default_model": None, "mcpServers": servers}
    SettingsStore(config).save(settings_from_dict(raw))


def server_pid(window: Any, name: str) -> int:
    status = window.context.mcp.statuses()[name]
    for line in status.stderr_tail:
        match = re.search(r"test-stdio server starting pid=(\d+)", line)
        if match:
            return int(match.group(1))
    raise AssertionError(f"no pid line in {status.stderr_tail}")


def wait_ready(qtbot: Any, window: Any, name: str, timeout: int = 15_000) -> None:
    def ready() -> bool:
        status = window.context.mcp.statuses().get(name)
        return status is not None and status.state == "ready"

    qtbot.waitUntil(ready, timeout=timeout)


def posts(fake: FakeProvider) -> list[Any]:
    return [r for r in fake.requests if r.method == "POST"]


def tool_names(request: Any) -> list[str]:
    return [t["function"]["name"] for t in (request.json or {}).get("tools", [])]


def pending_card(qtbot: Any, node: ChatNodeWidget) -> Any:
    qtbot.waitUntil(lambda: bool(node.transcript.pending_permission_cards()), timeout=10_000)
    return node.transcript.pending_permission_cards()[0].permission


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    return tmp_path / "project", tmp_path / "config"


def test_settings_server_end_to_end(
    qtbot: Any, open_window: Any, fake: FakeProvider, dirs: Any
) -> None:
    project, config = dirs
    write_mcp_settings(config, fake, {"local": stdio_entry()})
    window = open_window(project, config)
    wait_ready(qtbot, window, "local")
    assert window.context.mcp.statuses()["local"].tool_count >= 5
    pid = server_pid(window, "local")
    node = window.nodes()[0]

    fake.script(Turn(tool_calls=[ToolCallSpec("mcp__local__echo", {"text": "hi there"})]),
                Turn(text="The server said hi there."))
    node.submit("call echo")
    card = pending_card(qtbot, node)
    details = card.findChild(McpDetails, "mcpDetails")
    assert details is not None
    shown = card.toPlainText()
    assert "MCP server \u201clocal\u201d" in shown and "tool \u201cecho\u201d" in shown
    assert "Echo the text back." in shown
    assert "destructive" in shown and "open-world" in shown
    assert '"text": "hi there"' in shown
    assert card.findChild(QPushButton, "alwaysAllowServerButton") is not None
    with qtbot.waitSignal(node.run_finished, timeout=15_000):
        card.approve_button.click()
    requests = posts(fake)
    assert "mcp__local__echo" in tool_names(requests[0])
    assert "mcp__local__add" in tool_names(requests[0])
    tool_msgs = [m for m in (requests[1].json or {})["messages"] if m.get("role") == "tool"]
    assert tool_msgs and tool_msgs[-1]["content"] == "hi there"
    call_id = node.conversation.messages[1].tool_calls[0].id
    assert "hi there" in node.transcript.card_for(call_id).toPlainText()

    close_window(qtbot, window)
    assert wait_gone(pid), "the stdio server outlived the window"


def _run_something_else_as_local(window: Any, config: Path) -> None:
    """Point the app server "local" at another command line (an edited entry) and reload the settings."""
    entry = stdio_entry()
    entry["args"] = [*entry["args"], "--other"]
    settings = json.loads((config / "settings.json").read_text())
    settings["mcpServers"]["local"] = entry
    (config / "settings.json").write_text(json.dumps(settings))
    window.context.settings = window.context.settings_store.load()


def test_always_allow_server_is_a_user_grant(qtbot: Any, open_window: Any, fake: FakeProvider,
                                             dirs: Any) -> None:
    project, config = dirs
    write_mcp_settings(config, fake, {"local": stdio_entry()})
    window = open_window(project, config)
    wait_ready(qtbot, window, "local")
    node = window.nodes()[0]
    fake.script(Turn(tool_calls=[ToolCallSpec("mcp__local__echo", {"text": "one"})]), Turn(text="ok"),
                Turn(tool_calls=[ToolCallSpec("mcp__local__add", {"a": 2, "b": 3})]), Turn(text="five"))
    node.submit("first")
    card = pending_card(qtbot, node)
    with qtbot.waitSignal(node.run_finished, timeout=15_000):
        card.findChild(QPushButton, "alwaysAllowServerButton").click()
    grants = json.loads((config / "grants.json").read_text())
    key = str(project.resolve())
    (granted,) = grants["projects"][key]["nodes"][node.node_id]["servers"]
    assert granted.startswith("local#")  # the server's name and what it runs
    with qtbot.waitSignal(node.run_finished, timeout=15_000):
        node.submit("second")  # runs without a card
    assert not node.transcript.pending_permission_cards()
    calls = [c for m in node.conversation.messages if m.role == "assistant" for c in (m.tool_calls or [])]
    assert [c.status for c in calls] == ["done", "done"]
    assert calls[1].result == "5"
    # The same name running something else (an edited command, a project's .mcp.json) is not granted.
    hub = window.context.mcp
    assert hub.grant_key("local") == granted
    _run_something_else_as_local(window, config)
    assert hub.grant_key("local") not in (None, granted)
    window.save_project()
    saved = (project / "project.json").read_text()
    assert "local" not in saved.replace("mcp__local__", "")  # no grant in the project file


def test_tools_menu_switches_a_server_off(
    qtbot: Any, open_window: Any, fake: FakeProvider, dirs: Any
) -> None:
    project, config = dirs
    write_mcp_settings(config, fake, {"local": stdio_entry()})
    window = open_window(project, config)
    wait_ready(qtbot, window, "local")
    node = window.nodes()[0]
    menu = node.node_tools.menu
    node.node_tools.fill_menu()
    actions = {a.objectName(): a for a in menu.actions() if a.objectName()}
    assert "builtin:read_file" in actions and "server:local" in actions and "tool:mcp__local__echo" in actions
    assert node.header.tools_button.objectName() == "toolsButton"
    actions["server:local"].setChecked(False)  # what a click on the checkable action does
    fake.script(Turn(text="no tools of local"))
    with qtbot.waitSignal(node.run_finished, timeout=10_000):
        node.submit("hello")
    names = tool_names(posts(fake)[-1])
    assert "read_file" in names and not any(n.startswith("mcp__local__") for n in names)
    window.save_project()
    data = json.loads((project / "project.json").read_text())
    assert data["nodes"][0]["data"]["tools_off"] == ["mcp:local"]
    node.node_tools.fill_menu()
    again = {a.objectName(): a for a in menu.actions() if a.objectName()}
    again["server:local"].setChecked(True)
    node.node_tools.fill_menu()  # the server's tools are listed again once it is on
    tools = {a.objectName(): a for a in menu.actions() if a.objectName()}
    tools["tool:mcp__local__add"].setChecked(False)
    fake.script(Turn(text="echo only"))
    with qtbot.waitSignal(node.run_finished, timeout=10_000):
        node.submit("again")
    names = tool_names(posts(fake)[-1])
    assert "mcp__local__echo" in names and "mcp__local__add" not in names


def test_send_waits_for_a_starting_server(
    qtbot: Any, open_window: Any, fake: FakeProvider, dirs: Any
) -> None:
    project, config = dirs
    write_mcp_settings(config, fake, {"local": stdio_entry()})
    window = open_window(project, config)
    node = window.nodes()[0]
    fake.script(Turn(text="answer"))
    with qtbot.waitSignal(node.run_finished, timeout=20_000):
        node.submit("right away")  # before the server is ready (the SDK import alone takes ~1 s)
    assert "mcp__local__echo" in tool_names(posts(fake)[0])
    assert not node.header.tools_status.isVisible()


def test_failing_server_shows_a_banner_naming_it(qtbot: Any, open_window: Any, fake: FakeProvider,
                                                 dirs: Any) -> None:
    project, config = dirs
    write_mcp_settings(config, fake, {"garbage": hostile_entry("garbage"), "broken": hostile_entry("die"),
                                      "local": stdio_entry()})
    window = open_window(project, config)
    hub = window.context.mcp
    qtbot.waitUntil(lambda: all(hub.statuses().get(n) is not None and hub.statuses()[n].state == "failed"
                                for n in ("garbage", "broken")), timeout=15_000)
    assert "not JSON-RPC" in (hub.statuses()["garbage"].reason or "")
    banner = window.banner_area.find("mcpFailedBanner")
    assert banner is not None
    assert "\u201cbroken\u201d" in banner.text() and "\u201cgarbage\u201d" in banner.text()
    assert "MY_SERVICE_TOKEN is not set" in banner.text()
    assert banner.findChild(QPushButton, "mcpOpenSettingsButton") is not None
    wait_ready(qtbot, window, "local")
    fake.script(Turn(text="fine"))
    node = window.nodes()[0]
    with qtbot.waitSignal(node.run_finished, timeout=10_000):
        node.submit("still works")  # the failed server never blocks a node
    assert "mcp__local__echo" in tool_names(posts(fake)[-1])


def test_stop_while_waiting_for_servers_drops_the_send(qtbot: Any, open_window: Any, fake: FakeProvider,
                                                       dirs: Any) -> None:
    project, config = dirs
    write_mcp_settings(config, fake, {"local": stdio_entry()})
    window = open_window(project, config)
    node = window.nodes()[0]
    node.submit("right away")
    qtbot.waitUntil(node.header.tools_status.isVisible, timeout=10_000)
    assert "Waiting for MCP servers to start: local" in node.header.tools_status.text()
    node.send_button.click()  # "Stop"
    qtbot.waitUntil(lambda: not node.is_busy(), timeout=10_000)
    assert not node.header.tools_status.isVisible()
    wait_ready(qtbot, window, "local")
    assert posts(fake) == []  # nothing was sent


def test_an_mcp_image_reaches_an_anthropic_model_from_the_app(
        qtbot: Any, open_window: Any, dirs: Any) -> None:
    from desktop.testing import FakeProvider

    project, config = dirs
    with FakeProvider() as anthropic:
        entry = fake_provider_entry(anthropic)
        entry.update(api="anthropic", base_url=anthropic.anthropic_base_url, id="claude")
        write_settings(config, entry, default="claude", model="claude-sonnet-4-5")
        settings = json.loads((config / "settings.json").read_text())
        settings["mcpServers"] = {"local": {**stdio_entry(), "approval": "never"}}
        (config / "settings.json").write_text(json.dumps(settings))
        window = open_window(project, config)
        wait_ready(qtbot, window, "local")
        node = window.nodes()[0]
        anthropic.script(Turn(tool_calls=[ToolCallSpec("mcp__local__image", {})]), Turn(text="a red dot"))
        with qtbot.waitSignal(node.run_finished, timeout=15_000):
            node.submit("show me")
        follow_up = [r for r in anthropic.requests if r.method == "POST"][-1].json
        blocks = [b for m in follow_up["messages"] if isinstance(m["content"], list) for b in m["content"]]
        results = [b for b in blocks if b.get("type") == "tool_result"]
        assert any(part.get("type") == "image" for part in results[-1]["content"])


def test_always_allow_an_mcp_tool_is_bound_to_what_its_server_runs(
        qtbot: Any, open_window: Any, fake: FakeProvider, dirs: Any) -> None:
    project, config = dirs
    write_mcp_settings(config, fake, {"local": stdio_entry()})
    window = open_window(project, config)
    wait_ready(qtbot, window, "local")
    node = window.nodes()[0]
    fake.script(Turn(tool_calls=[ToolCallSpec("mcp__local__echo", {"text": "one"})]), Turn(text="ok"),
                Turn(tool_calls=[ToolCallSpec("mcp__local__echo", {"text": "two"})]), Turn(text="ok"))
    node.submit("first")
    card = pending_card(qtbot, node)
    with qtbot.waitSignal(node.run_finished, timeout=15_000):
        card.findChild(QPushButton, "alwaysAllowButton").click()
    (grant,) = node.always_allow
    assert grant.startswith("mcp__local__echo#") and grant == node.node_tools.grant_name("mcp__local__echo")
    with qtbot.waitSignal(node.run_finished, timeout=15_000):
        node.submit("second")  # the same server: no card
    assert not node.transcript.pending_permission_cards()
    _run_something_else_as_local(window, config)
    assert node.node_tools.grant_name("mcp__local__echo") != grant  # another server under that name asks
    assert node.node_tools.grant_name("write_file") == "write_file"
