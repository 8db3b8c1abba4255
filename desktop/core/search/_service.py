"""``SearchService``: the index off the GUI thread, two worker threads with their own connections.

* **The writer** owns the writing ``SearchIndex``. It takes jobs from a queue where a newer job for
  the same project replaces an older one still waiting (ten quick saves index once): saved project
  snapshots, projects opened (indexed from disk), deleted nodes and projects, rebuilds. A full
  build runs one node at a time between jobs, so a save is indexed within one step of the build.
* **The searcher** owns a read-only connection and answers one query at a time; a newer query
  replaces a waiting one and interrupts a running one (typing: only the last query counts).

Nothing here touches Qt. Callbacks (``on_status``, a search's ``callback``) run on the worker
threads; a GUI turns them into queued signals. Exceptions raised by a callback are logged, never
propagated. Tests and the command line can also use ``SearchIndex`` directly (synchronous).

When the index cannot be used (a read-only or locked data folder) the status says
``unavailable`` with the reason, searches return no hits with that status, and the writer keeps the
waiting jobs and tries again on the next job, on ``retry()`` or after ``RETRY_SECONDS``.
"""

from __future__ import annotations

import itertools
import logging
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from ._index import SearchIndex
from ._pace import Stopped
from ._read import Facets, QueryInterrupted, file_id, open_reader, read_facets, search_on
from ._schema import INDEX_FILE, IndexDamaged, SearchUnavailable, default_index_dir
from ._search import IndexStatus, SearchQuery, SearchResults
from ._snapshot import ProjectSnapshot, project_key
from ._text import Secrets

__all__ = ["SearchService", "RETRY_SECONDS"]

log = logging.getLogger(__name__)

RETRY_SECONDS = 30.0
"""How long the writer waits before trying an unusable index again when no new job comes."""
_Job = tuple[str, object]
_STOP: tuple[tuple[str, ...], _Job] = (("stop",), ("stop", None))


def _call(callback: Callable[..., object], *args: object) -> None:
    try:
        callback(*args)
    except Exception:  # noqa: BLE001 - a failing callback must not stop the worker
        log.exception("a search callback failed")


