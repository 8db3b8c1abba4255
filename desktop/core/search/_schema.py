"""The index file: where it lives, its tables, and what happens when it is missing, stale or corrupt.

``<data>/search/index.sqlite3`` in the user's data folder (``$CHATNODES_DATA_DIR`` when set, else
the platform's user data dir): derived from the projects, rebuildable and private, so never in a
project folder. SQLite in WAL mode: one writer (the indexer thread) and readers (searches) at once.

Tables::

    projects(id, path UNIQUE, name, file_sig)          file_sig: size:mtime of project.json indexed
    nodes(id, project_id, node_id, title, archive_sig)  archive_sig: size:mtime of its archive
    messages(rowid, project_id, node, msg_id, role, model, ts, archived, path, digest, body)
    fts(body, parts)                                    FTS5, contentless, unicode61 remove_diacritics 2
    meta(key, value)                                    "complete" = "1" once a full build ended

A message's rowid is ``(ts << 20) | n``: the FTS table lists rowids newest first for free, so
"newest first" needs no sort and a date range is a rowid range.

Opening (:func:`open_index`, under a lock on ``index.lock`` so two app instances never replace
each other's new file): a file that is not a database, or is malformed, is moved aside to
``index.sqlite3.corrupt-<time>`` (only the newest such copy is kept: the index is derived data) and
a new one is created; a file of another schema version is deleted and created again; either way,
or when a build did not finish, the caller is told to rebuild. A folder that cannot be written
raises :class:`SearchUnavailable` with the reason.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
import time
from collections.abc import Mapping
from pathlib import Path

from ..files import FileLock, LockState

__all__ = [
    "DATA_DIR_ENV",
    "INDEX_FILE",
    "SCHEMA_VERSION",
    "SearchUnavailable",
    "IndexDamaged",
    "default_index_dir",
    "open_index",
    "connect",
    "is_corrupt",
    "describe",
    "set_meta",
    "get_meta",
]

log = logging.getLogger(__name__)

DATA_DIR_ENV = "CHATNODES_DATA_DIR"
"""Environment variable naming the user data folder (tests, portable installs)."""
INDEX_FILE = "index.sqlite3"
LOCK_FILE = "index.lock"  # held while a process opens (and maybe replaces) the index file
SCHEMA_VERSION = 1
"""Bump when the tables or the text rules of ``_text`` change: a contentless FTS table can only
delete a row given the very values it indexed, so old rows must not meet new rules."""
_WAL_LIMIT = 16 * 1024 * 1024  # bytes the write-ahead log keeps after a checkpoint (a build writes more)
_CORRUPT_CODES = {11, 26}  # SQLITE_CORRUPT, SQLITE_NOTADB (extended codes keep them in the low byte)

_TABLES = """
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE projects(
    id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE, name TEXT NOT NULL, file_sig TEXT NOT NULL DEFAULT '');
CREATE TABLE nodes(
    id INTEGER PRIMARY KEY, project_id INTEGER NOT NULL, node_id TEXT NOT NULL, title TEXT NOT NULL,
    archive_sig TEXT NOT NULL DEFAULT '', UNIQUE(project_id, node_id));
CREATE TABLE messages(
    rowid INTEGER PRIMARY KEY, project_id INTEGER NOT NULL, node INTEGER NOT NULL, msg_id TEXT NOT NULL,
    role TEXT NOT NULL, model TEXT, ts INTEGER NOT NULL, archived INTEGER NOT NULL, path TEXT NOT NULL,
    digest BLOB NOT NULL, body TEXT NOT NULL, UNIQUE(node, msg_id));
CREATE INDEX messages_model ON messages(model);
CREATE VIRTUAL TABLE fts USING fts5(body, parts, content='', tokenize='unicode61 remove_diacritics 2');
INSERT INTO fts(fts, rank) VALUES('automerge', 0);
"""


class SearchUnavailable(Exception):
    """The index cannot be used; ``str(exc)`` is the reason for the user (no secret in it)."""


class IndexDamaged(SearchUnavailable):
    """The index file was found damaged while in use; it was kept aside and replaced by an empty
    one (a full build is due). The interrupted work can be done again on the new file."""


def default_index_dir(environ: Mapping[str, str] | None = None) -> Path:
    """``<data>/search``: ``$CHATNODES_DATA_DIR`` when set, else the platform's user data dir."""
    env = os.environ if environ is None else environ
    override = env.get(DATA_DIR_ENV, "").strip()
    if override:
        return Path(override).expanduser() / "search"
    import platformdirs

    return Path(platformdirs.user_data_dir("chatnodes", appauthor=False)) / "search"


def is_corrupt(exc: BaseException) -> bool:
    """True when an SQLite error means the file is damaged (not locked, not read-only)."""
    if not isinstance(exc, sqlite3.DatabaseError):
        return False
    code = getattr(exc, "sqlite_errorcode", None)
    if isinstance(code, int):
        return code & 0xFF in _CORRUPT_CODES
    text = str(exc)
    return "malformed" in text or "not a database" in text


