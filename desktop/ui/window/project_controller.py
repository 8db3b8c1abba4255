"""The project controller: open/new project, the debounced autosave, save and export.

A project is a folder with ``project.json``. :class:`ProjectController` opens it through the core's
``ProjectStore`` (a corrupt file is kept aside and reported in a banner), fills the node area, saves
about a second after a node reports a change and at once when a run finishes, and exports a
conversation as Markdown. It keeps the project's recently closed nodes (``closed_nodes.ClosedNodes``):
a node the user closes joins them, Reopen brings one back where it was, Delete removes one for good.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import QFileDialog, QMainWindow

from desktop.ui.banner import Banner, BannerArea, BannerKind
from desktop.ui.mcp.servers import project_opened as mcp_project_opened
from desktop.ui.services import AppServices
from desktop.ui.window.closed_nodes import ClosedNodes
from desktop.ui.window.export_flow import ask_export_path, export_markdown
from desktop.ui.window.node_area import NodeArea, new_node_state
from desktop.ui.window.save_worker import SaveJob, SaveWorker
from desktop.ui.window.trim_queue import TrimQueue

if TYPE_CHECKING:
    from desktop.core.chat.types import ChatMessage
    from desktop.core.store import Project, ProjectStore, SaveResult
    from desktop.ui.context import AppContext
    from desktop.ui.node.chat_node import ChatNodeWidget

log = logging.getLogger(__name__)

__all__ = ["ProjectController", "AUTOSAVE_DELAY_MS", "LAYOUT_KEY", "VIEW_MODE_KEY"]

AUTOSAVE_DELAY_MS = 1000
"""Debounce of the autosave after a node reports a change."""

VIEW_MODE_KEY = "view_mode"
"""The key of ``Project.extra`` that remembers tabs ("tabbed") or free sub-windows ("windows")."""

LAYOUT_KEY = "layout"
"""The key of ``Project.extra`` that remembers the sub-windows' layout ("tiled", "cascaded", "free")."""


