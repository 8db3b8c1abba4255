"""Numbers that agree (issue 25, item 5): the answer's line counts the output while it streams and after
Stop, a node without a response costs $0.00, the status bar says it sums the project."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QPushButton
from test_app_support import write_settings

from desktop.testing import FakeProvider, Turn

pytest_plugins = ["test_app_support"]  # fixtures: fake, make_context, open_window


def _meta(node: Any) -> str:
    labels = [label.text() for label in node.findChildren(QLabel, "messageMeta") if label.text()]
    return labels[-1] if labels else ""


def test_the_answer_line_counts_while_streaming_and_after_stop(
    qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path
) -> None:
    provider = {"id": "fake", "name": "Fake", "api": "anthropic", "base_url": fake.anthropic_base_url,
                "needs_key": False, "key_env": None, "models": ["claude-sonnet-4-5"]}
    write_settings(tmp_path / "config", provider, default="fake", model="claude-sonnet-4-5")
    window = open_window(tmp_path / "project", tmp_path / "config")
    node = window.nodes()[0]
    usage = {"input": 2000, "output": 900, "cache_read": 0, "cache_write": 0}
    fake.script(Turn(text="token " * 900, usage=usage, tokens_per_second=200))
    node.submit("tell me a long story")
    # Anthropic reports 1 output token when the stream starts; the line counts what arrived since.
    qtbot.waitUntil(lambda: "~" in _meta(node) and "2k in" in _meta(node), timeout=10_000)
    assert " · 1 out" not in _meta(node)
    with qtbot.waitSignal(node.run_finished, timeout=10_000):
        qtbot.mouseClick(node.findChild(QPushButton, "sendButton"), Qt.MouseButton.LeftButton)  # Stop
    answer = node.conversation.messages[-1]
    assert answer.stopped and answer.usage is not None and answer.usage.output_tokens == 1
    line = _meta(node)
    assert " · ~" in line and " out" in line and " · 1 out" not in line, line
    shown = int(line.split("~")[1].split(" out")[0])
    assert shown == -(-len(answer.content) // 4)  # the running estimate of what was kept


def test_a_node_without_a_response_costs_nothing_and_the_chip_names_the_project(
    qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path
) -> None:
    provider = {"id": "fake", "name": "Fake", "api": "openai", "base_url": fake.openai_base_url,
                "needs_key": False, "key_env": None, "models": ["gpt-4o-mini"]}
    write_settings(tmp_path / "config", provider, default="fake", model="gpt-4o-mini")
    window = open_window(tmp_path / "project", tmp_path / "config")
    node = window.nodes()[0]
    assert node.findChild(QLabel, "costChip").text() == "$0.00"  # not "n/a": that means "no price"
    chip = window.findChild(QLabel, "sessionCostLabel")
    assert chip.text() == "Project $0.00"
    assert chip.toolTip().startswith("Every conversation of this project")
    assert "offline demo answers are not recorded" in chip.toolTip()
