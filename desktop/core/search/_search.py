"""Running a query: the filters, the order, and the hits with their snippets.

"Newest first" walks the FTS table's rowids downwards (a rowid is the message time, see
``_schema``) and stops after a page: no sort, no matter how many messages match. "Best match"
ranks with BM25 (the ``parts`` column, camelCase pieces, weighs half) the newest
``BEST_CANDIDATES`` matches: every match of a specific query, the recent ones of a query that
matches a large part of everything. Filters on
project, node, role, model and archive are checked on the message row of each match; the date range
is a rowid range FTS5 applies itself.
"""

from __future__ import annotations

import logging
import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from ..chat.locate import VersionStep
from ._query import match_expression, parse_query
from ._rows import decode_path
from ._snippet import Snippet, make_snippet

__all__ = [
    "Order",
    "SearchQuery",
    "SearchHit",
    "SearchResults",
    "IndexStatus",
    "run_search",
    "MAX_LIMIT",
    "BEST_CANDIDATES",
]

log = logging.getLogger(__name__)

Order = Literal["newest", "best"]
MAX_LIMIT = 500
"""Most hits one query returns (a page)."""
BEST_CANDIDATES = 2_000
""""Best match" ranks the newest this many matches (all of them when fewer match): BM25 costs about
5 µs a match, and a word found in 30,000 messages is not what ranking is for."""
_SLOT_BITS = 20
_MAX_TS = (1 << 42) - 1
_COLUMNS = "m.msg_id, m.role, m.model, m.ts, m.archived, m.path, m.body, n.node_id, n.title, p.path, p.name"


@dataclass(frozen=True, slots=True)
class IndexStatus:
    """The state of the index, for a status line.

    Attributes:
        state: ``"ready"``; ``"building"`` (a full build runs: results are partial); ``"unavailable"``
            (nothing can be searched: ``reason`` says why); ``"starting"`` (not opened yet).
        done: Bytes of project files read so far by the build (0 otherwise).
        total: Bytes the build reads in all (0 otherwise).
        reason: Why the index is unavailable or being built, or None.
    """

    state: Literal["starting", "ready", "building", "unavailable"]
    done: int = 0
    total: int = 0
    reason: str | None = None

    @property
    def text(self) -> str:
        """One line for the user (empty when ready)."""
        if self.state == "unavailable":
            return f"Search unavailable: {self.reason or 'unknown reason'}"
        if self.state == "building":
            pct = 100 * self.done // self.total if self.total else 0
            return f"Building the search index ({pct} %): results may be incomplete"
        if self.state == "starting":
            return "Opening the search index…"
        return ""


