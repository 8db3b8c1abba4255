"""Projects in the window: new/open/switch, immediate save after a run, recovery, archive, view mode."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QPlainTextEdit
from test_app_support import (
    close_window,
    fake_provider_entry,
    open_capped_with_three_exchanges,
    write_settings,
)

from desktop.app import DEMO_FIRST_PROMPT
from desktop.testing import FakeProvider, Turn

pytest_plugins = ["test_app_support"]  # fixtures: fake, make_context, open_window


def _send(qtbot: Any, node: Any, text: str) -> None:
    with qtbot.waitSignal(node.run_finished, timeout=10_000):
        node.submit(text)


def _saved_messages(project: Path, index: int = 0) -> list[str]:
    data = json.loads((project / "project.json").read_text(encoding="utf-8"))
    return [m["content"] for m in data["nodes"][index]["data"]["conversation"]["messages"]]


def test_a_run_is_saved_as_soon_as_it_finishes(qtbot: Any, open_window: Any, fake: FakeProvider,
                                               tmp_path: Path) -> None:
    project, config = tmp_path / "p", tmp_path / "c"
    write_settings(config, fake_provider_entry(fake), default="fake")
    window = open_window(project, config)
    fake.script(Turn(text="saved right away"))
    _send(qtbot, window.nodes()[0], "persist me")
    # checked at once: the 1 s debounce has not fired, the save on run_finished has
    assert _saved_messages(project) == ["persist me", "saved right away"]


def test_switching_projects_saves_and_restores(qtbot: Any, open_window: Any, fake: FakeProvider,
                                               tmp_path: Path) -> None:
    one, two, config = tmp_path / "one", tmp_path / "two", tmp_path / "c"
    write_settings(config, fake_provider_entry(fake), default="fake")
    window = open_window(one, config)
    first_id = window.nodes()[0].node_id
    fake.script(Turn(text="answer in one"))
    _send(qtbot, window.nodes()[0], "question in one")
    window.add_node()

    window.open_project(two)  # the menu's QFileDialog ends here
    assert window.project_dir == two.resolve()
    assert len(window.nodes()) == 1 and window.nodes()[0].conversation.messages == []
    assert window.context.tools_for(object())  # the tools now sandbox the new folder
    assert window.context.project_dir == two.resolve()
    assert (two / "project.json").is_file()

    window.open_project(one)
    nodes = window.nodes()
    assert len(nodes) == 2 and nodes[0].node_id == first_id
    assert [m.content for m in nodes[0].conversation.messages] == ["question in one", "answer in one"]


def test_new_project_in_demo_mode_has_two_nodes(qtbot: Any, open_window: Any, tmp_path: Path) -> None:
    window = open_window(tmp_path / "demo", tmp_path / "c", demo=True)
    assert len(window.nodes()) == 2
    # The app's name ends the title, so Qt does not add it a second time (its display name).
    assert window.windowTitle() == "demo (offline demo) — Chat Nodes"
    window.new_project(tmp_path / "another")
    assert len(window.nodes()) == 2


def test_demo_tour_is_one_enter_away(qtbot: Any, open_window: Any, tmp_path: Path) -> None:
    window = open_window(tmp_path / "demo", tmp_path / "c", demo=True)
    tour, scratch = window.nodes()
    assert (tour.title, scratch.title) == ("Tour of Chat Nodes", "Scratchpad")
    box = tour.findChild(QPlainTextEdit, "chatInput")
    assert box.toPlainText() == DEMO_FIRST_PROMPT
    assert scratch.findChild(QPlainTextEdit, "chatInput").toPlainText() == ""
    qtbot.keyClick(box, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: "Welcome to Chat Nodes" in tour.export_markdown(), timeout=15_000)
    assert box.toPlainText() == ""


def test_switching_is_refused_when_the_current_project_cannot_be_saved(
        qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    one, two, config = tmp_path / "one", tmp_path / "two", tmp_path / "c"
    write_settings(config, fake_provider_entry(fake), default="fake")
    window = open_window(one, config)
    fake.script(Turn(text="unsaved answer"))
    _send(qtbot, window.nodes()[0], "unsaved question")

    def disk_full(project: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(window.store, "save", disk_full)
    window.open_project(two)
    assert window.project_dir == one.resolve()
    kept = [m.content for m in window.nodes()[0].conversation.messages]
    assert kept == ["unsaved question", "unsaved answer"]
    banner = window.banner_area.find("projectSwitchBanner")
    assert banner is not None and "could not be saved" in banner.text()
    assert not (two / "project.json").exists()


def test_corrupt_file_with_a_good_backup_is_recovered(qtbot: Any, open_window: Any, fake: FakeProvider,
                                                      tmp_path: Path) -> None:
    project, config = tmp_path / "p", tmp_path / "c"
    write_settings(config, fake_provider_entry(fake), default="fake")
    window = open_window(project, config)
    fake.script(Turn(text="kept"))
    _send(qtbot, window.nodes()[0], "important")
    assert window.save_project()  # the previous good file becomes project.json.bak
    close_window(qtbot, window)
    (project / "project.json").write_bytes(b"\x00\x01 broken")

    again = open_window(project, config)
    banner = again.banner_area.find("projectCorruptBanner")
    assert banner is not None and "restored" in banner.text()
    assert [m.content for m in again.nodes()[0].conversation.messages] == ["important", "kept"]
    assert list(project.glob("project.json.corrupt-*"))


def test_history_over_the_cap_is_archived_and_exported(qtbot: Any, open_window: Any, fake: FakeProvider,
                                                       tmp_path: Path) -> None:
    project, config = tmp_path / "p", tmp_path / "c"
    window, node = open_capped_with_three_exchanges(qtbot, open_window, fake, project, config)
    assert window.save_project()
    archive = project / ".chatnodes" / "archive" / f"{node.node_id}.jsonl"
    assert archive.is_file() and "question 0" in archive.read_text(encoding="utf-8")
    assert "question 0" not in (project / "project.json").read_text(encoding="utf-8")
    exported = window.export_conversation(tmp_path / "all.md", node)
    assert exported is not None and "question 0" in exported.read_text(encoding="utf-8")


def test_tabbed_mode_is_remembered(qtbot: Any, open_window: Any, tmp_path: Path) -> None:
    project, config = tmp_path / "p", tmp_path / "c"
    window = open_window(project, config)
    window.add_node()
    window.set_tabbed(True)
    close_window(qtbot, window)
    again = open_window(project, config)
    assert again.is_tabbed() and again.act_tabbed.isChecked()
    assert len(again.nodes()) == 2
