"""Preview and import: what the import dialog and ``python -m desktop import`` run.

* ``preview_export``: every conversation of an export with its title, date, message and branch
  counts, streamed (one conversation in memory at a time), for the dialog's list.
* ``convert_export``: the chosen conversations as new nodes (pure: no project is touched), each
  conversation whole or not at all; conversations already in the project (by their original id)
  are skipped unless ``replace``. Runs in a worker thread: progress goes to a callback and
  cancellation is polled between conversations (``ImportJob`` wraps both).
* ``import_into_project``: the command line's path: takes the project's lock through
  ``ProjectStore`` (a window holding the project: ``ProjectLockedError``), adds the nodes, saves once.

Imported ChatGPT and Claude messages carry no usage (they were paid elsewhere: no cost, the usage
ledger and budgets are untouched) and are marked ``extra["imported"]``; so are their nodes.
"""

from __future__ import annotations

import logging
import threading
import zipfile
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from desktop.core.attachments import AttachmentStore
from desktop.core.chat.conversation import Conversation, new_id

from ..store import PARKED_KEY, NodeState, Project, ProjectError, ProjectStore, SaveResult, new_node_state
from ._assets import ZipAssets
from ._common import IMPORTED_KEY
from ._model import (
    ExportFormat,
    ImportCancelled,
    ImportedItem,
    ImportFailed,
    ImportProblem,
    ImportProgress,
    ImportReport,
    ParsedConversation,
    PreviewEntry,
    SkippedItem,
)
from ._native import IMPORTED_FROM_KEY, NativeNode
from ._reader import ExportStream, read_export
from ._source import Limits
from ._tree import TreeError, build_versions

__all__ = [
    "ExportPreview",
    "ImportJob",
    "ImportOptions",
    "ImportOutcome",
    "ProjectLockedError",
    "convert_export",
    "existing_imports",
    "import_into_project",
    "place_nodes",
    "preview_export",
    "split_recent",
    "OPEN_AT_MOST",
]

log = logging.getLogger(__name__)

Progress = Callable[[ImportProgress], None]
Cancelled = Callable[[], bool]
_CASCADE = 32


class ProjectLockedError(ProjectError):
    """The project is open in a window (or another import); nothing was imported."""


@dataclass(frozen=True, slots=True)
class ImportOptions:
    """What to import.

    Attributes:
        replace: Import conversations already in the project again, replacing their nodes.
        only: The original ids to import (the dialog's ticked rows), or None for all.
        limits: Size caps (zip bombs, huge files).
    """

    replace: bool = False
    only: Collection[str] | None = None
    limits: Limits = field(default_factory=Limits)


@dataclass(slots=True)
class ExportPreview:
    """An export's conversations, as the import dialog lists them.

    Attributes:
        format: The export's kind.
        entries: One per conversation, in file order.
        problems: Parts of the file that cannot be imported.
        notices: Things to tell the user that do not stop the import.
        already_imported: Original ids of ``entries`` already in the project.
        cancelled: The preview was cancelled (``entries`` holds what was read).
    """

    format: ExportFormat | None = None
    entries: list[PreviewEntry] = field(default_factory=list)
    problems: list[ImportProblem] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    already_imported: set[str] = field(default_factory=set)
    cancelled: bool = False


@dataclass(slots=True)
class ImportOutcome:
    """What ``convert_export`` made: the report and the new nodes (not placed, not saved).

    Attributes:
        report: What was imported, skipped and what failed.
        nodes: The new nodes, in file order.
        notices: Things to tell the user that did not stop the import.
    """

    report: ImportReport
    nodes: list[NodeState] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)


def existing_imports(project: Project) -> dict[str, list[str]]:
    """``{original id: [node ids]}`` of what a project already holds (imports and its own nodes, open
    or closed).

    A Chat Nodes node counts under its own id too, so importing a project's export into it again
    finds every node.
    """
    out: dict[str, list[str]] = {}
    for node in project.all_nodes():  # closed ones too: imported nodes never opened wait there
        out.setdefault(node.id, []).append(node.id)
        for key in (IMPORTED_KEY, IMPORTED_FROM_KEY):
            marker = node.extra.get(key)
            if isinstance(marker, dict) and isinstance(marker.get("id"), str):
                ids = out.setdefault(marker["id"], [])
                if node.id not in ids:
                    ids.append(node.id)
    return out


