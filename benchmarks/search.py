"""Budgets of issue 27: full-text search over 100,000 Markdown-rich messages (DESIGN.md §7).

The corpus: 5 project folders × 40 nodes × 500 messages = 100,000 messages (200 nodes), written
by ``ProjectStore.save`` with the default 200 KiB history cap, so most of every node's history is
in its ``.chatnodes/archive`` (as in real use) and ``project.json`` holds the rest. Each node is
``benchmarks.corpus.make_markdown_messages(500, seed=node)``: questions and corpus answers
(headings, lists, code in six languages, tables, links, CJK, emoji), with its own times; every node
also holds a regenerated answer, so a stored version is indexed too. Nothing is timed while the
corpus is made.

Rows:

* **full build** (≤ 60 s): a ``SearchService`` started on an empty index folder, the five projects
  as its known projects, until ``wait_idle``: reading every ``project.json`` and archive, scrubbing,
  indexing, the final FTS merge. It runs on the service's thread, in the background.
* **main-thread gaps while it builds** (p99 ≤ 16 ms): an asyncio loop in the main thread ticks
  every 2 ms (``asyncio.sleep``) for the whole build; a gap is the time between two ticks. The
  baseline is the same heartbeat with nothing else running, measured right before each build.
  SQLite releases the GIL while it works; the Python side of the build (reading JSON, scrubbing,
  hashing) holds it, resting every 2 ms (``search._pace``) so the main thread gets it at once. As in
  the app (``ui/gc_guard.py``), automatic garbage collection is off and the main thread collects the
  young generations when their counter passes the threshold (inside the measured gaps); full
  collections, which the app runs at idle moments, are left out.
* **queries** (p95 ≤ 50 ms each): on the complete index, through ``search_on`` on a read-only
  connection (what the service's searcher thread runs), a first page of 50 hits with their snippets:
  single words (common words of the corpus, found in most answers; identifiers; CJK), phrases (common
  and rare), prefixes as typed (``as_you_type``), newest first; and the same mix ordered by best
  match (BM25 over every match).
* **index size on disk** (informational), against the UTF-8 size of the text indexed.
* **one new message** (≤ 5 ms): a project of 40 nodes is indexed in memory (``update_project``), then
  one node gets a new answer and ``update_project`` runs with the whole project's new snapshot
  (what the writer thread does after each save); 30 such saves. Between two saves, untimed, the
  index merges FTS segments and checkpoints (``SearchIndex.maintain``), as the service's writer does
  whenever it is idle.

``measure()`` returns a plain dict; ``run(settings)`` gives the suite's rows.
"""

from __future__ import annotations

import asyncio
import dataclasses
import gc
import logging
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks._harness import Budget, Row, Settings, median, percentile
from benchmarks.corpus import make_markdown_messages
from desktop.core.chat import versions
from desktop.core.chat.conversation import Conversation
from desktop.core.chat.types import ChatMessage
from desktop.core.search import SearchIndex, SearchQuery, SearchService, snapshot_project
from desktop.core.search._read import open_reader, search_on
from desktop.core.search._search import IndexStatus
from desktop.core.store import NodeState, Project, ProjectStore

log = logging.getLogger(__name__)

__all__ = ["Corpus", "make_corpus", "measure", "run", "WORDS", "PHRASES", "PREFIXES"]

BUILD_BUDGET_S = 60.0
GAP_BUDGET_MS = 16.0
QUERY_BUDGET_MS = 50.0
UPDATE_BUDGET_MS = 5.0
HEARTBEAT_S = 0.002

WORDS = ("latency", "renderer", "configuration", "memory", "exponentially", "split_for_cap", "QTextDocument",
         "AsyncClient", "asyncio", "渲染", "キャッシュ", "스트리밍", "naïve", "jitter", "throughput",
         "Promise")
PHRASES = ('"stream a chat completion"', '"retry policy"', '"latency matters"', '"long conversation"',
           '"the user waits"', '"long code blocks"', '"End of answer number 100004"', '"逐块渲染"')
