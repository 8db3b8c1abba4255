"""The main window: an MDI area of chat nodes, menus, a slim toolbar, banners and the session cost.

The window owns the project (a folder with ``project.json``): it creates a ``ChatNodeWidget`` per
node, keeps each node's sub-window geometry, saves the project ~1 s after a node changes and
immediately when a run finishes, and reports problems in non-blocking banners.
"""

from __future__ import annotations

import dataclasses
import logging
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QEvent, QObject, QRect, QSize, QTimer, Signal
from PySide6.QtGui import QAction, QCloseEvent, QIcon, QKeySequence, QPixmap, QShowEvent, QTextCursor
from PySide6.QtWidgets import (
    QFileDialog,
    QLabel,
    QMainWindow,
    QMdiArea,
    QMdiSubWindow,
    QMessageBox,
    QSizePolicy,
    QToolBar,
    QVBoxLayout,
    QWidget,
)

from desktop.ui.banner import Banner, BannerArea, BannerKind

if TYPE_CHECKING:
    import asyncio

    # Only for type hints: the window's shell is built (and painted) before the core, the chat node
    # and the network stack are imported, so start-up shows a window as early as a bare Qt program.
    from desktop.app import AppContext
    from desktop.core.chat.cost import ConversationCost
    from desktop.core.project import NodeState, Project, ProjectStore
    from desktop.ui.chat_node import ChatNodeWidget
    from desktop.ui.services import AppServices

log = logging.getLogger(__name__)

#: What a new demo project offers to send first (the demo provider answers it with its tour).
DEMO_FIRST_PROMPT = "Hi! Show me what a chat node can do."

__all__ = ["MainWindow", "AUTOSAVE_DELAY_MS", "LOCAL_SERVERS"]

AUTOSAVE_DELAY_MS = 1000
"""Debounce of the autosave after a node reports a change."""

LOCAL_SERVERS: tuple[tuple[str, str, str], ...] = (
    ("ollama", "Ollama", "http://127.0.0.1:11434/api/tags"),
    ("lmstudio", "LM Studio", "http://127.0.0.1:1234/v1/models"),
)
"""Keyless local servers probed on a first run: (provider id, name, probe URL)."""

_PROBE_TIMEOUT_S = 0.3
_DEFAULT_NODE_SIZE = QSize(600, 680)
_VIEW_MODE_KEY = "view_mode"


class _SubWindowWatcher(QObject):
    """Reports moves, resizes and closes of the node sub-windows to the main window."""

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self._window = window

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt API)
        kind = event.type()
        if isinstance(watched, QMdiSubWindow):
            if kind in (QEvent.Type.Move, QEvent.Type.Resize):
                self._window._on_subwindow_geometry(watched)
            elif kind == QEvent.Type.Close:
                self._window._on_subwindow_close(watched)
        return False