def _progress(callback: Progress | None) -> Callable[[ExportStream, str], None] | None:
    if callback is None:
        return None

    def report(state: ExportStream, title: str) -> None:
        try:
            callback(ImportProgress(state.items, state.bytes_read, state.bytes_total, title))
        except Exception:  # a broken progress display must not stop the import
            log.exception("import progress callback failed")

    return report


def preview_export(
    path: Path,
    *,
    existing: Collection[str] = (),
    limits: Limits | None = None,
    cancelled: Cancelled | None = None,
    progress: Progress | None = None,
) -> ExportPreview:
    """List an export's conversations (streamed: one conversation in memory at a time).

    Args:
        path: The export.
        existing: Original ids already in the project (``existing_imports``), to flag rows.
        limits: Size caps.
        cancelled: Polled between conversations.
        progress: Called after each conversation.

    Raises:
        ImportFailed: The export as a whole cannot be read.
    """
    stream = ExportStream()
    preview = ExportPreview(notices=stream.notices)
    known = set(existing)
    try:
        for item in read_export(path, stream=stream, limits=limits, cancelled=cancelled,
                                on_item=_progress(progress)):
            if isinstance(item, ImportProblem):
                preview.problems.append(item)
                continue
            if isinstance(item, ParsedConversation):
                entry = PreviewEntry(item.original_id, item.title, item.created_at, item.updated_at,
                                     len(item.nodes), item.branches)
            else:
                entry = PreviewEntry(item.original_id, item.title, item.created_at, None, item.messages,
                                     item.branches)
            preview.entries.append(entry)
            if entry.original_id in known:
                preview.already_imported.add(entry.original_id)
    except ImportCancelled:
        preview.cancelled = True
    preview.format = stream.format
    return preview


def _nodes_of(parsed: ParsedConversation) -> tuple[list[NodeState], int, int]:
    """The nodes of one conversation: the conversation with every branch as versions, then one node per
    alternative of its opening messages (before any user message: nothing can carry them)."""
    built = build_versions(parsed.nodes, parsed.active_leaf)
    out: list[NodeState] = []
    for i, messages in enumerate([built.messages, *built.extras]):
        title = parsed.title if i == 0 else f"{parsed.title} (branch {i + 1})"
        node = new_node_state(title)
        node.conversation = Conversation(new_id("c"), messages, parsed.created_at)
        marker: dict[str, Any] = {"source": parsed.source, "id": parsed.original_id}
        if i:
            marker["branch"] = i + 1
        node.extra[IMPORTED_KEY] = marker
        out.append(node)
    return out, len(parsed.nodes), built.leaves


def convert_export(
    path: Path,
    *,
    existing: dict[str, list[str]] | None = None,
    options: ImportOptions | None = None,
    cancelled: Cancelled | None = None,
    progress: Progress | None = None,
    project_dir: Path | None = None,
) -> ImportOutcome:
    """Turn an export's conversations into new nodes; touches no project.

    Each conversation is converted whole or not at all (a failure is a problem in the report that
    names it). Conversations whose original id is in ``existing`` are skipped, unless
    ``options.replace``: then their node ids go to ``report.replaced_node_ids``. Cancelling keeps
    the conversations finished so far (each whole) and sets ``report.cancelled``.

    Args:
        path: The export.
        existing: ``existing_imports(project)``.
        options: What to import.
        cancelled: Polled between conversations.
        progress: Called after each conversation read.
        project_dir: The target project: files of the export zip its user messages point at are
            stored in its attachments and attached (``ZipAssets``); None leaves them as notes. A bare
            ``conversations.json`` holds no files: its notes stay, without a notice about them.

    Raises:
        ImportFailed: The export as a whole cannot be read; nothing is imported.
    """
    has_files = project_dir is not None and zipfile.is_zipfile(path)
    assets = ZipAssets(path, AttachmentStore(project_dir)) if has_files and project_dir is not None else None
    try:
        return _convert(path, existing, options, cancelled, progress, assets)
    finally:
        if assets is not None:
            assets.close()


