"""Budgets of what a user feels: typing while nodes stream, scrolling a long Markdown-rich node.

* **Typing latency:** 8 tiled nodes stream the Markdown corpus answer at full speed (as in the stall
  benchmark) while keys are typed into the first node's input (focused, in the active window). Each
  key is *posted* (``QCoreApplication.postEvent`` of a key press and release, as the window system
  delivers input: it waits its turn in the event queue behind whatever the loop is doing); its
  latency is from posting until the input's viewport receives its first ``Paint`` after the key press
  was delivered, i.e. until the character is on screen. The next key follows 10–40 ms after that
  paint; keys alternate a letter and Backspace. Typing goes on until every node shows its last block
  (and at least ``MIN_KEYS`` keys). Budget: p99 ≤ 16 ms. Baseline: the same typing with the nodes idle.
* **Scrolling a 2,000-message Markdown-rich node:** a node holding 1,000 questions and 1,000 corpus
  answers (``make_markdown_messages``) opens at the bottom; programmatic steps of one page each go up
  to the top (older messages are built on the way, as the app does when the user reaches the top)
  and back down to the bottom. Frame time of a step: set the scroll bar's value, then process events
  in rounds until a round paints nothing in the transcript's content (what the step changed is on
  screen: Qt's paint of the scrolled view and any paint of what the app built or moved after it, each
  counted); p99 over all steps. Budget: frame p99 ≤ 16 ms. An extra row keeps the definition used
  before 2026-12-01, which added a forced synchronous repaint of the whole transcript to every step
  (a second paint of the same pixels; it also hid that the app painted a step once with the
  placeholders of messages not built yet).
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Callable

from PySide6.QtCore import QCoreApplication, QEvent, QObject, QPoint, Qt, QTimer
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QAbstractScrollArea, QApplication, QWidget

from benchmarks._harness import Budget, Row, Settings, median, percentile
from benchmarks._qt import (
    BenchServices,
    PaintWatch,
    dispose,
    markdown_stream,
    run_on_loop,
    tiled_window,
    wait_finished,
    wait_shown,
)
from benchmarks.corpus import make_markdown_messages
from desktop.core.chat.conversation import Conversation
from desktop.core.store import NodeState

log = logging.getLogger(__name__)

__all__ = ["run", "typing_run", "scroll_run", "Typist", "markdown_node_state", "PaintCounter",
           "placeholder_in_view"]

MIN_KEYS = 20
MAX_SCROLL_STEPS = 50_000


class PaintCounter(QObject):
    """Counts the ``Paint`` events of a transcript's content; at the first paint after ``arm`` it
    looks for message placeholders in the viewport (what that paint shows as an empty strip).

    Attributes:
        count: paints so far.
        blank: armed paints that showed a placeholder inside the viewport.
        check_s: seconds spent looking (the caller takes them out of its timing).
    """

    def __init__(self, area: QAbstractScrollArea, content: QWidget) -> None:
        super().__init__(content)
        self.count = 0
        self.blank = 0
        self.check_s = 0.0
        self._armed = False
        self._area = area
        self._content = content
        content.installEventFilter(self)

    def arm(self) -> None:
        """Check the next paint."""
        self._armed = True
        self.check_s = 0.0

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt API
        if event.type() == QEvent.Type.Paint:
            self.count += 1
            if self._armed:
                self._armed = False
                start = time.perf_counter()
                self.blank += self._placeholder_in_view()
                self.check_s += time.perf_counter() - start
        return False

    def _placeholder_in_view(self) -> bool:
        return placeholder_in_view(self._area, self._content)


def placeholder_in_view(area: QAbstractScrollArea, content: QWidget, every: int = 8) -> bool:
    """Whether a message placeholder (a message not built) shows in ``area``'s viewport: the widgets
    under its middle column, one point every ``every`` pixels, and their parents."""
    viewport = area.viewport()
    x = viewport.width() // 2
    for y in range(0, viewport.height(), every):
        child = content.childAt(content.mapFrom(viewport, QPoint(x, y)))
        while child is not None and child is not content:
            if child.objectName() == "messagePlaceholder":
                return True
            child = child.parentWidget()
    return False


class Typist(QObject):
    """Types into ``target`` (a text edit) one posted key at a time and records each key's latency.

    Attributes:
        latencies: ms from posting each key until the target's viewport was painted after it.
    """

    def __init__(self, target: QWidget, paint_target: QWidget, *, seed: int = 5) -> None:
        super().__init__(target)
        self.latencies: list[float] = []
        self._target = target
        self._paint_target = paint_target
        self._rng = random.Random(seed)
        self._posted: float | None = None
        self._delivered = False
        self._running = False
        self._count = 0
        target.installEventFilter(self)
        paint_target.installEventFilter(self)

    def start(self) -> None:
        """Post the first key (the next ones follow each paint)."""
        self._running = True
        self._press()

    def stop(self) -> None:
        """Post no more keys."""
        self._running = False

    def _press(self) -> None:
        if not self._running:
            return
        letter = self._count % 2 == 0
        self._count += 1
        key, text = (Qt.Key.Key_A, "a") if letter else (Qt.Key.Key_Backspace, "")
        self._posted = time.perf_counter()
        self._delivered = False
        mods = Qt.KeyboardModifier.NoModifier
        QCoreApplication.postEvent(self._target, QKeyEvent(QEvent.Type.KeyPress, key, mods, text))
        QCoreApplication.postEvent(self._target, QKeyEvent(QEvent.Type.KeyRelease, key, mods, text))

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt API
        kind = event.type()
        if watched is self._target and kind == QEvent.Type.KeyPress and self._posted is not None:
            self._delivered = True
        elif watched is self._paint_target and kind == QEvent.Type.Paint and self._delivered \
                and self._posted is not None:
            self.latencies.append((time.perf_counter() - self._posted) * 1000.0)
            self._posted = None
            self._delivered = False
            QTimer.singleShot(self._rng.randint(10, 40), self._press)
        return False


def typing_run(bench: BenchServices, n: int, count: int, *, streaming: bool = True) -> list[float]:
    """One run: type into the first of ``count`` tiled nodes while they stream (or idle); latencies."""
    window, nodes = tiled_window(bench, count)
    edit = nodes[0].chat_input
    window.activateWindow()
    edit.setFocus()
    QApplication.processEvents()
    typist = Typist(edit, edit.viewport())
    stream = markdown_stream(n)

    async def go() -> list[float]:
        typist.start()
        if streaming:
            bench.fake.script(*([stream.turn] * count))
            reasons = await wait_finished(nodes)
            if reasons != ["end_turn"] * count:
                raise RuntimeError(f"the runs ended with {reasons}")
            await wait_shown(nodes, stream)
        deadline = time.perf_counter() + 30.0
        while len(typist.latencies) < MIN_KEYS and time.perf_counter() < deadline:
            await asyncio.sleep(0.005)
        typist.stop()
        if len(typist.latencies) < MIN_KEYS:
            raise RuntimeError(f"only {len(typist.latencies)} keys were painted")
        return list(typist.latencies)

    try:
        return run_on_loop(go())
    finally:
        typist.stop()
        for node in nodes:
            node.shutdown()
        dispose(window)


def markdown_node_state(n_messages: int) -> NodeState:
    """A node holding ``n_messages`` Markdown-rich messages (questions and corpus answers)."""
    conv = Conversation("c-md", make_markdown_messages(n_messages), 1_764_547_200_000)
    return NodeState(id="n-md", title="Markdown", x=0, y=0, conversation=conv)


def scroll_run(bench: BenchServices, n_messages: int) -> tuple[list[float], list[float]]:
    """One run: page up from the bottom to the top, then down again.

    Returns:
        Per step: the frame (ms, until what the step changed is painted) and the frame followed by
        a forced synchronous repaint of the whole transcript (ms, the definition before 2026-12-01).
    """
    node = bench.node(markdown_node_state(n_messages))
    views = node.transcript.views()
    watch = PaintWatch(views[-1] if views else node)
    node.show()
    watch.wait()
    transcript = node.transcript
    bar = transcript.verticalScrollBar()
    unloaded: Callable[[], int] = getattr(transcript, "unloaded_count", lambda: 0)
    frames: list[float] = []
    forced: list[float] = []
    paints = PaintCounter(transcript, transcript.widget())

    def step(delta: int) -> None:
        paints.arm()
        start = time.perf_counter()
        bar.setValue(bar.value() + delta)
        before = paints.count
        QApplication.processEvents()  # the step's events: Qt paints it, then queued work runs
        if paints.count == before:  # nothing painted yet (none asked, or queued): paint it now
            transcript.repaint()
        frames.append((time.perf_counter() - start - paints.check_s) * 1000.0)
        transcript.repaint()  # the previous definition: one more paint of everything, forced
        forced.append((time.perf_counter() - start - paints.check_s) * 1000.0)

    try:
        stuck = 0
        while len(frames) < MAX_SCROLL_STEPS:
            if bar.value() <= 0 and unloaded() == 0:
                break
            before = (bar.value(), unloaded())
            step(-max(1, bar.pageStep()))
            stuck = stuck + 1 if (bar.value(), unloaded()) == before else 0
            if stuck > 20:
                raise RuntimeError(f"scrolling up is stuck at {bar.value()} with {unloaded()} messages "
                                   "unbuilt")
        while len(frames) < MAX_SCROLL_STEPS and bar.value() < bar.maximum():
            step(max(1, bar.pageStep()))
        if paints.blank:
            raise RuntimeError(f"{paints.blank} of {len(frames)} scroll steps painted a message placeholder "
                               "in the viewport (a message not built in time)")
        return frames, forced
    finally:
        dispose(node)


def run(settings: Settings) -> list[Row]:
    """Typing p99 while 8 nodes stream (vs idle); scroll frame p99 through a 2,000-message node."""
    n, k = settings.stall_events, settings.stall_nodes
    bench = BenchServices.start("openai")
    try:
        for _ in range(settings.warmup):
            typing_run(bench, n, k)
        busy: list[float] = []
        idle: list[float] = []
        keys: list[int] = []
        for _ in range(settings.runs):
            lat = typing_run(bench, n, k)
            keys.append(len(lat))
            busy.append(percentile(lat, 99))
            idle.append(percentile(typing_run(bench, n, k, streaming=False), 99))
        rows = [Row("typing.p99", f"typing latency (key posted → character painted) while {k} nodes stream "
                    "Markdown: p99", "ms", busy, "same typing, nodes idle", idle, Budget.at_most(16, "ms"),
                    f"{median([float(c) for c in keys]):.0f} keys per run (median), one every 10–40 ms.")]

        m = settings.open_messages
        make_markdown_messages(m)  # generated (and cached) before any timing
        for _ in range(settings.warmup):
            scroll_run(bench, m)
        p99s: list[float] = []
        maxes: list[float] = []
        steps: list[int] = []
        forced_p99s: list[float] = []
        for _ in range(settings.runs):
            frames, forced = scroll_run(bench, m)
            p99s.append(percentile(frames, 99))
            maxes.append(max(frames))
            steps.append(len(frames))
            forced_p99s.append(percentile(forced, 99))
        rows.append(Row("scroll.p99", f"scrolling a {m:,}-message Markdown-rich node page by page, top to "
                        "bottom and back: frame p99", "ms", p99s, budget=Budget.at_most(16, "ms"),
                        note=f"{median([float(s) for s in steps]):.0f} steps per run; worst frame "
                        f"{median(maxes):,.0f} ms (median of the runs' maxima)."))
        rows.append(Row("scroll.forced_p99", "of which with a forced second paint of the whole transcript "
                        "after each step (extra row: the definition before 2026-12-01)", "ms", forced_p99s))
        return rows
    finally:
        bench.close()
