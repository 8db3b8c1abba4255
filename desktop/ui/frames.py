"""One render tick for every transcript and Markdown view: coalesced, and bounded in time per tick.

Shared plumbing: the transcript room asks for ticks, the markdown room's streaming and colouring
spend what is left of one (``tick_deadline``); this module knows neither.

Each transcript used to run its own 16 ms timer, so with 8 streaming nodes up to 8 timers could
fire back to back and render in one go, however long that took. ``FrameScheduler`` is shared by
all transcripts (``frame_scheduler()``): ``request(key, callback)`` asks for ``callback()`` at the
next tick (once, however often it is requested), and a tick runs pending callbacks in request order
until ``budget_ms`` has been spent; the rest run at the next tick, ``resume_ms`` later, so timers,
input and socket reads get the event loop in between. A callback whose recent cost would take the
tick past its budget is not started (unless it is the tick's first): it comes first in the next tick.
The callbacks served last go to the back of the queue when they ask again, so no node starves.

Frame pacing: a tick that costs more (together with the paint it causes) than 1/``PACE`` of the
frame interval pushes the next tick further out, up to ``MAX_FRAME_MS``. Streaming one slow answer
renders every 16 ms; eight answers arriving at full speed render less often instead of starving the
event loop (and the streams themselves).

Work done in slices inside a callback (a streamed body's closed blocks, the colouring of code)
also stops at the tick's deadline (``tick_deadline()``): one budget for all nodes, not one each.

A tick catching up with a backlog (``soon``) of one view follows the previous one as soon as the
event loop has served what waits (input, sockets, timers, the paint): it costs no idle time, and no
key press waits longer than one budget. When several views catch up at once (eight answers arriving
at full speed), their ticks are ``CATCH_UP_MS`` apart so the loop keeps room for input and timers.

*Background* requests (the colouring of code already shown) only get what is left of a tick's
budget once no other request waits: text is shown first, coloured after.

After the callbacks of a tick, ``settle()`` resolves the layout changes they caused (each level of
nested layouts otherwise posts one more event), so the scroll positions are final and the window
is painted once per tick rather than two or three times.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Hashable

from PySide6.QtCore import QCoreApplication, QEvent, QObject, Qt, QTimer

from desktop.core.cpu_state import clear_upper_state

log = logging.getLogger(__name__)

__all__ = [
    "FrameScheduler",
    "frame_scheduler",
    "settle",
    "tick_deadline",
    "FRAME_MS",
    "FRAME_BUDGET_MS",
    "CATCH_UP_MS",
    "note_activity",
    "interacting",
]

FRAME_MS = 16
"""Delay from the first request to the tick that serves it."""
FRAME_BUDGET_MS = 3.0
"""Work one tick may do before it hands the rest to the next tick."""
RESUME_MS = FRAME_MS
"""Delay of the follow-up tick when a tick ran out of budget."""
PACE = 12.0
"""Frame pacing: ticks start at least ``PACE`` times their own cost apart (rendering plus the paint
that follows it), so rendering takes at most ~1/12 of the time however fast text arrives. A frame
that costs under ~1.3 ms (an answer streaming at a normal speed) keeps the 16 ms cadence."""
MAX_FRAME_MS = 66
"""The pacing never spaces ticks further apart than this (15 frames a second)."""
CATCH_UP_MS = 4
"""Delay of a tick asked for ``soon`` (catching up with a backlog, one budget at a time) while
several views catch up at once: their slices leave the event loop this long in between for input,
timers and the streams' reads."""
SOLO_CATCH_UP_MS = 0
"""The same when a single view catches up: its slices follow on the next event-loop pass (after the
input, socket reads, timers and paint that wait), so one long answer costs no idle time."""
BACKGROUND_MS = FRAME_MS
"""Delay of a tick that only has background work (colouring) to do: at most one such frame per
frame interval (each colouring step that finishes a code block lays it out and paints it again)."""

