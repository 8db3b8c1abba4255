"""Issue 28, item 3: memory returns. Every figure comes from a fresh child process (its RSS is one
opening's, one session's, not the suite's).

* **20 nodes × 500 Markdown-rich messages open:** ``create_main_window`` (offscreen, 1600×1000, the
  app's GC regime: ``GuiThreadCollector``) on a project written by ``ProjectStore``: 20 nodes of
  ``benchmarks.corpus.make_markdown_messages(500)`` (250 questions, 250 corpus answers; ~390 KB of
  ``project.json`` per node, so the child's settings raise the history cap to 1 MiB as such a user
  would, and nothing is archived). The window is shown, every node is brought to the front once
  (``go_to_node``: its transcript built and painted, as a user who looked at each would have), the
  window's passes settle, then RSS (psutil). Baseline: the same child on a new empty project.
  Budget ≤ 400 MB.
* **Closing 19 of them gives memory back:** the same child then closes nodes 2–20 through the real
  close path (``MainWindow.close_node``: the sub-window closes, the node shuts down and joins
  "Recently closed", the project is saved), lets deferred deletes and saves run, collects as the
  app does at an idle moment (one full ``gc.collect()``) and waits one more check of the app's
  ``GuiThreadCollector``, which a close asks for a full collection and a heap trim
  (``gc_guard.request_trim``). Each child opens a fresh copy of the project (the closes are saved
  into it). *What the 19 took* = RSS with the 20 open − RSS of a child that opened a project
  holding node 1 alone (same messages). The row shows what is **still held** after the close (RSS
  after − RSS of node 1 alone) against what the 19 took: ≤ 0.5× means at least half came back.
* **Streaming does not grow without bound:** a child opens a project of 8 empty nodes in the real
  window with a loopback ``FakeProvider`` as its default provider (default history cap, 200 KiB, so
  saves archive old messages: a node's transcript is bounded by design). All 8 nodes stream the
  corpus answer (``stream_answer(events)``, 20,000 deltas ≈ 140 KB) again and again, a new round as
  soon as the last one is on screen, for a shortened session of ``MINUTES`` "minutes" of
  ``MINUTE_S`` seconds of back-to-back streaming (far more answers than 8 nodes get in a real minute).
  RSS is sampled at the end of each "minute" (after the round in flight and a pause of 1.6 s, as
  a user reading the answers gives the app: its idle housekeeping hands freed heap pages back); a
  sample is the lowest of ``RSS_READS`` readings 0.2 s apart (one reading moved ±5 MB with where the
  last save or collection happened to be, and decided the slope of four samples).
  The row is the slope of RSS over the second half of the samples (least squares, MB per
  "minute"): ≤ 1 MB per "minute" after the warm-up. The RSS of every "minute" is in the row's note.

Set ``CHATNODES_MEMORY_DIAG=1`` to have the children print what is alive (widgets, Python objects
by type, ``QTextDocument`` wrappers and Python wrappers of deleted nodes, glibc's heap in use and
free-but-kept, RSS by kind of mapping; with ``=2`` also tracemalloc's top allocation sites) to stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks._harness import Budget, Row, Settings, median
from benchmarks.cold_start import REPO, child_env
from benchmarks.corpus import make_markdown_messages
from desktop.core.chat.conversation import Conversation
from desktop.core.store import NodeState, Project, ProjectStore, new_node_state

log = logging.getLogger(__name__)

__all__ = ["run", "write_markdown_project", "slope", "MINUTES", "MINUTE_S", "CAP_KIB"]

MINUTES = 8
"""Samples of the shortened streaming session (full mode)."""
MINUTE_S = 15.0
"""Seconds of back-to-back streaming per "minute" (full mode)."""
RSS_READS = 5
"""RSS readings per "minute" (0.2 s apart, after the pause): a sample is their lowest."""
CAP_KIB = 1024
"""History cap (KiB) of the 20 × 500 project's settings: 500 Markdown-rich messages fit under it."""
MODEL = "fake-fast"
CHILD_TIMEOUT_S = 900.0
DIAG = "CHATNODES_MEMORY_DIAG"


def _md_state(index: int, messages: int) -> NodeState:
    conv = Conversation(f"c{index}", make_markdown_messages(messages), 1_764_547_200_000)
    return NodeState(id=f"n{index}", title=f"Node {index + 1}", conversation=conv)


