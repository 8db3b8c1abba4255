"""Budgets 2: streaming into chat nodes, with Markdown-rich answers (plain text as extra rows).

Every stream is served by the loopback fake provider over a real socket and read by the real OpenAI
driver through the real runtime into a real ``ChatNodeWidget`` (offscreen, qasync loop). The main
rows stream the corpus answer (``benchmarks.corpus``: 20k token-like deltas ≈ 140 KB of Markdown with
headings, nested lists, code in six languages, tables, links, CJK and emoji).

* **One node, Markdown:** from ``submit`` until the node shows the whole answer (its last block,
  the corpus's closing line, is in the rendered text: checked) and has been repainted. Baselines in
  the same run: the driver alone consuming the same stream on the same loop and client, and
  *render-once*: a shown node of the same size gets a conversation holding the finished answer
  (``transcript.set_conversation``), i.e. the message widget is built for the complete text, laid
  out and painted at the node's width. Budget: total ≤ driver + 1.5 × render-once (medians).
* **One node, plain text (extra row):** 20k ``"tok "`` deltas, ≤ 1.3× the driver alone.
* **The driver after a paint (informational):** the Markdown stream's driver alone, but with one small
  ``QImage`` filled in the same loop run just before the request. A paint leaves the CPU's vector
  registers dirty on AVX-512 machines, and legacy-SSE code (most of CPython) then runs ~15 %
  slower until something clears them (``desktop.core.cpu_state``). The decoding loop clears them
  at each slice, so this row should stay ≈ 1.0× (1.04× before it did; 1.05–1.08× with the
  plain-text stream).
* **UI stall:** a 5 ms precise ``QTimer`` heartbeat records the gaps between its ticks while 8 nodes
  (tiled in one window) stream the Markdown answer at full speed; it keeps running until every node
  shows its last block (ends of streams included). Budgets: p99 ≤ 16 ms, max ≤ 50 ms. Baseline: the
  same window idle. The plain-text stall is an extra row.
"""

from __future__ import annotations

import asyncio
import logging
import time

from PySide6.QtGui import QColor, QImage
from PySide6.QtWidgets import QApplication

from benchmarks._harness import Budget, Row, Settings, median, paired, percentile, repeat
from benchmarks._qt import (
    HEARTBEAT_MS,
    MODEL,
    BenchServices,
    Heartbeat,
    Stream,
    dispose,
    markdown_stream,
    plain_stream,
    run_on_loop,
    tiled_window,
    wait_finished,
    wait_shown,
)
from benchmarks.corpus import corpus_stats
from desktop.core.chat.conversation import Conversation
from desktop.core.chat.types import ChatMessage, Delta
from desktop.core.providers import driver_for
from desktop.core.store import new_node_state

log = logging.getLogger(__name__)

__all__ = ["run", "node_stream_ms", "driver_only_ms", "render_once_ms", "stall_run", "idle_gaps"]

#: How long the heartbeat keeps ticking after the last node showed its last block (late frames).
TAIL_S = 0.05


def node_stream_ms(bench: BenchServices, stream: Stream) -> float:
    """One run: a fresh node (built and shown untimed) streams the answer; ms until it is shown."""
    node = bench.node(new_node_state("Bench"))
    node.show()
    QApplication.processEvents()

    async def go() -> float:
        bench.fake.script(stream.turn)
        start = time.perf_counter()
        reasons = await wait_finished([node])
        if reasons != ["end_turn"]:
            raise RuntimeError(f"the run ended with {reasons}")
        await wait_shown([node], stream)
        node.repaint()  # the final frame, painted now (synchronously) rather than whenever Qt gets to it
        return (time.perf_counter() - start) * 1000.0

    try:
        return run_on_loop(go())
    finally:
        dispose(node)


