"""The asyncio event loop on Qt's event loop: qasync's, with timers that stop when cancelled.

qasync (0.28) runs every ``call_later``, ``call_at`` and ``call_soon`` as a Qt timer of one
``QObject`` and returns a plain ``asyncio.Handle``: cancelling it only marks it, and its Qt timer
runs until it is due. Every ``asyncio.timeout`` around a read of a stream, and anyio's deadline
around each socket read of httpx, is such a timer: eight answers streaming at ~1,000 events per
second left 33,000 cancelled Qt timers running for 60 s (the stall timeout), and Qt's timer list,
kept sorted, made every timer started and stopped meanwhile pay for its length
(CabbageDevelopment/qasync#35 upstream).

:class:`EventLoop` returns real ``asyncio.TimerHandle`` objects whose ``cancel()`` stops their Qt
timer at once, runs a due callback after its timer is stopped, and stops every timer left when the
loop closes (on the GUI thread: a loop freed later on a worker thread then holds none,
``desktop.ui.gc_guard.release_loop_timers``).
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import time
from collections.abc import Callable
from typing import Any

import PySide6  # noqa: F401  (imported before qasync, so qasync picks PySide6)
import qasync
from PySide6.QtCore import QObject, QTimerEvent
from PySide6.QtWidgets import QApplication

log = logging.getLogger(__name__)

__all__ = ["EventLoop", "new_event_loop"]


class _TimerHandle(asyncio.TimerHandle):
    """A timer handle that knows its Qt timer (``cancel`` stops it through the loop)."""

    __slots__ = ("qt_timer",)

    def __init__(self, when: float, callback: Callable[..., object], args: tuple[Any, ...],
                 loop: asyncio.AbstractEventLoop, context: contextvars.Context | None) -> None:
        super().__init__(when, callback, args, loop, context)
        self.qt_timer = 0


class _Timers(QObject):
    """The loop's timers: one Qt timer per pending handle, stopped when it runs or is cancelled."""

    def __init__(self) -> None:
        super().__init__()
        self._handles: dict[int, _TimerHandle] = {}  # Qt timer id -> its handle
        self._stopped = False

    def __len__(self) -> int:
        return len(self._handles)

    def add(self, handle: _TimerHandle, delay: float) -> None:
        """Run ``handle`` in ``delay`` seconds (qasync's rounding: whole milliseconds, down)."""
        timer_id = self.startTimer(int(max(0.0, delay) * 1000))
        handle.qt_timer = timer_id
        self._handles[timer_id] = handle

    def cancel(self, handle: _TimerHandle) -> None:
        """Stop the Qt timer of ``handle`` (cancelled before it was due)."""
        timer_id = handle.qt_timer
        if self._handles.get(timer_id) is handle:
            del self._handles[timer_id]
            self.killTimer(timer_id)

    def timerEvent(self, event: QTimerEvent) -> None:  # noqa: N802 - Qt's name
        timer_id = event.timerId()
        self.killTimer(timer_id)
        handle = self._handles.pop(timer_id, None)
        if handle is not None and not self._stopped and not handle.cancelled():
            handle._run()  # noqa: SLF001 - what asyncio's own loops call; it reports exceptions

    def due(self, now: float) -> int:
        """How many pending handles are due at ``now`` (loop time)."""
        return sum(1 for handle in self._handles.values() if handle.when() <= now)

    def stop(self) -> None:
        """Stop every timer and drop every handle (the loop closed)."""
        self._stopped = True
        for timer_id in list(self._handles):
            self.killTimer(timer_id)
        self._handles.clear()

    def set_debug(self, enabled: bool) -> None:
        """qasync's timer interface (slow callbacks are not timed here)."""


class EventLoop(qasync.QEventLoop):  # type: ignore[misc]  # qasync is untyped
    """qasync's loop whose cancelled timers stop (see the module's docstring)."""

    def __init__(self, app: QApplication | None = None, *, already_running: bool = False) -> None:
        super().__init__(app, already_running=already_running)
        self._timer = _Timers()

    def call_later(self, delay: float, callback: Callable[..., object], *args: Any,
                   context: contextvars.Context | None = None) -> asyncio.TimerHandle:
        """Run ``callback(*args)`` in ``delay`` seconds; the handle's ``cancel()`` stops its timer."""
        if asyncio.iscoroutinefunction(callback):
            raise TypeError("coroutines cannot be used with call_later")
        handle = _TimerHandle(self.time() + delay, callback, args, self, context)
        self._timer.add(handle, delay)
        return handle

    def _timer_handle_cancelled(self, handle: asyncio.TimerHandle) -> None:
        """asyncio's hook, called by ``TimerHandle.cancel()``: stop the handle's Qt timer."""
        if isinstance(handle, _TimerHandle):
            self._timer.cancel(handle)

    def due_timers(self) -> int:
        """How many pending handles are due (``call_soon`` callbacks among them) and not run yet."""
        return self._timer.due(self.time())

    def run_due(self, timeout: float = 1.0) -> None:
        """Process Qt events until no due handle is left (or ``timeout`` seconds have passed).

        For a closer that does not run the loop itself before ``close()`` (the Qt tests' fixtures):
        a transport closed by the last task finishes closing in a ``call_soon`` callback, which
        ``close()`` would drop (its socket then left to the garbage collector).
        """
        deadline = time.monotonic() + timeout
        while self.due_timers() and time.monotonic() < deadline:
            QApplication.processEvents()

    def pending_timers(self) -> int:
        """How many Qt timers the loop runs (handles neither due nor cancelled yet)."""
        return len(self._timer)


def new_event_loop(
    app: QApplication | None = None, *, already_running: bool = False
) -> asyncio.AbstractEventLoop:
    """A new :class:`EventLoop` on ``app`` (the ``QApplication``; the running one by default)."""
    loop: asyncio.AbstractEventLoop = EventLoop(app, already_running=already_running)
    return loop
