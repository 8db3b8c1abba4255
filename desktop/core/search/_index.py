"""``SearchIndex``: the synchronous index API (one connection, one thread), for the worker, tests and CLI.

Writes are incremental. ``update_project`` takes a project's saved state and touches only what
changed: a node whose messages, title and archive are as they were at its last update in this
process is skipped after a comparison of references; a changed node is compared row by row
(each row's digest), so only new, changed and removed messages reach SQLite. A node's history
archive is read again only when its file's size or time changed. Nodes missing from the snapshot
were deleted: their rows go. ``index_folder`` does the same from the files on disk.

A full build (``build_steps``: a missing, replaced or unfinished index, or a rescan after the keys
changed) walks every known project from disk in small steps, one node per transaction, so a
search between two steps sees the rows written so far and saves are not held up. It ends by
merging the FTS segments (faster queries) and marking the index complete.

Errors: a damaged file found while working is moved aside and replaced by an empty index
(``rebuild_reason`` is set: the caller runs a build); anything else that makes the index unusable
(read-only folder, locked file, disk full) raises ``SearchUnavailable`` with the reason.
"""

from __future__ import annotations

import logging
import sqlite3
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from ..store import PROJECT_FILE, HistoryArchive
from ._pace import Pacer
from ._projectfile import read_project
from ._read import Facets, file_id, read_facets, search_on
from ._rows import Memo
from ._schema import (
    INDEX_FILE,
    IndexDamaged,
    SearchUnavailable,
    default_index_dir,
    describe,
    get_meta,
    is_corrupt,
    open_index,
    set_meta,
)
from ._search import IndexStatus, SearchQuery, SearchResults
from ._snapshot import NodeSnapshot, ProjectSnapshot, node_fingerprint, project_key
from ._store import Store
from ._sync import drop_missing_nodes, file_sig, file_size, project_bytes, sync_node
from ._text import Secrets

__all__ = ["SearchIndex", "UpdateStats", "Progress"]

log = logging.getLogger(__name__)

Progress = Callable[[int, int], None]
"""``progress(done, total)``: bytes of project files read by a build so far, and in all."""
_T = TypeVar("_T")
_MERGE_PAGES = 500  # pages of FTS segment merging per step of the idle upkeep (~10 ms)
_CHECKPOINT_COMMITS = 64  # a checkpoint resets the log: the next commit pays a sync (~2 ms), so not each time
MAINTAIN_BUDGET_S = 0.05
"""How long one idle upkeep (``maintain``) merges at most (seconds)."""
_CACHE_NODES = 512  # nodes whose last indexed state is remembered (for the cheap "unchanged" check)
_NodeMemo = tuple[tuple[object, ...], str, Memo]
"""What is remembered of a node: its fingerprint, its archive's signature and its rows' memo."""


@dataclass(frozen=True, slots=True)
class UpdateStats:
    """What one write did.

    Attributes:
        inserted: Message rows added (a changed message counts as removed and added).
        removed: Message rows removed.
        nodes: Nodes compared row by row (the others were unchanged).
        seconds: Wall time.
    """

    inserted: int = 0
    removed: int = 0
    nodes: int = 0
    seconds: float = 0.0

    def __add__(self, other: UpdateStats) -> UpdateStats:
        return UpdateStats(self.inserted + other.inserted, self.removed + other.removed,
                           self.nodes + other.nodes, self.seconds + other.seconds)


