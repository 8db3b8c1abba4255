"""Ctrl+F in a node (``findBar``) and the history archive made reachable (``archiveLink``), issue 27:
driven by keys and clicks; a search hit in the archive opens there."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from first_hour_support import append_message, focus, open_with_fake, press, seed
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QLabel, QLineEdit, QListView
from test_app_support import open_capped_with_three_exchanges
from test_search_panel import _in_viewport, _indexed

from desktop.testing import FakeProvider

pytest_plugins = ["test_app_support"]  # fixtures: fake, open_window


def test_ctrl_f_counts_the_matches_and_goes_through_them(
    qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path
) -> None:
    window = open_with_fake(open_window, fake, tmp_path)
    filler = [f"unrelated line {i}" for i in range(40)]
    node = seed(window, "Fruit", "a kiwi and another kiwi", "noted", *filler, "one more Kiwi here", "ok")
    focus(window, node)
    press(qtbot, "Ctrl+F", node.chat_input)
    bar = node.findChild(QLabel, "findCount").parent()
    assert bar.objectName() == "findBar" and bar.isVisible()
    box = node.findChild(QLineEdit, "findInput")
    assert box.hasFocus()
    qtbot.keyClicks(box, "kiwi")
    assert node.findChild(QLabel, "findCount").text() == "3 matches"
    qtbot.keyClick(box, Qt.Key.Key_Return)
    first = node.conversation.messages[0].id
    qtbot.waitUntil(lambda: _in_viewport(node, first), timeout=10_000)
    assert node.findChild(QLabel, "findCount").text().startswith("1 of 2 messages")
    qtbot.keyClick(box, Qt.Key.Key_Escape)
    assert not bar.isVisible()


def _click_link(qtbot: Any, label: QLabel) -> None:
    """Click the "show" link at the end of the label's text."""
    metrics = label.fontMetrics()
    prefix = label.text().split("<a")[0]
    x = label.contentsMargins().left() + metrics.horizontalAdvance(prefix) + metrics.horizontalAdvance("sh")
    qtbot.mouseClick(label, Qt.MouseButton.LeftButton, pos=QPoint(x, label.height() // 2))


def test_the_archive_link_loads_the_first_message_and_a_search_hit_opens_there(
    qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path
) -> None:
    window, node = open_capped_with_three_exchanges(qtbot, open_window, fake, tmp_path / "p", tmp_path / "c")
    assert window.save_project()
    archived = window.store.read_archive(node.node_id)
    assert archived and archived[0].content == "question 0"
    first_id = archived[0].id
    assert all(m.id != first_id for m in node.conversation.messages)
    link = node.findChild(QLabel, "archiveLink")
    qtbot.waitUntil(link.isVisible, timeout=10_000)
    assert f"{len(archived)} earlier message" in link.text() and "history archive" in link.text()

    # A search hit in the archive: the link is not needed, activating the hit loads it.
    _indexed(qtbot, window)
    focus(window, node)
    press(qtbot, "Ctrl+Shift+F", node.chat_input)
    box = window.findChild(QLineEdit, "searchInput")
    view = window.findChild(QListView, "searchResults")
    qtbot.keyClicks(box, '"question 0"')
    qtbot.waitUntil(lambda: any(view.model().hit(r).message_id == first_id
                                for r in range(view.model().rowCount())), timeout=10_000)
    row = next(r for r in range(view.model().rowCount()) if view.model().hit(r).message_id == first_id)
    assert view.model().hit(row).archived
    view.setFocus()
    for _ in range(row):
        qtbot.keyClick(view, Qt.Key.Key_Down)
    qtbot.keyClick(view, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: _in_viewport(node, first_id), timeout=10_000)
    assert not link.isVisible()
    assert all(m.id != first_id for m in node.conversation.messages)  # read-only: never back in the chat


def test_the_archive_link_pages_the_archive_in(
    qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path
) -> None:
    window, node = open_capped_with_three_exchanges(qtbot, open_window, fake, tmp_path / "p", tmp_path / "c")
    assert window.save_project()
    first_id = window.store.read_archive(node.node_id)[0].id
    link = node.findChild(QLabel, "archiveLink")
    qtbot.waitUntil(link.isVisible, timeout=10_000)
    _click_link(qtbot, link)
    qtbot.waitUntil(lambda: node.transcript.view_for(first_id) is not None and not link.isVisible(),
                    timeout=10_000)
    assert node.transcript.message_texts()[0] == "question 0"
    node.transcript.verticalScrollBar().setValue(0)  # the user scrolls to the very top
    qtbot.waitUntil(lambda: _in_viewport(node, first_id), timeout=10_000)


def test_a_long_archive_stays_at_the_top_once_scrolled_there_and_is_read_only(
    qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path
) -> None:
    window, node = open_capped_with_three_exchanges(qtbot, open_window, fake, tmp_path / "p", tmp_path / "c")
    for i in range(3, 40):  # 74 more messages, far more than one page and one screen
        append_message(node.conversation, "user", f"question {i} " + "y" * 300)
        append_message(node.conversation, "assistant", f"answer {i} " + "z" * 400)
    node.touch()
    assert window.save_project()
    archived = window.store.read_archive(node.node_id)
    assert len(archived) >= 70
    first_id = archived[0].id
    link = node.findChild(QLabel, "archiveLink")
    qtbot.waitUntil(link.isVisible, timeout=10_000)
    _click_link(qtbot, link)
    qtbot.waitUntil(lambda: node.transcript.view_for(first_id) is not None and not link.isVisible(),
                    timeout=10_000)
    bar = node.transcript.verticalScrollBar()
    bar.setValue(0)  # the user scrolls to the very top
    qtbot.waitUntil(lambda: _in_viewport(node, first_id), timeout=10_000)
    # The next change of the scroll range (here: the window grows) must leave the view where the user put it.
    old_max = bar.maximum()
    sub = window.subwindow_of(node)
    sub.resize(sub.width() - 120, sub.height())  # narrower: the messages wrap to more lines
    qtbot.waitUntil(lambda: bar.maximum() != old_max, timeout=10_000)
    assert bar.value() < 50 and _in_viewport(node, first_id)
    for msg in archived:
        view = node.transcript.view_for(msg.id)
        assert view is not None
        assert view.action_row is None or not view.action_row.isVisible()  # no Edit, Regenerate, Fork
