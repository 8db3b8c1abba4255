"""The canvas board: the window's second view of its nodes (View → Canvas / View → Desk).

:class:`CanvasBoard` keeps one card (``card.NodeCard``) per open node and one edge
(``edge.ForkEdge``) per fork, and switches the window between the desk (the node area's MDI area)
and the canvas (``view.CanvasView``). A node widget lives in one place at a time: switching views
reparents the same ``ChatNodeWidget`` between its ``QMdiSubWindow`` and the canvas viewport (nothing
is rebuilt; a running stream goes on). The board's part of ``project.json`` is ``record.CanvasRecord``,
read and written through the project controller's extra hooks.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, QPoint, QPointF, QRectF, QTimer
from PySide6.QtWidgets import QApplication, QBoxLayout, QMainWindow, QWidget

from desktop.ui.canvas.actions import CanvasActions
from desktop.ui.canvas.card import NodeCard
from desktop.ui.canvas.edge import ForkEdge
from desktop.ui.canvas.hosts import AreaHost, ProjectsHost
from desktop.ui.canvas.minimap import Minimap
from desktop.ui.canvas.record import CANVAS_KEY, CanvasRecord, EdgeRecord, read_record, write_record
from desktop.ui.canvas.spots import free_spot, reading_order
from desktop.ui.canvas.summary import first_words, summary_of
from desktop.ui.canvas.view import READING_ZOOM, CanvasView
from desktop.ui.theme import colors_for, current_scheme

if TYPE_CHECKING:
    from desktop.ui.node.chat_node import ChatNodeWidget

log = logging.getLogger(__name__)

__all__ = ["CanvasBoard"]

_BUSY_REFRESH_MS = 700


class CanvasBoard(QObject):
    """The cards, the edges and the Desk/Canvas switch of one window.

    Args:
        window: The main window (the actions go into its View menu).
        layout: The central layout the canvas view goes into, beside the MDI area.
        area: The window's node area.
        projects: The project controller (the board's block of ``project.json``).
    """

    def __init__(self, window: QMainWindow, layout: QBoxLayout, area: AreaHost,
                 projects: ProjectsHost) -> None:
        super().__init__(window)
        self._window = window
        self._area = area
        self._projects = projects
        self.colors = colors_for(current_scheme())
        self.view = CanvasView(layout.parentWidget(), self.colors.window)
        self.view.hide()
        layout.addWidget(self.view, 1)
        self.minimap = Minimap(self.view, self.colors)
        self.cards: dict[str, NodeCard] = self.view.cards
        self.edges: list[ForkEdge] = []
        self.record = CanvasRecord()
        self.current: str | None = None
        """The node the canvas last focused (the canvas's "active node")."""
        self._view_pending = False
        self._switching = False  # set_mode("canvas") is showing the view: nothing is adopted yet
        self.actions = CanvasActions(window, self)
        self.view.on_card_moved = self._card_moved
        area.nodes_changed.connect(self.sync)
        area.forked.connect(self.on_fork)
        area.focus_hook = self.focus_node
        area.active_hook = self.active_node
        projects.extra_readers.append(self.load)
        projects.extra_writers.append(self.dump)
        app = QApplication.instance()
        if isinstance(app, QApplication):
            app.focusChanged.connect(self._on_focus_changed)
        self._busy_timer = QTimer(self)
        self._busy_timer.setInterval(_BUSY_REFRESH_MS)
        self._busy_timer.timeout.connect(self._refresh_busy)
        self.view.viewport_changed.connect(self._view_moved)
        self.view.adopt = self._take

    # -- queries ---------------------------------------------------------------------------------------
    def is_canvas(self) -> bool:
        """True while the canvas is the window's view."""
        return self.record.mode == "canvas"

    def card(self, node_id: str) -> NodeCard | None:
        """The card of node ``node_id``."""
        return self.cards.get(node_id)

    def active_node(self) -> ChatNodeWidget | None:
        """The canvas's active node (None in the desk: the MDI area says)."""
        if not self.is_canvas() or self.current is None:
            return None
        card = self.cards.get(self.current)
        return card.node if card is not None else None

    # -- switching views -------------------------------------------------------------------------------
    def set_mode(self, mode: str) -> None:
        """Show the nodes on the canvas (``canvas``) or in the MDI area (``desk``)."""
        if mode not in ("desk", "canvas"):
            raise ValueError(f"unknown view {mode!r}")
        self.actions.sync(mode)
        shown = self.view.isVisible() == (mode == "canvas") or not self._window.isVisible()
        if mode == self.record.mode and shown:
            return
        active = self._area.active_node() if mode == "canvas" else self.active_node()
        self.record.mode = mode
        if mode == "canvas":
            # The nodes stay in their (hidden) sub-windows: ``place_live`` moves a node's widget onto
            # the board when its card comes into sight at reading zoom. A reparent costs ~8 ms a node
            # (Qt re-resolves the style of its whole widget tree): 30 of them froze the switch.
            self._switching = True  # no node moves at the view's first size and zoom, before its own
            try:
                self.sync()
                self._area.mdi.hide()
                self.view.show()
                self._busy_timer.start()
                if self.record.view is None or self._view_pending:
                    self._restore_view()
            finally:
                self._switching = False
            self.view.place_live()
            self.minimap.follow()
            if active is not None:
                self.current = active.node_id
                active.setFocus()
        else:
            self.sync()
            self._busy_timer.stop()
            self.record.view = self._view_state()
            self.view.hide()
            for card in self.cards.values():
                self._give_back(card.node)
                card.live = False
            self._area.mdi.show()
            self._area.refit()
            if active is not None:
                self._area.focus_node(active)
        self._area.changed.emit()

    def _take(self, node: ChatNodeWidget) -> bool:
        """Move ``node``'s widget from its sub-window onto the canvas, hidden (the view's ``adopt``:
        its card came into sight at reading zoom); False in the desk."""
        if not self.is_canvas() or self._switching:
            return False
        viewport = self.view.viewport()
        if node.parentWidget() is not viewport:
            node.hide()
            node.setParent(viewport)
        return True

    def _give_back(self, node: ChatNodeWidget) -> None:
        """Put ``node``'s widget back into its sub-window."""
        try:
            sub = self._area.subwindow_of(node)
        except KeyError:
            return
        if node.parentWidget() is not sub:
            # ``sub.widget()`` still names the node after ``_take`` reparented it (Qt keeps the
            # pointer), so ``setWidget`` would refuse it: put it back into the sub-window's layout.
            layout = sub.layout()
            if layout is not None:
                layout.addWidget(node)
            else:
                node.setParent(sub)
        node.show()

    # -- cards and edges -------------------------------------------------------------------------------
    def sync(self) -> None:
        """Make the cards match the open nodes (new nodes get a card, closed ones lose theirs)."""
        nodes = {node.node_id: node for node in self._area.nodes()}
        for node_id in [i for i in self.cards if i not in nodes]:
            card = self.cards.pop(node_id)
            self.view.scene().removeItem(card)
            node = card.node
            # The card's own signals hold lambdas that capture it: a cycle through C++ that the
            # collector cannot see. Deleting the card drops them, and with them the closed node.
            card.deleteLater()
            if node.parentWidget() is self.view.viewport():  # its sub-window is gone: so is it
                node.hide()
                node.setParent(None)
                node.deleteLater()
            if self.current == node_id:
                self.current = None
        for node_id, node in nodes.items():
            if node_id not in self.cards:
                self._add_card(node)
        self.view.card_version += 1  # cards came or went: the minimap measures them again
        self.rebuild_edges()
        self.minimap.update()
        if self.is_canvas():
            self.view.place_live()

    def _add_card(self, node: ChatNodeWidget) -> NodeCard:
        saved = self.record.cards.get(node.node_id)
        if saved is not None:
            rect = QRectF(*saved)
        elif self.is_canvas() and self.view.isVisible():
            source = self.cards[self.current].rect() if self.current in self.cards else QRectF(
                self.view.visible_scene_rect().center(), self.view.visible_scene_rect().center())
            rect = free_spot(source, 600, 680, [c.rect() for c in self.cards.values()])
        else:
            rect = QRectF(self._area.subwindow_of(node).geometry())
        card = NodeCard(node, rect, self.colors)
        self.cards[node.node_id] = card
        self.view.scene().addItem(card)
        card.set_summary(summary_of(node))

        def refresh(*_args: object, c: NodeCard = card) -> None:
            c.set_summary(summary_of(c.node))

        for signal in (node.changed, node.cost_changed, node.title_changed, node.run_finished):
            signal.connect(refresh)
        card.geometry_changed.connect(lambda c=card: self._card_saved(c))
        card.zoom_requested.connect(lambda c=card: self.zoom_to_node(c.node_id))
        return card

    def rebuild_edges(self) -> None:
        """Draw the edges of the recorded forks whose child is open."""
        scene = self.view.scene()
        for edge in self.edges:
            scene.removeItem(edge)
        self.edges = []
        for record in self.record.edges:
            child = self.cards.get(record.child)
            if child is None:
                continue
            parent = self.cards.get(record.parent)
            edge = ForkEdge(parent, child, record.label, self.colors, self._anchor(record))
            zoom = self.view.zoom()
            edge.set_text_scale(1.0 if zoom >= 0.9 else min(4.5, 0.9 / zoom))
            scene.addItem(edge)
            self.edges.append(edge)

    def _anchor(self, record: EdgeRecord) -> Callable[[], QPointF | None]:
        """Where the forked message of ``record`` is on its parent's live widget (None when not in sight)."""
        def find() -> QPointF | None:
            card = self.cards.get(record.parent)
            if card is None or not card.live or not record.message or card.node.loading.pending:
                return None
            try:
                view = card.node.transcript.view_for(record.message)
            except Exception:  # a transcript being rebuilt: no anchor this time
                log.debug("no anchor for %s", record.message, exc_info=True)
                return None
            if view is None or not view.isVisible() or view.visibleRegion().isEmpty():
                return None
            point = self.view.mapToScene(view.mapTo(self.view.viewport(), QPoint(0, 14)))
            rect = card.rect()
            return QPointF(point.x(), max(rect.top() + 40, min(point.y(), rect.bottom() - 10)))

        return find

    def _card_moved(self, card: NodeCard) -> None:
        for edge in self.edges:
            if edge.child_card is card or edge.parent_card is card:
                edge.refresh()

    def _card_saved(self, card: NodeCard) -> None:
        rect = card.rect()
        self.record.cards[card.node_id] = (round(rect.x()), round(rect.y()), round(rect.width()),
                                           round(rect.height()))
        self._card_moved(card)
        self.minimap.update()
        self._area.changed.emit()

    def on_fork(self, source: ChatNodeWidget, node: ChatNodeWidget) -> None:
        """``node`` was forked from ``source``: record the edge and place its card beside the parent."""
        from desktop.core.chat.versions import FORKED_FROM_KEY

        messages = node.conversation.messages
        last = messages[-1] if messages else None
        message_id = str(last.extra.get(FORKED_FROM_KEY, last.id)) if last is not None else ""
        label = first_words(last.content) if last is not None else ""
        self.record.edges.append(EdgeRecord(source.node_id, node.node_id, message_id, label))
        self.sync()
        parent, child = self.cards.get(source.node_id), self.cards.get(node.node_id)
        if parent is not None and child is not None:
            others = [c.rect() for c in self.cards.values() if c is not child]
            child.set_rect(free_spot(parent.rect(), parent.rect().width(), parent.rect().height(), others))
            self._card_saved(child)
        self.rebuild_edges()
        if self.is_canvas():
            self.focus_node(node)

    # -- moving around ---------------------------------------------------------------------------------
    def focus_node(self, node: ChatNodeWidget) -> bool:
        """In the canvas, bring ``node``'s card into sight at reading zoom and focus its input
        (the node area's focus hook); False in the desk (the MDI area does it)."""
        if not self.is_canvas():
            return False
        if node.node_id not in self.cards:
            self.sync()
        card = self.cards.get(node.node_id)
        if card is None:
            return False
        self.current = node.node_id
        self.view.scene().clearSelection()
        card.setSelected(True)
        seen = self.view.visible_scene_rect()
        if self.view.zoom() < READING_ZOOM or not seen.contains(card.rect()):
            self.zoom_to_node(node.node_id)
        node.setFocus()
        return True

    def zoom_to_node(self, node_id: str) -> None:
        """Pan and zoom (at most 100 %) so that node ``node_id``'s card fills the view."""
        card = self.cards.get(node_id)
        if card is None:
            return
        self.current = node_id
        self.view.show_rect(card.rect(), max_zoom=1.0, margin=24)

    def fit_all(self) -> None:
        """Pan and zoom so that every card is in sight."""
        rect = QRectF()
        for card in self.cards.values():
            rect = rect.united(card.rect())
        if not rect.isEmpty():
            self.view.show_rect(rect, max_zoom=1.0)

    def cycle(self, step: int) -> None:
        """Focus the next (``step`` 1) or previous (-1) node in reading order (Ctrl+Tab, Ctrl+Shift+Tab)."""
        nodes = {node.node_id: node for node in self._area.nodes()}
        if not nodes:
            return
        if self.is_canvas():
            order = reading_order({i: c.rect() for i, c in self.cards.items() if i in nodes})
        elif self._area.is_tabbed():
            order = [n.node_id for n in self._area.nodes()]
        else:
            rects = {i: QRectF(self._area.subwindow_of(n).geometry()) for i, n in nodes.items()}
            order = reading_order(rects)
        active = self._area.active_node()
        index = order.index(active.node_id) if active is not None and active.node_id in order else -step
        self._area.focus_node(nodes[order[(index + step) % len(order)]])

    def _on_focus_changed(self, _old: QWidget | None, new: QWidget | None) -> None:
        if new is None or not self.is_canvas():
            return
        viewport = self.view.viewport()
        widget: QWidget | None = new
        while widget is not None and widget.parentWidget() is not viewport:
            widget = widget.parentWidget()
        if widget is not None:
            for node_id, card in self.cards.items():
                if card.node is widget:
                    self.current = node_id

    def _refresh_busy(self) -> None:
        for card in self.cards.values():
            if not card.live and card.node.is_busy():
                card.set_summary(summary_of(card.node))

    def _view_moved(self) -> None:
        self.minimap.update()
        zoom = self.view.zoom()
        # Labels grow in 10 % steps as the board zooms out: a zoom step re-lays out no edge in between.
        scale = 1.0 if zoom >= 0.9 else min(4.5, 1.1 ** math.ceil(math.log(0.9 / zoom, 1.1)))
        for edge in self.edges:
            edge.set_text_scale(scale)
            if edge.parent_card is not None and edge.parent_card.live:
                edge.refresh()  # its anchor follows the forked message
        if self._view_pending and self.view.isVisible():
            self._restore_view()

    # -- project.json ----------------------------------------------------------------------------------
    def _view_state(self) -> tuple[float, float, float] | None:
        if not self.view.isVisible():
            return self.record.view
        centre = self.view.visible_scene_rect().center()
        return (centre.x(), centre.y(), self.view.zoom())

    def _restore_view(self) -> None:
        if self.view.width() < 50:  # not laid out yet: once it is
            self._view_pending = True
            return
        self._view_pending = False
        if self.record.view is None:
            self.fit_all()
            return
        cx, cy, zoom = self.record.view
        self.view.resetTransform()
        self.view.set_zoom(zoom)
        self.view.center_on(QPointF(cx, cy))

    def load(self, extra: dict[str, Any]) -> None:
        """Read the board's block from ``project.json``'s extras (a project was opened)."""
        mode = self.record.mode
        self.record = read_record(extra.get(CANVAS_KEY))
        wanted, self.record.mode = self.record.mode, mode
        for node_id, card in self.cards.items():
            saved = self.record.cards.get(node_id)
            if saved is not None:
                card.set_rect(QRectF(*saved))
        self.rebuild_edges()
        self._view_pending = True
        self.set_mode(wanted)
        if self.is_canvas():
            self._restore_view()

    def dump(self, extra: dict[str, Any]) -> None:
        """Write the board's block into ``extra`` (the project is being saved)."""
        keep = set(self.cards) | {s.id for s in self._projects.closed.states()}
        self.record.edges = [e for e in self.record.edges if e.child in keep]
        for node_id, card in self.cards.items():
            rect = card.rect()
            self.record.cards[node_id] = (round(rect.x()), round(rect.y()), round(rect.width()),
                                          round(rect.height()))
        self.record.cards = {i: r for i, r in self.record.cards.items() if i in keep}
        self.record.view = self._view_state()
        extra[CANVAS_KEY] = write_record(self.record)
