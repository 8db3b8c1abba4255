"""A project folder is untrusted data, and one window writes it: the window's side of issue 9.

A ``project.json`` that claims always-allow grants grants nothing (a banner says what it asked); a
second window on the same folder is read-only and can take over once the first one closed; a save
that trims history leaves the archive and the file with each message exactly once.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QPushButton
from test_app_support import (
    close_window,
    fake_provider_entry,
    open_capped_with_three_exchanges,
    write_settings,
)

from desktop.testing import FakeProvider, ToolCallSpec, Turn

pytest_plugins = ["test_app_support"]


def _send(qtbot: Any, node: Any, text: str) -> None:
    with qtbot.waitSignal(node.run_finished, timeout=10_000):
        node.submit(text)


def test_trim_is_applied_and_export_has_each_message_once(qtbot: Any, open_window: Any, fake: FakeProvider,
                                                          tmp_path: Path) -> None:
    project, config = tmp_path / "p", tmp_path / "c"
    window, node = open_capped_with_three_exchanges(qtbot, open_window, fake, project, config)
    assert window.save_project()
    msgs = node.conversation.messages
    assert any(m.role == "note" for m in msgs)
    assert "question 0" not in [m.content for m in msgs]
    assert not any("question 0" in t for t in node.transcript.message_texts())
    exported = window.export_conversation(tmp_path / "all.md", node)
    text = exported.read_text(encoding="utf-8")
    for i in range(3):
        assert text.count(f"question {i}") == 1
    assert window.save_project()  # a second save finds nothing more to trim and changes nothing
    assert [m.id for m in node.conversation.messages] == [m.id for m in msgs]


def test_a_project_file_cannot_grant_and_a_second_window_is_read_only(
        qtbot: Any, open_window: Any, tmp_path: Path) -> None:
    project, config = tmp_path / "p", tmp_path / "c"
    project.mkdir()
    (project / "project.json").write_text(json.dumps({"version": 1, "nodes": [{"id": "n", "data": {
        "always_allow": ["write_file"]}}]}), encoding="utf-8")
    window = open_window(project, config)
    assert window.nodes()[0].always_allow == []
    asks = window.banner_area.find("projectRequestsBanner")
    assert asks is not None and "write_file" in asks.text() and "Nothing was allowed" in asks.text()
    second = open_window(project, config)
    read_only = second.banner_area.find("projectReadOnlyBanner")
    assert read_only is not None and "does not save" in read_only.text()
    before = (project / "project.json").read_bytes()
    second.nodes()[0].set_title("Written from the second window")
    assert not second.save_project()
    assert (project / "project.json").read_bytes() == before
    # Take over is refused while the first window still has the project open...
    take_over = read_only.findChild(QPushButton, "takeOverButton")
    assert take_over is not None
    qtbot.mouseClick(take_over, Qt.MouseButton.LeftButton)
    assert second.projects.store is not None and second.projects.store.read_only
    assert "Close it there first" in second.banner_area.find("projectReadOnlyBanner").text()
    close_window(qtbot, window)
    # ...and works once it closed: the second window reopens the project as its writer.
    take_over = second.banner_area.find("projectReadOnlyBanner").findChild(QPushButton, "takeOverButton")
    qtbot.mouseClick(take_over, Qt.MouseButton.LeftButton)
    assert second.projects.store is not None and not second.projects.store.read_only
    assert second.banner_area.find("projectReadOnlyBanner") is None
    assert second.nodes()[0].title != "Written from the second window"  # the file's state, reloaded
    second.nodes()[0].set_title("Mine now")
    assert second.save_project()
    close_window(qtbot, second)
    third = open_window(project, config)
    assert third.banner_area.find("projectReadOnlyBanner") is None
    assert third.banner_area.find("projectRequestsBanner") is None  # the file no longer asks
    assert third.nodes()[0].title == "Mine now"


def test_always_allow_on_a_card_is_the_users_grant_and_survives_a_reopen(
        qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path) -> None:
    project, config = tmp_path / "p", tmp_path / "c"
    write_settings(config, fake_provider_entry(fake), default="fake")
    window = open_window(project, config)
    node = window.nodes()[0]
    fake.script(Turn(tool_calls=[ToolCallSpec("write_file", {"path": "a.txt", "content": "one"})]),
                Turn(text="written"))
    node.submit("write a.txt")
    qtbot.waitUntil(lambda: bool(node.transcript.pending_permission_cards()), timeout=10_000)
    card = node.transcript.pending_permission_cards()[0]
    with qtbot.waitSignal(node.run_finished, timeout=10_000):
        qtbot.mouseClick(card.findChild(QPushButton, "alwaysAllowButton"), Qt.MouseButton.LeftButton)
    assert node.always_allow == ["write_file"]
    assert window.save_project()
    data = json.loads((project / "project.json").read_text(encoding="utf-8"))
    assert data["nodes"][0]["data"]["always_allow"] == []  # never in the project's own file
    grants = json.loads((config / "grants.json").read_text(encoding="utf-8"))
    assert "write_file" in json.dumps(grants)
    close_window(qtbot, window)
    again = open_window(project, config)
    assert again.nodes()[0].always_allow == ["write_file"]


def test_a_lone_surrogate_in_a_node_never_stops_a_save_or_an_export(
        qtbot: Any, open_window: Any, tmp_path: Path) -> None:
    from desktop.core.chat.conversation import append_message

    project, config = tmp_path / "p", tmp_path / "c"
    window = open_window(project, config)
    node = window.nodes()[0]
    append_message(node.conversation, "user", "cut emoji \ud83d here")
    assert window.save_project()
    saved = (project / "project.json").read_text(encoding="utf-8")
    conversation = json.loads(saved)["nodes"][0]["data"]["conversation"]
    assert conversation["messages"][-1]["content"] == "cut emoji \ufffd here"
    exported = window.export_conversation(tmp_path / "x.md", node)
    assert exported is not None
    assert "cut emoji" in exported.read_text(encoding="utf-8")
