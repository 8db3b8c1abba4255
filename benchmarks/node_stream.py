"""Budgets 2: streaming into chat nodes.

* **Throughput:** 20k deltas into one ``ChatNodeWidget`` (real runtime, real OpenAI driver, loopback
  fake provider, offscreen, qasync loop): from ``submit`` until the node has applied ``Done``, its
  transcript shows the whole text (checked) and the node has been repainted. Baseline: the driver
  alone consuming the same stream on the same loop and the same client. Budget ≤ 1.3×.
* **UI stall:** a 5 ms precise ``QTimer`` heartbeat records the gaps between its ticks while 8 nodes
  (tiled in one window) stream 20k deltas each at full speed. Budgets: p99 ≤ 16 ms, max ≤ 50 ms.
  Baseline: the heartbeat of the same window with nothing streaming, for as long.
"""

from __future__ import annotations

import asyncio
import logging
import time

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QApplication, QMainWindow, QMdiArea

from benchmarks._harness import Budget, Row, Settings, median, paired, percentile
from benchmarks._qt import MODEL, BenchServices, dispose, run_on_loop
from desktop.core.chat.types import ChatMessage, Delta
from desktop.core.project import new_node_state
from desktop.core.providers import driver_for
from desktop.testing import FakeProvider, Turn
from desktop.ui.chat_node import ChatNodeWidget
from desktop.ui.transcript import AssistantMessageView

log = logging.getLogger(__name__)

__all__ = ["run", "node_stream_ms", "driver_only_ms", "stall_run", "idle_gaps"]

HEARTBEAT_MS = 5


def _shown_text(node: ChatNodeWidget) -> str:
    views = [v for v in node.transcript.views() if isinstance(v, AssistantMessageView)]
    return views[-1].toPlainText() if views else ""


def _check_text(node: ChatNodeWidget, n: int) -> None:
    shown = _shown_text(node)
    if shown.count("tok") != n:
        raise RuntimeError(f"the node shows {shown.count('tok')} of {n} deltas (stream incomplete?)")


async def _wait_finished(nodes: list[ChatNodeWidget], timeout_s: float = 120.0) -> list[str]:
    loop = asyncio.get_running_loop()
    futures: list[asyncio.Future[str]] = []
    for node in nodes:
        fut: asyncio.Future[str] = loop.create_future()
        node.run_finished.connect(lambda reason, f=fut: f.done() or f.set_result(reason))
        futures.append(fut)
        node.submit("Say many words.")
    async with asyncio.timeout(timeout_s):
        return list(await asyncio.gather(*futures))


def node_stream_ms(bench: BenchServices, turn: Turn, n: int) -> float:
    """One run: a fresh node (built and shown untimed) streams ``turn``; ms until the text is shown."""
    node = bench.node(new_node_state("Bench"))
    node.show()
    QApplication.processEvents()

    async def go() -> float:
        bench.fake.script(turn)
        start = time.perf_counter()
        reasons = await _wait_finished([node])
        if reasons != ["end_turn"]:
            raise RuntimeError(f"the run ended with {reasons}")
        _check_text(node, n)
        node.repaint()  # the final frame, painted now (synchronously) rather than whenever Qt gets to it
        return (time.perf_counter() - start) * 1000.0

    try:
        return run_on_loop(go())
    finally:
        dispose(node)


def driver_only_ms(bench: BenchServices, turn: Turn, n: int) -> float:
    """One run of the baseline: the same driver and client consume the same stream on the same loop."""
    driver = driver_for(bench.provider_config(), bench.client)
    messages = [ChatMessage("u1", "user", "Say many words.", 0)]

    async def go() -> float:
        bench.fake.script(turn)
        start = time.perf_counter()
        text: list[str] = []
        async for event in driver.stream(model=MODEL, messages=messages, tools=[]):
            if type(event) is Delta:
                text.append(event.text)
        if "".join(text).count("tok") != n:
            raise RuntimeError(f"the driver delivered {''.join(text).count('tok')} of {n} deltas")
        return (time.perf_counter() - start) * 1000.0

    return run_on_loop(go())