class SearchIndex:
    """The search index in a folder (see the module doc). Not thread-safe: one thread per object.

    Args:
        folder: Where the index lives (default: ``<data>/search``, see ``default_index_dir``).
        secrets: Returns the known API keys; they are removed from every text before it is stored
            (key-shaped words always are).
        busy_ms: How long a write waits for another writer (another app instance) before giving up.

    Attributes:
        folder: The index folder.
        path: The index file.
        rebuild_reason: Why a full build is needed (set by ``open`` or when a damaged file was
            replaced), None when the index is complete.
    """

    def __init__(
        self, folder: Path | None = None, *, secrets: Secrets | None = None, busy_ms: int = 5_000,
        stopping: Callable[[], bool] | None = None,
    ) -> None:
        self.folder = Path(folder) if folder is not None else default_index_dir()
        self.path = self.folder / INDEX_FILE
        self.rebuild_reason: str | None = None
        self._secrets = secrets
        self._busy_ms = busy_ms
        self._conn: sqlite3.Connection | None = None
        self._store: Store | None = None
        self._inode: tuple[int, int] | None = None
        self._seen: OrderedDict[tuple[str, str], _NodeMemo] = OrderedDict()
        self._nodes_of: dict[str, frozenset[str]] = {}  # project key -> node ids the index holds
        self._pace = Pacer(stopping=stopping)  # raises Stopped in a tick once the service closes
        self._commits = 0  # since the last checkpoint
        self._unmerged = False  # written since the upkeep last found nothing to merge

    # ------------------------------------------------------------------------------------------
    # Opening

    def open(self, *, damaged: bool = False) -> str | None:
        """Open (or create) the index for writing.

        Args:
            damaged: The file was found damaged: keep it aside and start a new one.

        Returns:
            Why a full build is needed, or None when the index is complete.

        Raises:
            SearchUnavailable: The folder or file cannot be used; the reason says why.
        """
        self.close()
        conn, why = open_index(self.folder, busy_ms=self._busy_ms, damaged=damaged)
        self._conn, self._store = conn, Store(conn)
        self._inode = self._file_id()
        self.rebuild_reason = why
        return why

    def _file_id(self) -> tuple[int, int] | None:
        return file_id(self.path)

    def close(self) -> None:
        """Close the connection (the index stays on disk, its log checkpointed)."""
        if self._commits:
            self.checkpoint()
        conn, self._conn, self._store = self._conn, None, None
        self._seen.clear()
        self._nodes_of.clear()
        if conn is not None:
            try:
                conn.close()
            except sqlite3.Error as exc:  # pragma: no cover - closing a broken connection
                log.debug("closing the index: %s", exc)

    def _writer(self) -> Store:
        """The store, (re)opened when needed: never opened, or the file was replaced or removed
        (another app instance rebuilt it)."""
        if self._store is None or self._file_id() != self._inode:
            self.open()
        assert self._store is not None
        return self._store

    def _run(self, work: Callable[[Store], _T]) -> _T:
        """Run ``work`` in one write transaction; damaged file → replaced (and ``rebuild_reason``
        set), other failures → ``SearchUnavailable``."""
        store = self._writer()
        try:
            store.begin()
            try:
                result = work(store)
                store.commit()
            except BaseException:
                store.rollback()
                raise
            self._commits += 1
            self._unmerged = True
            return result
        except sqlite3.DatabaseError as exc:
            if is_corrupt(exc):
                log.warning("the search index is damaged (%s); replacing it", exc)
                self.replace_damaged()
                raise IndexDamaged("the index was damaged; it is being rebuilt") from None
            raise SearchUnavailable(describe(exc, self.folder)) from None
        except OSError as exc:
            raise SearchUnavailable(describe(exc, self.folder)) from None

    def replace_damaged(self, file_id: tuple[int, int] | None = None) -> None:
        """Keep the damaged index file aside and start an empty one (``rebuild_reason`` is set).

        Args:
            file_id: ``(st_dev, st_ino)`` of the file found damaged; when the file now there is
                another one (already replaced), nothing happens.

        Raises:
            SearchUnavailable: No new index could be made.
        """
        if file_id is not None and self._file_id() != file_id:
            return
        self.close()
        self.open(damaged=True)

    def _known_secrets(self) -> tuple[str, ...]:
        if self._secrets is None:
            return ()
        try:
            return tuple(s for s in self._secrets() if s)
        except Exception:  # noqa: BLE001 - a failing key source must not stop indexing
            log.exception("reading the known keys failed; only key-shaped text is scrubbed")
            return ()

    # ------------------------------------------------------------------------------------------
    # Writing

    def _remember(self, key: tuple[str, str], value: _NodeMemo) -> None:
        self._seen[key] = value
        self._seen.move_to_end(key)
        while len(self._seen) > _CACHE_NODES:
            self._seen.popitem(last=False)

    def forget_cache(self, folder: Path | None = None) -> None:
        """Drop what is remembered of the nodes of ``folder`` (all when None): the next update
        compares them row by row. Call it when a project closes (the memory is its messages')."""
        if folder is None:
            self._seen.clear()
            self._nodes_of.clear()
            return
        key = project_key(folder)
        self._nodes_of.pop(key, None)
        for k in [k for k in self._seen if k[0] == key]:
            del self._seen[k]

    def update_project(self, snapshot: ProjectSnapshot, *, remember: bool = True) -> UpdateStats:
        """Bring a project's rows in line with its saved state (see the module doc).

        Args:
            snapshot: The project as saved.
            remember: Keep what the nodes were (references to their messages) to skip unchanged
                nodes next time: for the projects open in the app, not for ones read from disk.

        Raises:
            SearchUnavailable: The index cannot be written now (the update was not applied).
        """
        started = time.perf_counter()
        self._pace.start(grace=remember)  # a save's update is short: no rests unless it is not
        folder = snapshot.folder
        key = project_key(folder)
        secrets = self._known_secrets()
        archive = HistoryArchive(folder)
        pending: list[tuple[NodeSnapshot, tuple[object, ...], str, Memo | None]] = []
        for node in snapshot.nodes:
            if not remember:
                pending.append((node, (), "", None))
                continue
            fingerprint = node_fingerprint(node)
            sig = file_sig(archive.path(node.node_id))
            seen = self._seen.get((key, node.node_id))
            if seen is None or seen[0] != fingerprint or seen[1] != sig:
                pending.append((node, fingerprint, sig, seen[2] if seen is not None else None))
        memos: list[Memo] = []

        def work(store: Store) -> tuple[int, int]:
            memos.clear()
            pid = store.project(key)
            assert pid is not None
            known = store.nodes(pid)
            inserted = removed = 0
            for node, _, _, memo in pending:
                i, r, new_memo = sync_node(store, pid, node, secrets, archive, memo, self._pace.tick)
                inserted, removed = inserted + i, removed + r
                memos.append(new_memo)
            rows, gone = drop_missing_nodes(store, pid, known, snapshot)
            for node_id in gone:
                self._seen.pop((key, node_id), None)
            return inserted, removed + rows

        present = frozenset(n.node_id for n in snapshot.nodes)
        if pending or self._nodes_of.get(key) != present:
            inserted, removed = self._run(work)
        else:
            inserted = removed = 0  # nothing changed, no node was deleted: no transaction
        self._nodes_of[key] = present
        if remember:
            for (node, fingerprint, sig, _), memo in zip(pending, memos, strict=True):
                self._remember((key, node.node_id), (fingerprint, sig, memo))
        return UpdateStats(inserted, removed, len(pending), time.perf_counter() - started)

    def index_folder(self, folder: Path, *, force: bool = False) -> UpdateStats:
        """Index the project in ``folder`` from its files (``project.json`` and the archive).

        Nothing is read when ``project.json`` has the size and time it had when the project was last
        indexed (a save always replaces it, archive appends included), unless ``force``. A folder
        without ``project.json`` (the project was deleted or moved) loses its rows; a file that
        cannot be read keeps the rows there are (logged).

        Raises:
            SearchUnavailable: The index cannot be written now.
        """
        sig = file_sig(Path(folder) / PROJECT_FILE)
        key = project_key(folder)
        if sig and not force:
            def recorded(store: Store) -> str:
                pid = store.project(key, create=False)
                return "" if pid is None else store.project_sig(pid)

            if self._run(recorded) == sig:
                return UpdateStats()
        self._pace.start(grace=False)
        try:
            snapshot = read_project(folder, pace=self._pace.tick)
        except FileNotFoundError:
            started = time.perf_counter()
            removed = self.remove_project(folder)
            return UpdateStats(0, removed, 0, time.perf_counter() - started)
        except (OSError, ValueError) as exc:
            log.warning("not indexing %s: %s", folder, exc)
            return UpdateStats()
        return self.update_project(snapshot, remember=False)

    def remove_project(self, folder: Path) -> int:
        """Remove every row of a project (deleted, or forgotten by the user); returns the count."""
        key = project_key(folder)
        self.forget_cache(folder)

        def work(store: Store) -> int:
            pid = store.project(key, create=False)
            return 0 if pid is None else store.remove_project(pid)

        return self._run(work)

    def remove_node(self, folder: Path, node_id: str) -> int:
        """Remove every row of one node (deleted); returns the count."""
        key = project_key(folder)
        self._seen.pop((key, node_id), None)

        def work(store: Store) -> int:
            pid = store.project(key, create=False)
            info = None if pid is None else store.nodes(pid).get(node_id)
            return 0 if info is None else store.remove_node(info[0])

        return self._run(work)

    def projects(self) -> list[Path]:
        """The folders of every indexed project."""
        return [Path(k) for k in self._run(lambda store: store.project_keys())]

    # ------------------------------------------------------------------------------------------
    # Full builds

    def build_steps(self, folders: Iterable[Path], *, clear: bool = False) -> Iterator[tuple[int, int]]:
        """A full build in small steps: each ``next()`` indexes one node (one transaction).

        Every project in ``folders`` and every project already in the index is read from disk;
        projects whose ``project.json`` is gone lose their rows.

        Args:
            folders: The known projects (the registry of opened projects).
            clear: Start from an empty index (else rows are compared and kept when unchanged).

        Yields:
            ``(done, total)`` in bytes of project files read.

        Raises:
            SearchUnavailable: The index cannot be written (the build stops; it resumes later).
        """
        self._pace.start(grace=False)
        self._run(lambda store: set_meta(store.conn, "complete", "0"))
        if clear:
            self._run(lambda store: store.clear())
        self.forget_cache()  # the keys may have changed: compare every row
        keys = dict.fromkeys([project_key(f) for f in folders] + [str(k) for k in self.projects()])
        sizes = {k: project_bytes(Path(k)) for k in keys}
        total = max(1, sum(sizes.values()))
        done = 0
        yield done, total
        for key in keys:
            folder = Path(key)
            try:
                snapshot = read_project(folder, pace=self._pace.tick)
            except FileNotFoundError:
                self.remove_project(folder)
                done += sizes[key]
                yield done, total
                continue
            except (OSError, ValueError) as exc:
                log.warning("not indexing %s: %s", folder, exc)
                done += sizes[key]
                yield done, total
                continue
            json_bytes = file_size(folder / PROJECT_FILE)
            done += json_bytes
            step = (sizes[key] - json_bytes) / max(1, len(snapshot.nodes))
            for node in snapshot.nodes:
                self._build_node(folder, node)
                done = min(total, done + int(step))
                yield done, total

            def finish(store: Store, key: str = key, snapshot: ProjectSnapshot = snapshot) -> None:
                pid = store.project(key)
                assert pid is not None
                drop_missing_nodes(store, pid, store.nodes(pid), snapshot)

            self._run(finish)
            self._nodes_of[key] = frozenset(n.node_id for n in snapshot.nodes)
            self.checkpoint()
        self._run(lambda store: store.conn.execute("INSERT INTO fts(fts) VALUES('optimize')"))
        self._run(lambda store: set_meta(store.conn, "complete", "1"))
        self.checkpoint(shrink=True)
        self.rebuild_reason = None
        yield total, total

    def _build_node(self, folder: Path, node: NodeSnapshot) -> None:
        """Index one node read from disk (its messages are not remembered: not a live project)."""
        key = project_key(folder)
        secrets = self._known_secrets()
        archive = HistoryArchive(folder)

        def work(store: Store) -> None:
            pid = store.project(key)
            assert pid is not None
            sync_node(store, pid, node, secrets, archive, None, self._pace.tick)

        self._run(work)

    def maintain(self, budget_s: float = MAINTAIN_BUDGET_S) -> bool:
        """Idle-time upkeep: merge FTS segments, then copy the write-ahead log into the file.

        SQLite's automatic checkpoint is off on the writer, and so is FTS5's automatic merging of
        segments: both would land inside an update (5-20 ms every ~15 saves; after a big write, one
        merge of ~100 ms). The service calls this whenever it has nothing else to do. A checkpoint
        comes every ``_CHECKPOINT_COMMITS`` writes only: it resets the log, and the next commit then
        syncs it (~2 ms measured on each save when every idle moment checkpointed).

        Args:
            budget_s: Merge for about this long at most.

        Returns:
            True when merge work is left (call again at the next idle moment).
        """
        if self._conn is None or not self._unmerged:
            return False
        conn = self._conn
        deadline = time.perf_counter() + budget_s
        try:
            while True:
                before = conn.total_changes
                conn.execute(f"INSERT INTO fts(fts, rank) VALUES('merge', {_MERGE_PAGES})")
                if conn.total_changes - before < 2:  # the command itself counts one change
                    self._unmerged = False
                    break  # nothing left to merge
                if time.perf_counter() >= deadline:
                    return True
            if self._commits >= _CHECKPOINT_COMMITS:
                self.checkpoint()
        except sqlite3.Error as exc:
            log.debug("index upkeep: %s", exc)
        return False

    def checkpoint(self, *, shrink: bool = False) -> None:
        """Copy the write-ahead log into the index file (best effort: a reader may hold back part);
        ``shrink`` cuts the log file back to empty (after a build)."""
        if self._conn is None:
            return
        try:
            self._conn.execute(f"PRAGMA wal_checkpoint({'TRUNCATE' if shrink else 'PASSIVE'})").fetchall()
            self._commits = 0
        except sqlite3.Error as exc:
            log.debug("checkpoint: %s", exc)

    def build(
        self, folders: Iterable[Path], *, clear: bool = False, progress: Progress | None = None
    ) -> None:
        """Run ``build_steps`` to the end (tests, the command line)."""
        for done, total in self.build_steps(folders, clear=clear):
            if progress is not None:
                progress(done, total)

    # ------------------------------------------------------------------------------------------
    # Reading

    def is_complete(self) -> bool:
        """True when a full build has ended (the index holds every known project)."""
        return bool(self._run(lambda store: get_meta(store.conn, "complete") == "1"))

    def search(self, query: SearchQuery, status: IndexStatus | None = None) -> SearchResults:
        """Run a query on this connection (the worker's searches use a reader of their own).

        Raises:
            SearchUnavailable: The index cannot be read.
        """
        store = self._writer()
        return search_on(store.conn, query, status or IndexStatus("ready"), self.folder)

    def facets(self) -> Facets:
        """The values the search filters offer (models, projects).

        Raises:
            SearchUnavailable: The index cannot be read.
        """
        return read_facets(self._writer().conn, self.folder)
