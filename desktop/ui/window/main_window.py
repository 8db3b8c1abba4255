"""The main window: the node area, menus, a slim toolbar, banners, the session cost and the shutdown.

The window is the frame around its parts: the node area (``node_area.NodeArea``: the MDI area of chat
nodes and their layouts), the project controller (``project_controller.ProjectController``: open/new
project, autosave, save, export), the money dialogs (``desktop.ui.money.dialogs``), its chrome
(``chrome.WindowActions``: actions, menus, toolbar, status bar), the first run (``first_run.FirstRun``:
welcome banner, local servers, the offline demo) and, once ``desktop.app`` installs it, the error
reporter (``error_reporter.ErrorReporter``). It connects them to each other (a node's cost change
updates the cost chip) and shuts everything down when it closes.
"""

from __future__ import annotations

import logging
from collections.abc import Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Signal
from PySide6.QtGui import QCloseEvent, QShowEvent
from PySide6.QtWidgets import QMainWindow, QMdiArea, QMdiSubWindow, QVBoxLayout, QWidget

from desktop.ui.banner import Banner, BannerArea, BannerKind
from desktop.ui.canvas.board import CanvasBoard
from desktop.ui.money.dialogs import MoneyDialogs
from desktop.ui.money.session_chip import count_ledger, show_session, sum_costs
from desktop.ui.window.chrome import (
    ActionSlots,
    WindowActions,
    display_path,
    fit_to_screen,
    open_folder,
    show_about_box,
)
from desktop.ui.window.error_reporter import ErrorReporter, error_banner
from desktop.ui.window.first_run import FirstRun
from desktop.ui.window.import_flow import ImportFlow
from desktop.ui.window.navigation import Navigation
from desktop.ui.window.node_area import NodeArea
from desktop.ui.window.project_controller import ProjectController
from desktop.ui.window.search_flow import SearchFlow
from desktop.ui.window.shutdown import WindowShutdown

if TYPE_CHECKING:
    import asyncio

    # Only for type hints: the window's shell is built (and painted) before the core, the chat node
    # and the network stack are imported, so start-up shows a window as early as a bare Qt program.
    from desktop.core.chat.cost import ConversationCost
    from desktop.core.store import NodeState, Project, ProjectStore
    from desktop.core.usage import BudgetCheck
    from desktop.ui.context import AppContext
    from desktop.ui.node.chat_node import ChatNodeWidget
    from desktop.ui.settings.dialog import SettingsDialog

log = logging.getLogger(__name__)

