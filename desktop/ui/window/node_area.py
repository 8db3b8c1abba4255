"""The node area: the MDI area of chat nodes, their sub-windows, geometry and layouts (tile, cascade, tabs).

:class:`NodeArea` owns the ``QMdiArea`` (object name ``mdiArea``) and one ``QMdiSubWindow``
(``nodeSubWindow``) per ``ChatNodeWidget``. It remembers each node's *normal* geometry (what tabbed or
maximized views do not change), so a project saves and restores the layout the user made.

Nothing opens off-screen (``placement.py`` has the geometry): a new node takes the next free slot
inside the area, a fork opens beside its source when there is room, and otherwise the nodes are
tiled again. The area remembers its layout (``layout_mode``: tiled, cascaded, or arranged by hand):
tiles and cascades are laid out again whenever the area changes size (a banner, the sidebar, the
window), and a node arranged by hand is moved back only when its header left the area.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QRect, Signal
from PySide6.QtGui import QAction, QIcon, QPixmap
from PySide6.QtWidgets import QMdiArea, QMdiSubWindow, QWidget

from desktop.core.chat.branches import Peer
from desktop.ui.gc_guard import request_trim
from desktop.ui.theme import app_icon
from desktop.ui.window.node_layout import NodeLayout
from desktop.ui.window.placement import beside, fit_inside, slot_rect
from desktop.ui.window.subwindow_watch import SubWindowWatcher

if TYPE_CHECKING:
    # Only for type hints: the window's shell is built before the core and the chat node are imported.
    from desktop.core.store import NodeState
    from desktop.ui.node.chat_node import ChatNodeWidget
    from desktop.ui.services import AppServices

log = logging.getLogger(__name__)

__all__ = ["NodeArea", "new_node_state"]


def new_node_state(index: int = 0, *, title: str | None = None) -> NodeState:
    """A new empty node; no provider or model of its own, so it follows the default provider.

    Args:
        index: The node's position among the open nodes (names it "Chat", "Chat 2", ...).
        title: The title instead of the numbered default.
    """
    from desktop.core.store import new_node_state as core_new_node_state
    from desktop.core.titles import default_title

    return core_new_node_state(default_title(index) if title is None else title)


class NodeArea(QObject):
    """The chat nodes of one window, in an MDI area.

    Args:
        parent: The widget the MDI area goes into (the window's central widget).
        tabbed_action: The checkable "Tabbed" action; the area keeps it in step with its view mode.

    Signals:
        changed(): A node, the layout or a geometry changed: the project should be saved soon.
        cost_changed(): Some node's cost changed.
        run_finished(): A node's run finished: the project should be saved now.
        nodes_changed(): A node was added or closed.
        node_closed(object): The user closed a node: its ``NodeState`` (normal geometry, whole
            conversation) as it was, for "Recently closed".
        forked(object, object): ``(source, fork)``: a fork of ``source`` was opened (the canvas edge).
    """

    changed = Signal()
    cost_changed = Signal()
    run_finished = Signal()
    nodes_changed = Signal()
    node_closed = Signal(object)
    forked = Signal(object, object)

    def __init__(self, parent: QWidget, tabbed_action: QAction) -> None:
        super().__init__(parent)
        self.mdi = QMdiArea(parent)
        self.mdi.setObjectName("mdiArea")
        self.mdi.setTabsClosable(True)
        self.mdi.setTabsMovable(True)
        self.mdi.setDocumentMode(True)
        self.services: AppServices | None = None
        self.defer_loading = False
        """Build new nodes light (no transcript, no model listing) until :meth:`finish_loading`: the
        app sets it while it opens the first project, before the first paint."""
        self.closing = False
        self._tabbed_action = tabbed_action
        self._subs: dict[str, QMdiSubWindow] = {}
        self._nodes: dict[str, ChatNodeWidget] = {}
        self._normal_geometry: dict[str, QRect] = {}
        self._switching_view = False
        self.layout = NodeLayout(self)
        """Tiles, cascades and what happens to them when the area changes size."""
        self._watcher = SubWindowWatcher(self, self)
        self.mdi.installEventFilter(self._watcher)
        self._icon: QIcon | None = None
        self.focus_hook: Callable[[ChatNodeWidget], bool] | None = None
        """Shows a node elsewhere (the canvas); returns False to leave it to the MDI area."""
        self.active_hook: Callable[[], ChatNodeWidget | None] | None = None
        """The active node elsewhere (the canvas), or None to ask the MDI area."""

    # -- queries --------------------------------------------------------------------------------
    def nodes(self) -> list[ChatNodeWidget]:
        """The chat nodes, in window order."""
        return [self._nodes[nid] for nid in self._ordered_ids()]

    def subwindow_of(self, node: ChatNodeWidget) -> QMdiSubWindow:
        """The sub-window hosting ``node``."""
        return self._subs[node.node_id]

    def active_node(self) -> ChatNodeWidget | None:
        """The node of the active sub-window (or the only node; or the canvas's, see ``active_hook``)."""
        if self.active_hook is not None and (hooked := self.active_hook()) is not None:
            return hooked
        sub = self.mdi.activeSubWindow() or self.mdi.currentSubWindow()
        if sub is not None:
            node = self._node_in(sub)
            if node is not None:
                return node
        nodes = self.nodes()
        return nodes[0] if len(nodes) == 1 else None

    def node(self, node_id: str) -> ChatNodeWidget | None:
        """The open node with id ``node_id``."""
        return self._nodes.get(node_id)

    def states(self) -> list[NodeState]:
        """Every node's state in window order, with its normal geometry."""
        return [self._state_of(node_id) for node_id in self._ordered_ids()]

    def _ordered_ids(self) -> list[str]:
        order = {id(sub): i for i, sub in enumerate(self.mdi.subWindowList())}
        return sorted(self._nodes, key=lambda nid: order.get(id(self._subs[nid]), 1 << 30))

    def _state_of(self, node_id: str) -> NodeState:
        state = self._nodes[node_id].to_state()
        rect = self._normal_geometry.get(node_id)
        if rect is None:
            rect = self._subs[node_id].geometry()
        return dataclasses.replace(state, x=rect.x(), y=rect.y(), width=rect.width(), height=rect.height())

    def _node_in(self, sub: QMdiSubWindow) -> ChatNodeWidget | None:
        """The node of ``sub`` when it is one of this area's live nodes (wherever its widget is)."""
        return next((self._nodes[nid] for nid, s in self._subs.items() if s is sub), None)

    # -- opening and closing -------------------------------------------------------------------
    def add_node(self, state: NodeState | None = None, *, activate: bool = True,
                 place: bool = False) -> ChatNodeWidget:
        """Open a chat node for ``state`` (a new empty node when None) in a new sub-window.

        Once the area is on screen every node opens inside it: at the next free slot (tiles and
        cascades are laid out again with it), or at the state's geometry moved and shrunk into it.

        Args:
            state: The node to open; None creates an empty node with the default provider.
            activate: Make it the active sub-window (the keyboard focus goes to its message input).
            place: Ignore the state's geometry and place the node at the next free slot (always
                done for a new node).

        Raises:
            RuntimeError: No project is open (no services to build a node on).
        """
        from PySide6.QtCore import Qt

        # Here, not at import time: the window's shell is painted before the node's modules load.
        from desktop.ui.node.chat_node import ChatNodeWidget

        if self.services is None:
            raise RuntimeError("no project is open")
        fresh = state is None
        if state is None:
            state = new_node_state(len(self._nodes))
        place = place or fresh
        node = ChatNodeWidget(state, self.services, deferred=self.defer_loading)
        sub = QMdiSubWindow()
        sub.setObjectName("nodeSubWindow")
        sub.setWidget(node)
        sub.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose, True)
        sub.setWindowTitle(state.title or "Chat")
        sub.setWindowIcon(self._node_icon())
        if (menu := sub.systemMenu()) is not None:
            for action in menu.actions():  # its Close has Ctrl+W too: two such shortcuts cancel out,
                action.setShortcuts([])  # so Node → Close node (Ctrl+W) is the only one
        self.mdi.addSubWindow(sub)
        node_id = node.node_id
        self._nodes[node_id] = node
        self._subs[node_id] = sub
        area = self.layout.area()
        if place or state.width <= 0 or state.height <= 0:
            rect = slot_rect(len(self._nodes) - 1, area)
        else:
            rect = QRect(state.x, state.y, state.width, state.height)
            if self.mdi.isVisible():
                rect = fit_inside(rect, area)
        with self.layout.placing():
            sub.setGeometry(rect)
            self._normal_geometry[node_id] = QRect(rect)
            sub.installEventFilter(self._watcher)
            node.changed.connect(self.changed)
            node.cost_changed.connect(self.cost_changed)
            node.title_changed.connect(lambda title, s=sub: s.setWindowTitle(title or "Chat"))
            node.run_finished.connect(lambda _reason: self.run_finished.emit())
            node.fork_requested.connect(lambda fork, source=node: self.open_fork(source, fork))
            node.branches.peers = lambda nid: [Peer(n.node_id, n.title, n.conversation.messages)
                                               for n in self.nodes() if n.node_id != nid]  # fork links
            node.branches.node_requested.connect(self.focus_node_id)
            sub.show()
            if self.is_tabbed():
                sub.showMaximized()
        self.layout.lay_out()  # a tiled or cascaded layout takes the new node in
        if activate:
            self.focus_node(node)
        self.nodes_changed.emit()
        if fresh:
            self.changed.emit()
        return node

    def open_fork(self, source: ChatNodeWidget, state: NodeState) -> ChatNodeWidget:
        """Open a fork of ``source`` (``ChatNodeWidget.fork_requested``) beside it and activate it.

        Right of it, else left of it, when the area has room there (``placement.beside``); else every
        node is tiled, the fork with them.
        """
        src = self._normal_geometry.get(source.node_id)
        rect = beside(src, self.layout.area()) if src is not None and self.layout_mode != "tiled" else None
        if rect is None or self.is_tabbed():
            node = self.add_node(state, place=True)
            if not self.is_tabbed() and self.layout_mode != "tiled":
                self.tile()
        else:
            state.x, state.y, state.width, state.height = rect.x(), rect.y(), rect.width(), rect.height()
            self.layout.mode = "free"
            node = self.add_node(state)
        self.forked.emit(source, node)
        self.changed.emit()
        return node

    def focus_node_id(self, node_id: str) -> None:
        """``focus_node`` by id (a branch map's fork link); nothing when that node is not open."""
        if (node := self.node(node_id)) is not None:
            self.focus_node(node)

    def focus_node(self, node: ChatNodeWidget) -> None:
        """Make ``node``'s sub-window the active one, the keyboard focus in its message input."""
        sub = self._subs.get(node.node_id)
        if sub is None or (self.focus_hook is not None and self.focus_hook(node)):
            return
        self.mdi.setActiveSubWindow(sub)
        node.setFocus()  # the node's focus proxy is its message input, never its title field

    def _node_icon(self) -> QIcon:
        from PySide6.QtCore import Qt

        if self._icon is None:
            from PySide6.QtGui import QGuiApplication

            icon = QGuiApplication.windowIcon()  # the app's, when it set one (no second load of the files)
            if icon.isNull():
                icon = app_icon()
            if icon.isNull():  # no icon files: a transparent pixmap instead of Qt's logo
                pixmap = QPixmap(16, 16)
                pixmap.fill(Qt.GlobalColor.transparent)
                icon = QIcon(pixmap)
            self._icon = icon
        return self._icon

    def close_node(self, node: ChatNodeWidget) -> None:
        """Close ``node`` (a running reply is stopped); it goes to ``node_closed``'s receiver."""
        sub = self._subs.get(node.node_id)
        if sub is not None:
            sub.close()

    def on_subwindow_close(self, sub: QMdiSubWindow) -> None:
        """A sub-window closes: hand its node's state to ``node_closed``, shut the node down and
        forget it (not while the area itself closes); the focus goes to the next node's input."""
        if self.closing:
            return
        node = self._node_in(sub)
        if node is None:
            return
        node_id = node.node_id
        order = self._ordered_ids()
        state = self._state_of(node_id)
        del self._nodes[node_id]
        del self._subs[node_id]
        self._normal_geometry.pop(node_id, None)
        try:
            node.shutdown()
        except Exception:
            log.exception("shutting down node %s failed", node_id)
        self.node_closed.emit(state)
        request_trim(collect=True)  # its views and documents go with the next idle collection: give them back
        rest = [nid for nid in order if nid in self._nodes]
        if rest:
            after = [nid for nid in order[order.index(node_id) + 1:] if nid in self._nodes]
            self.focus_node(self._nodes[(after or rest[::-1])[0]])
        self.layout.lay_out()
        self.nodes_changed.emit()
        self.changed.emit()

    def on_subwindow_geometry(self, sub: QMdiSubWindow) -> None:
        """A sub-window moved or resized: remember the normal geometry a user gave it (a move or
        resize of the user's own makes the layout one arranged by hand)."""
        node = self._node_in(sub)
        if node is None or self.closing or self._switching_view:
            return
        if self.is_tabbed() or sub.isMaximized() or sub.isMinimized() or not sub.isVisible():
            return
        node_id = node.node_id
        rect = sub.geometry()
        if self._normal_geometry.get(node_id) != rect:
            self._normal_geometry[node_id] = QRect(rect)
            self.layout.user_moved()
            self.changed.emit()

    def _remove(self, node_id: str) -> None:
        """Shut one node down and take its sub-window out (``closing`` must be set)."""
        node = self._nodes.pop(node_id)
        sub = self._subs.pop(node_id)
        try:
            node.shutdown()
        except Exception:
            log.exception("shutting down node %s failed", node_id)
        sub.removeEventFilter(self._watcher)
        self.mdi.removeSubWindow(sub)
        sub.deleteLater()

    def clear(self) -> None:
        """Shut every node down and remove it (switching projects)."""
        self.closing = True
        try:
            for node_id in list(self._nodes):
                self._remove(node_id)
            self._normal_geometry.clear()
        finally:
            self.closing = False
        self.nodes_changed.emit()

    def shutdown(self) -> None:
        """Shut every node down for good (the window closes); later closes are ignored."""
        self.closing = True
        for node in list(self._nodes.values()):
            try:
                node.shutdown()
            except Exception:
                log.exception("shutting down a node failed")

    def replace_node(self, node: ChatNodeWidget, state: NodeState) -> ChatNodeWidget:
        """Recreate ``node`` from ``state`` in place (same geometry; it moves to the end of the order)."""
        node_id = node.node_id
        rect = QRect(self._normal_geometry.get(node_id) or self._subs[node_id].geometry())
        state = dataclasses.replace(state, x=rect.x(), y=rect.y(), width=rect.width(), height=rect.height())
        self.closing = True
        try:
            self._remove(node_id)
        finally:
            self.closing = False
        return self.add_node(state, activate=False)

    # -- layout (node_layout.NodeLayout does the work) ------------------------------------------
    @property
    def layout_mode(self) -> str:
        """``tiled``, ``cascaded`` or ``free`` (arranged by hand); see ``node_layout``."""
        return self.layout.mode

    def tile(self) -> None:
        """Tile the nodes to fill the area (leaves tabbed mode); they stay tiled as the area changes."""
        if self.is_tabbed():
            self._tabbed_action.setChecked(False)
        self.layout.tile()

    def cascade(self) -> None:
        """Cascade the nodes, as large as the area allows (leaves tabbed mode)."""
        if self.is_tabbed():
            self._tabbed_action.setChecked(False)
        self.layout.cascade()

    def refit(self) -> None:
        """Lay the nodes out again for the area as it is now (see ``NodeLayout.refit``)."""
        self.layout.refit()

    def ordered_subwindows(self) -> list[QMdiSubWindow]:
        """The nodes' sub-windows in window order."""
        return [self._subs[nid] for nid in self._ordered_ids()]

    def is_tabbed(self) -> bool:
        """True in tabbed mode."""
        return self.mdi.viewMode() == QMdiArea.ViewMode.TabbedView

    def set_tabbed(self, tabbed: bool) -> None:
        """Switch between tabs (one node at a time) and free-floating sub-windows."""
        if self._tabbed_action.isChecked() != tabbed:
            self._tabbed_action.setChecked(tabbed)  # re-enters through toggled
            return
        if tabbed == self.is_tabbed():
            return
        if tabbed:
            self.capture_geometry()
            self.mdi.setViewMode(QMdiArea.ViewMode.TabbedView)
        else:
            saved = {node_id: QRect(rect) for node_id, rect in self._normal_geometry.items()}
            self._switching_view = True  # leaving tabs resizes the maximized window: not a user's geometry
            try:
                self.mdi.setViewMode(QMdiArea.ViewMode.SubWindowView)
                for node_id, sub in self._subs.items():
                    sub.showNormal()
                    rect = saved.get(node_id)
                    if rect is not None:
                        sub.setGeometry(rect)
            finally:
                self._switching_view = False
            self._normal_geometry.update(saved)
            self.refit()  # the area may have changed size while one node filled it
        self.changed.emit()

    def capture_geometry(self) -> None:
        """Remember every node's geometry as its normal geometry (after a layout placed them)."""
        with self.layout.placing():
            for sub in self._subs.values():
                self.on_subwindow_geometry(sub)

    def finish_loading(self) -> None:
        """Build what the nodes opened with :attr:`defer_loading` left out; new nodes are built whole."""
        self.defer_loading = False
        for node in self.nodes():
            node.loading.finish()

    def activate_first(self) -> None:
        """Make the first node the active one, the keyboard focus in its message input (not in its
        title field, where a newcomer's first keys would rename the node)."""
        nodes = self.nodes()
        if nodes:
            self.focus_node(nodes[0])
