"""Full-text search over every message of every project the user has opened (no Qt).

One SQLite FTS5 index in the user's data folder (``<data>/search/index.sqlite3``; never in a
project) holds every message of every node, of every version (not only the one shown) and of
every node's history archive, with keys scrubbed. It is derived data: missing, stale or damaged, it
is rebuilt in the background while searches go on (partial results, ``IndexStatus.state ==
"building"``).

For the app:

* ``SearchService(folder=None, secrets=..., known_projects=RecentProjects(cfg).folders,
  on_status=...)``, ``start()``; after each save ``project_saved(snapshot_project(folder,
  project))`` (the only GUI-thread work: a copy of each node's message list); ``project_opened``,
  ``project_closed``, ``forget_project``, ``forget_node``, ``rebuild``; ``search(query, callback)``
  (the latest query wins); ``close()``. Callbacks run on the worker threads: re-emit them as
  queued signals.
* A hit (``SearchHit``) names the project, node, message, role, model, time, whether it is in the
  archive, the version steps that show it, and a ``Snippet`` (plain text + spans to highlight:
  model text is untrusted, never markup). ``chat.locate.activate_message(conversation, message_id)``
  switches a node to the version holding the message.
* ``match_spans(text, query)`` finds the same matches in any text (find in a conversation).

For tests and the command line, ``SearchIndex`` is the same index, synchronous, on one thread.
Query syntax: ``_query`` (words, "phrases", prefix*, nothing else is syntax); the index's text
rules: ``_text``.
"""

from __future__ import annotations

from ..chat.locate import VersionStep, activate_message, version_path, walk_versions
from ._index import SearchIndex, UpdateStats
from ._projectfile import read_project
from ._query import MIN_PREFIX, Term, match_expression, parse_query
from ._read import Facets
from ._schema import (
    DATA_DIR_ENV,
    INDEX_FILE,
    SCHEMA_VERSION,
    IndexDamaged,
    SearchUnavailable,
    default_index_dir,
)
from ._search import MAX_LIMIT, IndexStatus, Order, SearchHit, SearchQuery, SearchResults
from ._service import RETRY_SECONDS, SearchService
from ._snapshot import NodeSnapshot, ProjectSnapshot, snapshot_project
from ._snippet import SNIPPET_CHARS, Snippet, make_snippet, match_spans

__all__ = [
    "DATA_DIR_ENV",
    "Facets",
    "INDEX_FILE",
    "MAX_LIMIT",
    "MIN_PREFIX",
    "RETRY_SECONDS",
    "SCHEMA_VERSION",
    "SNIPPET_CHARS",
    "IndexDamaged",
    "IndexStatus",
    "NodeSnapshot",
    "Order",
    "ProjectSnapshot",
    "SearchHit",
    "SearchIndex",
    "SearchQuery",
    "SearchResults",
    "SearchService",
    "SearchUnavailable",
    "Snippet",
    "Term",
    "UpdateStats",
    "VersionStep",
    "activate_message",
    "default_index_dir",
    "make_snippet",
    "match_expression",
    "match_spans",
    "parse_query",
    "read_project",
    "snapshot_project",
    "version_path",
    "walk_versions",
]