def _convert(path: Path, existing: dict[str, list[str]] | None, options: ImportOptions | None,
             cancelled: Cancelled | None, progress: Progress | None,
             assets: ZipAssets | None) -> ImportOutcome:
    options = options or ImportOptions()
    existing = existing or {}
    only = set(options.only) if options.only is not None else None
    stream = ExportStream()
    outcome = ImportOutcome(ImportReport(str(path)), notices=stream.notices)
    report = outcome.report
    seen: set[str] = set()
    try:
        for item in read_export(path, stream=stream, limits=options.limits, cancelled=cancelled,
                                on_item=_progress(progress)):
            if isinstance(item, ImportProblem):
                report.problems.append(item)
                continue
            oid, title = item.original_id, item.title
            if only is not None and oid not in only:
                report.skipped.append(SkippedItem(oid, title, "not selected"))
                continue
            if oid in seen:
                report.skipped.append(SkippedItem(oid, title, "appears twice in the export"))
                continue
            seen.add(oid)
            if oid in existing:
                if not options.replace:
                    report.skipped.append(SkippedItem(oid, title, "already imported"))
                    continue
                report.replaced_node_ids.extend(existing[oid])
            try:
                if isinstance(item, NativeNode):
                    node = item.node
                    node.extra[IMPORTED_FROM_KEY] = {"source": "chatnodes", "id": oid}
                    node.id = new_id("n")
                    nodes, messages, branches = [node], item.messages, item.branches
                    notes: tuple[str, ...] = ()
                else:
                    if assets is not None:
                        assets.attach(item)
                    nodes, messages, branches = _nodes_of(item)
                    notes = tuple(item.notes)
            except TreeError as exc:
                report.problems.append(ImportProblem(f"'{title}' (id {oid})", str(exc)))
                continue
            except Exception as exc:  # a conversation is imported whole or not at all
                log.exception("could not import %r", title)
                report.problems.append(ImportProblem(f"'{title}' (id {oid})",
                                                     f"could not be imported ({type(exc).__name__}: {exc})"))
                continue
            outcome.nodes.extend(nodes)
            report.imported.append(ImportedItem(oid, title, tuple(n.id for n in nodes), messages, branches,
                                                notes))
    except ImportCancelled:
        report.cancelled = True
    report.format = stream.format
    if assets is not None and (assets.attached or assets.missing):
        outcome.notices.append(f"{assets.attached:,} file{'s' if assets.attached != 1 else ''} of the export "
                               "attached to their messages" + (
                                   f"; {assets.missing:,} not in the export or unreadable (kept as a note)"
                                   if assets.missing else ""))
    return outcome


OPEN_AT_MOST = 5
"""How many imported conversations (the most recent) open as nodes; the rest are parked (``split_recent``)."""


def split_recent(nodes: Sequence[NodeState], keep: int) -> tuple[list[NodeState], list[NodeState]]:
    """Split imported nodes into the ``keep`` most recent (by their last message; opened as nodes)
    and the others, marked ``PARKED_KEY`` (they go to ``Project.closed``, listed under "Imported").

    Returns:
        ``(to open, to park)``, each in the export's order.
    """
    def last(node: NodeState) -> int:
        messages = node.conversation.messages
        return messages[-1].ts if messages else 0

    chosen = {n.id for n in sorted(nodes, key=last, reverse=True)[:max(0, keep)]}
    opened = [n for n in nodes if n.id in chosen]
    parked = [n for n in nodes if n.id not in chosen]
    for node in parked:
        node.extra[PARKED_KEY] = True
    return opened, parked


def place_nodes(project: Project, nodes: list[NodeState]) -> None:
    """Give new nodes cascading positions below the project's last node."""
    if project.nodes:
        last = project.nodes[-1]
        x0, y0 = last.x + _CASCADE, last.y + _CASCADE
    else:
        x0 = y0 = 0
    for i, node in enumerate(nodes):
        step = i % 12
        node.x, node.y = x0 + step * _CASCADE, y0 + step * _CASCADE


def _is_blank(project: Project) -> bool:
    return len(project.nodes) == 1 and project.nodes[0].kind == "chat" and \
        not project.nodes[0].conversation.messages and not project.nodes[0].extra


