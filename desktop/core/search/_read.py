"""Reading the index on any connection: queries, the filters' values, a read-only connection.

The writer (``SearchIndex``) and the searcher thread (``SearchService``) both read through these;
SQLite failures become ``SearchUnavailable`` (``IndexDamaged`` for a damaged file) or
``QueryInterrupted`` (a newer query stopped this one).
"""

from __future__ import annotations

import logging
import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from ._schema import INDEX_FILE, IndexDamaged, SearchUnavailable, connect, describe, is_corrupt
from ._search import IndexStatus, SearchQuery, SearchResults, run_search
from ._snapshot import project_key

__all__ = ["Facets", "QueryInterrupted", "file_id", "open_reader", "project_ids", "read_facets", "search_on"]

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Facets:
    """What the search filters can offer.

    Attributes:
        models: Every model that wrote an indexed message, sorted.
        projects: Every indexed project folder, sorted.
    """

    models: tuple[str, ...] = ()
    projects: tuple[Path, ...] = ()


class QueryInterrupted(Exception):
    """A query was stopped by ``Connection.interrupt()`` (a newer query replaced it)."""


def file_id(path: Path) -> tuple[int, int] | None:
    """``(st_dev, st_ino)`` of a file (which file a connection has open), None when missing."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def project_ids(conn: sqlite3.Connection, folders: tuple[Path, ...]) -> tuple[int, ...] | None:
    """The ids of these project folders (None when no folder is given: no filter)."""
    if not folders:
        return None
    keys = [project_key(f) for f in folders]
    marks = ",".join("?" * len(keys))
    return tuple(int(r[0]) for r in conn.execute(f"SELECT id FROM projects WHERE path IN ({marks})", keys))


def _unusable(exc: sqlite3.Error, folder: Path) -> Exception:
    if isinstance(exc, sqlite3.OperationalError) and "interrupt" in str(exc):
        return QueryInterrupted()
    if is_corrupt(exc):
        return IndexDamaged("the index is damaged; it is being rebuilt")
    return SearchUnavailable(describe(exc, folder))


def read_facets(conn: sqlite3.Connection, folder: Path) -> Facets:
    """The models and projects of the index.

    Raises:
        IndexDamaged, SearchUnavailable, QueryInterrupted: As ``search_on``.
    """
    try:
        cur = conn.execute("SELECT DISTINCT model FROM messages WHERE model IS NOT NULL ORDER BY model")
        models = tuple(str(r[0]) for r in cur)
        projects = tuple(Path(str(r[0])) for r in conn.execute("SELECT path FROM projects ORDER BY path"))
    except sqlite3.Error as exc:
        raise _unusable(exc, folder) from None
    return Facets(models, projects)


def search_on(
    conn: sqlite3.Connection, query: SearchQuery, status: IndexStatus, folder: Path
) -> SearchResults:
    """Run ``query`` on ``conn``, turning SQLite failures into ``SearchUnavailable``.

    Raises:
        IndexDamaged: The file is damaged (the writer replaces it).
        SearchUnavailable: The index cannot be read.
        QueryInterrupted: The connection was interrupted.
    """
    try:
        return run_search(conn, query, project_ids(conn, query.projects), status)
    except sqlite3.Error as exc:
        raise _unusable(exc, folder) from None


def open_reader(folder: Path, *, busy_ms: int = 1_000) -> sqlite3.Connection | None:
    """A read-only connection to the index in ``folder``, or None when there is no index yet."""
    path = folder / INDEX_FILE
    if not path.exists():
        return None
    try:
        return connect(path, busy_ms=busy_ms, read_only=True)
    except sqlite3.Error as exc:
        raise SearchUnavailable(describe(exc, folder)) from None