class _Heartbeat:
    """A precise timer ticking every ``HEARTBEAT_MS``; ``gaps`` holds the ms between ticks."""

    def __init__(self) -> None:
        self.gaps: list[float] = []
        self._last: float | None = None
        self._timer = QTimer()
        self._timer.setTimerType(Qt.TimerType.PreciseTimer)
        self._timer.setInterval(HEARTBEAT_MS)
        self._timer.timeout.connect(self._tick)

    def _tick(self) -> None:
        now = time.perf_counter()
        if self._last is not None:
            self.gaps.append((now - self._last) * 1000.0)
        self._last = now

    def start(self) -> None:
        self.gaps.clear()
        self._last = None
        self._timer.start()

    def stop(self) -> list[float]:
        self._timer.stop()
        return list(self.gaps)


def _window(bench: BenchServices, count: int) -> tuple[QMainWindow, list[ChatNodeWidget]]:
    window = QMainWindow()
    area = QMdiArea(window)
    window.setCentralWidget(area)
    window.resize(1600, 1000)
    nodes = []
    for i in range(count):
        node = bench.node(new_node_state(f"Node {i + 1}"))
        area.addSubWindow(node).show()
        nodes.append(node)
    area.tileSubWindows()
    window.show()
    QApplication.processEvents()
    return window, nodes


def stall_run(bench: BenchServices, turn: Turn, n: int, count: int) -> tuple[list[float], float]:
    """One run: ``count`` fresh nodes stream ``turn`` at once; returns (heartbeat gaps, duration ms)."""
    window, nodes = _window(bench, count)
    beat = _Heartbeat()

    async def go() -> tuple[list[float], float]:
        bench.fake.script(*([turn] * count))
        beat.start()
        start = time.perf_counter()
        reasons = await _wait_finished(nodes)
        duration = (time.perf_counter() - start) * 1000.0
        gaps = beat.stop()
        if reasons != ["end_turn"] * count:
            raise RuntimeError(f"the runs ended with {reasons}")
        for node in nodes:
            _check_text(node, n)
        return gaps, duration

    try:
        return run_on_loop(go())
    finally:
        beat.stop()
        for node in nodes:
            node.shutdown()
        dispose(window)


def idle_gaps(bench: BenchServices, count: int, duration_ms: float) -> list[float]:
    """The baseline: the heartbeat of the same window with ``count`` idle nodes for ``duration_ms``."""
    window, nodes = _window(bench, count)
    beat = _Heartbeat()

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


def run(settings: Settings) -> list[Row]:
    """Node throughput vs driver alone; heartbeat p99 and max with 8 streaming nodes vs idle."""
    n = settings.events
    turn = FakeProvider.fast_turn(n, model=MODEL)
    bench = BenchServices.start("openai")
    try:
        node_ms, driver_ms = paired(lambda: node_stream_ms(bench, turn, n),
                                    lambda: driver_only_ms(bench, turn, n), settings.runs,
                                    warmup=settings.warmup)
        rows = [Row("node.stream", f"{n:,} deltas streamed into one chat node, until shown", "ms", node_ms,
                    "driver alone, same stream and loop", driver_ms, Budget.ratio(1.3))]

        k, sn = settings.stall_nodes, settings.stall_events
        sturn = turn if sn == n else FakeProvider.fast_turn(sn, model=MODEL)
        for _ in range(settings.warmup):
            stall_run(bench, sturn, sn, k)
        p99s: list[float] = []
        maxes: list[float] = []
        idle_p99: list[float] = []
        idle_max: list[float] = []
        durations: list[float] = []
        for _ in range(settings.runs):
            gaps, duration = stall_run(bench, sturn, sn, k)
            durations.append(duration)
            p99s.append(percentile(gaps, 99))
            maxes.append(max(gaps, default=0.0))
            quiet = idle_gaps(bench, k, min(duration, 2000.0))
            idle_p99.append(percentile(quiet, 99))
            idle_max.append(max(quiet, default=0.0))
        note = (f"{k} nodes × {sn:,} deltas took {median(durations):,.0f} ms per run (median); "
                f"heartbeat every {HEARTBEAT_MS} ms (precise timer).")
        rows += [
            Row("stall.p99", f"UI stall, {k} nodes streaming at full speed: heartbeat gap p99", "ms", p99s,
                "idle window, same nodes", idle_p99, Budget.at_most(16, "ms"), note),
            Row("stall.max", f"UI stall, {k} nodes streaming at full speed: heartbeat gap max", "ms", maxes,
                "idle window, same nodes", idle_max, Budget.at_most(50, "ms")),
        ]
        return rows
    finally:
        bench.close()