def write_markdown_project(folder: Path, nodes: int, messages: int, *, first: int = 0) -> int:
    """Save ``nodes`` nodes (ids from ``n{first}``) × ``messages`` Markdown-rich messages under a
    ``CAP_KIB`` cap; returns the size of ``project.json``.

    Raises:
        RuntimeError: The cap trimmed something (the benchmark would measure less than asked).
    """
    with ProjectStore(folder, history_cap_bytes=CAP_KIB * 1024) as store:  # the lock goes with it
        result = store.save(Project(nodes=[_md_state(first + i, messages) for i in range(nodes)]))
    if result.archived:
        raise RuntimeError(f"the history cap trimmed messages ({result.archived})")
    return (folder / "project.json").stat().st_size


def _write_settings(config: Path, *, cap_kib: int = 200, base_url: str | None = None) -> None:
    from desktop.core.config import ProviderSettings, SettingsStore
    from desktop.core.config import Settings as AppSettings

    settings = AppSettings(history_cap_kib=cap_kib)
    if base_url is not None:
        settings.providers = [ProviderSettings(id="fake", name="Fake", api="openai", base_url=base_url,
                                               needs_key=False, models=[MODEL])]
        settings.default_provider = "fake"
        settings.default_model = MODEL
    SettingsStore(config).save(settings)


def slope(values: Sequence[float]) -> float:
    """Least-squares slope of ``values`` against their index (0.0 for fewer than two)."""
    n = len(values)
    if n < 2:
        return 0.0
    mx = (n - 1) / 2.0
    my = sum(values) / n
    num = sum((i - mx) * (v - my) for i, v in enumerate(values))
    den = sum((i - mx) ** 2 for i in range(n))
    return num / den


# ----------------------------------------------------------------------------------------------
# The children


def _rss_mb() -> float:
    import psutil  # type: ignore[import-untyped]

    return float(psutil.Process().memory_info().rss / 2**20)


def _mallinfo() -> str:
    """glibc's view of the heap (MB): in use, free but kept, mmapped; empty elsewhere."""
    import ctypes

    class MallInfo2(ctypes.Structure):
        _fields_ = [(name, ctypes.c_size_t) for name in
                    ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks",
                     "fordblks", "keepcost")]

    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.mallinfo2.restype = MallInfo2
        info = libc.mallinfo2()
    except (OSError, AttributeError):
        return ""
    mb = 2**20
    return (f"in use {info.uordblks / mb:.1f}, free kept {info.fordblks / mb:.1f}, "
            f"mmapped {info.hblkhd / mb:.1f}, arena {info.arena / mb:.1f}")


def _maps() -> str:
    """RSS by kind of mapping (MB): the brk heap, anonymous maps by size class, files."""
    kinds: Counter[str] = Counter()
    kind = ""
    try:
        with open("/proc/self/smaps", encoding="utf-8") as fh:
            for line in fh:
                parts = line.split()
                if "-" in parts[0] and len(parts) >= 5 and ":" in parts[3]:
                    lo, hi = (int(x, 16) for x in parts[0].split("-"))
                    size = hi - lo
                    name = parts[5] if len(parts) > 5 else ""
                    if name == "[heap]":
                        kind = "heap"
                    elif name.startswith("/"):
                        kind = "files"
                    elif name:
                        kind = name
                    else:
                        big = size >= 32 * 2**20
                        kind = "anon≥32M" if big else ("anon≥1M" if size >= 2**20 else "anon<1M")
                elif parts[0] == "Rss:":
                    kinds[kind] += int(parts[1])
    except OSError:
        return ""
    return ", ".join(f"{k} {v / 1024:.1f}" for k, v in kinds.most_common())


