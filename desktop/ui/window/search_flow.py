"""The window's search: the index kept current on every save, the panel, going to a hit.

``SearchFlow`` owns the ``desktop.core.search.SearchService`` (two worker threads: the index is
written and queried off the GUI thread) once the context's services are loaded: each save hands it a
snapshot of the project (``snapshot_project``: a copy of each node's message list, the only GUI-thread
work), each opened project is caught up from its files. Its callbacks come back as queued signals.

The snapshot waits while the window streams (a node runs, or a render is pending), for
``MAX_INDEX_WAIT_S`` at most: indexing a save (scrubbing, normalising and splitting every changed
message, half-streamed answers among them) holds the GIL for 50-480 ms of CPU, paced or not, and the
GUI thread, which needs it at every paint and slot, froze for 100-260 ms at a time while eight nodes
streamed (issue 28). A newer save replaces a waiting snapshot; a closed window drops it (the next
start catches up from the files).
A missing, stale or damaged index is rebuilt by the service in the background; the panel's status line
shows the progress, or "Search unavailable: <reason>" (a locked or read-only data folder).

The panel (``desktop.ui.search.panel``) opens with Ctrl+Shift+F or Edit → Find in all chats
(``findAllAction``). Activating a hit calls ``go_to``: open the hit's project when it is another one,
find the node (reopening a closed one), load the archive when the message is there, then
``desktop.ui.search.reveal.reveal_message``.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import QObject, Qt, QTimer, Signal, SignalInstance
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMainWindow, QMenu

from desktop.ui.frames import frame_scheduler
from desktop.ui.window.chrome import make_action

if TYPE_CHECKING:
    from desktop.core.search import IndexStatus, ProjectSnapshot, SearchHit, SearchQuery, SearchService
    from desktop.ui.context import AppContext
    from desktop.ui.search.panel import SearchPanel
    from desktop.ui.window.node_area import NodeArea
    from desktop.ui.window.project_controller import ProjectController

__all__ = ["INDEX_POLL_MS", "MAX_INDEX_WAIT_S", "SearchFlow", "SearchHost"]

log = logging.getLogger(__name__)

INDEX_POLL_MS = 250
"""How often a waiting snapshot checks whether the window stopped streaming."""
MAX_INDEX_WAIT_S = 30.0
"""The longest a snapshot waits for the window to stop streaming (then it is indexed anyway)."""


class SearchHost(Protocol):
    """What the search needs of the main window (typed here: this module does not import it back)."""

    projects: ProjectController
    node_area: NodeArea
    closed: SignalInstance

    def attached_context(self) -> AppContext | None: ...


class SearchFlow(QObject):
    """The search of one window (see the module doc).

    Args:
        window: The main window.
        host: The same window, typed as what the search uses of it.

    Attributes:
        action: Edit → Find in all chats (Ctrl+Shift+F).
        service: The running search service, or None (not started yet, or closed).
    """

    _status = Signal(object)
    _results = Signal(object)
    _facets = Signal(object)

    def __init__(self, window: QMainWindow, host: SearchHost) -> None:
        super().__init__(window)
        self._host = host
        self.service: SearchService | None = None
        self._waiting: ProjectSnapshot | None = None
        self._waiting_since = 0.0
        self._index_timer = QTimer(self)
        self._index_timer.setSingleShot(True)
        self._index_timer.setInterval(INDEX_POLL_MS)
        self._index_timer.timeout.connect(self._hand_over)
        self._window = window
        self._panel: SearchPanel | None = None
        self._last_status: IndexStatus | None = None
        self.action: QAction = make_action(window, "Find in all chats…", self.open_panel,
                                           shortcut="Ctrl+Shift+F", name="findAllAction",
                                           tip="Search every message of every project (Ctrl+Shift+F)")
        edit = QMenu("&Edit", window)
        edit.setObjectName("editMenu")
        edit.addAction(self.action)
        bar = window.menuBar()
        actions = bar.actions()
        bar.insertMenu(actions[1], edit) if len(actions) > 1 else bar.addMenu(edit)
        window.addAction(self.action)
        self._status.connect(self._on_status)
        host.projects.saved.connect(self.project_saved)
        host.projects.opened.connect(lambda folder, _new: self._opened(Path(folder)))
        host.closed.connect(self.close)

    @property
    def panel(self) -> SearchPanel:
        """The search panel, made on first use (start-up imports neither it nor the search core)."""
        if self._panel is None:
            from desktop.ui.search.panel import SearchPanel

            panel = SearchPanel(self._window, lambda: self._host.projects.folder)
            self._window.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, panel)
            panel.hide()
            self._results.connect(panel.show_results)
            self._facets.connect(lambda f: panel.set_models(list(getattr(f, "models", ()))))
            panel.query_changed.connect(self._run)
            panel.activated.connect(self._on_activated)
            if self._last_status is not None:
                panel.set_index_status(self._last_status)
            self._panel = panel
        return self._panel

    def start(self) -> None:
        """Start the service (the context's services are loaded: the keys can be scrubbed)."""
        context = self._host.attached_context()
        if self.service is not None or context is None:
            return
        from desktop.core.search import SearchService
        from desktop.core.store import RecentProjects

        recent = RecentProjects(context.config_dir)
        self.service = SearchService(secrets=context.recent_keys, known_projects=recent.folders,
                                     on_status=self._status.emit)
        self.service.start()
        folder = self._host.projects.folder
        if folder is not None:
            self.service.project_opened(folder)

    def close(self) -> None:
        """Stop the service's threads (the window closed); waiting updates are caught up next start."""
        service, self.service = self.service, None
        self._waiting = None
        self._index_timer.stop()
        if service is not None:
            service.close()

    def open_panel(self) -> None:
        """Show the panel with the cursor in its input."""
        self.start()
        if self.service is not None and self.service.status.state == "ready":
            self.service.facets(self._facets.emit)  # the models offered by the filter
        self.panel.open_panel()

    def project_saved(self) -> None:
        """Hand the saved project to the index (a snapshot; the indexing runs on the writer thread
        once the window stops streaming: see the module doc)."""
        folder = self._host.projects.folder
        if self.service is None or folder is None:
            return
        from dataclasses import replace

        from desktop.core.search import snapshot_project

        project = self._host.projects.current_project()
        # The recently closed nodes are found too (a hit reopens them).
        project = replace(project, nodes=[*project.nodes, *project.closed])
        if self._waiting is None:
            self._waiting_since = time.monotonic()
        self._waiting = snapshot_project(folder, project)
        self._hand_over()

    @property
    def index_waiting(self) -> bool:
        """True while a saved project's snapshot waits for the window to stop streaming."""
        return self._waiting is not None

    def _hand_over(self) -> None:
        snapshot = self._waiting
        if snapshot is None or self.service is None:
            return
        if self._streaming() and time.monotonic() - self._waiting_since < MAX_INDEX_WAIT_S:
            self._index_timer.start()
            return
        self._waiting = None
        self.service.project_saved(snapshot)

    def _streaming(self) -> bool:
        """A node runs or a stream's render is pending: the GUI thread needs the GIL."""
        if frame_scheduler().foreground_count() > 0:
            return True
        return any(node.is_busy() for node in self._host.node_area.nodes())

    def _on_status(self, status: IndexStatus) -> None:
        self._last_status = status
        if self._panel is None:
            return  # the panel shows it when it is made
        self._panel.set_index_status(status)
        if status.state == "ready" and self.service is not None:
            self.service.facets(self._facets.emit)

    def _opened(self, folder: Path) -> None:
        if self.service is not None:
            self.service.project_opened(folder)

    def _run(self, query: SearchQuery) -> None:
        self.start()
        if self.service is not None:
            self.service.search(query, self._results.emit)

    def _on_activated(self, hit: SearchHit) -> None:
        if not self.go_to(hit.project, hit.node_id, hit.message_id, archived=hit.archived):
            self.panel.status.setText("That message is not there any more (the index catches up on the "
                                      "next save).")

    def go_to(self, folder: Path, node_id: str, message_id: str, *, archived: bool = False) -> bool:
        """Open ``folder`` (when it is not the open project) and its node ``node_id`` (reopened when
        closed), switch to the version holding ``message_id``, scroll it into view and highlight it.

        Args:
            folder: The project folder.
            node_id: The node.
            message_id: The message.
            archived: The message is in the node's history archive (loaded into the transcript first).

        Returns:
            False when the project, the node or the message cannot be found.
        """
        from desktop.ui.search.reveal import reveal_message

        projects = self._host.projects
        if projects.folder is None or Path(folder).resolve() != projects.folder.resolve():
            projects.open(Path(folder))
            if projects.folder is None or Path(folder).resolve() != projects.folder.resolve():
                return False
        node = self._host.node_area.node(node_id) or projects.reopen_closed(node_id)
        if node is None:
            return False
        self._host.node_area.focus_node(node)  # its sub-window, or its card on the canvas
        if archived:
            node.archive.load_all()
        if not reveal_message(node, message_id):
            return False
        return True
