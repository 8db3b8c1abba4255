"""A project folder: ``project.json`` (nodes, geometry, conversations) and the history archive.

The model and the file format live in ``_format``, the archive and the history cap in ``_archive``,
the user's always-allow grants in ``desktop.core.config`` (the package's face exports them). ``ProjectStore``
puts them together:

* **Loading never crashes** (``_docstore``): a bad ``project.json`` is moved aside to
  ``project.json.corrupt-<timestamp>`` and the last good ``project.json.bak`` (or a new project) is
  used; lone surrogates are repaired; ``open()`` returns a ``LoadResult`` saying all of it.
* **One writer per project:** an OS lock on ``.chatnodes/lock`` is held while a store has the
  project open. A second store (another window, another app instance) opens it read-only and
  refuses to save or archive; ``take_over()`` tries again once the first one is gone. A save also
  refuses to overwrite a ``project.json`` that someone else changed since it was loaded.
* **Saves never change the caller's model.** The history cap is computed on the side: the oldest
  exchanges over the cap are appended to ``.chatnodes/archive/<node-id>.jsonl``, the file gets the
  capped conversation with a note, and ``SaveResult.trimmed`` tells each node what to apply.
* **Grants are the user's:** ``always_allow`` in ``project.json`` is only a request; a node's
  ``always_allow`` comes from and goes to the ``GrantStore`` given to the store.
* **Crash debris:** temp files of interrupted saves are removed when the project is opened, and a
  crash between an archive append and the ``project.json`` replace never duplicates or loses a
  message (see ``_archive``).
* **A save may run on a worker thread** (the window's autosave of a long project): saves, archive
  appends, reads and removals take one lock, so they never interleave.
* **Closed nodes are kept:** ``Project.closed`` is saved like the open nodes (capped, archived,
  grants kept); beyond ``MAX_CLOSED`` the oldest are written to ``.chatnodes/archive/closed/``
  (``closed.write_closed_node``) before ``project.json`` drops them (``SaveResult.evicted``).
  ``delete_node_history`` removes a node's archive when the user deletes it for good.
* **Versions migrate once:** a file storing versions in the older nested form (4 JSON levels per
  version, which could outgrow ``MAX_DEPTH``) is read whatever its depth, as long as it is within
  ``MAX_DEPTH`` once flat; the first save writes the flat form and first keeps the old file as
  ``project.json.pre-flat-versions`` (``PRE_FLAT_SUFFIX``; ``-2``, ``-3``... if taken).
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

from ..chat.conversation import Conversation, sweep_saved_literals
from ..chat.types import ChatMessage
from ..config import GrantStore
from ..files import (
    MAX_DEPTH,
    DocumentCorruptError,
    DocumentStore,
    FileLock,
    LoadResult,
    LockState,
    depth_exceeds,
    keep_copy,
    read_regular,
)
from ._archive import (
    ArchiveContents,
    HistoryArchive,
    TrimInfo,
    drop_archived,
    plan_trim,
)
from ._closed import write_closed_node
from ._format import (
    MAX_CLOSED,
    PROJECT_FILE,
    NodeState,
    Project,
    decode_project,
    is_parked,
    new_project,
    project_to_json,
)

__all__ = [
    "LOCK_FILE",
    "PRE_FLAT_SUFFIX",
    "ProjectChangedError",
    "ProjectCorruptError",
    "ProjectError",
    "ProjectReadOnlyError",
    "ProjectStore",
    "SaveResult",
]

log = logging.getLogger(__name__)

LOCK_FILE = Path(".chatnodes") / "lock"
PRE_FLAT_SUFFIX = "pre-flat-versions"
"""``project.json.<this>``: the file as it was before its nested versions were first saved flat."""


class ProjectError(Exception):
    """A project folder problem with a readable message."""


class ProjectCorruptError(DocumentCorruptError, ProjectError):
    """``project.json`` could not be used; the file was kept aside and the user should be told.

    The one corrupt-file error of ``_docstore`` (attributes ``path``, ``moved_to``, ``reason``,
    ``recovered_from``; ``moved_to`` is None when the file was left in place: it could not be read
    or moved, or another window owns the folder).
    """


class ProjectReadOnlyError(ProjectError):
    """The project is open for writing elsewhere (another window or app instance); nothing was written."""


class ProjectChangedError(ProjectError):
    """``project.json`` was changed by someone else since it was loaded; it was not overwritten.

    Load the project again (``open()``) to see the other version, or save with ``force=True``.
    """


@dataclass(frozen=True, slots=True)
class SaveResult:
    """What a save did besides writing the file.

    Attributes:
        archived: ``{node_id: messages moved to the history archive}`` for nodes over the cap.
        trimmed: ``{node_id: TrimInfo}`` for the same nodes. The project passed to ``save`` is not
            changed; a node makes its live conversation match the file with
            ``apply_trim(conversation, info)`` (see ``ProjectStore.save``).
        repaired: True when invalid Unicode (lone surrogates) was replaced in the file.
        notices: Problems worth telling the user that did not stop the save (grants not stored).
        evicted: Ids of closed nodes beyond ``MAX_CLOSED`` that the save moved to
            ``.chatnodes/archive/closed/`` and left out of ``project.json``.
    """

    archived: dict[str, int] = field(default_factory=dict)
    trimmed: dict[str, TrimInfo] = field(default_factory=dict)
    repaired: bool = False
    notices: tuple[str, ...] = ()
    evicted: tuple[str, ...] = ()


class ProjectStore:
    """Loads and saves a project folder, as its only writer while it holds the lock.

    Args:
        folder: The project folder (created on first save).
        history_cap_bytes: Per-node conversation budget in ``project.json`` (settings'
            ``history_cap_kib`` × 1024); older exchanges go to the history archive. Can be changed
            later through the attribute of the same name.
        grants: The user's grant store. Loading fills each node's ``always_allow`` from it and
            saving stores the nodes' ``always_allow`` there. Without it no tool is always allowed
            after a load and ``always_allow`` is not kept.

    Attributes:
        folder: The project folder.
        path: ``folder / "project.json"``.
        backup_path: ``project.json.bak``, the last good file.
        archive_dir: ``folder / ".chatnodes/archive"``.
        lock_path: ``folder / ".chatnodes/lock"``.
        history_cap_bytes: The per-node cap applied by ``save``.
        grants: The grant store, or None.
        last_load: The result of the last ``open``/``load``, or None.
    """

    def __init__(
        self, folder: Path, *, history_cap_bytes: int = 200 * 1024, grants: GrantStore | None = None
    ) -> None:
        self.folder = Path(folder)
        self.path = self.folder / PROJECT_FILE
        self.history_cap_bytes = history_cap_bytes
        self.grants = grants
        self.lock_path = self.folder / LOCK_FILE
        self.last_load: LoadResult[Project] | None = None
        self._doc: DocumentStore[Project] = DocumentStore(
            self.path,
            decode=self._decode,
            encode=project_to_json,
            default=new_project,
            error_type=ProjectCorruptError,
            blocked_error=ProjectError,
            max_depth=None,  # checked by _decode once nested versions are flat
            read=read_regular,  # a project folder is untrusted: never wait on a FIFO or device
        )
        self._flattened = 0
        self._pre_flat: Path | None = None
        self.backup_path = self._doc.backup_path
        self._archive = HistoryArchive(self.folder)
        self.archive_dir = self._archive.dir
        self._lock = FileLock(self.lock_path)
        self._lock_state: LockState | None = None
        self._mutex = threading.RLock()  # a save may run on a worker while the GUI reads the archive

    # ------------------------------------------------------------------------------------------
    # One writer

    def _claim(self, *, create: bool) -> LockState:
        """Take the project lock when possible (``create``: make the folder first)."""
        if self._lock.held:
            return LockState.HELD
        if create:
            with contextlib.suppress(OSError):
                self.folder.mkdir(parents=True, exist_ok=True)
        elif not self.folder.is_dir():
            return LockState.UNAVAILABLE  # nothing to protect yet; saving claims it
        self._lock_state = self._lock.try_acquire()
        if self._lock_state is LockState.UNAVAILABLE:
            log.warning("no lock on %s (%s): other writers cannot be detected", self.lock_path,
                        self._lock.last_error)
        return self._lock_state

    @property
    def read_only(self) -> bool:
        """True while another window or process holds the project (saves are refused)."""
        return not self._lock.held and self._lock_state is LockState.BUSY

    @property
    def read_only_reason(self) -> str | None:
        """Why the project is read-only, or None."""
        if not self.read_only:
            return None
        pid = self._lock.holder_pid()
        if pid == os.getpid():
            who = "another window of this app"
        elif pid is not None:
            who = f"another Chat Nodes instance (process {pid})"
        else:
            who = "another Chat Nodes window or instance"
        return f"{self.folder} is open in {who}; this window is read-only and does not save"

    def take_over(self) -> bool:
        """Try to become the writer (after the other window or instance closed).

        The other writer may have saved meanwhile: call ``open()`` again before saving, else
        ``save`` refuses with ``ProjectChangedError`` when ``project.json`` changed.

        Returns:
            True when this store holds the lock now.
        """
        return self._claim(create=True) is LockState.HELD

    def release(self) -> None:
        """Give up the lock (when the window closes or switches projects); the store becomes
        read-only-until-claimed: a later ``save`` or ``take_over`` claims it again."""
        self._lock.release()
        self._lock_state = None

    def __enter__(self) -> ProjectStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    def _require_writer(self) -> None:
        if self._claim(create=True) is LockState.BUSY:
            raise ProjectReadOnlyError(self.read_only_reason or f"{self.folder} is open elsewhere")

    # ------------------------------------------------------------------------------------------
    # Loading

    def _decode(self, raw: object) -> Project:
        """``decode_project``, then the depth check on the flat form (a file of the older form may
        nest deeper; nothing else may)."""
        project, flattened = decode_project(raw)
        if depth_exceeds(raw, MAX_DEPTH):
            raise ValueError(f"nested more than {MAX_DEPTH} levels deep")
        self._flattened = flattened
        return project

    def open(self) -> LoadResult[Project]:
        """Take the lock when free and load the project; never raises.

        A missing ``project.json`` gives a new project with one empty chat node (nothing written).
        A bad file is moved aside (unless another window owns the folder) and the last good
        ``project.json.bak`` or a new project is used. As the writer, the store first removes temp
        files of interrupted saves and repairs the effects of a crash between an archive append
        and the ``project.json`` replace. Each node's ``always_allow`` comes from the grant store;
        the file's own list is only ``requested_always_allow``.

        Returns:
            The project with every notice for the user, ``read_only``/``read_only_reason`` when
            another window or instance owns the project.
        """
        return self._open(recover=True)

    def _open(self, *, recover: bool) -> LoadResult[Project]:
        state = self._claim(create=False)
        busy = state is LockState.BUSY
        if state is LockState.HELD:
            self._doc.remove_debris()
        self._flattened = 0
        result = self._doc.load(may_write=not busy, recover=recover)
        self._pre_flat = (result.recovered_from or self.path) if self._flattened else None
        if self._pre_flat is not None:
            log.info("%s stores versions nested (%d tails); the next save writes them flat and keeps "
                     "the old file as %s.%s", self._pre_flat, self._flattened, PROJECT_FILE, PRE_FLAT_SUFFIX)
        project = result.value
        notices = list(result.notices)
        repaired = result.repaired
        if busy and result.error is not None:
            self._doc.blocked = result.error.reason  # never overwrite a bad file we did not move
        if state is LockState.HELD and self._archive.pending:
            fixed = self._drop_already_archived(project)
            if fixed:
                repaired = True
                notices.append(
                    f"{fixed} message{'s' if fixed != 1 else ''} saved in the history archive by an "
                    "interrupted save were removed from the conversation (they stay in the archive)"
                )
        for node in (*project.nodes, *project.closed):
            node.always_allow = self.grants.tools(self.folder, node.id) if self.grants is not None else []
        reason = self.read_only_reason
        if reason is not None:
            notices.append(reason)
        self.last_load = LoadResult(
            project,
            tuple(notices),
            moved_aside=result.moved_aside,
            repaired=repaired,
            recovered_from=result.recovered_from,
            error=result.error,
            read_only=reason is not None,
            read_only_reason=reason,
            missing=result.missing,
        )
        return self.last_load

    def _drop_already_archived(self, project: Project) -> int:
        total = 0
        for node in (*project.nodes, *project.closed):
            if node.kind == "chat" and self._archive.path(node.id).exists():
                total += drop_archived(node.id, node.conversation.messages, self._archive.ids(node.id))
        return total

    def load(self) -> Project:
        """Return the project in the folder (see ``open``; the backup is not used here).

        Raises:
            ProjectCorruptError: The file is not valid; it was moved aside to
                ``project.json.corrupt-<timestamp>`` (never overwritten, never deleted). When it cannot
                be read or moved it stays in place and later saves refuse to overwrite it.
        """
        result = self._open(recover=False)
        if result.error is not None:
            raise result.error
        return result.value

    def load_or_recover(self) -> tuple[Project, ProjectCorruptError | None]:
        """Load the project; on a bad file, fall back instead of raising.

        Returns:
            ``(project, None)`` normally. When ``project.json`` was bad: the project from the last
            good ``project.json.bak`` when it is valid (the error's ``recovered_from`` says so), else
            a new project; with the error, so the UI can show a banner. ``last_load`` has the rest
            (repair notices, read-only state).
        """
        result = self.open()
        return result.value, cast("ProjectCorruptError | None", result.error)

    # ------------------------------------------------------------------------------------------
    # Saving

    def save(self, project: Project, *, force: bool = False) -> SaveResult:
        """Write ``project`` atomically; the previous good file becomes ``project.json.bak``.

        ``project`` is never changed. Chat conversations over ``history_cap_bytes`` are written
        capped: whole oldest exchanges are appended to the node's history archive (before the file
        is replaced) and a note says how many moved there. When the archive cannot be written the
        node is saved whole (nothing is ever lost). For each capped node ``SaveResult.trimmed``
        holds a ``TrimInfo``; to show what the file holds, the node calls
        ``apply_trim(its_conversation, info)``, which removes the messages whose ids are in
        ``info.removed_ids`` (archived, or earlier notes folded into the new one), inserts a copy
        of ``info.note`` after the leading system messages and keeps messages added since; then
        it re-renders its transcript and drops totals cached on the message list. Not applying it
        is safe (the next save computes the same trim; the archive skips known ids) but the node
        then keeps showing, and exporting, the archived messages twice with the archive.

        Closed nodes (``project.closed``) are capped the same way (their ``TrimInfo`` is in
        ``trimmed`` too). Beyond the first ``MAX_CLOSED`` of them, each is written to
        ``.chatnodes/archive/closed/<node-id>.json`` first and then left out of the file
        (``SaveResult.evicted``); one that cannot be written stays.

        Args:
            project: What to write.
            force: Overwrite ``project.json`` even when someone else changed it since it was loaded.

        Raises:
            ProjectReadOnlyError: Another window or instance holds the project.
            ProjectChangedError: ``project.json`` changed on disk since it was loaded (not ``force``).
            ProjectError: The current ``project.json`` could not be read and was not moved aside; it
                is not overwritten.
            OSError: Writing failed; the previous file is unchanged.
        """
        with self._mutex:  # one save at a time, never beside an archive read or append
            return self._save(project, force)

    def _save(self, project: Project, force: bool) -> SaveResult:
        self._require_writer()
        self._doc.check_writable()
        if not force and self._doc.changed_since_seen():
            raise ProjectChangedError(
                f"{self.path} was changed by another program since it was loaded and was not "
                "overwritten; open the project again to see that version"
            )
        self._keep_pre_flat()
        archived: dict[str, int] = {}
        trimmed: dict[str, TrimInfo] = {}
        kept_closed, evicted = self._evict_closed(project.closed)
        nodes = [self._cap(node, archived, trimmed) for node in project.nodes]
        closed = [self._cap(node, archived, trimmed) for node in kept_closed]
        repaired = self._doc.write(Project(version=project.version, nodes=nodes, extra=project.extra,
                                           closed=closed))
        sweep_saved_literals()  # the literals of what left the file go (the rest serve the next save)
        with contextlib.suppress(OSError):
            self._archive.clear_pending()
        return SaveResult(archived, trimmed, repaired, self._store_grants(project, evicted), evicted)

    def _cap(self, node: NodeState, archived: dict[str, int], trimmed: dict[str, TrimInfo]) -> NodeState:
        """``node`` as the file holds it: over the history cap, capped (and its oldest archived)."""
        plan = None
        if node.kind == "chat":
            plan = plan_trim(node.id, node.conversation.messages, self.history_cap_bytes)
        return node if plan is None else self._capped(node, *plan, archived, trimmed)

    def _evict_closed(self, closed: Sequence[NodeState]) -> tuple[list[NodeState], tuple[str, ...]]:
        """The closed nodes the file keeps, and the ids of those beyond ``MAX_CLOSED`` written to
        the archive (a node whose file cannot be written is kept)."""
        kept: list[NodeState] = []
        beyond: list[NodeState] = []
        recent = 0
        for node in closed:  # imported nodes never opened are not "recently closed": never evicted
            if is_parked(node):
                kept.append(node)
            elif recent < MAX_CLOSED:
                recent += 1
                kept.append(node)
            else:
                beyond.append(node)
        evicted: list[str] = []
        for node in beyond:
            try:
                write_closed_node(self.folder, node, self.read_archive(node.id))
            except OSError as exc:
                log.error("could not move closed node %s to the archive (kept): %s", node.id, exc)
                kept.append(node)
                continue
            evicted.append(node.id)
        return kept, tuple(evicted)

    def _keep_pre_flat(self) -> None:
        """Before the first save of a file whose versions were nested, keep that file (once)."""
        source, self._pre_flat = self._pre_flat, None
        if source is None:
            return
        try:
            kept = keep_copy(source, self.path.with_name(f"{PROJECT_FILE}.{PRE_FLAT_SUFFIX}"))
        except OSError as exc:  # the save goes on: the flat file holds the same versions
            log.error("could not keep %s before saving its versions flat: %s", source, exc)
            return
        log.info("kept %s as %s before saving its versions flat", source.name, kept.name)

    def _capped(
        self,
        node: NodeState,
        kept: list[ChatMessage],
        to_archive: list[ChatMessage],
        info: TrimInfo,
        archived: dict[str, int],
        trimmed: dict[str, TrimInfo],
    ) -> NodeState:
        """Archive what the cap drops and return a copy of ``node`` with the kept messages; the node
        itself when the archive cannot be written (then nothing is trimmed)."""
        try:
            self._archive.append(node.id, to_archive)
        except OSError as exc:
            log.error("could not archive %d messages of node %s (kept): %s", len(to_archive), node.id, exc)
            return node
        archived[node.id], trimmed[node.id] = info.archived, info
        log.info("node %s: %d messages moved to the history archive", node.id, info.archived)
        conv = node.conversation
        return dataclasses.replace(node, conversation=Conversation(conv.id, kept, conv.created_at))

    def _store_grants(self, project: Project, evicted: Sequence[str] = ()) -> tuple[str, ...]:
        if self.grants is None:
            return ()
        allowed = {n.id: n.always_allow for n in (*project.nodes, *project.closed)
                   if n.kind == "chat" and n.id not in evicted}
        try:
            self.grants.sync_tools(self.folder, allowed, forget_others=True)
        except OSError as exc:
            log.error("could not store the always-allowed tools: %s", exc)
            return (f"The always-allowed tools could not be stored ({exc.strerror or exc}); "
                    "they will be asked for again next time",)
        return ()

    # ------------------------------------------------------------------------------------------
    # History archive

    def archive_path(self, node_id: str) -> Path:
        """The archive file of ``node_id`` (``.chatnodes/archive/<node-id>.jsonl``)."""
        return self._archive.path(node_id)

    def archive_messages(self, node_id: str, messages: Sequence[ChatMessage]) -> int:
        """Append ``messages`` to the node's archive, one JSON object per line, and fsync.

        Messages already in the archive (same id) are skipped, so archiving the same trimmed
        history twice never duplicates it.

        Returns:
            How many messages were written.

        Raises:
            ProjectReadOnlyError: Another window or instance holds the project.
            OSError: The archive could not be written.
        """
        with self._mutex:
            self._require_writer()
            return self._archive.append(node_id, messages)

    def delete_node_history(self, node_id: str) -> bool:
        """Remove a node's history archive (the node was deleted for good and saved without it).

        Returns:
            True when there was an archive to remove.

        Raises:
            ProjectReadOnlyError: Another window or instance holds the project.
            OSError: It could not be removed.
        """
        with self._mutex:
            self._require_writer()
            return self._archive.remove(node_id)

    def read_archive_contents(self, node_id: str) -> ArchiveContents:
        """Read a node's archive back; unreadable lines are skipped and counted, never raised."""
        with self._mutex:
            return self._archive.read(node_id)

    def read_archive(self, node_id: str) -> list[ChatMessage]:
        """Return a node's archived messages, oldest first (bad lines and repeated ids skipped)."""
        return self.read_archive_contents(node_id).messages

    def full_history(self, node_id: str, messages: Sequence[ChatMessage]) -> list[ChatMessage]:
        """The archive followed by ``messages``, each message id once (for an export)."""
        archived = self.read_archive(node_id)
        ids = {m.id for m in archived}
        return [*archived, *(m for m in messages if m.id not in ids)]
