"""File → Import…: choose an export, preview it, import it in the background, add the new nodes.

:class:`ImportFlow` runs the core's importers (``desktop.core.importers``) off the GUI thread and the
dialog (``import_dialog.ImportDialog``) on it:

1. a file dialog (``importFileDialog``: a ``.zip`` or ``.json`` export);
2. ``preview_export`` in a worker thread (a 500 MB export never freezes the window), then the dialog
   lists its conversations (already imported ones marked, by their original id);
3. ``ImportJob`` (its own worker thread) converts the ticked ones, each whole or not at all;
4. back on the GUI thread the nodes of conversations imported again with "Replace" are closed, the
   ``OPEN_AT_MOST`` most recent conversations become nodes, added a few per event-loop turn
   (``NodeArea.add_node(place=True)``: placed in the visible area), the others join the project's
   closed nodes marked parked (``ClosedNodes.park``; no widget is built: the sidebar lists them under
   Imported, one click opens one, the search index reads them like any node) and the project is
   saved once.

Every callback from a worker reaches the GUI thread through a queued signal of this object; results of
a preview or job that was cancelled or replaced are dropped (each run has a token). Imported messages
carry no usage: nothing here touches the usage ledger or the budgets.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from PySide6.QtCore import QObject, Qt, QTimer, Signal
from PySide6.QtWidgets import QDialog, QDockWidget, QFileDialog, QMainWindow

if TYPE_CHECKING:
    from desktop.core.importers import ExportPreview, ImportJob, ImportProblem, ImportProgress
    from desktop.core.store import NodeState, Project, ProjectStore
    from desktop.ui.banner import Banner, BannerKind
    from desktop.ui.window.closed_nodes import ClosedNodes
    from desktop.ui.window.import_dialog import ImportDialog
    from desktop.ui.window.node_area import NodeArea

log = logging.getLogger(__name__)

__all__ = ["ImportFlow", "ImportHost"]

_PROGRESS_EVERY_S = 0.05
"""A worker reports progress at most this often (a 10,000-conversation export would otherwise queue
10,000 signals)."""
_ADD_BUDGET_S = 0.03
"""Time spent adding nodes per event-loop turn (the window keeps painting and answering)."""


class ImportHost(Protocol):
    """What :class:`ImportFlow` needs of its window (a ``MainWindow``; a Protocol, so this module does
    not import the window's module back)."""

    @property
    def node_area(self) -> NodeArea: ...
    @property
    def store(self) -> ProjectStore | None: ...
    def current_project(self) -> Project: ...
    def save_project(self) -> bool: ...
    def show_banner(self, text: str, *, kind: BannerKind = "info", object_name: str = "banner") -> Banner: ...


class ImportFlow(QObject):
    """File → Import… for one window (see the module docstring).

    Args:
        window: The main window (the dialogs' parent, where the nodes go).
        host: The same window, as what the flow uses of it.
        closed: The project's closed nodes, where imported conversations not opened go.

    Attributes:
        dialog: The import dialog open now (or last), or None.
        job: The import running now (or last), or None.

    Signals:
        finished(): An import ended (its nodes added and the project saved, or it failed or was
            cancelled); the dialog shows what happened.
    """

    finished = Signal()
    _preview_progress = Signal(object)
    _preview_done = Signal(object)
    _job_progress = Signal(object)
    _job_done = Signal(object)

    def __init__(self, window: QMainWindow, host: ImportHost, closed: ClosedNodes) -> None:
        super().__init__(window)
        self._window = window
        self._host = host
        self.dialog: ImportDialog | None = None
        self.job: ImportJob | None = None
        self._token = 0
        self._cancel_preview: threading.Event | None = None
        self._path: Path | None = None
        self._store: ProjectStore | None = None
        self._closed = closed
        self._adding: list[NodeState] = []
        self._added: list[str] = []
        self._parked = 0
        self._stop_adding = False
        self._wired = False

    def _wire(self) -> None:
        """Connect the workers' signals, queued (not in ``__init__``: the window's shell is built before
        its first paint, and Qt's enum namespace costs ~25 ms)."""
        if self._wired:
            return
        self._wired = True
        queued = Qt.ConnectionType.QueuedConnection
        self._preview_progress.connect(self._on_preview_progress, queued)
        self._preview_done.connect(self._on_preview_done, queued)
        self._job_progress.connect(self._on_job_progress, queued)
        self._job_done.connect(self._on_job_done, queued)

    # -- starting ---------------------------------------------------------------------------------
    def choose_file(self) -> QFileDialog | None:
        """Ask for an export (window-modal; the event loop keeps running), then :meth:`open` it.

        Returns:
            The file dialog, or None when the project cannot take an import (read-only, none open).
        """
        if not self._writable():
            return None
        downloads = Path.home() / "Downloads"
        chooser = QFileDialog(self._window, "Import conversations",
                              str(downloads if downloads.is_dir() else Path.home()))
        chooser.setObjectName("importFileDialog")
        chooser.setFileMode(QFileDialog.FileMode.ExistingFile)
        chooser.setNameFilters(["ChatGPT, Claude or Chat Nodes exports (*.zip *.json)", "All files (*)"])
        chooser.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose, True)
        chooser.fileSelected.connect(lambda path: self.open(Path(path)))
        chooser.open()
        return chooser

    def open(self, path: Path) -> ImportDialog | None:
        """Read the export ``path`` in the background and show its conversations in the import dialog.

        Returns:
            The dialog, or None when the project cannot take an import (read-only, none open).
        """
        store = self._host.store
        if store is None or not self._writable():
            return None
        from desktop.ui.window.import_dialog import ImportDialog  # start-up: loaded on first use

        self._wire()
        self.close_dialog()
        if self._adding:  # a previous import was still adding nodes: it stops here
            self._adding = []
            self._hold_paint(False)
        self._token += 1
        token = self._token
        self._path, self._store = path, store
        dialog = ImportDialog(path, self._window)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose, True)
        dialog.import_requested.connect(self._start_job)
        dialog.cancel_requested.connect(self.cancel)
        dialog.finished.connect(lambda _result, d=dialog: self._dialog_closed(d))
        self.dialog = dialog
        dialog.show_progress(f"Reading {path.name}…")
        dialog.open()
        cancel = threading.Event()
        self._cancel_preview = cancel
        existing = _existing(self._host.current_project())
        threading.Thread(target=self._read_preview, args=(token, path, existing, cancel),
                         name="chatnodes-import-preview", daemon=True).start()
        return dialog

    def shutdown(self) -> None:
        """The window closes: stop what runs, drop every result still to come, close the dialog."""
        self.close_dialog()
        self.cancel()
        self._token += 1
        self._adding = []

    def _writable(self) -> bool:
        store = self._host.store
        if store is not None and not store.read_only:
            return True
        self._host.show_banner(
            "This project is open read-only (another window or instance holds it): take it over first, "
            "then import.", kind="warning", object_name="importErrorBanner")
        return False

    def close_dialog(self) -> None:
        """Close the dialog (cancelling what it runs)."""
        if self.dialog is not None:
            self.cancel()
            self.dialog.done(QDialog.DialogCode.Rejected)

    def cancel(self) -> None:
        """Cancel the preview, the import or the adding of nodes in progress (each conversation
        already imported stays whole)."""
        if self._cancel_preview is not None:
            self._cancel_preview.set()
        if self.job is not None:
            self.job.cancel()
        self._stop_adding = True

    def _dialog_closed(self, dialog: ImportDialog) -> None:
        if self.dialog is dialog:
            self.dialog = None
            if self._cancel_preview is not None:
                self._cancel_preview.set()

    # -- worker threads (nothing here touches a widget) ---------------------------------------------
    def _emit(self, signal: Any, payload: object) -> None:
        try:
            signal.emit(payload)
        except RuntimeError:  # the window is gone
            log.debug("import result dropped: the window closed")

    def _throttled(self, token: int, signal: Any) -> Callable[[ImportProgress], None]:
        last = [0.0]

        def report(progress: ImportProgress) -> None:
            now = time.monotonic()
            if now - last[0] >= _PROGRESS_EVERY_S:
                last[0] = now
                self._emit(signal, (token, progress))

        return report

    def _read_preview(self, token: int, path: Path, existing: set[str], cancel: threading.Event) -> None:
        from desktop.core.importers import ImportFailed, preview_export

        result: tuple[int, ExportPreview | None, str | None]
        try:
            preview = preview_export(path, existing=existing, cancelled=cancel.is_set,
                                     progress=self._throttled(token, self._preview_progress))
            result = (token, preview, None)
        except ImportFailed as exc:
            result = (token, None, str(exc))
        except Exception as exc:  # never let the worker die silently
            log.exception("reading %s failed", path)
            result = (token, None, f"{path.name} could not be read ({type(exc).__name__}: {exc})")
        self._emit(self._preview_done, result)

    # -- the preview ---------------------------------------------------------------------------------
    def _on_preview_progress(self, payload: tuple[int, ImportProgress]) -> None:
        token, progress = payload
        if token == self._token and self.dialog is not None and self.dialog.state == "reading":
            self.dialog.show_progress(f"Reading… {progress.conversations:,} conversations so far",
                                      progress.fraction)

    def _on_preview_done(self, payload: tuple[int, ExportPreview | None, str | None]) -> None:
        token, preview, error = payload
        dialog, path = self.dialog, self._path
        if token != self._token or dialog is None or path is None:
            return
        self._cancel_preview = None
        if preview is None:
            dialog.show_failure(f"Nothing was imported: {error}")
        elif not preview.cancelled:
            dialog.show_preview(path, preview)

    # -- the import ------------------------------------------------------------------------------------
    def _start_job(self, ids: list[str], replace: bool) -> None:
        from desktop.core.importers import ImportJob, ImportOptions, existing_imports

        dialog, path = self.dialog, self._path
        if dialog is None or path is None:
            return
        token = self._token
        dialog.begin_import()
        self._stop_adding, self._parked = False, 0
        job = ImportJob(path, existing=existing_imports(self._host.current_project()),
                        options=ImportOptions(only=ids, replace=replace),
                        on_progress=self._throttled(token, self._job_progress),
                        on_done=lambda j: self._emit(self._job_done, (token, j)),
                        project_dir=self._store.folder if self._store is not None else None)
        self.job = job
        job.start()

    def _on_job_progress(self, payload: tuple[int, ImportProgress]) -> None:
        token, progress = payload
        if token == self._token and self.dialog is not None and self.dialog.state == "importing":
            title = f": {progress.title}" if progress.title else ""
            self.dialog.show_progress(f"Importing… {progress.conversations:,} conversations read{title}",
                                      progress.fraction)

    def _on_job_done(self, payload: tuple[int, ImportJob]) -> None:
        token, job = payload
        if token != self._token:
            return
        dialog = self.dialog
        outcome = job.outcome
        if outcome is None:
            if dialog is not None:
                dialog.show_failure(f"Nothing was imported: {job.error}")
            self.finished.emit()
            return
        if self._host.store is not self._store:
            if dialog is not None:
                dialog.show_failure("Nothing was added: another project was opened while importing.")
            self.finished.emit()
            return
        from desktop.core.importers import OPEN_AT_MOST, split_recent

        area = self._host.node_area
        replaced = outcome.report.replaced_node_ids
        for node_id in replaced:
            node = area.node(node_id)
            if node is not None:
                area.close_node(node)
        self._closed.drop(replaced)  # replaced ones that were closed or parked
        opened, parked = split_recent(outcome.nodes, OPEN_AT_MOST)
        self._parked = len(parked)
        if parked:  # no widget for these: they wait in the sidebar's Imported list
            self._closed.park(parked)
            sidebar = self._window.findChild(QDockWidget, "sidebar")
            if sidebar is not None:
                sidebar.show()
        self._adding, self._added = opened, []
        if dialog is not None:
            dialog.begin_adding()
        self._hold_paint(True)
        self._add_some(token, job)

    def _hold_paint(self, hold: bool) -> None:
        """While nodes are added the node area is not repainted (each turn would paint every sub-window
        again); the window still answers, the dialog shows the progress, one paint shows them all."""
        self._host.node_area.mdi.viewport().setUpdatesEnabled(not hold)

    def _add_some(self, token: int, job: ImportJob) -> None:
        """Add nodes for a few milliseconds, then let the event loop run and come back."""
        if token != self._token:
            return
        outcome = job.outcome
        assert outcome is not None
        area = self._host.node_area
        deadline = time.monotonic() + _ADD_BUDGET_S
        while self._adding and not self._stop_adding and time.monotonic() < deadline:
            state = self._adding.pop(0)
            try:
                area.add_node(state, activate=False, place=True)
            except Exception as exc:  # noqa: BLE001 - reported in the summary, never raised into Qt
                log.exception("adding imported node %s failed", state.title)
                outcome.report.problems.append(_problem(state, exc))
                continue
            self._added.append(state.id)
        if self._adding and not self._stop_adding:
            if self.dialog is not None:
                total = len(self._added) + len(self._adding)
                self.dialog.show_progress(f"Adding the nodes… {len(self._added):,} of {total:,}",
                                          len(self._added) / total)
            QTimer.singleShot(0, self, lambda: self._add_some(token, job))
            return
        self._done_adding(job)

    def _done_adding(self, job: ImportJob) -> None:
        outcome = job.outcome
        assert outcome is not None
        from desktop.core.importers import split_recent

        added, left = self._added, len(self._adding)
        if self._adding:  # cancelled while adding: the rest wait in the sidebar, nothing is lost
            self._closed.park(split_recent(self._adding, 0)[1])
            self._parked += left
        self._adding = []
        self._hold_paint(False)
        if added or self._parked or outcome.report.replaced_node_ids:
            self._host.save_project()
        area = self._host.node_area
        first = area.node(added[0]) if added else None
        if first is not None:  # the first new node in front, the keys in its message input (not its title)
            area.mdi.setActiveSubWindow(area.subwindow_of(first))
            first.setFocus()
        from desktop.ui.window.import_dialog import summary_text  # start-up: loaded on first use

        text = summary_text(outcome.report, outcome.notices)
        if self._parked:
            text += (f"\n\n{len(added):,} opened as nodes (the most recent); the other "
                     f"{self._parked:,} are in the sidebar under Imported (Ctrl+B): click one to open it.")
        if self.dialog is not None:
            self.dialog.show_result(text)
        self._window.statusBar().showMessage(
            f"Imported {len(outcome.report.imported):,} conversations"
            + (f" ({self._parked:,} in the sidebar under Imported)" if self._parked else ""), 8000)
        self.finished.emit()


def _existing(project: Project) -> set[str]:
    from desktop.core.importers import existing_imports

    return set(existing_imports(project))


def _problem(state: NodeState, exc: Exception) -> ImportProblem:
    from desktop.core.importers import ImportProblem

    return ImportProblem(f"'{state.title}'", f"its node could not be opened ({type(exc).__name__}: {exc})")

