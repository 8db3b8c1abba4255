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
        qtbot.waitUntil(lambda: ref() is None, timeout=3000)
        del keep
        assert set(_Node.finalized_on) == {threading.main_thread().name}
    finally:
        collector.stop()
        if was_enabled:
            gc.enable()
    assert gc.isenabled() == was_enabled