PREFIXES = ("lat", "rend", "config", "expon", "thro", "incre", "cancel", "asyncc", "QText", "stre")


@dataclasses.dataclass(frozen=True)
class Corpus:
    """Project folders on disk and what they hold.

    Attributes:
        folders: The project folders.
        messages: Messages written (active paths, archives and stored versions).
        text_bytes: UTF-8 bytes of their texts.
    """

    folders: tuple[Path, ...]
    messages: int
    text_bytes: int


def _node(project: int, index: int, n_messages: int) -> NodeState:
    seed = project * 1_000 + index + 1
    base = 1_700_000_000_000 + seed * 10_000_000
    messages = [dataclasses.replace(m, id=f"p{project}n{index}{m.id}", ts=base + i * 1_000)
                for i, m in enumerate(make_markdown_messages(n_messages, seed=seed))]
    conv = Conversation(f"c{seed}", messages, base)
    last = next(m for m in reversed(messages) if m.role == "assistant")
    versions.regenerate(conv, last.id)  # the old answer becomes a stored version
    conv.messages.append(ChatMessage(f"{last.id}r", "assistant", f"Regenerated: {last.content[:400]}",
                                     last.ts + 1, model="gpt-4.1"))
    return NodeState(id=f"n{seed}", title=f"Node {index + 1} of project {project + 1}", conversation=conv)


def make_corpus(root: Path, projects: int = 5, nodes: int = 40, per_node: int = 500) -> Corpus:
    """Write ``projects`` folders of ``nodes`` nodes × ``per_node`` messages (+ one regenerated answer
    each) under ``root`` with ``ProjectStore.save`` (the history cap moves most of them to the archive)."""
    folders: list[Path] = []
    count = 0
    size = 0
    for p in range(projects):
        folder = root / f"project-{p + 1}"
        states = [_node(p, i, per_node) for i in range(nodes)]
        for state in states:
            for m in state.conversation.messages:
                count += 1
                size += len(m.content.encode("utf-8"))
        with ProjectStore(folder) as store:
            store.save(Project(nodes=states))
        folders.append(folder)
    return Corpus(tuple(folders), count + projects * nodes, size)


def _dir_bytes(folder: Path) -> int:
    files = [p for p in folder.iterdir() if p.is_file() and p.name.startswith("index.sqlite3")]
    return sum(p.stat().st_size for p in files)


async def _heartbeat(stop: Callable[[], bool], *, collect: bool = False) -> list[float]:
    """Gaps (ms) between ticks of a ``HEARTBEAT_S`` sleep loop until ``stop()``; with ``collect``, a
    tick also collects the young generations when their counter passed the threshold (the app's
    ``GuiThreadCollector`` regime: automatic collection off, the GUI thread collects)."""
    gaps: list[float] = []
    last = time.perf_counter()
    threshold = gc.get_threshold()[0]
    while not stop():
        await asyncio.sleep(HEARTBEAT_S)
        if collect and gc.get_count()[0] > threshold:
            gc.collect(1)
        now = time.perf_counter()
        gaps.append((now - last) * 1000)
        last = now
    return gaps


def _idle_gaps(seconds: float) -> list[float]:
    end = time.perf_counter() + seconds
    return asyncio.run(_heartbeat(lambda: time.perf_counter() >= end, collect=True))