class ProjectController(QObject):
    """Opens, saves and exports the window's project.

    Args:
        window: The main window (parent of the file dialogs; its status bar shows short messages).
        banners: Where problems are reported.
        area: The node area the project's nodes open in.
        context: Returns the application context (raises while the window is only a shell).

    Signals:
        opened(str, bool): A project folder was opened; the flag says the nodes are new and should be
            tiled once the window shows.
        saved(): The project was written.
    """

    opened = Signal(str, bool)
    saved = Signal()

    def __init__(self, window: QMainWindow, banners: BannerArea, area: NodeArea,
                 context: Callable[[], AppContext]) -> None:
        super().__init__(window)
        self._window = window
        self._banners = banners
        self._area = area
        self._context = context
        self.store: ProjectStore | None = None
        self.open_budget_settings: Callable[[str], object] = lambda _scope: None
        """Shows where a budget is set (``app``: Settings → General; ``project``: the project's
        budget dialog); the window sets it."""
        self.open_settings: Callable[[], object] = lambda: None
        """Opens the settings dialog (a node's "Open Settings"); the window sets it."""
        self._extra: dict[str, Any] = {}
        self.extra_readers: list[Callable[[dict[str, Any]], None]] = []
        """Read their part of ``project.json``'s extras once a project's nodes are open (the canvas)."""
        self.extra_writers: list[Callable[[dict[str, Any]], None]] = []
        """Write their part into the extras of the project about to be saved (the canvas)."""
        self.closed = ClosedNodes(self)
        """The project's recently closed nodes (saved in ``project.json`` beside the open ones)."""
        area.node_closed.connect(self.closed.push)
        self.autosave = QTimer(self)
        self.autosave.setSingleShot(True)
        self.autosave.setInterval(AUTOSAVE_DELAY_MS)
        self.writer = SaveWorker(self, lambda job: self._written(job, at_once=False))
        """Writes the autosave of a long project on a worker thread (``save_worker``)."""
        self.trims = TrimQueue(self, area.node)  # a background save's trims: one node per turn
        self.autosave.timeout.connect(self.autosave_now)
        area.changed.connect(self.schedule_save)
        area.run_finished.connect(self.autosave_now)

    @property
    def folder(self) -> Path | None:
        """The open project folder."""
        return self.store.folder if self.store is not None else None

    def _banner(self, text: str, kind: BannerKind, object_name: str) -> Banner:
        return self._banners.show_banner(Banner(text, kind=kind, object_name=object_name))

    # -- opening --------------------------------------------------------------------------------
    def open(self, folder: Path) -> None:
        """Save and close the current project, then open ``folder`` (created when missing).

        A corrupt ``project.json`` is kept aside by the store and reported in a banner; the window
        then starts with a fresh project. A project without nodes gets one empty chat node (two in
        demo mode, the first with the tour's prompt ready in its input).
        """
        folder = Path(folder).expanduser().resolve()
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            self._banner(f"Could not open {folder}: {exc.strerror or exc}", "error", "projectErrorBanner")
            return
        from desktop.core.store import ProjectStore

        if self.store is not None:
            if not self.store.read_only and not self.save():
                # Switching would close the nodes and lose what the failed save could not write.
                self._banner(f"Stayed in {self.folder}: it could not be saved, so switching would lose its "
                             "latest messages. Free some space or fix the folder's permissions, then try "
                             "again (File → Export keeps a copy meanwhile).", "error", "projectSwitchBanner")
                return
            self.store.release()
            self._close_nodes()
        context = self._context()
        store = ProjectStore(folder, history_cap_bytes=context.effective_settings().history_cap_bytes,
                             grants=context.grants)
        fresh = not store.path.exists()
        loaded = store.open()
        project, problem = loaded.value, loaded.error
        if problem is not None and problem.recovered_from is None:
            fresh = True
        self.store = store
        context.project_dir = folder
        area = self._area

        def node_title(node_id: str) -> str:
            node = area.node(node_id)
            return node.title if node is not None else ""

        context.node_title = node_title

        def archive(node_id: str, messages: Sequence[ChatMessage]) -> None:
            store.archive_messages(node_id, messages)

        self._area.services = AppServices(
            runtime=context.runtime_handle,
            bridge=context.bridge,
            settings=context.effective_settings,
            list_models=context.list_models,
            archive=archive,
            read_archive=store.read_archive,
            budget_check=lambda: context.budget_check(self.monthly_budget),
            open_budget_settings=lambda scope: self.open_budget_settings(scope),
            open_settings=lambda: self.open_settings(),
            keyed_providers=context.keyed_providers,
            load_services=context.load_services,
            attachment_store=context.attachment_store,
        )
        self._extra = dict(project.extra)
        self.closed.load(project.closed)
        self._area.layout.set_mode(self._extra.get(LAYOUT_KEY))
        for name in ("projectCorruptBanner", "projectReadOnlyBanner", "projectRequestsBanner",
                     "projectChangedBanner"):
            stale = self._banners.find(name)
            if stale is not None:
                stale.dismiss()
        notices = [n for n in loaded.notices if n != loaded.read_only_reason]
        if notices:
            self._banner("\n".join(notices), "warning", "projectCorruptBanner")
        if loaded.read_only_reason is not None:
            self._read_only_banner(loaded.read_only_reason)
        asks = [f"{', '.join(n.requested_always_allow)} in \u201c{n.title}\u201d"
                for n in project.nodes if n.requested_always_allow]
        if asks:
            self._banner("This project's file asks to always allow " + "; ".join(asks) + ". Nothing was "
                         "allowed: a project file cannot grant permissions, so each call still asks "
                         "(Always allow on a card grants it for you only).", "warning",
                         "projectRequestsBanner")
        states = list(project.nodes)
        offer = context.demo_offer if context.demo else None
        new_nodes = fresh or not states
        if new_nodes:
            if offer is not None:
                states = [new_node_state(0, title="Tour of Chat Nodes"),
                          new_node_state(1, title="Scratchpad")]
            else:
                states = [new_node_state(0)]
        for state in states:
            self._area.add_node(state, activate=False, place=fresh)
        demo_id = context.demo_offer.provider_id if context.demo_offer is not None else None
        if demo_id is not None and any(s.provider == demo_id for s in states):
            context.after_load(lambda: self._demo_nodes_opened(store))  # a demo node stays a demo node
        if new_nodes and offer is not None:
            # A first-time visitor should not face two blank panes: the tour's first prompt is ready
            # in the input, one Enter away.
            tour = self._area.node(states[0].id)
            if tour is not None:
                tour.chat_input.setPlainText(offer.first_prompt)
                tour.chat_input.moveCursor(QTextCursor.MoveOperation.End)
                tour.chat_input.setFocus()
        if self._extra.get(VIEW_MODE_KEY) == "tabbed":
            self._area.set_tabbed(True)
        self._area.activate_first()
        self._area.refit()  # a tiled or cascaded project fills this window as it is now
        for read in self.extra_readers:
            read(self._extra)
        context.after_load(lambda: self._mcp_opened(store, folder))  # MCP: once the services are loaded
        self.opened.emit(str(folder), new_nodes)
        if fresh and not store.read_only:
            # Written at once; at start-up right after the first paint (closing saves it in any case).
            context.after_load(lambda: self._save_if_open(store))

    def _demo_nodes_opened(self, store: ProjectStore) -> None:
        """The project has nodes that ran on the offline demo: list the demo for them (not as the
        default: new nodes follow the user's providers)."""
        context = self._context()
        if self.store is not store or context.demo_offer is None:
            return
        try:
            context.start_demo(default=False)
        except Exception:  # noqa: BLE001 - the nodes then show the demo as missing; nothing else breaks
            log.exception("the offline demo could not start")
            return
        for node in self._area.nodes():
            if node.provider == context.demo_offer.provider_id:
                node.reload_settings()

    def _save_if_open(self, store: ProjectStore) -> None:
        if self.store is store:
            self.save()

    def _mcp_opened(self, store: ProjectStore, folder: Path) -> None:
        """MCP for the opened project (trust banner, start), unless another project replaced it since."""
        if self.store is not store:
            return
        mcp_project_opened(self._window, self._banners, self._context(), folder)

    def _read_only_banner(self, reason: str, *, hint: str = "Take over once it is closed there.") -> None:
        banner = self._banner(f"{reason}. {hint}", "warning", "projectReadOnlyBanner")
        banner.add_action("Take over", self.take_over, object_name="takeOverButton")

    def take_over(self) -> bool:
        """Become the project's writer once the other window or instance has closed it, and reopen
        the project so its latest saved state is what this window shows and saves."""
        store = self.store
        if store is None or not store.read_only:
            return True
        if not store.take_over():
            self._read_only_banner(store.read_only_reason or "The project is still open elsewhere.",
                                   hint="Close it there first, then take over.")
            return False
        folder = store.folder
        store.release()
        self.store = None  # nothing to save: this window could not write, the other one did
        self._close_nodes()
        self.open(folder)
        return self.store is not None and not self.store.read_only

    @property
    def monthly_budget(self) -> float | None:
        """The open project's own monthly budget (``"budget"`` in ``project.json``), or None."""
        from desktop.core.usage import parse_budget

        try:
            return parse_budget(self._extra)
        except ValueError:
            return None

    def set_monthly_budget(self, limit: float | None) -> None:
        """Set (or with None remove) the project's monthly budget and save the project."""
        from desktop.core.usage import budget_block

        block = budget_block(limit)
        if block is None:
            self._extra.pop("budget", None)
        else:
            self._extra["budget"] = block
        self.save()

    def current_project(self) -> Project:
        """The open project as it would be saved now (nodes in window order, with geometry)."""
        from desktop.core.store import Project

        extra = dict(self._extra)
        extra[VIEW_MODE_KEY] = "tabbed" if self._area.is_tabbed() else "windows"
        extra[LAYOUT_KEY] = self._area.layout_mode
        for write in self.extra_writers:
            write(extra)
        return Project(version=1, nodes=self._area.states(), extra=extra, closed=self.closed.states())

    # -- recently closed nodes ------------------------------------------------------------------
    def reopen_closed(self, node_id: str | None = None) -> ChatNodeWidget | None:
        """Open the closed node ``node_id`` (the most recently closed when None) where it was, with
        its history, provider, model, versions and grants; the keyboard focus goes to its input."""
        from desktop.core.store import is_parked

        if self._area.services is None:
            return None
        found = self.closed.find(node_id) if node_id is not None else None
        state = self.closed.take(node_id)
        if state is None:
            return None
        # an imported node never opened has no place of its own yet: it goes in the visible area
        node = self._area.add_node(state, place=found is not None and is_parked(found))
        self.schedule_save()
        return node

    def delete_closed(self, node_id: str) -> bool:
        """Delete the closed node ``node_id`` for good: the project is saved without it, then its
        history archive is removed. False when it is not a closed node or the save failed."""
        if self.closed.find(node_id) is None:
            return False
        self.closed.drop([node_id])
        if not self.save():
            return False
        store = self.store
        if store is not None:
            try:
                store.delete_node_history(node_id)
            except Exception as exc:  # noqa: BLE001 - the node is gone; a stray archive file is harmless
                log.warning("could not remove the history archive of node %s: %s", node_id, exc)
        return True

    # -- saving ---------------------------------------------------------------------------------
    def save(self) -> bool:
        """Write the project now (atomically, after a background write still running); returns False
        and shows a banner when it fails."""
        self.autosave.stop()
        self.writer.wait()
        return self._write()

    def autosave_now(self) -> None:
        """The autosave (the debounce ended, a run finished): a long project is written by the save
        worker (the GUI thread only copies it), a short one at once."""
        self.autosave.stop()
        try:
            self.writer.request(self._to_save, self._write)
        except Exception:  # noqa: BLE001 - a slot: never into the Qt loop; the next save tries again
            log.exception("the autosave could not start")

    def _close_nodes(self) -> None:
        self.trims.clear()
        self._area.clear()

    def _to_save(self) -> tuple[ProjectStore, Project] | None:
        store = self.store
        if len(self.trims):  # every save sees what the one before trimmed: once the nodes took it in
            self.schedule_save()
            return None
        return None if store is None or store.read_only else (store, self.current_project())

    def _write(self, *, force: bool = False) -> bool:
        store = self.store
        if store is None or store.read_only:
            return False  # read-only: the banner says so; the other window or instance is the writer
        self.trims.flush()
        job = SaveJob(store, self.current_project(), force=force)
        job.run()
        return self._written(job)

    def _written(self, job: SaveJob, *, at_once: bool = True) -> bool:
        """Show what a save did (its trims applied) or why it failed (a banner); on the GUI thread."""
        from desktop.core.store import ProjectChangedError

        if job.store is not self.store:
            return False  # another project was opened meanwhile: this outcome is not the window's
        if isinstance(job.error, ProjectChangedError):
            self._changed_banner()
            return False
        if job.error is not None or job.result is None:  # disk full, permissions...: tell the user
            log.error("saving the project failed", exc_info=job.error)
            self._banner(f"The project could not be saved: {self._context().scrub(str(job.error))}",
                         "error", "saveErrorBanner")
            return False
        self._apply_result(job.result, at_once)
        stale = self._banners.find("saveErrorBanner")
        if stale is not None:
            stale.dismiss()
        self.saved.emit()
        return True

    def _changed_banner(self) -> None:
        if self._banners.find("projectChangedBanner") is not None:
            return
        banner = self._banner("project.json was changed by another program since it was opened; it was "
                              "not overwritten.", "warning", "projectChangedBanner")
        banner.add_action("Keep mine", self._overwrite, object_name="overwriteButton")
        banner.add_action("Load theirs", self._reload, object_name="reloadButton")

    def _overwrite(self) -> None:
        self.writer.wait()
        self._write(force=True)

    def _apply_result(self, result: SaveResult, at_once: bool = True) -> None:
        """Show what a save did: trimmed histories (open and closed nodes), closed nodes archived."""
        self.trims.put(result.trimmed, at_once=at_once)  # a background save's: one node per turn
        self.closed.apply_saved(result.trimmed)
        self.closed.drop(result.evicted)

    def _reload(self) -> None:
        store = self.store
        if store is None:
            return
        self.writer.wait()
        folder = store.folder
        store.release()
        self.store = None  # the other program's file wins: nothing of this window's state is written
        self._close_nodes()
        self.open(folder)

    def schedule_save(self) -> None:
        """Save about a second from now (restarted by every further change)."""
        if not self._area.closing and self.store is not None:
            self.autosave.start()

    # -- dialogs and export (``export_flow``) -------------------------------------------------------
    def new_project_dialog(self) -> None:
        """Ask for an empty folder and open it as a new project."""
        folder = QFileDialog.getExistingDirectory(self._window, "New project: choose an empty folder")
        if folder:
            self.open(Path(folder))

    def open_project_dialog(self) -> None:
        """Ask for a project folder and open it."""
        start = str(self.folder) if self.folder else ""
        folder = QFileDialog.getExistingDirectory(self._window, "Open project folder", start)
        if folder:
            self.open(Path(folder))

    def export_dialog(self) -> None:
        """Ask where to save the active conversation as Markdown, then export it."""
        node = self._area.active_node()
        path = ask_export_path(self._window, node, self.folder)
        if path is not None and node is not None:
            self.export(path, node)

    def export(self, path: Path, node: ChatNodeWidget | None = None) -> Path | None:
        """Write the conversation of ``node`` (the active one when None) as Markdown to ``path``."""
        node = node or self._area.active_node()
        if node is None:
            return None
        return export_markdown(self._window, self._banners, self._context().scrub, path, node)
