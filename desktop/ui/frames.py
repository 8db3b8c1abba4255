"""One render tick for every transcript: coalesced, and bounded in time per tick.

Each transcript used to run its own 16 ms timer, so with 8 streaming nodes up to 8 timers could
fire back to back and render in one go, however long that took. ``FrameScheduler`` is shared by
all transcripts (``frame_scheduler()``): ``request(key, callback)`` asks for ``callback()`` at the
next tick (once, however often it is requested), and a tick runs pending callbacks in request order
until ``budget_ms`` has been spent; the rest run at the next tick, ``resume_ms`` later, so timers,
input and socket reads get the event loop in between. The callbacks served last go to the back of
the queue when they ask again, so no node starves.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Hashable

from PySide6.QtCore import QObject, Qt, QTimer

log = logging.getLogger(__name__)

__all__ = ["FrameScheduler", "frame_scheduler", "FRAME_MS", "FRAME_BUDGET_MS"]

FRAME_MS = 16
"""Delay from the first request to the tick that serves it."""
FRAME_BUDGET_MS = 8.0
"""Work one tick may do before it hands the rest to the next tick."""
RESUME_MS = 1
"""Delay of the follow-up tick when a tick ran out of budget."""

_scheduler: FrameScheduler | None = None


class FrameScheduler(QObject):
    """Runs requested render callbacks at most once per tick, within a time budget per tick."""

    def __init__(
        self,
        interval_ms: int = FRAME_MS,
        budget_ms: float = FRAME_BUDGET_MS,
        resume_ms: int = RESUME_MS,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.budget_ms = budget_ms
        self._interval = interval_ms
        self._resume = resume_ms
        self._pending: dict[Hashable, Callable[[], None]] = {}
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setTimerType(Qt.TimerType.PreciseTimer)
        self._timer.timeout.connect(self.tick)
        self.ticks = 0
        self.deferred = 0

    def request(self, key: Hashable, callback: Callable[[], None]) -> None:
        """Run ``callback()`` at the next tick (a pending request for ``key`` is replaced)."""
        self._pending[key] = callback
        if not self._timer.isActive():
            self._timer.start(self._interval)

    def cancel(self, key: Hashable) -> None:
        """Forget the pending request of ``key`` (it rendered by itself, or is going away)."""
        self._pending.pop(key, None)

    def is_pending(self, key: Hashable) -> bool:
        """True while ``key`` waits for a tick."""
        return key in self._pending

    def pending_count(self) -> int:
        """How many requests wait for a tick."""
        return len(self._pending)

    def tick(self) -> None:
        """Serve pending requests, oldest first, until the budget is spent."""
        self._timer.stop()
        self.ticks += 1
        start = time.perf_counter()
        limit = self.budget_ms / 1000.0
        batch = list(self._pending)  # what asks again while being served waits for the next tick
        for i, key in enumerate(batch):
            callback = self._pending.pop(key, None)
            if callback is None:
                continue
            try:
                callback()
            except RuntimeError as exc:  # the widget behind it was deleted meanwhile
                log.debug("frame callback for %r failed: %s", key, exc)
            except Exception:  # noqa: BLE001 - one broken view must not stop the others rendering
                log.exception("frame callback for %r failed", key)
            if i + 1 < len(batch) and time.perf_counter() - start >= limit:
                self.deferred += sum(1 for k in batch[i + 1 :] if k in self._pending)
                self._timer.start(self._resume)
                return


def frame_scheduler() -> FrameScheduler:
    """The process-wide scheduler (created on first use; needs a QApplication)."""
    global _scheduler
    if _scheduler is None:
        _scheduler = FrameScheduler()
    return _scheduler
