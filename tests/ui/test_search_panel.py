"""The search panel (issue 27): Ctrl+Shift+F, type in ``searchInput``, hits from another node, another
project, a version not shown and a closed node; Enter or a double-click opens the message in its node's
viewport; FTS syntax never shows an error."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from first_hour_support import focus, menu_action, open_with_fake, press, seed
from PySide6.QtCore import QPoint, QRect, Qt
from PySide6.QtWidgets import QLabel, QLineEdit, QListView
from test_close_reopen import _send

from desktop.testing import FakeProvider, Turn

pytest_plugins = ["test_app_support"]  # fixtures: fake, open_window


def _indexed(qtbot: Any, window: Any) -> None:
    """Save the project and wait until the index took it in."""
    assert window.save_project()
    qtbot.waitUntil(lambda: window.search.service is not None, timeout=10_000)
    qtbot.waitUntil(lambda: not window.search.index_waiting and window.search.service.wait_idle(0),
                    timeout=20_000)


def _search(qtbot: Any, window: Any, text: str) -> QListView:
    """Open the panel with Ctrl+Shift+F and type ``text``; the results view once they answer it."""
    press(qtbot, "Ctrl+Shift+F", window.active_node().chat_input)
    box = window.findChild(QLineEdit, "searchInput")
    assert box is not None and box.isVisible() and box.hasFocus()
    qtbot.keyClicks(box, text)
    view = window.findChild(QListView, "searchResults")
    qtbot.waitUntil(lambda: view.model().rowCount() > 0, timeout=10_000)
    return view


def _hit(view: QListView, row: int = 0) -> Any:
    return view.model().hit(row)


def _in_viewport(node: Any, message_id: str) -> bool:
    view = node.transcript.view_for(message_id)
    if view is None or not view.isVisible():
        return False
    port = node.transcript.viewport()
    top_left = view.mapTo(port, QPoint(0, 0))
    return QRect(top_left, view.size()).intersects(port.rect())


def test_a_hit_in_another_node_of_another_project_opens_there(
    qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path
) -> None:
    window = open_with_fake(open_window, fake, tmp_path, "first")
    filler = [f"filler message number {i} about nothing in particular" for i in range(60)]
    target = seed(window, "Marsupials", "tell me about the quokka", "The quokka lives on Rottnest Island.",
                  *filler)
    target_id, message_id = target.node_id, target.conversation.messages[1].id
    _indexed(qtbot, window)
    window.open_project(tmp_path / "second")  # another project: the hit must bring the first back
    qtbot.waitUntil(lambda: bool(window.nodes()), timeout=10_000)
    focus(window, window.nodes()[0])
    assert menu_action(window, "findAllAction").text().startswith("Find in all chats")

    view = _search(qtbot, window, "rottnest")
    hit = _hit(view)
    assert (hit.node_id, hit.message_id, hit.node_title) == (target_id, message_id, "Marsupials")
    assert "Rottnest" in hit.snippet.text and hit.snippet.spans
    qtbot.keyClick(window.findChild(QLineEdit, "searchInput"), Qt.Key.Key_Return)

    qtbot.waitUntil(lambda: window.project_dir == (tmp_path / "first").resolve(), timeout=10_000)
    node = window.node_area.node(target_id)
    assert node is not None and window.active_node() is node
    qtbot.waitUntil(lambda: _in_viewport(node, message_id), timeout=10_000)


def test_a_closed_node_is_reopened_by_a_double_click(
    qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path
) -> None:
    window = open_with_fake(open_window, fake, tmp_path)
    gone = seed(window, "Closed one", "what is a pangolin", "A scaly anteater-like mammal.")
    node_id, message_id = gone.node_id, gone.conversation.messages[1].id
    window.close_node(gone)
    _indexed(qtbot, window)
    focus(window, window.nodes()[0])
    view = _search(qtbot, window, '"scaly anteater"')  # a phrase
    assert _hit(view).node_id == node_id
    rect = view.visualRect(view.model().index(0, 0))
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())  # a double-click:
    qtbot.mouseDClick(view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())  # press, release, press
    qtbot.waitUntil(lambda: window.node_area.node(node_id) is not None, timeout=10_000)
    qtbot.waitUntil(lambda: _in_viewport(window.node_area.node(node_id), message_id), timeout=10_000)


def test_a_hit_in_a_version_not_shown_switches_to_it(
    qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path
) -> None:
    window = open_with_fake(open_window, fake, tmp_path)
    node = window.nodes()[0]
    fake.script(Turn(text="The first answer mentions a platypus."), Turn(text="The second answer is plain."))
    _send(qtbot, node, "an animal please")
    first_id = node.conversation.messages[1].id
    with qtbot.waitSignal(node.run_finished, timeout=10_000):
        node.versions.regenerate(first_id)
    assert "platypus" not in node.conversation.messages[1].content
    _indexed(qtbot, window)
    focus(window, node)

    view = _search(qtbot, window, "platyp")  # a prefix, as typed
    hit = _hit(view)
    assert hit.message_id == first_id and not hit.on_active_path
    view.setFocus()
    qtbot.keyClick(view, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: "platypus" in node.conversation.messages[1].content, timeout=10_000)
    qtbot.waitUntil(lambda: _in_viewport(node, first_id), timeout=10_000)


def test_fts_syntax_never_shows_an_error(
    qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path
) -> None:
    window = open_with_fake(open_window, fake, tmp_path)
    seed(window, "Syntax", 'say "NEAR(a b)" -x: y*', "fine")
    _indexed(qtbot, window)
    focus(window, window.nodes()[0])
    press(qtbot, "Ctrl+Shift+F", window.active_node().chat_input)
    box = window.findChild(QLineEdit, "searchInput")
    status = window.findChild(QLabel, "searchStatus")
    for text in ['"', "*", "NEAR(", "-", ":", '"NEAR( -: *', "a OR b AND NOT c", "col:x ^y"]:
        box.clear()
        qtbot.keyClicks(box, text)
        qtbot.waitUntil(lambda: "found" in status.text(), timeout=10_000)
        assert "error" not in status.text().lower() and "unavailable" not in status.text().lower()
        status.clear()


def test_an_unusable_data_folder_says_search_unavailable_and_why(
    qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path, monkeypatch: Any
) -> None:
    blocker = tmp_path / "data"
    blocker.write_text("a file where the data folder should be", encoding="utf-8")
    monkeypatch.setenv("CHATNODES_DATA_DIR", str(blocker))
    window = open_with_fake(open_window, fake, tmp_path)
    seed(window, "Anything", "hello there", "hi")
    assert window.save_project()  # saving still works: the index is derived
    focus(window, window.nodes()[0])
    press(qtbot, "Ctrl+Shift+F", window.active_node().chat_input)
    status = window.findChild(QLabel, "searchStatus")
    qtbot.waitUntil(lambda: status.text().startswith("Search unavailable: "), timeout=10_000)
    assert len(status.text()) > len("Search unavailable: ") + 5  # the reason
    qtbot.keyClicks(window.findChild(QLineEdit, "searchInput"), "hello")
    qtbot.waitUntil(lambda: "found" in status.text(), timeout=10_000)
    assert "Search unavailable" in status.text()


def test_enter_right_after_typing_opens_the_first_hit_of_what_was_typed(
    qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path
) -> None:
    window = open_with_fake(open_window, fake, tmp_path)
    other = seed(window, "Other", "an okapi question", "The okapi is a giraffid.")
    target = seed(window, "Target", "a wombat question", "Wombat droppings are cube-shaped.")
    _indexed(qtbot, window)
    focus(window, other)
    press(qtbot, "Ctrl+Shift+F", other.chat_input)
    box = window.findChild(QLineEdit, "searchInput")
    qtbot.keyClicks(box, "okapi")
    view = window.findChild(QListView, "searchResults")
    qtbot.waitUntil(lambda: view.model().rowCount() > 0, timeout=10_000)
    box.clear()
    qtbot.keyClicks(box, "droppings")
    qtbot.keyClick(box, Qt.Key.Key_Return)  # before the answer: the rows shown are okapi's
    message_id = target.conversation.messages[1].id
    qtbot.waitUntil(lambda: window.active_node() is target and _in_viewport(target, message_id),
                    timeout=10_000)


def test_a_save_while_a_node_streams_is_indexed_once_the_run_ends(
    qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path
) -> None:
    """Indexing holds the GIL for tens to hundreds of ms: it waits until no node streams (issue 28)."""
    window = open_with_fake(open_window, fake, tmp_path)
    _indexed(qtbot, window)
    runner = window.nodes()[0]
    fake.script(Turn(text="A slow answer.", delay_first_byte=1.0))
    runner.submit("go")
    qtbot.waitUntil(runner.is_busy, timeout=5_000)
    seed(window, "Zoo", "a capybara question", "Capybaras are the largest rodents.")
    assert window.save_project()
    assert window.search.index_waiting  # a node streams: the snapshot is not handed to the indexer yet
    assert window.search.service.wait_idle(0)
    qtbot.waitUntil(lambda: not runner.is_busy(), timeout=10_000)
    qtbot.waitUntil(lambda: not window.search.index_waiting, timeout=5_000)
    _indexed(qtbot, window)
    focus(window, runner)
    hit = _hit(_search(qtbot, window, "capybara"))
    assert hit.node_title == "Zoo"