def _diag(label: str) -> None:
    """What is alive (``CHATNODES_MEMORY_DIAG``), to stderr."""
    level = os.environ.get(DIAG, "")
    if not level:
        return
    from PySide6.QtGui import QTextDocument
    from PySide6.QtWidgets import QApplication

    gc.collect()
    objects = gc.get_objects()
    types = Counter(type(o).__name__ for o in objects)
    widgets = Counter(type(w).__name__ for w in QApplication.allWidgets())
    import shiboken6

    from desktop.ui.node.chat_node import ChatNodeWidget

    dead_nodes = sum(1 for o in objects if isinstance(o, ChatNodeWidget) and not shiboken6.isValid(o))
    doc_objs = [o for o in objects if isinstance(o, QTextDocument)]
    docs = f"{len(doc_objs)} ({sum(1 for d in doc_objs if shiboken6.isValid(d))} valid)"
    print(f"[{label}] rss {_rss_mb():.1f} MB, widgets {sum(widgets.values())}, py objects {len(objects)}, "
          f"QTextDocument wrappers {docs}, wrappers of deleted nodes {dead_nodes}", file=sys.stderr)
    print(f"  malloc: {_mallinfo()}", file=sys.stderr)
    print(f"  maps: {_maps()}", file=sys.stderr)
    print(f"  widgets: {widgets.most_common(12)}", file=sys.stderr)
    print(f"  py types: {types.most_common(15)}", file=sys.stderr)
    if level == "2":
        import tracemalloc

        if tracemalloc.is_tracing():
            for stat in tracemalloc.take_snapshot().statistics("lineno")[:15]:
                print(f"  {stat}", file=sys.stderr)


def _start_app() -> Any:
    import PySide6  # noqa: F401  (before qasync, so it picks PySide6)
    from PySide6.QtWidgets import QApplication

    from desktop.ui.gc_guard import GuiThreadCollector
    from desktop.ui.theme import apply_theme

    if os.environ.get(DIAG) == "2":
        import tracemalloc

        tracemalloc.start(8)
    app = QApplication(["chatnodes-bench"])
    app.setQuitOnLastWindowClosed(False)
    apply_theme(app, "light")  # as desktop.app.main does
    GuiThreadCollector(app)  # ditto: collections on the GUI thread, full ones at idle moments
    return app


async def _settle(seconds: float) -> None:
    """Let the window's passes, deferred deletes and saves run; then a full collection (what the
    app's collector runs at the next idle check once one is due) and one more check interval (the
    collector hands freed heap pages back at an idle check after a close)."""
    from PySide6.QtCore import QEvent
    from PySide6.QtWidgets import QApplication

    await asyncio.sleep(seconds)
    QApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    await asyncio.sleep(0.05)
    gc.collect()
    await asyncio.sleep(0.6)  # one more idle check of the app's collector: a trim it was asked for runs


async def _rss_floor(reads: int = RSS_READS, every_s: float = 0.2) -> float:
    """The lowest of ``reads`` RSS readings ``every_s`` apart (MB): the heap at rest, not a moment
    when the last save's buffers or a collection's garbage happen to be in it."""
    values = [_rss_mb()]
    for _ in range(reads - 1):
        await asyncio.sleep(every_s)
        values.append(_rss_mb())
    return min(values)


async def _open_window(project: Path, config: Path) -> Any:
    from benchmarks._qt import PaintWatch
    from desktop.app import create_main_window

    window = create_main_window(project_dir=project, config_dir=config)
    store = window.projects.store
    if store is None or store.read_only:  # a save would be skipped: no trim, no close's write
        raise RuntimeError(f"the window opened {project} read-only")
    window.resize(1600, 1000)
    watch = PaintWatch(window)
    window.show()
    if await watch.wait_async(30.0) is None:
        raise RuntimeError("the window was not painted within 30 s")
    return window


async def _close_window(window: Any) -> None:
    from PySide6.QtCore import QTimer

    closed: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    window.closed.connect(lambda: closed.done() or closed.set_result(None))
    QTimer.singleShot(0, window.close)
    async with asyncio.timeout(60.0):
        await closed


async def _show_each(window: Any) -> None:
    """Bring every node to the front once, until its newest message is painted."""
    from benchmarks._qt import PaintWatch

    for node in window.nodes():
        views = node.transcript.views()
        watch = PaintWatch(views[-1] if views else node)
        window.go_to_node(node.node_id)
        (views[-1] if views else node).update()
        if await watch.wait_async(10.0) is None:
            raise RuntimeError(f"node {node.node_id} was not painted")