__all__ = ["MainWindow"]


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

    projects: ProjectController
    """Opens, autosaves, saves and exports the project."""
    money: MoneyDialogs
    """The usage dashboard and the budget dialogs."""
    imports: ImportFlow
    """File → Import…: the export's preview, the import in the background, the new nodes."""
    nav: Navigation
    """The sidebar, reopen / rename / delete, recent projects, the shortcuts list."""

    def __init__(self, context: AppContext | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._context: AppContext | None = None
        self.setObjectName("mainWindow")
        self.setWindowTitle("Chat Nodes")
        fit_to_screen(self, 1320, 840)
        self._tasks: set[asyncio.Task[Any]] = set()
        self.shutdown = WindowShutdown(self)  # shutdown.py
        self._tile_on_show = False
        self._first_run_checked = False
        self._ledger_counted = False  # this month of the usage ledger, first counted off the GUI thread
        self._error_reporter: ErrorReporter | None = None
        self.first_run = FirstRun(self)  # welcome, local servers, the demo (first_run.py)
        self.settings_dialog: SettingsDialog | None = None

        a = WindowActions(self, ActionSlots(  # chrome.py
            new_project=lambda: self.projects.new_project_dialog(),
            open_project=lambda: self.projects.open_project_dialog(),
            export=lambda: self.projects.export_dialog(),
            project_budget=lambda: self.money.open_project_budget(), settings=self.open_settings,
            quit=self.close, new_node=self.add_node, close_node=self.close_active_node, tile=self.tile,
            cascade=self.cascade, tabbed=self.set_tabbed, usage=lambda: self.money.open_usage(),
            about=self.show_about, demo=self.try_demo, reopen_node=lambda: self.nav.reopen(),
            rename_node=lambda: self.nav.rename_active(), delete_node=lambda: self.nav.ask_delete_active(),
            sidebar=lambda shown: self.nav.show_sidebar(shown), shortcuts=lambda: self.nav.show_shortcuts(),
            import_conversations=lambda: self.imports.choose_file()))
        self.act_export, self.act_close_node, self.act_tabbed = a.export, a.close_node, a.tabbed
        self.act_new_node, self.act_quit = a.new_node, a.quit
        central = QWidget(self)
        layout = QVBoxLayout(central)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        self.banner_area = BannerArea(central)
        layout.addWidget(self.banner_area)
        self.node_area = NodeArea(central, self.act_tabbed)
        self.mdi: QMdiArea = self.node_area.mdi
        self.mdi.subWindowActivated.connect(self._on_active_changed)
        layout.addWidget(self.mdi, 1)
        self.setCentralWidget(central)
        self.projects = ProjectController(self, self.banner_area, self.node_area, lambda: self.context)
        self.projects.opened.connect(self._on_project_opened)
        self.money = MoneyDialogs(
            self, lambda: self.context, project_folder=lambda: self.projects.folder,
            project_budget=lambda: self.projects.monthly_budget,
            set_project_budget=self.projects.set_monthly_budget, budgets_changed=self._update_cost,
            show_app_budget=lambda: self.open_settings().show_budget())
        self.projects.open_budget_settings = self.money.open_budget_settings
        self.imports = ImportFlow(self, self, self.projects.closed)  # File → Import… (import_flow.py)
        self.projects.open_settings = self.open_settings
        self.projects.saved.connect(self.saved)
        self.node_area.cost_changed.connect(self._update_cost)
        self.node_area.nodes_changed.connect(self._update_cost)

        labels = a.install(self)  # the menus, the toolbar, the status bar
        # The sidebar, closed nodes, recent projects, the shortcuts list (navigation.py).
        self.nav = Navigation(self, a, self.node_area, self.projects,
                              lambda: self._context.config_dir if self._context is not None else None,
                              lambda: self._context.effective_settings() if self._context else None)
        self.canvas = CanvasBoard(self, layout, self.node_area, self.projects)  # View → Canvas
        self.project_label, self.provider_label, self.cost_label = (labels.project, labels.provider,
                                                                    labels.cost)
        self.search = SearchFlow(self, self)  # Ctrl+Shift+F, the index fed on every save (search_flow.py)
        self._update_cost()
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

    def attach(self, context: AppContext) -> None:
        """Wire the shell to ``context`` (settings problems show at once). Call once, on the qasync loop.

        Raises:
            RuntimeError: The window is already attached.
        """
        if self._context is not None:
            raise RuntimeError("the main window is already attached")
        self._context = context
        self._error_reporter = ErrorReporter(self._show_error, context.scrub, parent=self)
        if context.settings_error:
            self.show_banner(context.settings_error, kind="warning", object_name="settingsErrorBanner")
        self.update_title()
        context.bridge.usage_unsaved.connect(self._on_usage_unsaved)
        context.after_load(self._on_services_loaded)

    def _on_services_loaded(self) -> None:
        """The context's deferred services are loaded: finish the nodes, then the first-run check."""
        for node in self.nodes():  # the key store is read now: the default may be another provider
            node.model_choice.reload()
        self.node_area.finish_loading()
        count_ledger(self, self.context.config_dir, self._on_ledger_counted)  # off the GUI thread
        self.search.start()  # the search index's worker threads (search_flow.py)
        self._maybe_check_first_run()

    @property
    def error_reporter(self) -> ErrorReporter:
        """Reports unhandled exceptions in an error banner (``desktop.app`` installs its hooks).

        Raises:
            RuntimeError: The window is only a shell so far (see :meth:`attach`).
        """
        if self._error_reporter is None:
            raise RuntimeError("the main window has no application context yet")
        return self._error_reporter

    # ------------------------------------------------------------------------------------------
    # Projects (the ProjectController does the work)

    @property
    def project_dir(self) -> Path | None:
        """The open project folder."""
        return self.projects.folder

    @property
    def store(self) -> ProjectStore | None:
        """The open project's store."""
        return self.projects.store

    def open_project(self, folder: Path) -> None:
        """Save and close the current project, then open ``folder`` (see ``ProjectController.open``)."""
        self.projects.open(folder)

    def new_project(self, folder: Path) -> None:
        """Open ``folder`` as a project (an empty folder becomes a new project with one node)."""
        self.projects.open(folder)

    def current_project(self) -> Project:
        """The open project as it would be saved now (nodes in window order, with geometry)."""
        return self.projects.current_project()

    def save_project(self) -> bool:
        """Write the project now (atomically); returns False and shows a banner when it fails."""
        return self.projects.save()

    def schedule_save(self) -> None:
        """Save about a second from now (restarted by every further change)."""
        self.projects.schedule_save()

    def show_message(self, folder: Path, node_id: str, message_id: str, *, archived: bool = False) -> bool:
        """Go to a message: open its project and node, its version, scroll to it, highlight it (False:
        not found); in canvas view the board pans and zooms to the node's card."""
        return self.search.go_to(folder, node_id, message_id, archived=archived)

    def export_conversation(self, path: Path, node: ChatNodeWidget | None = None) -> Path | None:
        """Write the conversation of ``node`` (the active one when None) as Markdown to ``path``."""
        return self.projects.export(path, node)

    def _on_project_opened(self, folder: str, new_nodes: bool) -> None:
        if new_nodes:
            self._tile_on_show = True
        if self._tile_on_show and self.isVisible():
            self._tile_on_show = False
            self.tile()
        self.update_title()
        self._update_cost()
        self.context.after_load(lambda: self.nav.recent.remember(Path(folder)))
        self.project_opened.emit(folder)
        self._maybe_check_first_run()

    # ------------------------------------------------------------------------------------------
    # Nodes and layout (the NodeArea does the work)

    def nodes(self) -> list[ChatNodeWidget]:
        """The chat nodes, in window order."""
        return self.node_area.nodes()

    def subwindow_of(self, node: ChatNodeWidget) -> QMdiSubWindow:
        """The sub-window hosting ``node``."""
        return self.node_area.subwindow_of(node)

    def active_node(self) -> ChatNodeWidget | None:
        """The node of the active sub-window (or the only node)."""
        return self.node_area.active_node()

    def go_to_node(self, node_id: str) -> None:
        """Show node ``node_id`` with the focus in its input: its window or tab in the desk; in the
        canvas the board pans and zooms to its card (search results and "Zoom to node" use this)."""
        self.nav.focus_node(node_id)

    def add_node(self, state: NodeState | None = None, *, activate: bool = True,
                 place: bool = False) -> ChatNodeWidget:
        """Open a chat node for ``state`` (a new empty node when None); see ``NodeArea.add_node``."""
        return self.node_area.add_node(state, activate=activate, place=place)

    def close_node(self, node: ChatNodeWidget) -> None:
        """Close ``node`` (a running reply is stopped); it joins the project's recently closed nodes."""
        self.node_area.close_node(node)

    def close_active_node(self) -> None:
        """Close the active node."""
        node = self.active_node()
        if node is not None:
            self.close_node(node)

    def tile(self) -> None:
        """Tile the nodes (leaves tabbed mode)."""
        self.node_area.tile()

    def cascade(self) -> None:
        """Cascade the nodes (leaves tabbed mode)."""
        self.node_area.cascade()

    def is_tabbed(self) -> bool:
        """True in tabbed mode."""
        return self.node_area.is_tabbed()

    def set_tabbed(self, tabbed: bool) -> None:
        """Switch between tabs (one node at a time) and free-floating sub-windows."""
        self.node_area.set_tabbed(tabbed)

    def _on_active_changed(self, _sub: QMdiSubWindow | None) -> None:
        self.act_export.setEnabled(self.active_node() is not None)
        self.act_close_node.setEnabled(bool(self.nodes()))

    # ------------------------------------------------------------------------------------------
    # Cost, title and status

    def session_cost(self) -> ConversationCost:
        """The cost of every node in the window (sum of the nodes' conversation costs)."""
        return sum_costs(node.cost() for node in self.nodes())

    def _update_cost(self) -> None:
        self.act_close_node.setEnabled(bool(self.nodes()))
        nodes = bool(self.nodes())
        show_session(self.cost_label, self.session_cost() if nodes else None,
                     self.budget_check() if nodes else None)

    def _on_ledger_counted(self) -> None:
        self._ledger_counted = True
        self._update_cost()

    def budget_check(self) -> BudgetCheck | None:
        """The tightest monthly budget (app-wide or this project's) and where it stands, or None (also
        until the context's services are loaded and the ledger was first counted on a worker thread)."""
        if self._context is None or not self._context.services_loaded or not self._ledger_counted:
            return None
        return self._context.budget_check(self.projects.monthly_budget)

    def update_title(self) -> None:
        """Show the project and the demo in the title and the status bar."""
        folder = self.project_dir
        name = folder.name if folder is not None else ""
        demo = self._context is not None and self._context.demo
        suffix = " (offline demo)" if demo else ""
        lead = f"{name}{suffix}" if name else "Offline demo" if demo else ""
        self.setWindowTitle(f"{lead} — Chat Nodes" if lead else "Chat Nodes")  # ends with it: Qt adds none
        self.project_label.setText(display_path(folder) if folder is not None else "")
        self.project_label.setToolTip(f"Project folder (the tools' sandbox): {folder}" if folder else "")
        self.provider_label.setText("Offline demo" if demo else "")

    # ------------------------------------------------------------------------------------------
    # Banners and errors

    def show_banner(self, text: str, *, kind: BannerKind = "info", object_name: str = "banner") -> Banner:
        """Show a non-blocking banner above the nodes (replacing one with the same object name)."""
        banner = Banner(text, kind=kind, object_name=object_name)
        return self.banner_area.show_banner(banner)

    def _show_error(self, summary: str) -> None:
        error_banner(self.show_banner, summary, getattr(self._context, "log_file", None), open_folder)

    def _on_usage_unsaved(self, text: str) -> None:
        """A response's usage could not be written to the ledger: say so (it is tried again)."""
        self.statusBar().showMessage(text, 30_000)

    def hold(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
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
            if not self.is_tabbed() and self.nodes():
                self.tile()
        self.node_area.refit()  # the area has its size now: tiles and cascades fill it
        self._maybe_check_first_run()

    def _maybe_check_first_run(self) -> None:
        if self._context is not None and self._context.services_loaded and self.store is not None \
                and self.isVisible() and not self._first_run_checked:
            self._first_run_checked = True
            self.check_first_run()

    def check_first_run(self) -> None:
        """Without a usable provider, show the welcome banner and probe local servers (``first_run.py``)."""
        self.first_run.check()

    @property
    def probe_task(self) -> asyncio.Task[Any] | None:
        """The first run's probe of the local servers (its result: the ``LocalServer``s found)."""
        return self.first_run.probe_task

    def try_demo(self) -> None:
        """Switch to the offline demo: start the demo provider and move idle unconfigured nodes onto it."""
        self.first_run.try_demo()

    # ------------------------------------------------------------------------------------------
    # Dialogs

    def open_settings(self) -> SettingsDialog:
        """Open the settings dialog (window-modal sheet, the event loop keeps running); returns it."""
        from PySide6.QtCore import Qt

        from desktop.ui.settings.dialog import SettingsDialog  # start-up: its pages bring httpx

        existing = self.settings_dialog
        if existing is not None and existing.isVisible():
            existing.raise_()
            existing.activateWindow()
            return existing
        dialog = SettingsDialog(self.context, parent=self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose, True)
        dialog.settings_saved.connect(lambda: self.first_run.after_provider_change())
        dialog.destroyed.connect(lambda *_: setattr(self, "settings_dialog", None))
        self.settings_dialog = dialog
        dialog.open()
        return dialog

    def show_about(self) -> None:
        """A non-modal About box."""
        show_about_box(self)

    # ------------------------------------------------------------------------------------------
    # Shutdown

    def is_shut_down(self) -> bool:
        """True once the window's shutdown finished (see ``closed``)."""
        return self.shutdown.done

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 (Qt API)
        self.shutdown.close_event(event)  # shutdown.py

    async def ashutdown(self) -> None:
        """Stop every run, save the project, close the HTTP client and the demo server."""
        await self.shutdown.ashutdown()

    def attached_context(self) -> AppContext | None:
        """The application context, or None while the window is only a shell."""
        return self._context

    def background_tasks(self) -> set[asyncio.Task[Any]]:
        """The tasks the window holds (``hold``)."""
        return self._tasks

    def uninstall_error_reporter(self) -> None:
        """Remove the error reporter's hooks (the window is closing)."""
        if self._error_reporter is not None:
            self._error_reporter.uninstall()