def describe(exc: BaseException, folder: Path) -> str:
    """A readable reason for an error that makes the index unusable."""
    text = str(exc) or type(exc).__name__
    if isinstance(exc, sqlite3.OperationalError):
        low = text.lower()
        if "locked" in low or "busy" in low:
            return f"the index in {folder} is locked by another program"
        if "readonly" in low or "read-only" in low or "unable to open" in low:
            return f"the data folder {folder} is not writable ({text})"
    if isinstance(exc, OSError):
        return f"the data folder {folder} cannot be used ({exc.strerror or text})"
    return f"the index in {folder} cannot be used ({text})"


def connect(path: Path, *, busy_ms: int = 5_000, read_only: bool = False) -> sqlite3.Connection:
    """A connection with the index's settings (autocommit: callers open their own transactions)."""
    conn = sqlite3.connect(path, timeout=busy_ms / 1000, isolation_level=None, check_same_thread=True)
    try:
        conn.execute("PRAGMA temp_store=MEMORY")
        if read_only:
            conn.execute("PRAGMA query_only=ON")
        else:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")  # derived data: a power cut may lose the last saves
            conn.execute(f"PRAGMA journal_size_limit={_WAL_LIMIT}")
            conn.execute("PRAGMA wal_autocheckpoint=0")  # the writer checkpoints when idle, not mid-update
    except BaseException:
        conn.close()
        raise
    return conn


def get_meta(conn: sqlite3.Connection, key: str) -> str | None:
    """A value of the ``meta`` table, or None."""
    row = conn.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
    return None if row is None else str(row[0])


def set_meta(conn: sqlite3.Connection, key: str, value: str) -> None:
    """Set a value of the ``meta`` table (inside the caller's transaction, if any)."""
    sql = "INSERT INTO meta(key, value) VALUES(?, ?) ON CONFLICT(key) DO UPDATE SET value=excluded.value"
    conn.execute(sql, (key, value))


def _remove(path: Path) -> None:
    for p in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        with contextlib.suppress(FileNotFoundError):
            p.unlink()


def _move_aside(path: Path) -> None:
    """Keep the corrupt file as ``<name>.corrupt-<time>`` (older copies removed: derived data)."""
    for old in path.parent.glob(path.name + ".corrupt-*"):
        with contextlib.suppress(OSError):
            old.unlink()
    stamp = time.strftime("%Y%m%d-%H%M%S")
    try:
        os.replace(path, path.with_name(f"{path.name}.corrupt-{stamp}"))
    except FileNotFoundError:
        pass
    for suffix in ("-wal", "-shm"):
        with contextlib.suppress(FileNotFoundError):
            path.with_name(path.name + suffix).unlink()


def _create(path: Path, busy_ms: int) -> sqlite3.Connection:
    conn = connect(path, busy_ms=busy_ms)
    try:
        conn.executescript(f"BEGIN IMMEDIATE;{_TABLES}PRAGMA user_version={SCHEMA_VERSION};COMMIT;")
    except BaseException:
        conn.close()
        raise
    return conn


def _check(path: Path, busy_ms: int) -> tuple[sqlite3.Connection | None, str | None]:
    """Open an existing file: ``(conn, None)`` when usable, ``(None, why)`` when it must be replaced."""
    conn: sqlite3.Connection | None = None
    try:
        conn = connect(path, busy_ms=busy_ms)
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version != SCHEMA_VERSION:
            conn.close()
            _remove(path)
            return None, f"the index was made by another version (schema {version}, now {SCHEMA_VERSION})"
        conn.execute("SELECT count(*) FROM meta").fetchone()
        return conn, None
    except sqlite3.DatabaseError as exc:
        if conn is not None:
            conn.close()
        if not is_corrupt(exc):
            raise
        log.warning("the search index %s is damaged (%s); keeping it aside and rebuilding", path, exc)
        _move_aside(path)
        return None, "the index was damaged"


def open_index(
    folder: Path, *, busy_ms: int = 5_000, damaged: bool = False
) -> tuple[sqlite3.Connection, str | None]:
    """Open (or create) the index in ``folder`` for writing.

    Args:
        folder: The index folder.
        busy_ms: How long to wait for another writer.
        damaged: The file was found damaged while in use: keep it aside and start a new one.

    Returns:
        ``(connection, why)``: ``why`` says why a full build is needed (a new, replaced or
        unfinished index), None when the index is complete.

    Raises:
        SearchUnavailable: The folder or the file cannot be used (read-only, locked, not a folder).
    """
    path = folder / INDEX_FILE
    lock = FileLock(folder / LOCK_FILE, note_pid=False)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        if lock.acquire(timeout=busy_ms / 1000) is LockState.BUSY:  # another instance is opening it
            raise SearchUnavailable(f"the index in {folder} is locked by another program")
        why: str | None = None
        conn: sqlite3.Connection | None = None
        if damaged:
            _move_aside(path)
            why = "the index was damaged"
        elif path.exists():
            conn, why = _check(path, busy_ms)
        if conn is None:
            conn = _create(path, busy_ms)
            why = why or "there was no index yet"
        elif get_meta(conn, "complete") != "1":
            why = "the last build did not finish"
        return conn, why
    except (OSError, sqlite3.Error) as exc:
        raise SearchUnavailable(describe(exc, folder)) from None
    finally:
        lock.release()
