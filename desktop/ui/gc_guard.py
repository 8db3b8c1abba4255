"""Python's cyclic garbage collector, run on the GUI thread only.

Qt objects must be destroyed on the thread that owns them. With automatic collection, a collection
starts on whichever thread happens to allocate past the threshold: the demo's loopback server
thread, or an ``asyncio.to_thread`` worker reading a file for a tool. If that collection frees a
widget caught in a reference cycle, Qt deletes it from the wrong thread and the process crashes
at random. The cure (a known recipe for Python Qt apps) is to switch automatic collection off and
collect from a GUI-thread timer whenever the counters pass the usual thresholds.
"""

from __future__ import annotations

import gc
import logging

from PySide6.QtCore import QObject, QTimer

log = logging.getLogger(__name__)

__all__ = ["GuiThreadCollector"]


class GuiThreadCollector(QObject):
    """Disables automatic GC and collects on the GUI thread from a timer.

    Args:
        parent: Owner (the application), so the timer lives as long as it does.
        interval_ms: How often the counters are checked.
    """

    def __init__(self, parent: QObject | None = None, *, interval_ms: int = 500) -> None:
        super().__init__(parent)
        self._thresholds = gc.get_threshold()
        self._was_enabled = gc.isenabled()
        gc.disable()
        self._timer = QTimer(self)
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self.check)
        self._timer.start()

    def check(self) -> int:
        """Collect the oldest generation whose counter passed its threshold; returns objects found."""
        t0, t1, t2 = self._thresholds
        c0, c1, c2 = gc.get_count()
        if c0 <= t0:
            return 0
        generation = 0
        if c1 > t1:
            generation = 1
            if c2 > t2:
                generation = 2
        return gc.collect(generation)

    def stop(self) -> None:
        """Stop the timer and give collection back to the interpreter."""
        self._timer.stop()
        if self._was_enabled:
            gc.enable()
