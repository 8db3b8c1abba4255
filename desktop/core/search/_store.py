"""Writing the index tables: projects, nodes and message rows, kept in step with the FTS table.

The FTS table is contentless, so a row is removed by giving FTS5 the values it indexed:
``index_columns(body)`` of the stored body (deterministic, see ``_schema.SCHEMA_VERSION``).
Every method runs inside the caller's transaction.
"""

from __future__ import annotations

import logging
import sqlite3
import zlib
from collections.abc import Iterable, Sequence
from pathlib import Path

from ._rows import Row
from ._text import index_columns

__all__ = ["Store", "NodeInfo", "RowInfo"]

log = logging.getLogger(__name__)

NodeInfo = tuple[int, str, str]
"""``(node ref, title, archive_sig)`` of an indexed node."""
RowInfo = tuple[int, bytes, int]
"""``(rowid, digest, archived)`` of an indexed message."""
_SLOT_BITS = 20
_SLOT_MASK = (1 << _SLOT_BITS) - 1


class Store:
    """The index's write operations on one connection.

    Args:
        conn: A connection from ``_schema.open_index`` (autocommit; transactions are explicit).
    """

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    # -- transactions --------------------------------------------------------------------------

    def begin(self) -> None:
        """Start a write transaction (waits up to the busy timeout for another writer)."""
        self.conn.execute("BEGIN IMMEDIATE")

    def commit(self) -> None:
        """Commit the transaction."""
        self.conn.execute("COMMIT")

    def rollback(self) -> None:
        """Roll the transaction back, if one is open."""
        if self.conn.in_transaction:
            self.conn.execute("ROLLBACK")

    # -- projects and nodes --------------------------------------------------------------------

    def project(self, key: str, *, create: bool = True) -> int | None:
        """The id of the project ``key`` (a resolved path), created when missing and ``create``."""
        row = self.conn.execute("SELECT id FROM projects WHERE path=?", (key,)).fetchone()
        if row is not None:
            return int(row[0])
        if not create:
            return None
        cur = self.conn.execute("INSERT INTO projects(path, name) VALUES(?, ?)", (key, Path(key).name or key))
        return int(cur.lastrowid or 0)

    def project_keys(self) -> list[str]:
        """Every indexed project's key."""
        return [str(r[0]) for r in self.conn.execute("SELECT path FROM projects ORDER BY path")]

    def project_sig(self, pid: int) -> str:
        """The ``project.json`` signature recorded when the project was last indexed."""
        row = self.conn.execute("SELECT file_sig FROM projects WHERE id=?", (pid,)).fetchone()
        return "" if row is None else str(row[0])

    def set_project_sig(self, pid: int, sig: str) -> None:
        """Record the ``project.json`` signature the index now reflects."""
        self.conn.execute("UPDATE projects SET file_sig=? WHERE id=?", (sig, pid))

    def nodes(self, pid: int) -> dict[str, NodeInfo]:
        """``{node id: (ref, title, archive_sig)}`` of a project."""
        sql = "SELECT node_id, id, title, archive_sig FROM nodes WHERE project_id=?"
        rows = self.conn.execute(sql, (pid,))
        return {str(r[0]): (int(r[1]), str(r[2]), str(r[3])) for r in rows}

    def node(self, pid: int, node_id: str, title: str) -> NodeInfo:
        """The node's ``(ref, title, archive_sig)``, created when missing; the title is updated."""
        row = self.conn.execute(
            "SELECT id, title, archive_sig FROM nodes WHERE project_id=? AND node_id=?", (pid, node_id)
        ).fetchone()
        if row is None:
            cur = self.conn.execute(
                "INSERT INTO nodes(project_id, node_id, title) VALUES(?, ?, ?)", (pid, node_id, title)
            )
            return int(cur.lastrowid or 0), title, ""
        if row[1] != title:
            self.conn.execute("UPDATE nodes SET title=? WHERE id=?", (title, row[0]))
        return int(row[0]), title, str(row[2])

    def set_archive_sig(self, ref: int, sig: str) -> None:
        """Record the archive signature the node's archived rows reflect."""
        self.conn.execute("UPDATE nodes SET archive_sig=? WHERE id=?", (sig, ref))

    # -- rows ----------------------------------------------------------------------------------

    def rows(self, ref: int, *, archived: bool | None = None) -> dict[str, RowInfo]:
        """``{message id: (rowid, digest, archived)}`` of a node (only archived or only not archived
        rows when ``archived`` says so)."""
        sql = "SELECT msg_id, rowid, digest, archived FROM messages WHERE node=?"
        args: tuple[object, ...] = (ref,)
        if archived is not None:
            sql += " AND archived=?"
            args = (ref, int(archived))
        return {str(r[0]): (int(r[1]), bytes(r[2]), int(r[3])) for r in self.conn.execute(sql, args)}

    def archived_among(self, ref: int, ids: Sequence[str]) -> set[str]:
        """Which of these message ids the node has archived rows for."""
        out: set[str] = set()
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            marks = ",".join("?" * len(chunk))
            sql = f"SELECT msg_id FROM messages WHERE node=? AND archived=1 AND msg_id IN ({marks})"
            cur = self.conn.execute(sql, (ref, *chunk))
            out.update(str(r[0]) for r in cur)
        return out

    def _free_rowid(self, ts: int, salt: str) -> int:
        base = ts << _SLOT_BITS
        slot = zlib.crc32(salt.encode("utf-8", "replace")) & _SLOT_MASK
        for probe in range(_SLOT_MASK + 1):
            rowid = base | ((slot + probe) & _SLOT_MASK)
            if self.conn.execute("SELECT 1 FROM messages WHERE rowid=?", (rowid,)).fetchone() is None:
                return rowid
        raise sqlite3.IntegrityError(f"more than {_SLOT_MASK + 1} messages share the time {ts}")

    def insert(self, pid: int, ref: int, row: Row) -> int:
        """Add a message row and index its text; returns its rowid (newest first = highest)."""
        rowid = self._free_rowid(row.ts, f"{ref}\0{row.msg_id}")
        self.conn.execute(
            "INSERT INTO messages(rowid, project_id, node, msg_id, role, model, ts, archived, path, digest,"
            " body) VALUES(?,?,?,?,?,?,?,?,?,?,?)",
            (rowid, pid, ref, row.msg_id, row.role, row.model, row.ts, int(row.archived), row.path,
             row.digest, row.body),
        )
        body, parts = index_columns(row.body)
        self.conn.execute("INSERT INTO fts(rowid, body, parts) VALUES(?,?,?)", (rowid, body, parts))
        return rowid

    def delete(self, rowids: Sequence[int]) -> int:
        """Remove message rows and their index entries; returns how many were removed."""
        removed = 0
        for start in range(0, len(rowids), 500):
            chunk = rowids[start : start + 500]
            marks = ",".join("?" * len(chunk))
            sql = f"SELECT rowid, body FROM messages WHERE rowid IN ({marks})"
            found = self.conn.execute(sql, chunk).fetchall()
            self.conn.executemany(
                "INSERT INTO fts(fts, rowid, body, parts) VALUES('delete', ?, ?, ?)",
                ((r[0], *index_columns(r[1])) for r in found),
            )
            self.conn.execute(f"DELETE FROM messages WHERE rowid IN ({marks})", chunk)
            removed += len(found)
        return removed

    def _rowids(self, where: str, args: Iterable[object]) -> list[int]:
        cur = self.conn.execute(f"SELECT rowid FROM messages WHERE {where}", tuple(args))
        return [int(r[0]) for r in cur]

    def remove_node(self, ref: int) -> int:
        """Remove a node and every row of it; returns how many rows were removed."""
        removed = self.delete(self._rowids("node=?", (ref,)))
        self.conn.execute("DELETE FROM nodes WHERE id=?", (ref,))
        return removed

    def remove_project(self, pid: int) -> int:
        """Remove a project, its nodes and every row of it; returns how many rows were removed."""
        removed = self.delete(self._rowids("project_id=?", (pid,)))
        self.conn.execute("DELETE FROM nodes WHERE project_id=?", (pid,))
        self.conn.execute("DELETE FROM projects WHERE id=?", (pid,))
        return removed

    def clear(self) -> None:
        """Remove everything (before a build from nothing)."""
        self.conn.execute("DELETE FROM messages")
        self.conn.execute("DELETE FROM nodes")
        self.conn.execute("DELETE FROM projects")
        self.conn.execute("INSERT INTO fts(fts) VALUES('delete-all')")
