"""The canvas (issue 30): View → Canvas, cards, fork edges, moving cards, reopen, approvals, Ctrl+Tab.

Driven through real widgets: menu actions, the fork button, mouse drags on a card's title band, the
permission card's Approve button inside a card at reading zoom, Ctrl+Tab on the focused window.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import shiboken6
from first_hour_support import activate, open_with_fake, press, trigger
from PySide6.QtCore import QEvent, QObject, QPoint, QPointF, Qt
from PySide6.QtWidgets import QApplication, QGraphicsView, QPushButton, QToolButton, QWidget
from test_app_support import send_and_wait

from desktop.testing import FakeProvider, ToolCallSpec, Turn

pytest_plugins = ["test_app_support"]  # fixtures: fake, open_window


def _view(window: Any) -> QGraphicsView:
    view = window.findChild(QGraphicsView, "canvasView")
    assert view is not None
    return view


def _items(window: Any, name: str) -> list[Any]:
    items = _view(window).scene().items()
    return [item for item in items if getattr(item, "objectName", lambda: "")() == name]


def _card(window: Any, node: Any) -> Any:
    return next(c for c in _items(window, "nodeCard") if c.node is node)


def _fork_button(node: Any, index: int) -> QToolButton:
    view = node.transcript.view_for(node.conversation.messages[index].id)
    assert view is not None
    button = view.findChild(QToolButton, "forkButton")
    assert button is not None
    return button


def _to_canvas(qtbot: Any, window: Any) -> QGraphicsView:
    trigger(window, "canvasAction")
    view = _view(window)
    qtbot.waitUntil(view.isVisible, timeout=10_000)
    assert not window.mdi.isVisible()
    return view


def test_a_fork_on_the_canvas_draws_an_edge_between_two_cards(
    qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path
) -> None:
    window = open_with_fake(open_window, fake, tmp_path)
    node = window.nodes()[0]
    fake.script(Turn(text="Paris is the capital of France."))
    send_and_wait(qtbot, node, "What is the capital of France, and why?")
    view = _to_canvas(qtbot, window)
    assert node.parentWidget() is view.viewport()  # the same widget, moved (not rebuilt)
    qtbot.waitUntil(node.isVisible, timeout=10_000)  # at reading zoom the card hosts the live node
    button = _fork_button(node, 0)
    qtbot.waitUntil(button.isVisible, timeout=10_000)
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    assert len(window.nodes()) == 2
    fork = next(n for n in window.nodes() if n is not node)
    cards = _items(window, "nodeCard")
    assert {c.node for c in cards} == {node, fork}
    edges = _items(window, "forkEdge")
    assert len(edges) == 1
    edge = edges[0]
    assert edge.parent_card is _card(window, node) and edge.child_card is _card(window, fork)
    assert edge.label.startswith("What is the capital")
    assert not _card(window, node).rect().intersects(_card(window, fork).rect())  # beside, not on top
    # Back to the desk: the same widgets are in their sub-windows again, shown and usable.
    trigger(window, "deskAction")
    qtbot.waitUntil(window.mdi.isVisible, timeout=10_000)
    for each in (node, fork):
        sub = window.subwindow_of(each)
        assert sub.widget() is each and each.parentWidget() is sub  # (Qt's widget() alone kept a stale name)
        qtbot.waitUntil(each.isVisible, timeout=10_000)
        assert sub.contentsRect().contains(each.geometry())
    qtbot.mouseClick(fork.chat_input, Qt.MouseButton.LeftButton)
    qtbot.keyClicks(fork.chat_input, "typed in the desk")
    assert fork.chat_input.toPlainText() == "typed in the desk"
    fork.set_title("Renamed after the canvas")
    title = window.subwindow_of(fork).windowTitle
    qtbot.waitUntil(lambda: title() == "Renamed after the canvas", timeout=10_000)


def _drag(qtbot: Any, view: QGraphicsView, start: QPoint, end: QPoint) -> None:
    vp = view.viewport()
    qtbot.mousePress(vp, Qt.MouseButton.LeftButton, pos=start)
    steps = 6
    for i in range(1, steps + 1):
        qtbot.mouseMove(vp, start + (end - start) * i / steps)
    qtbot.mouseRelease(vp, Qt.MouseButton.LeftButton, pos=end)


def test_a_moved_card_and_its_edge_are_where_they_were_after_reopening(
    qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path
) -> None:
    window = open_with_fake(open_window, fake, tmp_path)
    node = window.nodes()[0]
    fake.script(Turn(text="An answer."))
    send_and_wait(qtbot, node, "Tell me about edges")
    view = _to_canvas(qtbot, window)
    button = _fork_button(node, 0)
    qtbot.waitUntil(button.isVisible, timeout=10_000)
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    fork = next(n for n in window.nodes() if n is not node)
    trigger(window, "fitAllAction")
    card = _card(window, node)
    before = card.rect()
    grab = view.mapFromScene(card.rect().topLeft() + QPointF(60, 12))
    _drag(qtbot, view, grab, grab + QPoint(-40, 90))
    moved = card.rect()
    assert moved.topLeft() != before.topLeft() and moved.size() == before.size()
    node_id, fork_id = node.node_id, fork.node_id
    fork_rect = _card(window, fork).rect()
    project, config = window.project_dir, window.context.config_dir
    from test_app_support import close_window

    close_window(qtbot, window)
    again = open_window(project, config)
    qtbot.waitUntil(lambda: _view(again).isVisible(), timeout=10_000)  # it opens in the canvas
    cards = {c.node_id: c for c in _items(again, "nodeCard")}
    assert set(cards) == {node_id, fork_id}
    assert cards[node_id].rect() == moved.toRect().toRectF()
    assert cards[fork_id].rect() == fork_rect.toRect().toRectF()
    edges = _items(again, "forkEdge")
    assert [(e.parent_card.node_id, e.child_card.node_id) for e in edges] == [(node_id, fork_id)]


def test_approve_a_tool_call_inside_a_card_at_reading_zoom(
    qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path
) -> None:
    window = open_with_fake(open_window, fake, tmp_path)
    node = window.nodes()[0]
    view = _to_canvas(qtbot, window)
    trigger(window, "zoomToNodeAction")
    qtbot.waitUntil(node.isVisible, timeout=10_000)
    assert view.zoom() >= 0.7
    fake.script(Turn(tool_calls=[ToolCallSpec("write_file", {"path": "out.txt", "content": "hello"})]),
                Turn(text="Written."))
    qtbot.mouseClick(node.chat_input, Qt.MouseButton.LeftButton)
    qtbot.keyClicks(node.chat_input, "write it")
    qtbot.keyClick(node.chat_input, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: node.findChild(QWidget, "permissionCard") is not None, timeout=10_000)
    card = node.findChild(QWidget, "permissionCard")
    approve = card.findChild(QPushButton, "approveButton")
    qtbot.waitUntil(approve.isVisible, timeout=10_000)
    with qtbot.waitSignal(node.run_finished, timeout=10_000):
        qtbot.mouseClick(approve, Qt.MouseButton.LeftButton)
    assert (window.project_dir / "out.txt").read_text() == "hello"
    assert "Written." in node.conversation.messages[-1].content


def test_ctrl_tab_cycles_nodes_in_reading_order_in_both_views(
    qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path
) -> None:
    window = open_with_fake(open_window, fake, tmp_path)
    first = window.nodes()[0]
    second, third = window.add_node(), window.add_node()
    window.tile()
    for view_name in ("desk", "canvas"):
        if view_name == "canvas":
            _to_canvas(qtbot, window)
            board = window.canvas
            for i, n in enumerate((third, first, second)):  # reading order: third, first, second
                card = _card(window, n)
                card.set_rect(card.rect().translated(i * 2000 - card.rect().x(), -card.rect().y()))
        activate(window)
        window.go_to_node(first.node_id)
        qtbot.waitUntil(lambda: window.active_node() is first, timeout=10_000)
        qtbot.waitUntil(lambda: QApplication.focusWidget() is not None, timeout=10_000)
        seen = []
        for _ in range(3):
            press(qtbot, "Ctrl+Tab")
            seen.append(window.active_node())
        if view_name == "canvas":
            assert seen == [second, third, first]
            assert board.view.zoom() >= 0.7  # it pans and zooms to each
            press(qtbot, "Ctrl+Shift+Tab")
            assert window.active_node() is third
        else:
            assert set(seen) == {first, second, third} and seen[-1] is first


def test_closing_the_parent_leaves_its_edge_coming_from_a_deleted_node(
    qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path
) -> None:
    window = open_with_fake(open_window, fake, tmp_path)
    node = window.nodes()[0]
    fake.script(Turn(text="An answer."))
    send_and_wait(qtbot, node, "Parent question")
    _to_canvas(qtbot, window)
    button = _fork_button(node, 0)
    qtbot.waitUntil(button.isVisible, timeout=10_000)
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    fork = next(n for n in window.nodes() if n is not node)
    window.go_to_node(node.node_id)
    qtbot.waitUntil(lambda: window.active_node() is node, timeout=10_000)
    trigger(window, "closeNodeAction")
    qtbot.waitUntil(lambda: len(window.nodes()) == 1, timeout=10_000)
    assert [c.node for c in _items(window, "nodeCard")] == [fork]
    edges = _items(window, "forkEdge")
    assert len(edges) == 1 and edges[0].parent_card is None and edges[0].child_card.node is fork
    # The closed node's widget goes (taken off the canvas, then deleted).
    qtbot.waitUntil(lambda: not shiboken6.isValid(node) or node.parentWidget() is None, timeout=10_000)


def test_a_search_hit_in_canvas_view_pans_and_zooms_to_its_card(
    qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path
) -> None:
    window = open_with_fake(open_window, fake, tmp_path)
    first = window.nodes()[0]
    fake.script(Turn(text="Lisbon sits on seven hills."))
    send_and_wait(qtbot, first, "Tell me about Lisbon")
    second = window.add_node()
    view = _to_canvas(qtbot, window)
    card = _card(window, first)
    card.set_rect(card.rect().translated(5000 - card.rect().x(), 4000 - card.rect().y()))  # far away
    window.go_to_node(second.node_id)
    qtbot.waitUntil(lambda: not view.visible_scene_rect().contains(card.rect()), timeout=10_000)
    answer = first.conversation.messages[-1]
    assert window.show_message(tmp_path / "project", first.node_id, answer.id)
    qtbot.waitUntil(lambda: view.visible_scene_rect().contains(card.rect()), timeout=10_000)
    assert view.zoom() >= 0.7 and card.isSelected() and window.active_node() is first


def test_a_card_names_the_model_the_node_uses_and_shows_words_not_markdown(
    qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path
) -> None:
    from desktop.ui.canvas.summary import first_words, summary_of

    window = open_with_fake(open_window, fake, tmp_path)
    node = window.nodes()[0]
    fake.script(Turn(text="## Three days in **Lyon**\n\nStart at `Fourvière`."))
    send_and_wait(qtbot, node, "Plan three days in Lyon")
    summary = summary_of(node)
    assert summary.model == "gpt-4o-mini"  # the default model it follows, not "default model"
    assert summary.last_line.startswith("Three days in Lyon")
    assert first_words(node.conversation.messages[-1].content) == "Three days in Lyon"


class _PaintCounter(QObject):
    """Counts paint events of ``of`` (installed on it), or of ``of``'s descendants (installed on
    the application)."""

    def __init__(self, of: QWidget, *, inside: bool = False) -> None:
        super().__init__()
        self.of, self.inside, self.paints = of, inside, 0

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt API)
        if event.type() == QEvent.Type.Paint and (
                self.of.isAncestorOf(watched) if self.inside and isinstance(watched, QWidget)
                else watched is self.of):
            self.paints += 1
        return False


def test_an_answer_streaming_in_a_live_card_does_not_repaint_the_board_beneath(
    qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path
) -> None:
    """Issue 30 #5: a live node left its background to the board, so every repaint of its transcript
    repainted the scene under it first (~500 board repaints per streamed answer in eight cards)."""
    window = open_with_fake(open_window, fake, tmp_path)
    node = window.nodes()[0]
    view = _to_canvas(qtbot, window)
    qtbot.waitUntil(node.isVisible, timeout=10_000)
    app = QApplication.instance()
    assert app is not None
    board, own = _PaintCounter(view.viewport()), _PaintCounter(node, inside=True)
    view.viewport().installEventFilter(board)
    app.installEventFilter(own)
    try:
        qtbot.wait(100)  # the switch's own repaint is over
        board.paints = own.paints = 0
        fake.script(Turn(text="\n\n".join(f"Paragraph {i}: " + "words " * 40 for i in range(200))))
        send_and_wait(qtbot, node, "Many paragraphs, please")
        qtbot.waitUntil(lambda: not node.transcript.is_rendering(), timeout=10_000)
        assert node.transcript.views()  # the answer is on screen, in the card
        assert own.paints >= 10, own.paints  # the node's widgets repainted as the answer came in ...
        assert board.paints <= 5, (board.paints, own.paints)  # ... the board only for the card's summary
    finally:
        view.viewport().removeEventFilter(board)
        app.removeEventFilter(own)


def test_switching_moves_only_the_nodes_in_sight_and_brings_each_back(
    qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path
) -> None:
    window = open_with_fake(open_window, fake, tmp_path)
    nodes = [window.nodes()[0], *(window.add_node() for _ in range(5))]
    board = window.canvas
    for i, n in enumerate(nodes):  # far apart: one card in sight at reading zoom
        card = _card(window, n)
        card.set_rect(card.rect().translated(i * 3000 - card.rect().x(), -card.rect().y()))
    view = _to_canvas(qtbot, window)  # opens on the whole board, zoomed out

    def on_board() -> list[Any]:
        return [n for n in nodes if n.parentWidget() is view.viewport()]

    assert view.zoom() < 0.7
    assert on_board() == []  # zoomed out, no node widget leaves its sub-window (~8 ms a node)
    board.zoom_to_node(nodes[2].node_id)
    qtbot.waitUntil(nodes[2].isVisible, timeout=10_000)
    assert on_board() == [nodes[2]]
    assert _card(window, nodes[2]).live and not _card(window, nodes[3]).live
    qtbot.mouseClick(nodes[2].chat_input, Qt.MouseButton.LeftButton)
    qtbot.keyClicks(nodes[2].chat_input, "on the board")
    assert nodes[2].chat_input.toPlainText() == "on the board"
    trigger(window, "deskAction")
    qtbot.waitUntil(window.mdi.isVisible, timeout=10_000)
    for n in nodes:
        assert n.parentWidget() is window.subwindow_of(n)
        qtbot.waitUntil(n.isVisible, timeout=10_000)
    assert nodes[2].chat_input.toPlainText() == "on the board"  # the same widget, its draft kept


def test_the_minimap_follows_cards_moved_resized_and_added(
    qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path
) -> None:
    """The minimap keeps its cards' extent and layer between paints: each change must still reach it."""
    from PySide6.QtCore import QRectF

    window = open_with_fake(open_window, fake, tmp_path)
    node = window.nodes()[0]
    view = _to_canvas(qtbot, window)
    minimap = window.findChild(QWidget, "canvasMinimap")
    assert minimap is not None and minimap.isVisible()
    trigger(window, "fitAllAction")
    card = _card(window, node)
    before = minimap.grab().toImage()
    board = minimap.board_rect()
    grab = view.mapFromScene(card.rect().topLeft() + QPointF(60, 12))
    _drag(qtbot, view, grab, grab + QPoint(300, 200))  # moved by the mouse
    qtbot.waitUntil(lambda: minimap.board_rect().contains(card.rect()), timeout=5_000)
    assert minimap.board_rect() != board and minimap.grab().toImage() != before
    far = QRectF(card.rect().topLeft(), card.rect().size() * 6)  # resized in place
    card.set_rect(far)
    assert minimap.board_rect().contains(far)
    other = window.add_node()  # added
    qtbot.waitUntil(lambda: any(c.node is other for c in _items(window, "nodeCard")), timeout=5_000)
    assert minimap.board_rect().contains(_card(window, other).rect())
    shown = minimap.grab().toImage()
    view.zoom_at(1.02)  # a zoom step over the same board: the frame moves, the cards stay drawn
    assert minimap.grab().toImage() != shown
