"""Every priced response of a real send reaches ``<config>/usage.jsonl`` (issue 13's ledger), once."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QPushButton
from test_app_support import fake_provider_entry, write_settings

from desktop.testing import FakeProvider, ToolCallSpec, Turn

pytest_plugins = ["test_app_support"]


def _send(qtbot: Any, node: Any, text: str) -> None:
    with qtbot.waitSignal(node.run_finished, timeout=10_000):
        node.submit(text)


def _lines(config: Path) -> list[dict[str, Any]]:
    path = config / "usage.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_each_response_of_a_tool_loop_is_one_ledger_line(qtbot: Any, open_window: Any, fake: FakeProvider,
                                                         tmp_path: Path) -> None:
    project, config = tmp_path / "p", tmp_path / "c"
    write_settings(config, fake_provider_entry(fake), default="fake", model="gpt-4o-mini")
    window = open_window(project, config)
    node = window.nodes()[0]
    node.set_title("Ledger node")
    usage = {"input": 100_000, "output": 10_000, "cache_read": 50_000, "cache_write": 0}
    fake.script(Turn(tool_calls=[ToolCallSpec("list_dir", {})], usage=usage, model="gpt-4o-mini"),
                Turn(text="done", usage=usage, model="gpt-4o-mini"))
    _send(qtbot, node, "look around")
    lines = _lines(config)
    assert len(lines) == 2  # two model calls in one run, each once
    line = lines[0]
    assert line["provider"] == "fake" and line["model"] == "gpt-4o-mini"
    assert line["node"] == node.node_id and line["node_title"] == "Ledger node"
    assert Path(line["project"]) == project.resolve()
    assert (line["input"], line["output"], line["cache_read"]) == (100_000, 10_000, 50_000)
    # gpt-4o-mini: $0.15/M input, $0.075/M cache read, $0.60/M output
    assert line["usd"] == pytest.approx(0.015 + 0.00375 + 0.006)
    assert line["saved_usd"] == pytest.approx(0.00375) and line["estimated"] is False
    assert node.cost().usd == pytest.approx(2 * line["usd"])  # the chip and the ledger agree


def test_the_offline_demo_never_reaches_the_ledger(qtbot: Any, open_window: Any, tmp_path: Path) -> None:
    window = open_window(tmp_path / "p", tmp_path / "c", demo=True)
    window.context.stop_demo_server()
    window.context.start_demo(tokens_per_second=None)  # the same scripted demo, at full speed
    node = window.nodes()[1]  # the scratchpad: the tour's node has its prompt waiting
    node.submit("hello")  # the demo's first answer asks to write a note: deny it
    qtbot.waitUntil(lambda: bool(node.transcript.pending_permission_cards()), timeout=10_000)
    card = node.transcript.pending_permission_cards()[0]
    with qtbot.waitSignal(node.run_finished, timeout=10_000):
        qtbot.mouseClick(card.findChild(QPushButton, "denyButton"), Qt.MouseButton.LeftButton)
    assert [m.usage is not None for m in node.conversation.messages if m.role == "assistant"] == [True]
    assert _lines(tmp_path / "c") == []