def build_once(corpus: Corpus, index_dir: Path) -> tuple[float, list[float]]:
    """One full build in the service's thread: (seconds, main-thread heartbeat gaps in ms)."""
    done = threading.Event()
    statuses: list[IndexStatus] = []
    service = SearchService(index_dir, known_projects=lambda: corpus.folders, on_status=statuses.append)

    async def main() -> tuple[float, list[float]]:
        started = time.perf_counter()
        service.start()
        waiter = threading.Thread(target=lambda: (service.wait_idle(600), done.set()), daemon=True)
        waiter.start()
        gaps = await _heartbeat(done.is_set, collect=True)
        return time.perf_counter() - started, gaps

    automatic = gc.isenabled()
    gc.disable()  # as in the app: no collection starts on the indexer's thread
    try:
        seconds, gaps = asyncio.run(main())
    finally:
        service.close()
        if automatic:
            gc.enable()
    if statuses[-1].state != "ready":
        raise RuntimeError(f"the build ended as {statuses[-1]}")
    return seconds, gaps


def _query_ms(conn: Any, index_dir: Path, queries: list[SearchQuery]) -> list[float]:
    out: list[float] = []
    status = IndexStatus("ready")
    for q in queries:
        start = time.perf_counter()
        result = search_on(conn, q, status, index_dir)
        out.append((time.perf_counter() - start) * 1000)
        if not result.hits and not q.text.startswith('"End'):
            log.warning("query %r found nothing", q.text)
    return out


def update_samples(folder: Path, index_dir: Path, saves: int) -> list[float]:
    """``update_project`` times (ms) of ``saves`` saves that each add one message to one node."""
    store = ProjectStore(folder)
    project = store.load()
    store.release()
    index = SearchIndex(index_dir)
    index.open()
    index.update_project(snapshot_project(folder, project))
    while index.maintain():
        pass
    out: list[float] = []
    chat = [n for n in project.nodes if n.kind == "chat"]
    for i in range(saves):
        node = chat[i % len(chat)]
        node.conversation.messages.append(ChatMessage(
            f"new{i}", "assistant", f"A new answer {i} about **latency** and `asyncio.timeout` 渲染.",
            1_800_000_000_000 + i, model="gpt-4.1"))
        snapshot = snapshot_project(folder, project)
        start = time.perf_counter()
        stats = index.update_project(snapshot)
        out.append((time.perf_counter() - start) * 1000)
        if stats.inserted != 1 or stats.nodes != 1:
            raise RuntimeError(f"one new message gave {stats}")
        while index.maintain():  # what the service's writer does when idle between two saves (not timed)
            pass
    index.close()
    return out


def measure(projects: int = 5, nodes: int = 40, per_node: int = 500, runs: int = 3,
            progress: Callable[[str], None] | None = None, idle_s: float = 2.0) -> dict[str, Any]:
    """Make the corpus, build the index ``runs`` times, query it, update it. See the module doc."""
    say = progress or (lambda _text: None)
    with tempfile.TemporaryDirectory(prefix="chatnodes-search-bench-") as tmp:
        root = Path(tmp)
        t0 = time.perf_counter()
        corpus = make_corpus(root / "projects", projects, nodes, per_node)
        say(f"corpus: {corpus.messages:,} messages, {corpus.text_bytes / 2**20:.1f} MiB of text "
            f"({time.perf_counter() - t0:.0f} s)")
        idle_p99: list[float] = []
        idle_max: list[float] = []
        builds: list[float] = []
        gaps_p99: list[float] = []
        gaps_max: list[float] = []
        index_dir = root / "index-0"
        for r in range(runs):
            index_dir = root / f"index-{r}"
            idle = _idle_gaps(idle_s)  # the baseline, right before each build
            idle_p99.append(percentile(idle, 99))
            idle_max.append(max(idle))
            seconds, gaps = build_once(corpus, index_dir)
            builds.append(seconds)
            gaps_p99.append(percentile(gaps, 99))
            gaps_max.append(max(gaps))
            say(f"build {r + 1}: {seconds:.1f} s, gap p99 {gaps_p99[-1]:.1f} ms, max {gaps_max[-1]:.1f} ms")
        size = _dir_bytes(index_dir)
        conn = open_reader(index_dir)
        assert conn is not None
        newest = {
            "word": [SearchQuery(w) for w in WORDS],
            "phrase": [SearchQuery(p) for p in PHRASES],
            "prefix": [SearchQuery(p, as_you_type=True) for p in PREFIXES],
        }
        mixed = [dataclasses.replace(q, order="best") for qs in newest.values() for q in qs]
        query_p95: dict[str, list[float]] = {k: [] for k in (*newest, "best")}
        for _ in range(runs + 1):  # the first pass warms the page cache and is not counted
            for kind, queries in (*newest.items(), ("best", mixed)):
                query_p95[kind].append(percentile(_query_ms(conn, index_dir, queries), 95))
        conn.close()
        query_p95 = {k: v[1:] for k, v in query_p95.items()}
        updates = update_samples(corpus.folders[0], root / "index-update", 30)
    return {
        "messages": corpus.messages, "text_bytes": corpus.text_bytes, "build_s": builds,
        "gap_p99_ms": gaps_p99, "gap_max_ms": gaps_max, "idle_gap_p99_ms": idle_p99,
        "idle_gap_max_ms": idle_max, "index_bytes": size, "query_p95_ms": query_p95, "update_ms": updates,
    }