class SearchService:
    """The search index, kept current and queried on two worker threads (see the module doc).

    Args:
        folder: The index folder (default ``<data>/search``).
        secrets: Returns the known API keys (scrubbed from everything indexed).
        known_projects: Returns every project folder the user has opened (a full build indexes
            them; e.g. ``RecentProjects.folders``).
        on_status: Called with each new ``IndexStatus`` (on the writer thread).
        busy_ms: How long a write waits for another app instance's write.

    Attributes:
        folder: The index folder.
    """

    def __init__(
        self,
        folder: Path | None = None,
        *,
        secrets: Secrets | None = None,
        known_projects: Callable[[], Iterable[Path]] | None = None,
        on_status: Callable[[IndexStatus], None] | None = None,
        busy_ms: int = 5_000,
    ) -> None:
        self.folder = Path(folder) if folder is not None else default_index_dir()
        self._secrets = secrets
        self._known = known_projects
        self._on_status = on_status
        self._busy_ms = busy_ms
        self._cond = threading.Condition()
        self._jobs: OrderedDict[tuple[str, ...], _Job] = OrderedDict()
        self._status = IndexStatus("starting")
        self._generation = 0  # bumped when the writer opened a new file: the searcher reopens
        self._busy = True  # the writer has work (a job, a build step or its first open)
        self._kicks = 0  # counts new jobs and retry() calls (wakes a writer waiting on a bad index)
        self._stopping = False
        self._query: tuple[int, SearchQuery, Callable[[SearchResults], None]] | None = None
        self._facet_calls: list[Callable[[Facets], None]] = []
        self._tickets = itertools.count(1)
        self._latest = 0
        self._running: int | None = None
        self._reader: sqlite3.Connection | None = None
        self._writer_thread = threading.Thread(target=self._writer_main, name="search-index", daemon=True)
        self._searcher_thread = threading.Thread(target=self._searcher_main, name="search-query", daemon=True)
        self._started = False

    # ------------------------------------------------------------------------------------------
    # Public API (any thread)

    def start(self) -> None:
        """Start both threads; the writer opens the index (and builds it when needed)."""
        if not self._started:
            self._started = True
            self._writer_thread.start()
            self._searcher_thread.start()

    @property
    def status(self) -> IndexStatus:
        """The index's current state."""
        with self._cond:
            return self._status

    def project_saved(self, snapshot: ProjectSnapshot) -> None:
        """Index a project's saved state (``snapshot_project`` right after the save)."""
        self._put(("project", project_key(snapshot.folder)), ("snapshot", snapshot))

    def project_opened(self, folder: Path) -> None:
        """Index a project from its files (catches up with changes made while it was closed)."""
        key = project_key(folder)
        with self._cond:
            if ("project", key) in self._jobs:
                return  # a snapshot (newer than the files) is already waiting
        self._put(("project", key), ("folder", Path(folder)))

    def project_closed(self, folder: Path) -> None:
        """Let go of what is remembered of a closed project's messages (memory)."""
        self._put(("closed", project_key(folder)), ("closed", Path(folder)))

    def forget_project(self, folder: Path) -> None:
        """Remove every row of a project (deleted, or removed from the list by the user)."""
        key = project_key(folder)
        with self._cond:
            self._jobs.pop(("project", key), None)
        self._put(("forget", key), ("forget", Path(folder)))

    def forget_node(self, folder: Path, node_id: str) -> None:
        """Remove every row of a deleted node (the next snapshot of the project does it too)."""
        self._put(("node", project_key(folder), node_id), ("node", (Path(folder), node_id)))

    def rebuild(self, *, clear: bool = False) -> None:
        """Read every known project again (e.g. after the API keys changed: rows are re-scrubbed);
        ``clear`` starts from an empty index."""
        self._put(("build",), ("build", clear))

    def retry(self) -> None:
        """Try an unusable index again now (e.g. after the user fixed the folder's permissions)."""
        with self._cond:
            self._kicks += 1
            self._busy = True
            self._cond.notify_all()

    def search(self, query: SearchQuery, callback: Callable[[SearchResults], None]) -> int:
        """Run ``query`` on the searcher thread; ``callback(results)`` gets the answer there.

        A newer call replaces a query still waiting and interrupts one running: only the latest
        query's callback runs (with typing, earlier answers would be stale).

        Returns:
            The query's ticket (increasing); the callback's results carry the query itself.
        """
        with self._cond:
            ticket = next(self._tickets)
            self._latest = ticket
            self._query = (ticket, query, callback)
            if self._running is not None and self._reader is not None:
                self._reader.interrupt()
            self._cond.notify_all()
        return ticket

    def facets(self, callback: Callable[[Facets], None]) -> None:
        """The values the filters offer (models, projects): ``callback(facets)`` on the searcher
        thread (empty facets when the index cannot be read)."""
        with self._cond:
            self._facet_calls.append(callback)
            self._cond.notify_all()

    def wait_idle(self, timeout: float) -> bool:
        """Block until the writer waits: every job done and no build running, or the index is
        unusable (see ``status``). For tests, benchmarks and shutdown; False when ``timeout``
        seconds passed first."""
        with self._cond:
            return self._cond.wait_for(lambda: not self._busy or self._stopping, timeout)

    def close(self, timeout: float = 10.0) -> None:
        """Stop both threads and close the connections. The job being done is abandoned at its next
        pace tick (its transaction rolled back) and waiting jobs are dropped: the next start catches
        up from the files."""
        with self._cond:
            self._stopping = True
            if self._reader is not None and self._running is not None:
                self._reader.interrupt()
            self._cond.notify_all()
        for thread in (self._writer_thread, self._searcher_thread):
            if thread.is_alive():
                thread.join(timeout)

    # ------------------------------------------------------------------------------------------
    # Writer thread

    def _put(self, key: tuple[str, ...], job: _Job) -> None:
        with self._cond:
            self._jobs[key] = job
            self._kicks += 1
            self._busy = True
            self._cond.notify_all()

    def _set_status(self, status: IndexStatus) -> None:
        with self._cond:
            if status == self._status:
                return
            self._status = status
        if self._on_status is not None:
            _call(self._on_status, status)

    def _take(self, building: bool) -> tuple[tuple[str, ...], _Job] | None:
        """The next job; None for a build step; ``_STOP`` when closing."""
        with self._cond:
            while not self._stopping:
                if self._jobs:
                    return self._jobs.popitem(last=False)
                if building:
                    return None
                self._busy = False
                self._cond.notify_all()
                self._cond.wait()
            return _STOP

    def _pending(self) -> bool:
        with self._cond:
            return bool(self._jobs)

    def _wait_kick(self) -> bool:
        """Wait (the index is unusable) for a new job, ``retry()`` or ``RETRY_SECONDS``; False when
        closing."""
        with self._cond:
            kicks = self._kicks
            self._busy = False
            self._cond.notify_all()
            self._cond.wait_for(lambda: self._kicks != kicks or self._stopping, RETRY_SECONDS)
            self._busy = True
            return not self._stopping

    def _requeue(self, key: tuple[str, ...], job: _Job) -> None:
        """Put back a job that could not run, first in line (unless a newer one for the same
        target came meanwhile)."""
        with self._cond:
            if key not in self._jobs:
                self._jobs[key] = job
                self._jobs.move_to_end(key, last=False)

    def _known_folders(self) -> list[Path]:
        if self._known is None:
            return []
        try:
            return [Path(f) for f in self._known()]
        except Exception:  # noqa: BLE001 - a broken registry must not stop the build
            log.exception("reading the list of known projects failed")
            return []

    def _writer_main(self) -> None:
        index = SearchIndex(self.folder, secrets=self._secrets, busy_ms=self._busy_ms,
                            stopping=lambda: self._stopping)
        build: Iterator[tuple[int, int]] | None = None
        opened = False
        upkeep = False  # the index was written since its last upkeep
        try:
            while True:
                if not opened:
                    opened, build = self._open(index)
                    if not opened:
                        if not self._wait_kick():
                            return
                        continue
                if upkeep and build is None and not self._pending():
                    upkeep = index.maintain()  # idle: merging and checkpoints now, not during an update
                taken = self._take(build is not None or upkeep)
                if taken is _STOP:
                    return
                if taken is None and build is None:
                    continue  # more upkeep (no job came meanwhile)
                upkeep = True
                try:
                    if taken is None:
                        build = self._step(build)
                    else:
                        build = self._do(index, taken[1], build)
                except Stopped:
                    return  # closing: the update was rolled back, the next start catches up from the files
                except IndexDamaged:
                    if taken is not None:
                        self._requeue(*taken)
                    build = None  # started again below, on the new file
                except SearchUnavailable as exc:
                    if taken is not None:
                        self._requeue(*taken)
                    self._set_status(IndexStatus("unavailable", reason=str(exc)))
                    index.close()
                    opened, build = False, None  # an unfinished build resumes when it opens again
                    if not self._wait_kick():
                        return
                    continue
                except Exception:  # noqa: BLE001 - one bad job (a bug, odd data) must not stop indexing
                    log.exception("a search index job failed; it is dropped")
                    if taken is None:  # the build: not again now (the next start resumes it)
                        build, index.rebuild_reason = None, None
                        self._set_status(IndexStatus("ready"))
                    continue
                if index.rebuild_reason is not None and build is None:
                    build = self._start_build(index, clear=False)
        except Exception:  # noqa: BLE001 - reported; the app keeps running without search
            log.exception("the search indexer stopped")
            reason = "the indexer stopped after an error (see the log)"
            self._set_status(IndexStatus("unavailable", reason=reason))
        finally:
            index.close()
            with self._cond:
                self._busy = False
                self._cond.notify_all()

    def _open(self, index: SearchIndex) -> tuple[bool, Iterator[tuple[int, int]] | None]:
        try:
            why = index.open()
        except SearchUnavailable as exc:
            self._set_status(IndexStatus("unavailable", reason=str(exc)))
            return False, None
        if why is not None:
            return True, self._start_build(index, clear=False)
        with self._cond:
            self._generation += 1
        self._set_status(IndexStatus("ready"))
        self._sweep(index)
        return True, None

    def _sweep(self, index: SearchIndex) -> None:
        """At start, look at every known and indexed project again (a folder read only when its
        ``project.json`` changed since it was indexed; a deleted project loses its rows)."""
        try:
            indexed = index.projects()
        except SearchUnavailable:
            indexed = []
        with self._cond:
            for folder in dict.fromkeys([*self._known_folders(), *indexed]):
                key = ("project", project_key(folder))
                if key not in self._jobs:
                    self._jobs[key] = ("folder", folder)

    def _start_build(self, index: SearchIndex, *, clear: bool) -> Iterator[tuple[int, int]]:
        reason = index.rebuild_reason or "a rebuild was asked for"
        log.info("building the search index: %s", reason)
        with self._cond:
            self._generation += 1  # the file may be new: the searcher opens it again
        self._set_status(IndexStatus("building", 0, 0, reason))
        return index.build_steps(self._known_folders(), clear=clear)

    def _step(self, build: Iterator[tuple[int, int]] | None) -> Iterator[tuple[int, int]] | None:
        if build is None:
            return None
        try:
            done, total = next(build)
        except StopIteration:
            self._set_status(IndexStatus("ready"))
            return None
        old = self.status
        pct = 100 * done // total if total else 0
        if old.state != "building" or old.total == 0 or 100 * old.done // old.total != pct:
            self._set_status(IndexStatus("building", done, total, old.reason))
        return build

    def _do(self, index: SearchIndex, job: _Job, build: Iterator[tuple[int, int]] | None
            ) -> Iterator[tuple[int, int]] | None:
        kind, payload = job
        if kind == "snapshot" and isinstance(payload, ProjectSnapshot):
            index.update_project(payload)
        elif kind == "folder" and isinstance(payload, Path):
            index.index_folder(payload)
        elif kind == "closed" and isinstance(payload, Path):
            index.forget_cache(payload)
        elif kind == "forget" and isinstance(payload, Path):
            index.remove_project(payload)
        elif kind == "node" and isinstance(payload, tuple):
            index.remove_node(payload[0], payload[1])
        elif kind == "damaged":
            index.replace_damaged(payload if isinstance(payload, tuple) else None)
            return build if index.rebuild_reason is None else None
        elif kind == "build":
            return self._start_build(index, clear=bool(payload))
        if self.status.state == "unavailable":
            self._set_status(IndexStatus("building", reason=index.rebuild_reason) if build is not None
                             else IndexStatus("ready"))
        return build

    # ------------------------------------------------------------------------------------------
    # Searcher thread

    def _searcher_main(self) -> None:
        generation = -1
        seen_file: tuple[int, int] | None = None
        try:
            while True:
                with self._cond:
                    self._cond.wait_for(self._searcher_has_work)
                    if self._stopping:
                        return
                    facet_calls, self._facet_calls = self._facet_calls, []
                    taken, self._query = self._query, None
                    stale = generation != self._generation
                    generation = self._generation
                    status = self._status
                current = file_id(self.folder / INDEX_FILE)
                if stale or current != seen_file:
                    self._close_reader()
                    seen_file = current
                if facet_calls:
                    facets = self._facets(status)
                    for call in facet_calls:
                        _call(call, facets)
                if taken is None:
                    continue
                ticket, query, callback = taken
                results = self._answer(ticket, query, status, seen_file)
                if results is None:
                    continue
                with self._cond:
                    latest = ticket == self._latest
                if latest:
                    _call(callback, results)
        finally:
            self._close_reader()

    def _answer(self, ticket: int, query: SearchQuery, status: IndexStatus,
                seen_file: tuple[int, int] | None) -> SearchResults | None:
        """The results of one query; None when a newer query interrupted it."""
        if status.state == "unavailable":
            return SearchResults(query, status=status)
        for _ in range(2):
            try:
                if self._reader is None:
                    conn = open_reader(self.folder, busy_ms=self._busy_ms)
                    if conn is None:
                        return SearchResults(query, status=status)
                    with self._cond:
                        self._reader = conn
                with self._cond:
                    if ticket != self._latest or self._stopping:
                        return None
                    self._running = ticket
                try:
                    return search_on(self._reader, query, status, self.folder)
                finally:
                    with self._cond:
                        self._running = None
            except QueryInterrupted:
                continue  # a newer query (dropped below) or an interrupt meant for the one before
            except IndexDamaged as exc:
                self._close_reader()
                self._put(("damaged",), ("damaged", seen_file))
                return SearchResults(query, status=IndexStatus("building", reason=str(exc)))
            except SearchUnavailable as exc:
                self._close_reader()
                return SearchResults(query, status=IndexStatus("unavailable", reason=str(exc)))
        return None

    def _searcher_has_work(self) -> bool:
        return self._query is not None or bool(self._facet_calls) or self._stopping

    def _facets(self, status: IndexStatus) -> Facets:
        if status.state == "unavailable":
            return Facets()
        try:
            if self._reader is None:
                conn = open_reader(self.folder, busy_ms=self._busy_ms)
                if conn is None:
                    return Facets()
                with self._cond:
                    self._reader = conn
            return read_facets(self._reader, self.folder)
        except (SearchUnavailable, QueryInterrupted) as exc:
            log.warning("the search filters could not be read: %s", exc)
            self._close_reader()
            return Facets()

    def _close_reader(self) -> None:
        with self._cond:
            conn, self._reader = self._reader, None
        if conn is not None:
            try:
                conn.close()
            except sqlite3.Error:  # pragma: no cover
                pass