async def _open_child(project: Path, config: Path, close: int, settle_s: float) -> dict[str, Any]:
    window = await _open_window(project, config)
    await _show_each(window)
    await _settle(settle_s)
    out: dict[str, Any] = {"nodes": len(window.nodes()), "rss_open": _rss_mb()}
    _diag("open")
    if close:
        for node in window.nodes()[1:close + 1]:
            window.close_node(node)
            await asyncio.sleep(0)
        del node  # this frame must not keep a closed node alive
        await _settle(settle_s)
        out["rss_closed"] = _rss_mb()
        out["left"] = len(window.nodes())
        _diag("closed")
    await _close_window(window)
    return out


async def _stream_child(project: Path, config: Path, minutes: int, minute_s: float,
                        deltas: int) -> dict[str, Any]:
    from benchmarks._qt import markdown_stream
    from benchmarks._remote import RemoteProvider

    stream = markdown_stream(deltas)
    fake = RemoteProvider().start()  # its request bodies and heap are not the app's memory
    try:
        _write_settings(config, base_url=fake.openai_base_url)
        window = await _open_window(project, config)
        nodes = window.nodes()
        await _settle(0.2)
        samples: list[float] = [_rss_mb()]
        rounds = 0
        loop = asyncio.get_running_loop()
        waiting: dict[str, asyncio.Future[str]] = {}
        for node in nodes:  # one connection per node, beside the window's own (which saves)
            node.run_finished.connect(
                lambda reason, nid=node.node_id: (f := waiting.get(nid)) is not None and not f.done()
                and f.set_result(reason))
        for minute in range(minutes):
            end = time.perf_counter() + minute_s
            while True:
                fake.script(*[stream.turn] * len(nodes))
                for node in nodes:
                    waiting[node.node_id] = loop.create_future()
                    node.submit(f"Say many words ({rounds}).")
                async with asyncio.timeout(300.0):
                    reasons = await asyncio.gather(*waiting.values())
                if set(reasons) != {"end_turn"}:
                    raise RuntimeError(f"a run ended with {reasons}")
                while any(n.transcript.is_rendering() for n in nodes):
                    await asyncio.sleep(0.005)
                rounds += 1
                if time.perf_counter() >= end:
                    break
            # A pause of the user's (1.6 s): the save after the last answers, then the app's idle
            # housekeeping (the collector's checks every 0.5 s find the window idle once the
            # render tick and the last scroll's second are over: freed heap pages go back).
            await asyncio.sleep(1.6)
            samples.append(await _rss_floor())
            _diag(f"minute {minute + 1}")
        messages = [len(n.conversation.messages) for n in nodes]
        await _close_window(window)
    finally:
        fake.stop()
    return {"samples": samples, "rounds": rounds, "messages": messages}


def _child_main(argv: Sequence[str]) -> int:
    from desktop.ui.event_loop import new_event_loop

    parser = argparse.ArgumentParser(prog="python -m benchmarks.memory")
    parser.add_argument("mode", choices=["open", "stream"])
    parser.add_argument("project", type=Path)
    parser.add_argument("config", type=Path)
    parser.add_argument("--close", type=int, default=0)
    parser.add_argument("--settle", type=float, default=1.0)
    parser.add_argument("--minutes", type=int, default=MINUTES)
    parser.add_argument("--minute-s", type=float, default=MINUTE_S)
    parser.add_argument("--deltas", type=int, default=20_000)
    args = parser.parse_args(argv)
    app = _start_app()
    if args.mode == "open":
        coro = _open_child(args.project, args.config, args.close, args.settle)
    else:
        coro = _stream_child(args.project, args.config, args.minutes, args.minute_s, args.deltas)
    with asyncio.Runner(loop_factory=lambda: new_event_loop(app)) as runner:
        result = runner.run(coro)
    print(json.dumps(result), flush=True)
    return 0


# ----------------------------------------------------------------------------------------------
# The parent