_MAX_COSTS = 512

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
        self._soon: set[Hashable] = set()  # pending requests that catch up with a backlog
        self._background: dict[Hashable, Callable[[], None]] = {}
        self._costs: dict[Hashable, float] = {}  # each key's recent cost of a callback (s, averaged)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setTimerType(Qt.TimerType.PreciseTimer)
        self._timer.timeout.connect(self.tick)
        self.ticks = 0
        self.paced_ms = float(interval_ms)
        self._last_tick = -1e9
        self._measuring = 0.0
        self.deadline: float | None = None  # while a tick runs: when its budget ends (perf_counter)

    def request(
        self, key: Hashable, callback: Callable[[], None], *, soon: bool = False, background: bool = False
    ) -> None:
        """Run ``callback()`` at the next tick (a pending request for ``key`` is replaced).

        Args:
            key: who asks (one pending request per key).
            callback: the render to run.
            soon: catching up with work already received (a burst rendered a budget at a time):
                the tick comes ``CATCH_UP_MS`` later rather than at the paced frame interval, so
                the backlog is done in small slices with the event loop served in between.
            background: work that may wait while anything else does (colouring code already
                shown): it runs with what is left of a tick once no other request is pending.
        """
        if background:
            self._background[key] = callback
            if not self._timer.isActive():
                self._timer.start(BACKGROUND_MS)
            return
        self._pending[key] = callback
        if soon:
            self._soon.add(key)
            wanted = SOLO_CATCH_UP_MS if len(self._soon) == 1 else CATCH_UP_MS
            if not self._timer.isActive() or self._timer.remainingTime() > wanted:
                self._timer.start(wanted)
        elif not self._timer.isActive():
            self._timer.start(self._delay(self._interval))

    def _delay(self, minimum: int) -> int:
        since = (time.perf_counter() - self._last_tick) * 1000.0
        return max(minimum, int(self.paced_ms - since))

    def _measured(self) -> None:
        """Runs right after the paint that followed a tick: update the pacing."""
        cost = (time.perf_counter() - self._measuring) * 1000.0
        target = min(float(MAX_FRAME_MS), max(float(self._interval), cost * PACE))
        self.paced_ms = 0.5 * self.paced_ms + 0.5 * target

    def cancel(self, key: Hashable) -> None:
        """Forget the pending request of ``key`` (it rendered by itself, or is going away)."""
        self._pending.pop(key, None)
        self._soon.discard(key)
        self._background.pop(key, None)

    def is_pending(self, key: Hashable) -> bool:
        """True while ``key`` waits for a tick."""
        return key in self._pending or key in self._background

    def pending_count(self) -> int:
        """How many requests wait for a tick."""
        return len(self._pending) + len(self._background)

    def foreground_count(self) -> int:
        """How many requests other than background work (colouring code already shown) wait."""
        return len(self._pending)

    def tick(self) -> None:
        """Serve pending requests, oldest first, until the budget is spent; then background work."""
        clear_upper_state()  # a paint since the last tick leaves Python ~15 % slower (desktop.core.cpu_state)
        self._timer.stop()
        self.ticks += 1
        start = time.perf_counter()
        self._last_tick = start
        limit = self.budget_ms / 1000.0
        self.deadline = start + limit
        batch = list(self._pending)  # what asks again while being served waits for the next tick
        costs = self._costs
        served = 0
        for key in batch:
            if served and time.perf_counter() - start + costs.get(key, 0.0) > limit:
                break  # it would overrun the budget: it comes first in the next tick
            callback = self._pending.pop(key, None)
            if callback is None:
                continue
            self._soon.discard(key)
            began = time.perf_counter()
            _run(key, callback)
            cost = time.perf_counter() - began
            costs[key] = cost if key not in costs else 0.5 * (costs[key] + cost)
            served += 1
        if len(costs) > _MAX_COSTS:  # keys are ids: forget the views long gone
            costs.clear()
        if not self._pending:
            for key in list(self._background):
                if time.perf_counter() - start >= limit:
                    break
                callback = self._background.pop(key, None)
                if callback is not None:
                    _run(key, callback)
        self.deadline = None
        self._schedule_next()
        settle()
        # The paint this tick caused runs as soon as control is back in the event loop (posted
        # events come before timers): a zero timer fires after it and measures the whole frame.
        self._measuring = start
        QTimer.singleShot(0, self, self._measured)

    def _schedule_next(self) -> None:
        """After a tick: when the next one runs, if anything is left (or was asked for meanwhile)."""
        if self._pending:
            catching_up = sum(1 for k in self._pending if k in self._soon)
            if catching_up:
                wanted = SOLO_CATCH_UP_MS if catching_up == 1 else CATCH_UP_MS
            else:
                wanted = self._delay(self._resume)
        elif self._background:
            wanted = BACKGROUND_MS
        else:
            return
        if not self._timer.isActive() or self._timer.remainingTime() > wanted:
            self._timer.start(wanted)


def _run(key: Hashable, callback: Callable[[], None]) -> None:
    """Run one request; a failing one is logged and does not stop the others rendering."""
    try:
        callback()
    except RuntimeError as exc:  # the widget behind it was deleted meanwhile
        log.debug("frame callback for %r failed: %s", key, exc)
    except Exception:  # noqa: BLE001 - one broken view must not stop the others rendering
        log.exception("frame callback for %r failed", key)


def settle() -> None:
    """Apply pending layout requests now, cascading up nested layouts (a few rounds)."""
    for _ in range(4):
        QCoreApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest)


_active_until = 0.0


def note_activity(seconds: float = 1.0) -> None:
    """The user is scrolling (or otherwise interacting): work that may wait should, for ``seconds``."""
    global _active_until
    _active_until = max(_active_until, time.monotonic() + seconds)


def interacting() -> bool:
    """True within the time ``note_activity`` asked for (``GuiThreadCollector`` waits meanwhile)."""
    return time.monotonic() < _active_until


def tick_deadline() -> float | None:
    """While the shared scheduler runs a tick: when its budget ends (``time.perf_counter``).

    A callback doing work in slices (rendering blocks, colouring code) stops there too, so the
    budget is one for all nodes, not one per node. None outside a tick.
    """
    return None if _scheduler is None else _scheduler.deadline


def frame_scheduler() -> FrameScheduler:
    """The process-wide scheduler (created on first use; needs a QApplication)."""
    global _scheduler
    if _scheduler is None:
        _scheduler = FrameScheduler()
    return _scheduler