class MainWindow(QMainWindow):
    """The application window. Build it with ``desktop.app.create_main_window``.

    Signals:
        closed(): The window closed and its shutdown finished (runs stopped, project saved, client
            and demo server closed).
        project_opened(str): A project folder was opened.
        saved(): The project was written.
    """

    closed = Signal()
    project_opened = Signal(str)
    saved = Signal()

    def __init__(self, context: AppContext | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._context: AppContext | None = None
        self.setObjectName("mainWindow")
        self.setWindowTitle("Chat Nodes")
        self._fit_to_screen(1320, 840)
        self._store: ProjectStore | None = None
        self._services: AppServices | None = None
        self._project_extra: dict[str, Any] = {}
        self._subs: dict[str, QMdiSubWindow] = {}
        self._nodes: dict[str, ChatNodeWidget] = {}
        self._normal_geometry: dict[str, QRect] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self._closing = False
        self._shutdown_done = False
        self._tile_on_show = False
        self._switching_view = False
        self._watcher = _SubWindowWatcher(self)
        self._prev_excepthook: Callable[..., Any] | None = None
        self._prev_loop_handler: Any = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self.last_error: str | None = None

        central = QWidget(self)
        layout = QVBoxLayout(central)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        self.banner_area = BannerArea(central)
        layout.addWidget(self.banner_area)
        self.mdi = QMdiArea(central)
        self.mdi.setObjectName("mdiArea")
        self.mdi.setTabsClosable(True)
        self.mdi.setTabsMovable(True)
        self.mdi.setDocumentMode(True)
        self.mdi.subWindowActivated.connect(self._on_active_changed)
        layout.addWidget(self.mdi, 1)
        self.setCentralWidget(central)

        self._autosave = QTimer(self)
        self._autosave.setSingleShot(True)
        self._autosave.setInterval(AUTOSAVE_DELAY_MS)
        self._autosave.timeout.connect(self.save_project)

        self._build_actions()
        self._build_menus()
        self._build_toolbar()
        self._build_status_bar()
        if context is not None:
            self.attach(context)

    @property
    def context(self) -> AppContext:
        """The application context (settings, keys, runtime, HTTP client).

        Raises:
            RuntimeError: The window is only a shell so far (see :meth:`attach`).
        """
        if self._context is None:
            raise RuntimeError("the main window has no application context yet")
        return self._context

    def _fit_to_screen(self, width: int, height: int) -> None:
        """Start at ``width`` x ``height``, shrunk to 92 % of the screen's free area on small screens."""
        screen = self.screen()
        if screen is not None:
            free = screen.availableGeometry()
            width = min(width, int(free.width() * 0.92))
            height = min(height, int(free.height() * 0.92))
        self.resize(max(width, 640), max(height, 480))

    def attach(self, context: AppContext) -> None:
        """Wire the shell to ``context``: error hooks, settings problems. Call once, on the qasync loop."""
        if self._context is not None:
            raise RuntimeError("the main window is already attached")
        self._context = context
        self._install_exception_hooks()
        if context.settings_error:
            self.show_banner(context.settings_error, kind="warning", object_name="settingsErrorBanner")
        self._update_title()

    # ------------------------------------------------------------------------------------------
    # Construction

    def _action(self, text: str, slot: Callable[[], object], *, shortcut: str | QKeySequence | None = None,
                name: str = "", tip: str = "") -> QAction:
        action = QAction(text, self)
        if name:
            action.setObjectName(name)
        if shortcut is not None:
            # setShortcuts([...]), not setShortcut(): the latter's overloads create Qt's enum namespace
            # (~25 ms) and the shell is built before the first paint.
            action.setShortcuts([QKeySequence(shortcut)])
        if tip:
            action.setToolTip(tip)
            action.setStatusTip(tip)
        action.triggered.connect(lambda _checked=False: slot())
        return action

    def _build_actions(self) -> None:
        self.act_new_project = self._action("New project…", self._new_project_dialog, name="newProjectAction",
                                            tip="Create a project in a new or empty folder")
        self.act_open_project = self._action("Open project…", self._open_project_dialog,
                                             shortcut=QKeySequence.StandardKey.Open, name="openProjectAction",
                                             tip="Open a project folder")
        self.act_export = self._action("Export conversation…", self._export_dialog, shortcut="Ctrl+E",
                                       name="exportAction", tip="Save the active conversation as Markdown")
        self.act_settings = self._action("Settings…", self.open_settings, shortcut="Ctrl+,",
                                         name="settingsAction", tip="Providers, keys, prices and limits")
        self.act_settings.setMenuRole(QAction.MenuRole.PreferencesRole)
        self.act_quit = self._action("Quit", self.close, shortcut="Ctrl+Q", name="quitAction")
        self.act_quit.setMenuRole(QAction.MenuRole.QuitRole)
        self.act_new_node = self._action("New chat node", self.add_node, shortcut="Ctrl+N",
                                         name="newNodeAction", tip="Open a new chat node (Ctrl+N)")
        self.act_close_node = self._action("Close node", self.close_active_node, shortcut="Ctrl+W",
                                           name="closeNodeAction", tip="Close the active chat node")
        self.act_tile = self._action("Tile", self.tile, name="tileAction", tip="Tile the nodes side by side")
        self.act_cascade = self._action("Cascade", self.cascade, name="cascadeAction",
                                        tip="Cascade the nodes")
        self.act_tabbed = QAction("Tabbed", self)
        self.act_tabbed.setObjectName("tabbedAction")
        self.act_tabbed.setCheckable(True)
        self.act_tabbed.setToolTip("Show one node at a time, with tabs")
        self.act_tabbed.toggled.connect(self.set_tabbed)
        self.act_about = self._action("About Chat Nodes", self.show_about, name="aboutAction")
        self.act_about.setMenuRole(QAction.MenuRole.AboutRole)
        self.act_demo = self._action("Offline demo", self.try_demo, name="demoAction",
                                     tip="Use the built-in offline demo provider (no key needed)")

    def _build_menus(self) -> None:
        bar = self.menuBar()
        file_menu = bar.addMenu("&File")
        for a in (self.act_new_project, self.act_open_project):
            file_menu.addAction(a)
        file_menu.addSeparator()
        file_menu.addAction(self.act_export)
        file_menu.addSeparator()
        file_menu.addAction(self.act_settings)
        file_menu.addSeparator()
        file_menu.addAction(self.act_quit)
        node_menu = bar.addMenu("&Node")
        node_menu.addAction(self.act_new_node)
        node_menu.addAction(self.act_close_node)
        view_menu = bar.addMenu("&View")
        view_menu.addAction(self.act_tile)
        view_menu.addAction(self.act_cascade)
        view_menu.addSeparator()
        view_menu.addAction(self.act_tabbed)
        help_menu = bar.addMenu("&Help")
        help_menu.addAction(self.act_demo)
        help_menu.addSeparator()
        help_menu.addAction(self.act_about)

    def _build_toolbar(self) -> None:
        bar = QToolBar("Main", self)
        bar.setObjectName("mainToolBar")
        bar.setMovable(False)
        bar.setFloatable(False)
        # The actions have no icons, so the buttons show their text. (Avoid touching the ``Qt``
        # namespace here: its enums cost ~25 ms to create and the shell is built before first paint.)
        self.act_new_node.setIconText("+  New chat")
        bar.addAction(self.act_new_node)
        bar.addSeparator()
        bar.addAction(self.act_tile)
        bar.addAction(self.act_cascade)
        bar.addAction(self.act_tabbed)
        spacer = QWidget(bar)
        spacer.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        bar.addWidget(spacer)
        bar.addAction(self.act_export)
        self.act_export.setIconText("Export")
        bar.addAction(self.act_settings)
        self.act_settings.setIconText("Settings")
        self.addToolBar(bar)
        self.toolbar = bar

    def _build_status_bar(self) -> None:
        status = self.statusBar()
        status.setObjectName("statusBar")
        status.setSizeGripEnabled(True)
        self.project_label = QLabel("", status)
        self.project_label.setObjectName("projectPathLabel")
        status.addWidget(self.project_label, 1)
        self.provider_label = QLabel("", status)
        self.provider_label.setObjectName("demoModeLabel")
        status.addPermanentWidget(self.provider_label)
        self.cost_label = QLabel("", status)
        self.cost_label.setObjectName("sessionCostLabel")
        self.cost_label.setToolTip("Cost of every conversation in this window (per-model prices; "
                                   "\"≥\" when some model has no known price)")
        status.addPermanentWidget(self.cost_label)
        self._update_cost()

    # ------------------------------------------------------------------------------------------
    # Projects

    @property
    def project_dir(self) -> Path | None:
        """The open project folder."""
        return self._store.folder if self._store is not None else None

    @property
    def store(self) -> ProjectStore | None:
        """The open project's store."""
        return self._store

    def open_project(self, folder: Path) -> None:
        """Save and close the current project, then open ``folder`` (created when missing).

        A corrupt ``project.json`` is kept aside by the store and reported in a banner; the window
        then starts with a fresh project. A project without nodes gets one empty chat node (two in
        demo mode).
        """
        folder = Path(folder).expanduser().resolve()
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            self.show_banner(f"Could not open {folder}: {exc.strerror or exc}", kind="error",
                             object_name="projectErrorBanner")
            return
        from desktop.core.project import ProjectStore
        from desktop.ui.services import AppServices

        if self._store is not None:
            if not self.save_project():
                # Switching would close the nodes and lose what the failed save could not write.
                self.show_banner(f"Stayed in {self.project_dir}: it could not be saved, so switching would "
                                 "lose its latest messages. Free some space or fix the folder's permissions, "
                                 "then try again (File → Export keeps a copy meanwhile).", kind="error",
                                 object_name="projectSwitchBanner")
                return
            self._clear_nodes()
        settings = self.context.effective_settings()
        store = ProjectStore(folder, history_cap_bytes=settings.history_cap_bytes)
        fresh = not store.path.exists()
        project, problem = store.load_or_recover()
        if problem is not None and problem.recovered_from is None:
            fresh = True
        self._store = store
        self.context.project_dir = folder
        self._services = AppServices(
            runtime=self.context.runtime,
            bridge=self.context.bridge,
            settings=self.context.effective_settings,
            list_models=self.context.list_models,
            archive=store.archive_messages,
            read_archive=store.read_archive,
        )
        self._project_extra = dict(project.extra)
        banner = self.banner_area.find("projectCorruptBanner")
        if banner is not None:
            banner.dismiss()
        if problem is not None:
            self.show_banner(str(problem), kind="warning", object_name="projectCorruptBanner")
        states = list(project.nodes)
        new_demo = self.context.demo and (fresh or not states)
        if fresh or not states:
            if new_demo:
                states = [self._new_state(0, title="Tour of Chat Nodes"),
                          self._new_state(1, title="Scratchpad")]
            else:
                states = [self._new_state(0)]
            self._tile_on_show = True
        for state in states:
            self.add_node(state, activate=False, place=fresh)
        if new_demo:
            # A first-time visitor should not face two blank panes: the tour's first prompt is ready
            # in the input, one Enter away.
            tour = self._nodes.get(states[0].id)
            if tour is not None:
                tour.chat_input.setPlainText(DEMO_FIRST_PROMPT)
                tour.chat_input.moveCursor(QTextCursor.MoveOperation.End)
                tour.chat_input.setFocus()
        if self._project_extra.get(_VIEW_MODE_KEY) == "tabbed":
            self.act_tabbed.setChecked(True)
        subs = self.mdi.subWindowList()
        if subs:
            self.mdi.setActiveSubWindow(subs[0])
        if self._tile_on_show and self.isVisible():
            self._tile_on_show = False
            self.tile()
        self._update_title()
        self._update_cost()
        self.project_opened.emit(str(folder))
        if fresh:
            self.save_project()
        self._maybe_check_first_run()

    @staticmethod
    def _new_state(index: int = 0, *, title: str | None = None) -> NodeState:
        """A new empty node; no provider or model of its own, so it follows the default provider."""
        from desktop.core.project import new_node_state

        if title is None:
            title = "Chat" if index == 0 else f"Chat {index + 1}"
        return new_node_state(title)

    def current_project(self) -> Project:
        """The open project as it would be saved now (nodes in window order, with geometry)."""
        from desktop.core.project import Project

        states = [self._state_of(node_id) for node_id in self._ordered_ids()]
        extra = dict(self._project_extra)
        extra[_VIEW_MODE_KEY] = "tabbed" if self.is_tabbed() else "windows"
        return Project(version=1, nodes=states, extra=extra)

    def _ordered_ids(self) -> list[str]:
        order = {id(sub): i for i, sub in enumerate(self.mdi.subWindowList())}
        return sorted(self._nodes, key=lambda nid: order.get(id(self._subs[nid]), 1 << 30))

    def _state_of(self, node_id: str) -> NodeState:
        node = self._nodes[node_id]
        state = node.to_state()
        rect = self._normal_geometry.get(node_id)
        if rect is None:
            rect = self._subs[node_id].geometry()
        return dataclasses.replace(state, x=rect.x(), y=rect.y(), width=rect.width(), height=rect.height())

    def save_project(self) -> bool:
        """Write the project now (atomically); returns False and shows a banner when it fails."""
        self._autosave.stop()
        if self._store is None:
            return False
        try:
            self._store.save(self.current_project())
        except Exception as exc:  # disk full, permissions...: tell the user, keep running
            log.exception("saving the project failed")
            self.show_banner(f"The project could not be saved: {self._scrub(str(exc))}", kind="error",
                             object_name="saveErrorBanner")
            return False
        stale = self.banner_area.find("saveErrorBanner")
        if stale is not None:
            stale.dismiss()
        self.saved.emit()
        return True

    def schedule_save(self) -> None:
        """Save about a second from now (restarted by every further change)."""
        if not self._closing and self._store is not None:
            self._autosave.start()

    def _new_project_dialog(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "New project: choose an empty folder")
        if folder:
            self.new_project(Path(folder))

    def new_project(self, folder: Path) -> None:
        """Open ``folder`` as a project (an empty folder becomes a new project with one node)."""
        self.open_project(folder)

    def _open_project_dialog(self) -> None:
        start = str(self.project_dir) if self.project_dir else ""
        folder = QFileDialog.getExistingDirectory(self, "Open project folder", start)
        if folder:
            self.open_project(Path(folder))

    # ------------------------------------------------------------------------------------------
    # Nodes

    def nodes(self) -> list[ChatNodeWidget]:
        """The chat nodes, in window order."""
        return [self._nodes[nid] for nid in self._ordered_ids()]

    def subwindow_of(self, node: ChatNodeWidget) -> QMdiSubWindow:
        """The sub-window hosting ``node``."""
        return self._subs[node.node_id]

    def active_node(self) -> ChatNodeWidget | None:
        """The node of the active sub-window (or the only node)."""
        sub = self.mdi.activeSubWindow() or self.mdi.currentSubWindow()
        if sub is not None:
            node = self._node_in(sub)
            if node is not None:
                return node
        nodes = self.nodes()
        return nodes[0] if len(nodes) == 1 else None

    def add_node(self, state: NodeState | None = None, *, activate: bool = True,
                 place: bool = False) -> ChatNodeWidget:
        """Open a chat node for ``state`` (a new empty node when None) in a new sub-window.

        Args:
            state: The node to open; None creates an empty node with the default provider.
            activate: Make it the active sub-window.
            place: Ignore the state's geometry and place the node at the next free cascade slot
                (always done for a new node).
        """
        from PySide6.QtCore import Qt

        from desktop.ui.chat_node import ChatNodeWidget

        if self._store is None or self._services is None:
            raise RuntimeError("no project is open")
        fresh = state is None
        if state is None:
            state = self._new_state(len(self._nodes))
        place = place or fresh
        node = ChatNodeWidget(state, self._services)
        sub = QMdiSubWindow()
        sub.setObjectName("nodeSubWindow")
        sub.setWidget(node)
        sub.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose, True)
        sub.setWindowTitle(self._title_for(state))
        sub.setWindowIcon(self._node_icon())
        self.mdi.addSubWindow(sub)
        node_id = node.node_id
        self._nodes[node_id] = node
        self._subs[node_id] = sub
        if place or state.width <= 0 or state.height <= 0:
            rect = self._default_rect(len(self._nodes) - 1)
        else:
            rect = QRect(state.x, state.y, state.width, state.height)
        sub.setGeometry(rect)
        self._normal_geometry[node_id] = QRect(rect)
        sub.installEventFilter(self._watcher)
        node.changed.connect(self.schedule_save)
        node.cost_changed.connect(self._update_cost)
        node.title_changed.connect(lambda title, s=sub: s.setWindowTitle(title or "Chat"))
        node.run_finished.connect(lambda _reason: self.save_project())
        sub.show()
        if self.is_tabbed():
            sub.showMaximized()
        if activate:
            self.mdi.setActiveSubWindow(sub)
            node.setFocus()
        self._update_cost()
        if fresh:
            self.schedule_save()
        return node

    def _node_icon(self) -> QIcon:
        from PySide6.QtCore import Qt

        icon = getattr(self, "_cached_node_icon", None)
        if icon is None:
            from desktop.ui.theme import app_icon

            icon = app_icon()
            if icon.isNull():  # no icon files: a transparent pixmap instead of Qt's logo
                pixmap = QPixmap(16, 16)
                pixmap.fill(Qt.GlobalColor.transparent)
                icon = QIcon(pixmap)
            self._cached_node_icon = icon
        return icon

    @staticmethod
    def _title_for(state: NodeState) -> str:
        return state.title or "Chat"

    def _default_rect(self, index: int) -> QRect:
        area = self.mdi.viewport().size()
        if area.width() < 300 or area.height() < 300:
            area = QSize(self.width() - 20, self.height() - 120)
        width = max(360, min(_DEFAULT_NODE_SIZE.width(), area.width() - 24))
        height = max(320, min(_DEFAULT_NODE_SIZE.height(), area.height() - 24))
        step = 28 * (index % 8)
        return QRect(12 + step, 12 + step, width, height)

    def _node_in(self, sub: QMdiSubWindow) -> ChatNodeWidget | None:
        """The node hosted by ``sub`` when it is one of this window's live nodes."""
        widget = sub.widget()
        for node in self._nodes.values():
            if node is widget:
                return node
        return None

    def close_node(self, node: ChatNodeWidget) -> None:
        """Close ``node`` (a running reply is stopped) and remove it from the project."""
        sub = self._subs.get(node.node_id)
        if sub is not None:
            sub.close()

    def close_active_node(self) -> None:
        """Close the active node."""
        node = self.active_node()
        if node is not None:
            self.close_node(node)

    def _on_subwindow_close(self, sub: QMdiSubWindow) -> None:
        if self._closing:
            return
        node = self._node_in(sub)
        if node is None:
            return
        node_id = node.node_id
        del self._nodes[node_id]
        del self._subs[node_id]
        self._normal_geometry.pop(node_id, None)
        try:
            node.shutdown()
        except Exception:
            log.exception("shutting down node %s failed", node_id)
        self._update_cost()
        self.schedule_save()

    def _on_subwindow_geometry(self, sub: QMdiSubWindow) -> None:
        node = self._node_in(sub)
        if node is None or self._closing or self._switching_view:
            return
        if self.is_tabbed() or sub.isMaximized() or sub.isMinimized() or not sub.isVisible():
            return
        node_id = node.node_id
        if node_id not in self._nodes:
            return
        rect = sub.geometry()
        if self._normal_geometry.get(node_id) != rect:
            self._normal_geometry[node_id] = QRect(rect)
            self.schedule_save()

    def _clear_nodes(self) -> None:
        self._closing = True
        try:
            for node_id in list(self._nodes):
                node = self._nodes.pop(node_id)
                sub = self._subs.pop(node_id)
                try:
                    node.shutdown()
                except Exception:
                    log.exception("shutting down node %s failed", node_id)
                sub.removeEventFilter(self._watcher)
                self.mdi.removeSubWindow(sub)
                sub.deleteLater()
            self._normal_geometry.clear()
        finally:
            self._closing = False

    def _replace_node(self, node: ChatNodeWidget, state: NodeState) -> ChatNodeWidget:
        """Recreate ``node`` from ``state`` in place (same geometry and window order position)."""
        node_id = node.node_id
        rect = QRect(self._normal_geometry.get(node_id) or self._subs[node_id].geometry())
        state = dataclasses.replace(state, x=rect.x(), y=rect.y(), width=rect.width(), height=rect.height())
        sub = self._subs.pop(node_id)
        del self._nodes[node_id]
        self._closing = True
        try:
            node.shutdown()
            sub.removeEventFilter(self._watcher)
            self.mdi.removeSubWindow(sub)
            sub.deleteLater()
        finally:
            self._closing = False
        return self.add_node(state, activate=False)

    # ------------------------------------------------------------------------------------------
    # Layout

    def tile(self) -> None:
        """Tile the nodes (leaves tabbed mode)."""
        if self.is_tabbed():
            self.act_tabbed.setChecked(False)
        self.mdi.tileSubWindows()
        self._capture_all_geometry()

    def cascade(self) -> None:
        """Cascade the nodes (leaves tabbed mode)."""
        if self.is_tabbed():
            self.act_tabbed.setChecked(False)
        self.mdi.cascadeSubWindows()
        self._capture_all_geometry()

    def is_tabbed(self) -> bool:
        """True in tabbed mode."""
        return self.mdi.viewMode() == QMdiArea.ViewMode.TabbedView

    def set_tabbed(self, tabbed: bool) -> None:
        """Switch between tabs (one node at a time) and free-floating sub-windows."""
        if self.act_tabbed.isChecked() != tabbed:
            self.act_tabbed.setChecked(tabbed)  # re-enters through toggled
            return
        if tabbed == self.is_tabbed():
            return
        if tabbed:
            self._capture_all_geometry()
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
        self.schedule_save()

    def _capture_all_geometry(self) -> None:
        for sub in self._subs.values():
            self._on_subwindow_geometry(sub)

    def _on_active_changed(self, _sub: QMdiSubWindow | None) -> None:
        has = self.active_node() is not None
        self.act_export.setEnabled(has)
        self.act_close_node.setEnabled(bool(self._nodes))

    # ------------------------------------------------------------------------------------------
    # Cost, title and status

    def session_cost(self) -> ConversationCost:
        """The cost of every node in the window (sum of the nodes' conversation costs)."""
        from desktop.core.chat.cost import ConversationCost

        usd = 0.0
        unpriced = 0
        estimated = True
        for node in self._nodes.values():
            cc = node.cost()
            usd += cc.usd
            unpriced += cc.unpriced
            estimated = estimated and cc.estimated
        return ConversationCost(usd=usd, estimated=estimated, unpriced=unpriced)

    def _update_cost(self) -> None:
        if not self._nodes:
            self.cost_label.setText("Session n/a")
            return
        from desktop.core.chat.cost import format_cost

        self.cost_label.setText(f"Session {format_cost(self.session_cost())}")

    def _update_title(self) -> None:
        folder = self.project_dir
        name = folder.name if folder is not None else ""
        demo = self._context is not None and self._context.demo
        suffix = " (offline demo)" if demo else ""
        self.setWindowTitle(f"{name} — Chat Nodes{suffix}" if name else f"Chat Nodes{suffix}")
        self.project_label.setText(_display_path(folder) if folder is not None else "")
        self.project_label.setToolTip(f"Project folder (the tools' sandbox): {folder}" if folder else "")
        self.provider_label.setText("Offline demo" if demo else "")

    # ------------------------------------------------------------------------------------------
    # Banners and errors

    def show_banner(self, text: str, *, kind: BannerKind = "info", object_name: str = "banner") -> Banner:
        """Show a non-blocking banner above the nodes (replacing one with the same object name)."""
        banner = Banner(text, kind=kind, object_name=object_name)
        return self.banner_area.show_banner(banner)

    def report_exception(self, exc_type: type[BaseException], exc: BaseException,
                         tb: TracebackType | None) -> None:
        """Log an unhandled exception and show it in a banner; the app keeps running.

        The text shown and logged is scrubbed of every known key.
        """
        detail = "".join(traceback.format_exception(exc_type, exc, tb))
        log.error("unhandled exception:\n%s", self._scrub(detail))
        summary = self._scrub(f"{exc_type.__name__}: {exc}".strip())
        if len(summary) > 300:
            summary = summary[:299] + "…"
        self.last_error = summary
        self.show_banner(f"Something went wrong: {summary}. The app keeps running; details are in the log.",
                         kind="error", object_name="errorBanner")

    def _scrub(self, text: str) -> str:
        from desktop.app import scrub_key_shapes

        return self._context.scrub(text) if self._context is not None else scrub_key_shapes(text)

    def _install_exception_hooks(self) -> None:
        import asyncio

        previous = sys.excepthook
        self._prev_excepthook = previous

        def hook(exc_type: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
            if issubclass(exc_type, KeyboardInterrupt) or self._shutdown_done:
                previous(exc_type, exc, tb)
                return
            try:
                self.report_exception(exc_type, exc, tb)
            except Exception:
                previous(exc_type, exc, tb)

        sys.excepthook = hook
        self._excepthook = hook
        try:
            loop = asyncio.get_event_loop()
        except RuntimeError:
            return
        self._loop = loop
        self._prev_loop_handler = loop.get_exception_handler()

        def loop_handler(lp: asyncio.AbstractEventLoop, ctx: dict[str, Any]) -> None:
            exc = ctx.get("exception")
            if isinstance(exc, BaseException) and not isinstance(exc, asyncio.CancelledError) \
                    and not self._shutdown_done:
                self.report_exception(type(exc), exc, exc.__traceback__)
            else:
                lp.default_exception_handler(ctx)

        loop.set_exception_handler(loop_handler)

    def _remove_exception_hooks(self) -> None:
        if sys.excepthook is getattr(self, "_excepthook", None) and self._prev_excepthook is not None:
            sys.excepthook = self._prev_excepthook
        if self._loop is not None and not self._loop.is_closed():
            self._loop.set_exception_handler(self._prev_loop_handler)

    def _hold(self, coro: Any) -> asyncio.Task[Any]:
        """Run ``coro`` as a task the window keeps a reference to."""
        import asyncio

        task: asyncio.Task[Any] = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    # ------------------------------------------------------------------------------------------
    # First run, local servers and the demo

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 (Qt API)
        super().showEvent(event)
        if self._tile_on_show:
            self._tile_on_show = False
            self._tile_if_windows()
        self._maybe_check_first_run()

    def _maybe_check_first_run(self) -> None:
        if self._context is not None and self._store is not None and self.isVisible() \
                and not getattr(self, "_first_run_checked", False):
            self._first_run_checked = True
            self.check_first_run()

    def _tile_if_windows(self) -> None:
        if not self.is_tabbed() and self._nodes:
            self.tile()

    def check_first_run(self) -> None:
        """Without a usable provider, show the welcome banner and probe local servers."""
        if self.context.has_usable_provider():
            return
        banner = self.show_banner(
            "Welcome to Chat Nodes! No provider is set up yet: add an API key in Settings, "
            "or try the offline demo (no key, no network).",
            kind="info",
            object_name="welcomeBanner",
        )
        banner.add_action("Open Settings", self.open_settings, object_name="openSettingsButton")
        banner.add_action("Try the offline demo", self.try_demo, object_name="tryDemoButton")
        self.welcome_banner = banner
        try:
            self.probe_task: asyncio.Task[Any] | None = self._hold(self._probe_local_servers())
        except RuntimeError:  # no running loop (should not happen in the app)
            self.probe_task = None

    async def _probe_local_servers(self) -> str | None:
        for provider_id, name, url in LOCAL_SERVERS:
            try:
                resp = await self.context.client.get(url, timeout=_PROBE_TIMEOUT_S)
            except Exception:  # refused, timeout...: nothing there
                continue
            if resp.status_code == 200:
                banner = self.banner_area.find("welcomeBanner")
                if banner is not None:
                    banner.add_action(f"Use {name} (found on this computer)",
                                      lambda pid=provider_id: self.use_local_provider(pid),
                                      object_name="useLocalProviderButton")
                return provider_id
        return None

    def use_local_provider(self, provider_id: str) -> None:
        """Make the keyless local provider ``provider_id`` the default (saved) and drop the welcome."""
        from desktop.core.settings import preset

        settings = self.context.settings.copy()
        if settings.provider(provider_id) is None:
            p = preset(provider_id)
            if p is None:
                return
            settings.providers.append(p)
        settings.default_provider = provider_id
        provider = settings.provider(provider_id)
        settings.default_model = provider.models[0] if provider is not None and provider.models else None
        try:
            self.context.save_settings(settings)
        except Exception as exc:
            self.show_banner(f"Could not save the settings: {exc}", kind="error",
                             object_name="settingsErrorBanner")
            return
        self._after_provider_change()

    def try_demo(self) -> None:
        """Switch to the offline demo: start the demo provider and move idle unconfigured nodes onto it."""
        if not self.context.demo:
            try:
                self.context.start_demo()
            except Exception as exc:
                self.show_banner(f"The offline demo could not start: {exc}", kind="error",
                                 object_name="demoErrorBanner")
                return
        self._after_provider_change(switch_to_demo=True)

    def _after_provider_change(self, *, switch_to_demo: bool = False) -> None:
        if self._store is not None:
            self._store.history_cap_bytes = self.context.effective_settings().history_cap_bytes
        if self.context.has_usable_provider():
            banner = self.banner_area.find("welcomeBanner")
            if banner is not None:
                banner.dismiss()
        for node in list(self.nodes()):
            node.reload_settings()
        if switch_to_demo:
            from desktop.app import DEMO_MODEL, DEMO_PROVIDER_ID

            for node in list(self.nodes()):
                state = node.to_state()
                if node.is_busy() or state.provider in (None, DEMO_PROVIDER_ID):
                    continue  # a node without a provider of its own follows the default: the demo
                if self.context.provider_config(state.provider, state.model) is not None:
                    continue  # a working provider is left alone
                demo_state = dataclasses.replace(state, provider=DEMO_PROVIDER_ID, model=DEMO_MODEL)
                self._replace_node(node, demo_state)
            self.schedule_save()
        self._update_title()

    # ------------------------------------------------------------------------------------------
    # Dialogs

    def open_settings(self) -> Any:
        """Open the settings dialog (window-modal sheet, the event loop keeps running); returns it."""
        from PySide6.QtCore import Qt

        from desktop.ui.settings_dialog import SettingsDialog

        existing = getattr(self, "settings_dialog", None)
        if existing is not None and existing.isVisible():
            existing.raise_()
            existing.activateWindow()
            return existing
        dialog = SettingsDialog(self.context, parent=self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose, True)
        dialog.settings_saved.connect(lambda: self._after_provider_change())
        dialog.destroyed.connect(lambda *_: setattr(self, "settings_dialog", None))
        self.settings_dialog = dialog
        dialog.open()
        return dialog

    def _export_dialog(self) -> None:
        node = self.active_node()
        if node is None:
            self.statusBar().showMessage("Select a node to export", 3000)
            return
        title = (node.to_state().title or "conversation").strip()
        safe = "".join(ch if ch.isalnum() or ch in "-_ ." else "_" for ch in title)[:60] or "conversation"
        start = str((self.project_dir or Path.home()) / f"{safe}.md")
        path, _filter = QFileDialog.getSaveFileName(self, "Export conversation", start,
                                                    "Markdown (*.md);;All files (*)")
        if path:
            self.export_conversation(Path(path), node)

    def export_conversation(self, path: Path, node: ChatNodeWidget | None = None) -> Path | None:
        """Write the conversation of ``node`` (the active one when None) as Markdown to ``path``."""
        node = node or self.active_node()
        if node is None:
            return None
        try:
            text = node.export_markdown()
            tmp = path.with_name(path.name + ".tmp")
            tmp.write_text(text, encoding="utf-8")
            tmp.replace(path)
        except OSError as exc:
            self.show_banner(f"Export failed: {exc.strerror or exc}", kind="error",
                             object_name="exportErrorBanner")
            return None
        self.statusBar().showMessage(f"Exported to {path}", 5000)
        return path

    def show_about(self) -> None:
        """A non-modal About box."""
        from PySide6.QtCore import Qt

        from desktop import __version__

        box = QMessageBox(self)
        box.setWindowTitle("About Chat Nodes")
        box.setIconPixmap(self.windowIcon().pixmap(64, 64))
        box.setText(f"<b>Chat Nodes</b> {__version__}")
        box.setInformativeText(
            "A desktop client for OpenAI-compatible and Anthropic models: several chats side by side, "
            "tool calls you approve, token and cost accounting, history per project folder.<br><br>"
            "Python, Qt (PySide6) and asyncio. No Electron."
        )
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose, True)
        box.setModal(False)
        box.show()

    # ------------------------------------------------------------------------------------------
    # Shutdown

    def is_shut_down(self) -> bool:
        """True once the window's shutdown finished (see ``closed``)."""
        return self._shutdown_done

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 (Qt API)
        if self._shutdown_done:
            event.accept()
            return
        event.ignore()
        if getattr(self, "_shutdown_task", None) is None:
            self._shutdown_task = self._hold(self._shutdown_then_close())

    async def _shutdown_then_close(self) -> None:
        try:
            await self.ashutdown()
        finally:
            self._shutdown_done = True
            self.close()
            self.closed.emit()

    async def ashutdown(self) -> None:
        """Stop every run, save the project, close the HTTP client and the demo server."""
        self._autosave.stop()
        from desktop.app import cancel_and_wait

        await cancel_and_wait([t for t in self._tasks if t is not getattr(self, "_shutdown_task", None)])
        try:
            await self.context.runtime.aclose()
        except Exception:
            log.exception("stopping the runs failed")
        self.save_project()
        self._closing = True
        for node in list(self._nodes.values()):
            try:
                node.shutdown()
            except Exception:
                log.exception("shutting down a node failed")
        await self.context.aclose()
        self._remove_exception_hooks()


def _display_path(path: Path) -> str:
    """``path`` with the home folder shown as ``~``."""
    try:
        return "~/" + path.relative_to(Path.home()).as_posix()
    except ValueError:
        return str(path)