@dataclass(frozen=True, slots=True)
class SearchQuery:
    """What to look for, where, and in which order.

    Attributes:
        text: What the user typed (any text; see ``_query`` for the syntax).
        projects: Only these project folders (empty: every project).
        node_ids: Only these nodes (of the projects given; empty: every node).
        roles: Only these roles (``user``, ``assistant``, ``tool``, ``system``; empty: all).
        models: Only messages written by these models (empty: all).
        since_ms: Only messages at or after this time (epoch ms), or None.
        until_ms: Only messages at or before this time (epoch ms), or None.
        archived: True: only the history archive; False: no archive; None: both.
        order: ``"newest"`` first or ``"best"`` match first.
        as_you_type: The last word is a prefix (the user is still typing it).
        limit: Hits per page (at most ``MAX_LIMIT``).
        offset: Hits to skip (the next page).
    """

    text: str
    projects: tuple[Path, ...] = ()
    node_ids: tuple[str, ...] = ()
    roles: tuple[str, ...] = ()
    models: tuple[str, ...] = ()
    since_ms: int | None = None
    until_ms: int | None = None
    archived: bool | None = None
    order: Order = "newest"
    as_you_type: bool = False
    limit: int = 50
    offset: int = 0


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One message found.

    Attributes:
        project: The project folder.
        project_name: Its folder name.
        node_id: The node holding the message.
        node_title: The node's title when it was indexed.
        message_id: The message.
        role: Its role.
        model: The model that wrote it, or None.
        ts: Its time, epoch milliseconds.
        archived: It is in the node's history archive (not in the conversation any more).
        version_path: The version switches that show it (``chat.locate.activate_message`` does them
            from the message id on the live conversation); empty on the active path.
        snippet: The text around the match, with the spans to highlight.
        score: BM25 score for ``"best"`` order (lower is better), 0 for ``"newest"``.
    """

    project: Path
    project_name: str
    node_id: str
    node_title: str
    message_id: str
    role: str
    model: str | None
    ts: int
    archived: bool
    version_path: tuple[VersionStep, ...]
    snippet: Snippet
    score: float = 0.0

    @property
    def on_active_path(self) -> bool:
        """The message is shown in its node as it is (not archived, not in another version)."""
        return not self.archived and not self.version_path


@dataclass(frozen=True, slots=True)
class SearchResults:
    """One page of hits.

    Attributes:
        query: The query answered.
        hits: The hits, in the query's order.
        more: There are more hits after this page.
        status: The index's state when the query ran (partial results while it is built).
        elapsed_ms: Time spent on the query, snippets included.
    """

    query: SearchQuery
    hits: tuple[SearchHit, ...] = ()
    more: bool = False
    status: IndexStatus = field(default_factory=lambda: IndexStatus("ready"))
    elapsed_ms: float = 0.0


def _marks(values: tuple[object, ...]) -> str:
    return ",".join("?" * len(values))


def run_search(conn: sqlite3.Connection, query: SearchQuery, project_ids: tuple[int, ...] | None,
               status: IndexStatus) -> SearchResults:
    """Run ``query`` on an index connection.

    Args:
        conn: The connection.
        query: The query.
        project_ids: The ids of ``query.projects`` (None: no project filter; empty: none indexed).
        status: The index's state, passed on to the results.

    Raises:
        sqlite3.Error: The index could not be read.
    """
    started = time.perf_counter()
    terms = parse_query(query.text, as_you_type=query.as_you_type)
    match = match_expression(terms)
    if match is None or project_ids == ():
        return SearchResults(query, status=status, elapsed_ms=(time.perf_counter() - started) * 1000)
    where = ["fts MATCH ?"]
    args: list[object] = [match]
    if query.since_ms is not None or query.until_ms is not None:
        lo = min(max(query.since_ms or 0, 0), _MAX_TS) << _SLOT_BITS
        hi = (1 << 63) - 1
        if query.until_ms is not None:
            hi = ((min(max(query.until_ms, 0), _MAX_TS) + 1) << _SLOT_BITS) - 1
        where.append("fts.rowid BETWEEN ? AND ?")
        args += [lo, hi]
    for column, values in (("m.project_id", project_ids or ()), ("n.node_id", query.node_ids),
                           ("m.role", query.roles), ("m.model", query.models)):
        if values:
            where.append(f"{column} IN ({_marks(tuple(values))})")
            args += list(values)
    if query.archived is not None:
        where.append("m.archived = ?")
        args.append(int(query.archived))
    joins = "fts CROSS JOIN messages m ON m.rowid = fts.rowid CROSS JOIN nodes n ON n.id = m.node"
    limit = max(1, min(query.limit, MAX_LIMIT))
    page = [limit + 1, max(0, query.offset)]
    if query.order == "best":
        # BM25 reads every match's positions (~5 µs each): rank the newest BEST_CANDIDATES matches.
        sql = (f"SELECT {_COLUMNS}, best.score FROM (SELECT fts.rowid AS r, bm25(fts, 1.0, 0.5) AS score"
               f" FROM {joins} WHERE {' AND '.join(where)} ORDER BY fts.rowid DESC LIMIT ?) AS best"
               " CROSS JOIN messages m ON m.rowid = best.r CROSS JOIN nodes n ON n.id = m.node"
               " CROSS JOIN projects p ON p.id = m.project_id"
               " ORDER BY best.score, best.r DESC LIMIT ? OFFSET ?")
        args += [BEST_CANDIDATES, *page]
    else:
        sql = (f"SELECT {_COLUMNS}, 0.0 FROM {joins} CROSS JOIN projects p ON p.id = m.project_id"
               f" WHERE {' AND '.join(where)} ORDER BY fts.rowid DESC LIMIT ? OFFSET ?")
        args += page
    rows = conn.execute(sql, args).fetchall()
    hits = tuple(
        SearchHit(
            project=Path(r[9]), project_name=str(r[10]), node_id=str(r[7]), node_title=str(r[8]),
            message_id=str(r[0]), role=str(r[1]), model=r[2], ts=int(r[3]), archived=bool(r[4]),
            version_path=decode_path(str(r[5])), snippet=make_snippet(str(r[6]), terms), score=float(r[11]),
        )
        for r in rows[:limit]
    )
    elapsed = (time.perf_counter() - started) * 1000
    return SearchResults(query, hits, len(rows) > limit, status, elapsed)