def run(settings: Settings) -> list[Row]:
    """The suite's rows (2 projects × 2 nodes × 40 messages in the smoke run)."""
    shape = (2, 2, 40) if settings.smoke else (5, 40, 500)
    runs = 1 if settings.smoke else min(settings.runs, 3)
    result = measure(*shape, runs=runs, progress=None if settings.smoke else _log,
                     idle_s=0.2 if settings.smoke else 2.0)
    n = result["messages"]
    where = f"{shape[0]} projects, {shape[0] * shape[1]} nodes"
    q = result["query_p95_ms"]
    upd = result["update_ms"]
    gaps = result["gap_p99_ms"]
    query = Budget.at_most(QUERY_BUDGET_MS, "ms")
    return [
        Row("search.build", f"search: full index build of {n:,} Markdown-rich messages ({where}, archives, a "
            "stored version per node), on the service's thread", "s", result["build_s"],
            budget=Budget.at_most(BUILD_BUDGET_S, "s")),
        Row("search.build_gap_p99", "search: main-thread loop gap while the index builds, p99", "ms", gaps,
            "the same heartbeat, nothing building", result["idle_gap_p99_ms"],
            Budget.at_most(GAP_BUDGET_MS, "ms"),
            note=f"largest gap of each build: {_ms(result['gap_max_ms'])}; of the heartbeat alone before "
            f"it: {_ms(result['idle_gap_max_ms'])}"),
        Row("search.query_word", f"search: single words on {n:,} messages, p95 (newest first, a page of 50 "
            "hits with snippets)", "ms", q["word"], budget=query),
        Row("search.query_phrase", "search: phrases, p95 (newest first)", "ms", q["phrase"], budget=query),
        Row("search.query_prefix", "search: prefixes as typed, p95 (newest first)", "ms", q["prefix"],
            budget=query),
        Row("search.query_best", "search: the same words, phrases and prefixes, best match first (BM25), p95",
            "ms", q["best"], budget=query),
        Row("search.size", "search: index size on disk", "MiB", [result["index_bytes"] / 2**20],
            "UTF-8 text indexed", [result["text_bytes"] / 2**20]),
        Row("search.update_one", f"search: index a save that added one message (project of {shape[1]} nodes)",
            "ms", upd, budget=Budget.at_most(UPDATE_BUDGET_MS, "ms"),
            note=f"p95 {percentile(upd, 95):.2f} ms, largest {max(upd):.2f} ms of {len(upd)} saves"),
    ]


def _ms(values: list[float]) -> str:
    return ", ".join(f"{v:.0f} ms" for v in values)


def _log(text: str) -> None:
    log.warning("search benchmark: %s", text)


if __name__ == "__main__":  # pragma: no cover - manual run
    logging.basicConfig(level=logging.INFO)
    out = measure(progress=print)
    out["update_ms"] = median(out["update_ms"])
    print(out)
