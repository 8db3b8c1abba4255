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

Two more costs of qasync paid per server-sent event of every stream (8 fast streams: ~8,000 a
second on the GUI thread) are gone too. ``call_soon`` (each task step, each future's callbacks) was
a Qt timer of its own: here the callbacks wait in one queue, as in asyncio's own loops, and one
zero-delay Qt timer runs those queued when it fires. And a socket's reader (paused and resumed by
the transport around every read, anyio does so) was a new ``QSocketNotifier`` with a new signal
connection each time: here each file descriptor keeps one notifier, enabled and disabled.

One pass over the queued callbacks stops after :data:`READY_SLICE_S` (the rest, in order, run at
the next pass): eight runs ending in the same moment each finish their answer (about 12 ms each),
and run in one pass they held every Qt timer and paint back for 100 ms; sliced, Qt serves its
timers and paints between them.
"""

from __future__ import annotations

import asyncio
import collections
import contextvars
import logging
import time
from collections.abc import Callable
from typing import Any

import PySide6  # noqa: F401  (imported before qasync, so qasync picks PySide6)
import qasync
from PySide6.QtCore import QObject, QSocketNotifier, QTimerEvent
from PySide6.QtWidgets import QApplication

log = logging.getLogger(__name__)

__all__ = ["READY_SLICE_S", "EventLoop", "new_event_loop"]

READY_SLICE_S = 0.006
"""Longest run of queued callbacks in one pass (s): the callback that crosses it is the pass's last."""


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
        self._ready: collections.deque[asyncio.Handle] = collections.deque()  # call_soon's
        self._ready_timer = 0  # the zero-delay Qt timer that runs them (0: none)
        self._stopped = False

    def __len__(self) -> int:
        return len(self._handles) + len(self._ready)

    def soon(self, handle: asyncio.Handle) -> None:
        """Run ``handle`` with the other ``call_soon`` callbacks, when Qt next serves timers."""
        self._ready.append(handle)
        if not self._ready_timer and not self._stopped:
            self._ready_timer = self.startTimer(0)

    def _run_ready(self) -> None:
        """Run the callbacks queued so far (those they queue run at the next pass, as in asyncio),
        for at most about :data:`READY_SLICE_S`: those left run first at the next pass."""
        self.killTimer(self._ready_timer)
        self._ready_timer = 0
        ready = self._ready
        end = time.perf_counter() + READY_SLICE_S
        for _ in range(len(ready)):
            handle = ready.popleft()
            if not handle.cancelled() and not self._stopped:
                handle._run()  # noqa: SLF001 - what asyncio's own loops call; it reports exceptions
                if time.perf_counter() >= end:
                    break
        if ready and not self._stopped:
            self._ready_timer = self.startTimer(0)

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
        if timer_id == self._ready_timer:
            self._run_ready()
            return
        self.killTimer(timer_id)
        handle = self._handles.pop(timer_id, None)
        if handle is not None and not self._stopped and not handle.cancelled():
            handle._run()  # noqa: SLF001 - what asyncio's own loops call; it reports exceptions

    def due(self, now: float) -> int:
        """How many pending handles are due at ``now`` (loop time), ``call_soon``'s included."""
        return len(self._ready) + sum(1 for handle in self._handles.values() if handle.when() <= now)

    def stop(self) -> None:
        """Stop every timer and drop every handle (the loop closed)."""
        self._stopped = True
        for timer_id in list(self._handles):
            self.killTimer(timer_id)
        self._handles.clear()
        if self._ready_timer:
            self.killTimer(self._ready_timer)
            self._ready_timer = 0
        self._ready.clear()

    def set_debug(self, enabled: bool) -> None:
        """qasync's timer interface (slow callbacks are not timed here)."""


class _Reader:
    """One file descriptor's read notifier, kept while the transport pauses and resumes reading."""

    __slots__ = ("notifier", "callback", "args", "turn")

    def __init__(self, notifier: QSocketNotifier) -> None:
        self.notifier = notifier
        self.callback: Callable[..., object] | None = None  # None: not watched now
        self.args: tuple[Any, ...] = ()
        self.turn = 0  # counts add/remove: a callback queued before one of them is stale


class EventLoop(qasync.QEventLoop):  # type: ignore[misc]  # qasync is untyped
    """qasync's loop whose cancelled timers stop (see the module's docstring)."""

    def __init__(self, app: QApplication | None = None, *, already_running: bool = False) -> None:
        self._readers: dict[int, _Reader] = {}  # before qasync's init: it adds the self-pipe's reader
        super().__init__(app, already_running=already_running)
        self._timer = _Timers()

    def call_soon(self, callback: Callable[..., object], *args: Any,
                  context: contextvars.Context | None = None) -> asyncio.Handle:
        """Run ``callback(*args)`` at the next pass, queued with the other such callbacks."""
        if asyncio.iscoroutinefunction(callback):
            raise TypeError("coroutines cannot be used with call_soon")
        handle = asyncio.Handle(callback, args, self, context)
        self._timer.soon(handle)
        return handle

    def _add_reader(self, fd: Any, callback: Callable[..., object], *args: Any) -> None:
        """Call ``callback(*args)`` when ``fd`` is readable (asyncio's transports call this)."""
        self._check_closed()
        fileno = fd if isinstance(fd, int) else int(fd.fileno())
        reader = self._readers.get(fileno)
        if reader is None:
            reader = _Reader(QSocketNotifier(fileno, QSocketNotifier.Type.Read))
            reader.notifier.activated.connect(lambda *_: self._reader_ready(reader))
            self._readers[fileno] = reader
        reader.callback, reader.args = callback, args
        reader.turn += 1
        reader.notifier.setEnabled(True)

    def _remove_reader(self, fd: Any) -> bool:
        """Stop watching ``fd``; False when it was not watched."""
        if self.is_closed():
            return False
        fileno = fd if isinstance(fd, int) else int(fd.fileno())
        reader = self._readers.get(fileno)
        if reader is None or reader.callback is None:
            return False
        reader.notifier.setEnabled(False)
        reader.callback, reader.args = None, ()
        reader.turn += 1
        return True

    def _reader_ready(self, reader: _Reader) -> None:
        reader.notifier.setEnabled(False)  # until its callback ran (it reads what is there)
        if reader.callback is not None:
            self.call_soon(self._run_reader, reader, reader.turn)

    def _run_reader(self, reader: _Reader, turn: int) -> None:
        if reader.turn != turn or reader.callback is None:
            return  # removed or replaced meanwhile
        try:
            reader.callback(*reader.args)
        finally:
            if reader.turn == turn and reader.callback is not None:
                reader.notifier.setEnabled(True)

    def close(self) -> None:
        """Close the loop; its read notifiers go with it."""
        if self.is_running() or self.is_closed():
            super().close()
            return
        super().close()
        for reader in self._readers.values():
            reader.notifier.setEnabled(False)
            reader.notifier.deleteLater()
        self._readers.clear()

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
