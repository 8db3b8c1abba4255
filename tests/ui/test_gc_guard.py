"""The GUI-thread collector: automatic GC is off, cycles are still collected, on the GUI thread."""

from __future__ import annotations

import gc
import threading
import weakref
from typing import Any

from desktop.ui.gc_guard import GuiThreadCollector


class _Node:
    def __init__(self) -> None:
        self.other: Any = None
        self.thread: str | None = None

    def __del__(self) -> None:
        self.thread = threading.current_thread().name
        _Node.finalized_on.append(self.thread)

    finalized_on: list[str] = []


def test_collects_cycles_on_the_gui_thread_only(qtbot: Any) -> None:
    was_enabled = gc.isenabled()
    collector = GuiThreadCollector(interval_ms=10)
    try:
        assert not gc.isenabled()
        _Node.finalized_on.clear()
        a, b = _Node(), _Node()
        a.other, b.other = b, a
        ref = weakref.ref(a)
        del a, b

        # Allocation on another thread must not trigger a collection there.
        def churn() -> None:
            junk = [[i] for i in range(50_000)]
            del junk

        worker = threading.Thread(target=churn, name="worker")
        worker.start()
        worker.join()
        assert ref() is not None, "a collection ran off the GUI thread"

        keep = [[] for _ in range(gc.get_threshold()[0] + 10)]  # pass generation 0's threshold
        qtbot.waitUntil(lambda: ref() is None, timeout=10_000)
        keep.clear()
        assert set(_Node.finalized_on) == {threading.main_thread().name}
    finally:
        collector.stop()
        if was_enabled:
            gc.enable()
    assert gc.isenabled() == was_enabled


def _make_full_collection_due() -> list[list[int]]:
    """Pass the thresholds of all three generations (as a long busy session does); keep the result
    alive until the check (freeing the objects would take generation 0 back under its threshold)."""
    t0, t1, t2 = gc.get_threshold()
    for _ in range((t1 + 1) * (t2 + 1)):
        gc.collect(1)  # each collection of generation 1 counts towards generation 2
    # Well past generation 0's threshold: objects another thread frees meanwhile (a server thread left
    # by an earlier test) count it down again, and a margin of 10 made the check see nothing due.
    return [[] for _ in range(3 * t0 + 1000)]