def import_into_project(
    store: ProjectStore,
    path: Path,
    *,
    options: ImportOptions | None = None,
    cancelled: Cancelled | None = None,
    progress: Progress | None = None,
) -> tuple[ImportOutcome, SaveResult | None]:
    """Import an export into the project folder of ``store`` and save it once.

    The store takes the project's lock; a window (or another process) holding it makes this raise
    ``ProjectLockedError`` before anything is read. A project that does not exist yet is created
    (without the empty node a new project starts with). The ``OPEN_AT_MOST`` most recent conversations
    become nodes; the others are parked in ``Project.closed`` (``split_recent``), as File → Import… does,
    so a large export does not open as a thousand nodes. Nothing is saved when no node was added or
    replaced. The store keeps the lock; release it when done.

    Returns:
        The outcome and the save result (None when nothing was saved).

    Raises:
        ProjectLockedError: The project is open elsewhere.
        ImportFailed: The export as a whole cannot be read; the project is unchanged.
        ProjectError: The project could not be read or written (``OSError`` too); unchanged.
    """
    loaded = store.open()
    if loaded.read_only:
        raise ProjectLockedError((loaded.read_only_reason or f"{store.folder} is open elsewhere")
                                 + "; close it there (or use File → Import… in that window) and try again")
    if loaded.error is not None:
        raise ProjectError(f"{store.path} could not be read ({loaded.error.reason}); open the project in the "
                           "app first") from None
    project = loaded.value
    outcome = convert_export(path, existing=existing_imports(project), options=options, cancelled=cancelled,
                             progress=progress, project_dir=store.folder)
    if not outcome.nodes and not outcome.report.replaced_node_ids:
        return outcome, None
    replaced = set(outcome.report.replaced_node_ids)
    project.nodes = [n for n in project.nodes if n.id not in replaced]
    if loaded.missing and _is_blank(project):
        project.nodes = []
    opened, parked = split_recent(outcome.nodes, OPEN_AT_MOST)  # as File → Import… does
    place_nodes(project, opened)
    project.nodes.extend(opened)
    project.closed = [n for n in project.closed if n.id not in replaced] + parked
    return outcome, store.save(project)


class ImportJob:
    """``convert_export`` in a worker thread, with progress and cancellation.

    Callbacks run on the worker thread: a GUI forwards them to its own thread (a queued signal).

    Args:
        path: The export.
        existing: ``existing_imports(project)`` of the target project.
        options: What to import.
        on_progress: Called after each conversation read.
        on_done: Called once at the end with the job (``outcome`` or ``error`` set).
        project_dir: The target project (the export's files are attached into it; see
            ``convert_export``).
    """

    def __init__(
        self,
        path: Path,
        *,
        existing: dict[str, list[str]] | None = None,
        options: ImportOptions | None = None,
        on_progress: Progress | None = None,
        on_done: Callable[[ImportJob], None] | None = None,
        project_dir: Path | None = None,
    ) -> None:
        self.path = Path(path)
        self.project_dir = project_dir
        self.existing = existing or {}
        self.options = options or ImportOptions()
        self.on_progress = on_progress
        self.on_done = on_done
        self.outcome: ImportOutcome | None = None
        self.error: str | None = None
        self._cancel = threading.Event()
        self._done = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Run the import in a new daemon thread."""
        self._thread = threading.Thread(target=self.run, name="chatnodes-import", daemon=True)
        self._thread.start()

    def run(self) -> None:
        """Run the import here (blocking); sets ``outcome`` or ``error``, then calls ``on_done``."""
        try:
            self.outcome = convert_export(self.path, existing=self.existing, options=self.options,
                                          cancelled=self._cancel.is_set, progress=self.on_progress,
                                          project_dir=self.project_dir)
        except ImportFailed as exc:
            self.error = str(exc)
        except Exception as exc:  # never let a worker thread die silently
            log.exception("import of %s failed", self.path)
            self.error = f"the import failed ({type(exc).__name__}: {exc})"
        finally:
            self._done.set()
            if self.on_done is not None:
                try:
                    self.on_done(self)
                except Exception:
                    log.exception("import done callback failed")

    def cancel(self) -> None:
        """Ask the import to stop after the conversation it is reading."""
        self._cancel.set()

    @property
    def cancelled(self) -> bool:
        """True once ``cancel`` was called."""
        return self._cancel.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the end; True when the job finished."""
        return self._done.wait(timeout)
