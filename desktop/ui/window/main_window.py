"""The main window: the node area, menus, a slim toolbar, banners, the session cost and the shutdown.

The window is the frame around three parts: the :class:`~desktop.ui.window.node_area.NodeArea` (the MDI
area of chat nodes and their layouts), the :class:`~desktop.ui.window.project_controller.ProjectController`
(open/new project, autosave, save, export) and, once ``desktop.app`` installs it, the
:class:`~desktop.ui.window.error_reporter.ErrorReporter`. It handles the first run (welcome banner, local
servers, the offline demo) and shuts everything down when it closes.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Signal
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence, QShowEvent
from PySide6.QtWidgets import QMainWindow, QMdiArea, QMdiSubWindow, QVBoxLayout, QWidget

from desktop.ui.banner import Banner, BannerArea, BannerKind, KeepNodesFilled
from desktop.ui.money.dialogs import MoneyDialogs
from desktop.ui.money.session_chip import show_session, sum_costs
from desktop.ui.window.chrome import (
    build_status_bar,
    build_toolbar,
    fill_menu_bar,
    make_action,
    show_about_box,
)
from desktop.ui.window.error_reporter import ErrorReporter
from desktop.ui.window.node_area import NodeArea
from desktop.ui.window.project_controller import AUTOSAVE_DELAY_MS, ProjectController

if TYPE_CHECKING:
    import asyncio

    # Only for type hints: the window's shell is built (and painted) before the core, the chat node
    # and the network stack are imported, so start-up shows a window as early as a bare Qt program.
    from desktop.core.chat.cost import ConversationCost
    from desktop.core.project import NodeState, Project, ProjectStore
    from desktop.core.usage import BudgetCheck
    from desktop.ui.context import AppContext
    from desktop.ui.node.chat_node import ChatNodeWidget
    from desktop.ui.settings.dialog import SettingsDialog

log = logging.getLogger(__name__)

__all__ = ["MainWindow", "AUTOSAVE_DELAY_MS", "LOCAL_SERVERS"]

LOCAL_SERVERS: tuple[tuple[str, str, str], ...] = (
    ("ollama", "Ollama", "http://127.0.0.1:11434/api/tags"),
    ("lmstudio", "LM Studio", "http://127.0.0.1:1234/v1/models"),
)
"""Keyless local servers probed on a first run: (provider id, name, probe URL)."""

_PROBE_TIMEOUT_S = 0.3


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
        self._tasks: set[asyncio.Task[Any]] = set()
        self._shutdown_done = False
        self._shutdown_task: asyncio.Task[Any] | None = None
        self._tile_on_show = False
        self._first_run_checked = False
        self._error_reporter: ErrorReporter | None = None
        self.probe_task: asyncio.Task[Any] | None = None
        self.settings_dialog: SettingsDialog | None = None

        self._build_actions()
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
        self.projects.saved.connect(self.saved)
        self.node_area.cost_changed.connect(self._update_cost)
        self.node_area.nodes_changed.connect(self._update_cost)

        self._build_chrome()
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
        self._update_title()
        context.after_load(self._on_services_loaded)

    def _on_services_loaded(self) -> None:
        """The context's deferred services are loaded: finish the nodes, then the first-run check."""
        self.node_area.finish_loading()
        self._update_cost()
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
    # Construction

    def _build_actions(self) -> None:
        def action(text: str, slot: Callable[[], object], **kw: Any) -> QAction:
            return make_action(self, text, slot, **kw)

        self.act_new_project = action("New project…", self._new_project_dialog, name="newProjectAction",
                                      tip="Create a project in a new or empty folder")
        self.act_open_project = action("Open project…", self._open_project_dialog,
                                       shortcut=QKeySequence.StandardKey.Open, name="openProjectAction",
                                       tip="Open a project folder")
        self.act_export = action("Export conversation…", self._export_dialog, shortcut="Ctrl+E",
                                 name="exportAction", tip="Save the active conversation as Markdown")
        self.act_export.setIconText("Export")
        self.act_project_budget = action("Project budget…", lambda: self.money.open_project_budget(),
                                         name="projectBudgetAction", tip="This project's monthly budget")
        self.act_settings = action("Settings…", self.open_settings, shortcut="Ctrl+,",
                                   name="settingsAction", tip="Providers, keys, prices and limits")
        self.act_settings.setMenuRole(QAction.MenuRole.PreferencesRole)
        self.act_settings.setIconText("Settings")
        self.act_quit = action("Quit", self.close, shortcut="Ctrl+Q", name="quitAction")
        self.act_quit.setMenuRole(QAction.MenuRole.QuitRole)
        self.act_new_node = action("New chat node", self.add_node, shortcut="Ctrl+N",
                                   name="newNodeAction", tip="Open a new chat node (Ctrl+N)")
        self.act_new_node.setIconText("+  New chat")
        self.act_close_node = action("Close node", self.close_active_node, shortcut="Ctrl+W",
                                     name="closeNodeAction", tip="Close the active chat node")
        self.act_tile = action("Tile", self.tile, name="tileAction", tip="Tile the nodes side by side")
        self.act_cascade = action("Cascade", self.cascade, name="cascadeAction", tip="Cascade the nodes")
        self.act_tabbed = QAction("Tabbed", self)
        self.act_tabbed.setObjectName("tabbedAction")
        self.act_tabbed.setCheckable(True)
        self.act_tabbed.setToolTip("Show one node at a time, with tabs")
        self.act_tabbed.toggled.connect(self.set_tabbed)
        self.act_usage = action("Usage…", lambda: self.money.open_usage(), name="usageAction",
                                tip="Spending by day, model, node and project, from the usage ledger")
        self.act_about = action("About Chat Nodes", self.show_about, name="aboutAction")
        self.act_about.setMenuRole(QAction.MenuRole.AboutRole)
        self.act_demo = action("Offline demo", self.try_demo, name="demoAction",
                               tip="Use the built-in offline demo provider (no key needed)")

    def _build_chrome(self) -> None:
        fill_menu_bar(self.menuBar(), [
            ("&File", [self.act_new_project, self.act_open_project, None, self.act_export, None,
                       self.act_project_budget, self.act_settings, None, self.act_quit]),
            ("&Node", [self.act_new_node, self.act_close_node]),
            ("&View", [self.act_tile, self.act_cascade, None, self.act_tabbed, None, self.act_usage]),
            ("&Help", [self.act_demo, None, self.act_about]),
        ])
        build_toolbar(
            self, [self.act_new_node, None, self.act_tile, self.act_cascade, self.act_tabbed],
            [self.act_export, self.act_settings])
        labels = build_status_bar(self)
        self.project_label = labels.project
        self.provider_label = labels.provider
        self.cost_label = labels.cost
        self._update_cost()

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

    def export_conversation(self, path: Path, node: ChatNodeWidget | None = None) -> Path | None:
        """Write the conversation of ``node`` (the active one when None) as Markdown to ``path``."""
        return self.projects.export(path, node)

    def _new_project_dialog(self) -> None:
        self.projects.new_project_dialog()

    def _open_project_dialog(self) -> None:
        self.projects.open_project_dialog()

    def _export_dialog(self) -> None:
        self.projects.export_dialog()

    def _on_project_opened(self, folder: str, new_nodes: bool) -> None:
        if new_nodes:
            self._tile_on_show = True
        if self._tile_on_show and self.isVisible():
            self._tile_on_show = False
            self.tile()
        self._update_title()
        self._update_cost()
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

    def add_node(self, state: NodeState | None = None, *, activate: bool = True,
                 place: bool = False) -> ChatNodeWidget:
        """Open a chat node for ``state`` (a new empty node when None); see ``NodeArea.add_node``."""
        return self.node_area.add_node(state, activate=activate, place=place)

    def close_node(self, node: ChatNodeWidget) -> None:
        """Close ``node`` (a running reply is stopped) and remove it from the project."""
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

    def budget_check(self) -> BudgetCheck | None:
        """The tightest monthly budget (app-wide or this project's) and where it stands, or None (also
        until the context's services, the usage ledger among them, are loaded)."""
        if self._context is None or not self._context.services_loaded:
            return None
        return self._context.budget_check(self.projects.monthly_budget)

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

    def _show_error(self, summary: str) -> None:
        self.show_banner(f"Something went wrong: {summary}. The app keeps running; details are in the log.",
                         kind="error", object_name="errorBanner")

    def _hold(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
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
        self._maybe_check_first_run()

    def _maybe_check_first_run(self) -> None:
        if self._context is not None and self._context.services_loaded and self.store is not None \
                and self.isVisible() and not self._first_run_checked:
            self._first_run_checked = True
            self.check_first_run()

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
        if self.context.demo_offer is not None:
            banner.add_action("Try the offline demo", self.try_demo, object_name="tryDemoButton")
        banner.dismissed.connect(self._focus_message_input)
        if getattr(self, "_keep_filled", None) is None:  # the node keeps filling the area as the banner goes
            self._keep_filled = KeepNodesFilled(self.mdi, self.banner_area)
        try:
            self.probe_task = self._hold(self._probe_local_servers())
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
                                      functools.partial(self.use_local_provider, provider_id),
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
        store = self.store
        if store is not None:
            store.history_cap_bytes = self.context.effective_settings().history_cap_bytes
        if self.context.has_usable_provider():
            banner = self.banner_area.find("welcomeBanner")
            if banner is not None:
                banner.dismiss()
        for node in list(self.nodes()):
            node.reload_settings()
        offer = self.context.demo_offer
        if switch_to_demo and offer is not None:
            for node in list(self.nodes()):
                state = node.to_state()
                if node.is_busy() or state.provider in (None, offer.provider_id):
                    continue  # a node without a provider of its own follows the default: the demo
                if self.context.provider_config(state.provider, state.model) is not None:
                    continue  # a working provider is left alone
                demo_state = dataclasses.replace(state, provider=offer.provider_id, model=offer.model)
                self.node_area.replace_node(node, demo_state)
            self.schedule_save()
        if switch_to_demo:
            self._focus_message_input()

    def _focus_message_input(self) -> None:
        """Put the keyboard focus in the active (else the first) node's message input."""
        node = self.active_node() or next(iter(self.nodes()), None)
        if node is not None:
            node.chat_input.setFocus()
        self._update_title()

    # ------------------------------------------------------------------------------------------
    # Dialogs

    def open_settings(self) -> SettingsDialog:
        """Open the settings dialog (window-modal sheet, the event loop keeps running); returns it."""
        from PySide6.QtCore import Qt

        from desktop.ui.settings.dialog import SettingsDialog

        existing = self.settings_dialog
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

    def show_about(self) -> None:
        """A non-modal About box."""
        show_about_box(self)

    # ------------------------------------------------------------------------------------------
    # Shutdown

    def is_shut_down(self) -> bool:
        """True once the window's shutdown finished (see ``closed``)."""
        return self._shutdown_done

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 (Qt API)
        if self._shutdown_done:
            event.accept()
            return
        if self._shutdown_task is None and self._context is not None and not self._tasks \
                and not self._context.needs_async_close():
            # Nothing to await (the deferred services never loaded, e.g. --smoke-test): close now.
            self._release()
            self._context.close_now()
            if self._error_reporter is not None:
                self._error_reporter.uninstall()
            self._shutdown_done = True
            event.accept()
            self.closed.emit()
            return
        event.ignore()
        if self._shutdown_task is None:
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
        from desktop.core.aio import cancel_and_wait

        self.projects.autosave.stop()
        await cancel_and_wait([t for t in self._tasks if t is not self._shutdown_task])
        try:
            await self.context.stop_runs()
        except Exception:
            log.exception("stopping the runs failed")
        self._release()
        await self.context.aclose()
        if self._error_reporter is not None:
            self._error_reporter.uninstall()

    def _release(self) -> None:
        """Save the project, release it and shut the nodes down (the runs are stopped)."""
        self.save_project()
        if self.projects.store is not None:
            self.projects.store.release()  # another window or instance may now take the project over
        self.node_area.shutdown()


def _display_path(path: Path) -> str:
    """``path`` with the home folder shown as ``~``."""
    try:
        return "~/" + path.relative_to(Path.home()).as_posix()
    except ValueError:
        return str(path)