def test_each_check_collects_both_young_generations_and_a_full_one_only_as_often_as_python_would() -> None:
    """Generation 1 at every check (no eleventh check walking ten checks' survivors); generation 2
    after (t1 + 1) * (t2 + 1) young collections, the interpreter's own spacing of full collections."""
    was_enabled = gc.isenabled()
    collector = GuiThreadCollector(interval_ms=60_000, busy=lambda: False)
    generations: list[int] = []

    def record(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            generations.append(info["generation"])

    gc.callbacks.append(record)
    try:
        gc.collect(2)
        t0, t1, t2 = gc.get_threshold()
        assert collector.full_after == (t1 + 1) * (t2 + 1)
        keep: list[list[list[int]]] = []  # alive: freeing would take generation 0 back under its threshold
        for _ in range(collector.full_after + 1):
            # well past generation 0's threshold: a lexer or server thread left by an earlier test
            # freeing objects meanwhile counts it down again (a margin of 10 failed once)
            keep.append([[] for _ in range(t0 + 1000)])
            collector.check()
        keep.clear()
        assert generations[1:] == [1] * collector.full_after + [2]  # after gc.collect(2) itself
    finally:
        gc.callbacks.remove(record)
        collector.stop()
        if was_enabled:
            gc.enable()


def test_a_full_collection_waits_while_frames_render_then_runs_when_idle(monkeypatch: Any) -> None:
    import desktop.ui.gc_guard as guard

    busy = [True]
    was_enabled = gc.isenabled()
    collector = GuiThreadCollector(interval_ms=60_000, busy=lambda: busy[0])
    keep: list[list[list[int]]] = []  # freeing it would take generation 0 back under its threshold
    try:
        keep.append(_make_full_collection_due())
        assert gc.get_count()[2] >= collector.full_after
        collector.check()
        assert collector.deferred == 1
        assert gc.get_count()[2] >= collector.full_after  # generation 2 not collected yet
        busy[0] = False
        keep.append(_make_full_collection_due())
        collector.check()
        assert gc.get_count()[2] == 0 and collector.deferred == 1  # collected at the idle check

        busy[0] = True  # busy for longer than MAX_DEFER_S: collected anyway
        clock = [1000.0]
        monkeypatch.setattr(guard.time, "monotonic", lambda: clock[0])
        keep.append(_make_full_collection_due())
        collector.check()
        assert collector.deferred == 2
        clock[0] += guard.MAX_DEFER_S
        keep.append(_make_full_collection_due())
        collector.check()
        assert gc.get_count()[2] == 0
        keep.clear()
    finally:
        collector.stop()
        if was_enabled:
            gc.enable()


def test_a_full_collection_put_off_runs_at_the_first_idle_check_whatever_the_counters() -> None:
    busy = [True]
    was_enabled = gc.isenabled()
    collector = GuiThreadCollector(interval_ms=60_000, busy=lambda: busy[0])
    keep: list[list[list[int]]] = []
    try:
        keep.append(_make_full_collection_due())
        collector.check()
        assert collector.deferred == 1 and gc.get_count()[2] >= collector.full_after
        keep.clear()  # generation 0 back under its threshold: an ordinary check would do nothing
        gc.collect(0)
        busy[0] = False
        collector.check()
        assert gc.get_count()[2] == 0  # the full collection ran at this idle check
    finally:
        collector.stop()
        if was_enabled:
            gc.enable()


def test_scrolling_counts_as_busy_for_a_second(qapp: Any, monkeypatch: Any) -> None:
    import desktop.ui.frames as frames
    from desktop.ui.gc_guard import _rendering

    clock = [500.0]
    monkeypatch.setattr(frames.time, "monotonic", lambda: clock[0])
    monkeypatch.setattr(frames, "_active_until", 0.0)
    assert not frames.interacting()
    frames.note_activity()  # what the transcript does on every scroll
    assert frames.interacting() and _rendering()
    clock[0] += 1.01
    assert not frames.interacting()


def test_a_requested_trim_waits_for_an_idle_check_and_collects_first_when_asked(monkeypatch: Any) -> None:
    import desktop.ui.gc_guard as guard

    trims: list[int] = []
    monkeypatch.setattr(guard.heap, "trim", lambda: trims.append(gc.get_count()[2]) or True)
    busy = [True]
    was_enabled = gc.isenabled()
    collector = GuiThreadCollector(interval_ms=60_000, busy=lambda: busy[0])
    keep: list[list[list[int]]] = []
    try:
        guard.request_trim()  # views dropped: a trim, no collection
        collector.check()
        assert trims == []  # busy: not now
        busy[0] = False
        collector.check()
        assert len(trims) == 1 and collector.trims == 1
        collector.check()
        assert len(trims) == 1  # one request, one trim

        keep.append(_make_full_collection_due())
        keep.clear()
        gc.collect(0)  # counters under the thresholds: an ordinary check would do nothing
        assert gc.get_count()[2] > 0
        guard.request_trim(collect=True)  # a node closed: collect its cycles, then trim
        collector.check()
        assert trims[1:] == [0]  # the full collection ran before the trim

        busy[0] = True  # answers stream back to back: the trim waits MAX_DEFER_S at most
        clock = [5000.0]
        monkeypatch.setattr(guard.time, "monotonic", lambda: clock[0])
        guard.request_trim()
        collector.check()
        clock[0] += guard.MAX_DEFER_S - 1
        collector.check()
        assert len(trims) == 2
        clock[0] += 1
        collector.check()
        assert len(trims) == 3 and collector.trims == 3
    finally:
        collector.stop()
        if was_enabled:
            gc.enable()



def test_background_colouring_does_not_count_as_busy(qapp: Any, monkeypatch: Any) -> None:
    """Code colouring of answers already on screen kept requests pending for seconds after every
    answer: a trim or a full collection never found its idle moment while answers came in rounds."""
    import desktop.ui.frames as frames
    from desktop.ui.gc_guard import _rendering

    monkeypatch.setattr(frames, "_active_until", 0.0)
    scheduler = frames.frame_scheduler()
    scheduler.request("colour-test", lambda: None, background=True)
    try:
        assert scheduler.pending_count() >= 1 and not _rendering()
        scheduler.request("render-test", lambda: None)
        assert _rendering()
    finally:
        scheduler.cancel("colour-test")
        scheduler.cancel("render-test")