def driver_only_ms(bench: BenchServices, stream: Stream, *, paint_first: bool = False) -> float:
    """One run of the baseline: the same driver and client consume the same stream on the same loop.

    With ``paint_first``, a 64×76 ``QImage`` is filled in the same loop run just before the (timed)
    request: what a node's paints do to the Python work after them (the ``node.driver_after_paint`` row).
    """
    driver = driver_for(bench.provider_config(), bench.client)
    messages = [ChatMessage("u1", "user", "Say many words.", 0)]

    async def go() -> float:
        bench.fake.script(stream.turn)
        if paint_first:
            QImage(64, 76, QImage.Format.Format_ARGB32_Premultiplied).fill(QColor(255, 255, 255))
        start = time.perf_counter()
        text: list[str] = []
        async for event in driver.stream(model=MODEL, messages=messages, tools=[]):
            if type(event) is Delta:
                text.append(event.text)
        if not stream.received("".join(text)):
            raise RuntimeError(f"the driver delivered {len(''.join(text))} of {len(stream.text)} characters")
        return (time.perf_counter() - start) * 1000.0

    return run_on_loop(go())


def render_once_ms(bench: BenchServices, stream: Stream) -> float:
    """One run of render-once: a shown node of the benchmark's size is given a conversation holding the
    finished answer; ms until its message widget shows the whole answer and the node is repainted."""
    node = bench.node(new_node_state("Render once"))
    node.show()
    QApplication.processEvents()
    conv = Conversation("render-once", [
        ChatMessage("u1", "user", "Say many words.", 1),
        ChatMessage("a1", "assistant", stream.text, 2, model=MODEL),
    ], 1)

    async def go() -> float:
        start = time.perf_counter()
        node.transcript.set_conversation(conv)
        await wait_shown([node], stream)
        node.repaint()
        return (time.perf_counter() - start) * 1000.0

    try:
        return run_on_loop(go())
    finally:
        dispose(node)


def stall_run(bench: BenchServices, stream: Stream, count: int) -> tuple[list[float], float]:
    """One run: ``count`` fresh nodes stream the answer at once; (heartbeat gaps, ms until all shown)."""
    window, nodes = tiled_window(bench, count)
    beat = Heartbeat()

    async def go() -> tuple[list[float], float]:
        bench.fake.script(*([stream.turn] * count))
        beat.start()
        start = time.perf_counter()
        reasons = await wait_finished(nodes)
        if reasons != ["end_turn"] * count:
            raise RuntimeError(f"the runs ended with {reasons}")
        await wait_shown(nodes, stream)
        duration = (time.perf_counter() - start) * 1000.0
        await asyncio.sleep(TAIL_S)
        return beat.stop(), duration

    try:
        return run_on_loop(go())
    finally:
        beat.stop()
        for node in nodes:
            node.shutdown()
        dispose(window)


def idle_gaps(bench: BenchServices, count: int, duration_ms: float) -> list[float]:
    """The baseline: the heartbeat of the same window with ``count`` idle nodes for ``duration_ms``."""
    window, nodes = tiled_window(bench, count)
    beat = Heartbeat()

    async def go() -> list[float]:
        beat.start()
        await asyncio.sleep(duration_ms / 1000.0)
        return beat.stop()

    try:
        return run_on_loop(go())
    finally:
        beat.stop()
        for node in nodes:
            node.shutdown()
        dispose(window)


