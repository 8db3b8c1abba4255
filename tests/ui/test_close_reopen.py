"""Closing a node never loses it (issue 25 #1): ×, Node → Close and Ctrl+W move it to "Recently
closed"; Ctrl+Shift+T / Node → Reopen bring it back where it was; deleting is a separate, confirmed step;
after a close the keys go to the next node's input, never to a title field."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from first_hour_support import click_close_button, focus, menu_action, open_with_fake, press, seed, trigger
from PySide6.QtCore import QRect, Qt
from PySide6.QtWidgets import QApplication, QMessageBox, QPushButton

from desktop.core.chat.versions import versions_at
from desktop.testing import FakeProvider, Turn

pytest_plugins = ["test_app_support"]  # fixtures: fake, open_window


def _saved(project: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((project / "project.json").read_text(encoding="utf-8"))
    return data


def _send(qtbot: Any, node: Any, text: str) -> None:
    node.chat_input.setFocus()
    qtbot.keyClicks(node.chat_input, text)
    with qtbot.waitSignal(node.run_finished, timeout=10_000):
        qtbot.keyClick(node.chat_input, Qt.Key.Key_Return)


def test_x_keeps_the_node_and_ctrl_shift_t_brings_it_back_where_it_was(
    qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path
) -> None:
    window = open_with_fake(open_window, fake, tmp_path)
    first = window.nodes()[0]
    node = window.add_node()
    window.subwindow_of(node).setGeometry(QRect(40, 30, 420, 380))
    fake.script(Turn(text="first answer"), Turn(text="second answer"))
    _send(qtbot, node, "question")
    with qtbot.waitSignal(node.run_finished, timeout=10_000):
        node.versions.regenerate(node.conversation.messages[1].id)  # a second version of the answer
    node.allow_always("write_file")
    node.model_choice.set_model("gpt-4o-mini")
    node_id, messages = node.node_id, [m.content for m in node.conversation.messages]
    click_close_button(qtbot, window.subwindow_of(node))
    qtbot.waitUntil(lambda: node_id not in [n.node_id for n in window.nodes()], timeout=10_000)
    assert window.save_project()
    saved = _saved(tmp_path / "project")
    assert [n["id"] for n in saved["nodes"]] == [first.node_id]
    (closed,) = saved["closed"]  # kept with its whole history, not deleted
    assert closed["id"] == node_id and closed["data"]["conversation"]["messages"]
    assert isinstance(closed["closedAt"], int)

    press(qtbot, "Ctrl+Shift+T", window.nodes()[0].chat_input)
    back = window.node_area.node(node_id)
    assert back is not None and window.active_node() is back
    assert QApplication.focusWidget() is back.chat_input
    assert window.subwindow_of(back).geometry() == QRect(40, 30, 420, 380)
    assert [m.content for m in back.conversation.messages] == messages
    assert (back.provider, back.model) == (node.provider, "gpt-4o-mini")
    assert back.always_allow == ["write_file"]
    assert versions_at(back.conversation, back.conversation.messages[1].id) == (2, 2)  # both answers
    assert window.save_project()
    assert "closed" not in _saved(tmp_path / "project")
    press(qtbot, "Ctrl+Shift+T", back.chat_input)  # nothing left to reopen: nothing happens
    assert len(window.nodes()) == 2


def test_node_close_and_reopen_menu_actions_and_the_sidebar_list(
    qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path
) -> None:
    window = open_with_fake(open_window, fake, tmp_path)
    keep = seed(window, "Keep me", "q", "a")
    other = seed(window, "Other", "q2", "a2")
    focus(window, keep)
    trigger(window, "closeNodeAction")
    assert keep.node_id not in [n.node_id for n in window.nodes()]
    press(qtbot, "Ctrl+B", window.active_node().chat_input)
    sidebar = window.nav.sidebar
    qtbot.waitUntil(lambda: sidebar.closed.count() == 1, timeout=10_000)
    assert menu_action(window, "sidebarAction").isChecked()
    item = sidebar.closed.item_of(keep.node_id)
    assert item is not None and "Keep me" in item.toolTip()
    assert "gpt-4o-mini" in item.toolTip() and "default model" not in item.toolTip()  # as an open row
    sidebar.closed.setCurrentItem(item)
    qtbot.mouseClick(sidebar.reopen_button, Qt.MouseButton.LeftButton)
    assert window.node_area.node(keep.node_id) is not None
    qtbot.waitUntil(lambda: sidebar.closed.count() == 0, timeout=10_000)
    focus(window, other)
    trigger(window, "closeNodeAction")
    trigger(window, "reopenNodeAction")
    assert window.node_area.node(other.node_id) is not None


def test_after_a_close_keys_go_to_the_next_input_and_escape_undoes_a_rename(
    qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path
) -> None:
    window = open_with_fake(open_window, fake, tmp_path)
    first = window.nodes()[0]
    second = seed(window, "Second", "q", "a")
    # The user once clicked the second node's title (renaming starts there), then went back to the first.
    qtbot.mouseClick(second.title_edit, Qt.MouseButton.LeftButton)
    focus(window, first)
    press(qtbot, "Ctrl+W", first.chat_input)
    qtbot.waitUntil(lambda: len(window.nodes()) == 1, timeout=10_000)
    assert QApplication.focusWidget() is second.chat_input
    qtbot.keyClicks(QApplication.focusWidget(), "hello")
    assert second.title == "Second" and second.chat_input.toPlainText() == "hello"

    # A rename begun by a click and cancelled with Escape puts the old title back.
    qtbot.mouseClick(second.title_edit, Qt.MouseButton.LeftButton)
    second.title_edit.selectAll()
    qtbot.keyClicks(second.title_edit, "Oops")
    qtbot.keyClick(second.title_edit, Qt.Key.Key_Escape)
    assert second.title_edit.text() == "Second" and second.title == "Second"
    assert QApplication.focusWidget() is second.chat_input
    assert window.subwindow_of(second).windowTitle() == "Second"

    # Node → Rename (F2): type, Enter keeps it and the keys go back to the message box.
    press(qtbot, "F2", second.chat_input)
    assert QApplication.focusWidget() is second.title_edit and second.title_edit.selectedText() == "Second"
    qtbot.keyClicks(second.title_edit, "Plans")
    qtbot.keyClick(second.title_edit, Qt.Key.Key_Return)
    assert second.title == "Plans" and window.subwindow_of(second).windowTitle() == "Plans"
    assert QApplication.focusWidget() is second.chat_input
    press(qtbot, "F2", second.chat_input)
    qtbot.keyClicks(second.title_edit, "Nope")
    qtbot.keyClick(second.title_edit, Qt.Key.Key_Escape)
    assert second.title == "Plans"


def _dialog(qtbot: Any) -> QMessageBox:
    found: list[QMessageBox] = []

    def shown() -> bool:
        found[:] = [w for w in QApplication.topLevelWidgets()
                    if isinstance(w, QMessageBox) and w.objectName() == "deleteNodeDialog" and w.isVisible()]
        return bool(found)

    qtbot.waitUntil(shown, timeout=10_000)
    return found[0]


def test_delete_for_good_asks_first_and_cancel_is_the_default(
    qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path
) -> None:
    window = open_with_fake(open_window, fake, tmp_path)
    project = tmp_path / "project"
    gone = seed(window, "Secret plans", "q", "a")
    gone_id = gone.node_id
    window.store.archive_messages(gone_id, gone.conversation.messages[:1])  # it has archived history
    window.close_node(gone)
    trigger(window, "sidebarAction")
    sidebar = window.nav.sidebar
    qtbot.waitUntil(lambda: sidebar.closed.count() == 1, timeout=10_000)
    sidebar.closed.setCurrentItem(sidebar.closed.item_of(gone_id))
    qtbot.mouseClick(sidebar.delete_button, Qt.MouseButton.LeftButton)
    box = _dialog(qtbot)
    assert box.defaultButton() is box.findChild(QPushButton, "cancelDeleteButton")
    qtbot.keyClick(box, Qt.Key.Key_Return)  # Enter takes the default: Cancel
    qtbot.waitUntil(lambda: not box.isVisible(), timeout=10_000)
    assert window.projects.closed.find(gone_id) is not None
    qtbot.mouseClick(sidebar.delete_button, Qt.MouseButton.LeftButton)
    box = _dialog(qtbot)
    qtbot.mouseClick(box.findChild(QPushButton, "confirmDeleteButton"), Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.projects.closed.find(gone_id) is None, timeout=10_000)
    qtbot.waitUntil(lambda: sidebar.closed.count() == 0, timeout=10_000)
    saved = _saved(project)
    assert gone_id not in json.dumps(saved)
    assert not window.store.archive_path(gone_id).exists()

    # Node → Delete node… on an open node: asked, then gone for good.
    victim = seed(window, "Victim", "q", "a")
    focus(window, victim)
    trigger(window, "deleteNodeAction")
    box = _dialog(qtbot)
    qtbot.mouseClick(box.findChild(QPushButton, "confirmDeleteButton"), Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.node_area.node(victim.node_id) is None, timeout=10_000)
    assert window.projects.closed.find(victim.node_id) is None
    assert victim.node_id not in json.dumps(_saved(project))


def test_closed_nodes_survive_a_restart_and_only_the_last_twenty_stay(
    qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path
) -> None:
    from test_app_support import close_window

    from desktop.core.store import MAX_CLOSED

    window = open_with_fake(open_window, fake, tmp_path)
    ids = []
    for i in range(MAX_CLOSED + 1):
        node = seed(window, f"Closed {i}", f"question {i}", f"answer {i}")
        ids.append(node.node_id)
        trigger(window, "closeNodeAction") if window.active_node() is node else window.close_node(node)
    close_window(qtbot, window)
    again = open_with_fake(open_window, fake, tmp_path)
    kept = [s.id for s in again.projects.closed.states()]
    assert kept == ids[::-1][:MAX_CLOSED]  # most recently closed first
    archived = tmp_path / "project" / ".chatnodes" / "archive" / "closed" / f"{ids[0]}.json"
    assert archived.is_file() and "question 0" in archived.read_text(encoding="utf-8")
    press(qtbot, "Ctrl+Shift+T", again.nodes()[0].chat_input)
    assert again.active_node() is not None and again.active_node().node_id == ids[-1]