def _spawn(args: Sequence[str]) -> dict[str, Any]:
    argv = [sys.executable, "-m", "benchmarks.memory", *args]
    proc = subprocess.run(argv, cwd=REPO, env=child_env(), capture_output=True, text=True,
                          timeout=CHILD_TIMEOUT_S, check=False)
    if os.environ.get(DIAG):
        print(proc.stderr, file=sys.stderr)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(f"memory child {args[0]} exited {proc.returncode}: {proc.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(lines[-1])
    return result


def run(settings: Settings) -> list[Row]:
    """The 20 × 500 project's RSS, what closing 19 nodes gives back, RSS growth while 8 nodes stream."""
    k, m = settings.project_nodes, settings.project_messages
    settle = "0.2" if settings.smoke else "1.0"
    full_rss: list[float] = []
    closed_rss: list[float] = []
    one_rss: list[float] = []
    empty_rss: list[float] = []
    with tempfile.TemporaryDirectory(prefix="chatnodes-bench-mem-") as tmp:
        root = Path(tmp)
        full, one, empty = root / "full", root / "one", root / "empty"
        size = write_markdown_project(full, k, m)
        write_markdown_project(one, 1, m)
        empty.mkdir()
        for i in range(settings.runs):
            kinds = ["full", "one", "empty"] if i % 2 == 0 else ["empty", "one", "full"]
            for kind in kinds:
                config = root / f"config-{kind}-{i}"
                _write_settings(config, cap_kib=CAP_KIB)
                folder = root / f"{kind}-{i}"  # a fresh copy: the closes are saved into the project
                shutil.copytree({"full": full, "one": one, "empty": empty}[kind], folder)
                close = k - 1 if kind == "full" else 0
                res = _spawn(["open", str(folder), str(config), "--close", str(close), "--settle", settle])
                if kind == "full":
                    if res["nodes"] != k or res["left"] != 1:
                        raise RuntimeError(f"the full child had {res['nodes']} nodes, {res['left']} left")
                    full_rss.append(res["rss_open"])
                    closed_rss.append(res["rss_closed"])
                elif kind == "one":
                    one_rss.append(res["rss_open"])
                else:
                    empty_rss.append(res["rss_open"])

        n_stream = settings.stall_nodes
        minutes, minute_s = (4, 0.5) if settings.smoke else (MINUTES, MINUTE_S)
        project8 = root / "stream"
        with ProjectStore(project8) as store:  # released: the child's window must be the writer
            store.save(Project(nodes=[new_node_state(f"Node {i + 1}") for i in range(n_stream)]))
        stream = _spawn(["stream", str(project8), str(root / "config-stream"), "--minutes", str(minutes),
                         "--minute-s", str(minute_s), "--deltas", str(settings.stall_events)])
    one_med = median(one_rss)
    took = [f - one_med for f in full_rss]
    held = [c - one_med for c in closed_rss]
    samples: list[float] = stream["samples"]
    half = samples[len(samples) // 2:]
    growth = slope(half)
    per_minute = ", ".join(f"{v:.0f}" for v in samples)
    close_note = (f"RSS (medians): {k} nodes open {median(full_rss):.0f} MB, after closing {k - 1} "
                  f"{median(closed_rss):.0f} MB, node 1 alone {one_med:.0f} MB, empty project "
                  f"{median(empty_rss):.0f} MB; project.json {size / 1e6:.1f} MB.")
    stream_note = (f"{n_stream} nodes × {stream['rounds']} rounds of the {settings.stall_events:,}-delta "
                   f"corpus answer in {minutes} \"minutes\" of {minute_s:g} s; RSS at start and after each "
                   f"\"minute\" (MB): {per_minute}; messages kept per node at the end: "
                   f"{min(stream['messages'])}–{max(stream['messages'])} (history cap 200 KiB).")
    return [
        Row("memory.open_rss", f"RSS with {k} nodes × {m} Markdown-rich messages open, every node shown once",
            "MB", full_rss, "new empty project", empty_rss, Budget.at_most(400, "MB"), close_note),
        Row("memory.close_held", f"RSS still held after closing {k - 1} of the {k} nodes (vs node 1 alone)",
            "MB", held, f"what the {k - 1} took (vs node 1 alone)", took, Budget.ratio(0.5)),
        Row("memory.stream_slope", f"RSS growth while {n_stream} nodes stream back to back, second half of "
            f"a {minutes}-\"minute\" session (slope per \"minute\" of {minute_s:g} s)", "MB",
            [growth], budget=Budget.at_most(1, "MB"), note=stream_note),
    ]


if __name__ == "__main__":
    raise SystemExit(_child_main(sys.argv[1:]))