def _stall_rows(bench: BenchServices, settings: Settings, stream: Stream, *, extra: bool) -> list[Row]:
    k = settings.stall_nodes
    for _ in range(settings.warmup):
        stall_run(bench, stream, k)
    p99s: list[float] = []
    maxes: list[float] = []
    idle_p99: list[float] = []
    idle_max: list[float] = []
    durations: list[float] = []
    for _ in range(settings.runs):
        gaps, duration = stall_run(bench, stream, k)
        durations.append(duration)
        p99s.append(percentile(gaps, 99))
        maxes.append(max(gaps, default=0.0))
        quiet = idle_gaps(bench, k, min(duration, 2000.0))
        idle_p99.append(percentile(quiet, 99))
        idle_max.append(max(quiet, default=0.0))
    what = "plain text (extra row)" if extra else "Markdown-rich answers"
    prefix = "stall.plain" if extra else "stall"
    note = (f"{k} nodes × {stream.deltas:,} deltas took {median(durations):,.0f} ms per run (median) until "
            f"every node showed its last block; heartbeat every {HEARTBEAT_MS} ms (precise timer), "
            f"kept running until then.")
    return [
        Row(f"{prefix}.p99", f"UI stall, {k} nodes streaming {what}: heartbeat gap p99", "ms", p99s,
            "idle window, same nodes", idle_p99, Budget.at_most(16, "ms"), note),
        Row(f"{prefix}.max", f"UI stall, {k} nodes streaming {what}: heartbeat gap max", "ms", maxes,
            "idle window, same nodes", idle_max, Budget.at_most(50, "ms")),
    ]


def run(settings: Settings) -> list[Row]:
    """Markdown and plain streams into one node vs the driver (and render-once); the 8-node stalls."""
    n = settings.events
    md = markdown_stream(n)
    plain = plain_stream(n)
    bench = BenchServices.start("openai")
    try:
        node_ms, driver_ms = paired(lambda: node_stream_ms(bench, md), lambda: driver_only_ms(bench, md),
                                    settings.runs, warmup=settings.warmup)
        once_ms = repeat(lambda: render_once_ms(bench, md), settings.runs, warmup=settings.warmup)
        limit = median(driver_ms) + 1.5 * median(once_ms)
        shape = corpus_stats(md.text)
        md_budget = Budget("max", limit, f"≤ driver + 1.5 × render-once = {limit:,.0f} ms")
        note = (f"the corpus answer: {shape['bytes'] / 1000:.0f} KB, {shape['headings']} headings, "
                f"{shape['code_blocks']} code blocks ({shape['code_lines']} lines), "
                f"{shape['tables']} tables, "
                f"{shape['list_items']} list items, {shape['links']} links, {shape['non_ascii']} non-ASCII "
                f"characters; render-once {median(once_ms):,.0f} ms (median).")
        rows = [
            Row("node.stream", f"{n:,} Markdown-rich deltas streamed into one chat node, until the last "
                "block is shown", "ms", node_ms, "driver alone, same stream and loop", driver_ms, md_budget,
                note),
            Row("node.render_once", "render the finished answer once (same renderer, node's width), "
                "to painted", "ms", once_ms),
        ]
        p_node, p_driver = paired(lambda: node_stream_ms(bench, plain), lambda: driver_only_ms(bench, plain),
                                  settings.runs, warmup=settings.warmup)
        rows.append(Row("node.stream_plain",
                        f"{n:,} plain-text deltas (\"tok \", extra row) into one chat node",
                        "ms", p_node, "driver alone, same stream and loop", p_driver, Budget.ratio(1.3)))
        painted, unpainted = paired(lambda: driver_only_ms(bench, md, paint_first=True),
                                    lambda: driver_only_ms(bench, md),
                                    settings.runs, warmup=settings.warmup)
        rows.append(Row("node.driver_after_paint",
                        "the Markdown stream's driver alone, after one 64×76 image is painted in the same "
                        "loop run (informational)", "ms", painted, "driver alone", unpainted, None,
                        "a paint leaves the CPU's vector registers dirty on AVX-512 machines; the decoding "
                        "loop clears them at each slice (desktop.core.cpu_state), so this stays ≈ 1.0× "
                        "(1.04× before it did)."))
        stall_md = md if settings.stall_events == n else markdown_stream(settings.stall_events)
        stall_plain = plain if settings.stall_events == n else plain_stream(settings.stall_events)
        rows += _stall_rows(bench, settings, stall_md, extra=False)
        rows += _stall_rows(bench, settings, stall_plain, extra=True)
        return rows
    finally:
        bench.close()
