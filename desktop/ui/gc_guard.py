"""Python's cyclic garbage collector, run on the GUI thread only.

Qt objects must be destroyed on the thread that owns them. With automatic collection, a collection
starts on whichever thread happens to allocate past the threshold: the demo's loopback server
thread, or an ``asyncio.to_thread`` worker reading a file for a tool. If that collection frees a
widget caught in a reference cycle, Qt deletes it from the wrong thread and the process crashes
at random. The cure (a known recipe for Python Qt apps) is to switch automatic collection off and
collect from a GUI-thread timer whenever the counters pass the usual thresholds.

Each check past generation 0's threshold collects both young generations at once. Collecting
generation 0 alone at each check and generation 1 every eleventh (the interpreter's ratio) made
that eleventh check walk every survivor of the ten before it: 13-21 ms, every ~5 s while the user
scrolls a long chat (a dropped frame), against ~1 ms for each check now; in all, half the time.
A full collection stays as rare as the interpreter's thresholds make it (``full_after``).

A full collection (generation 2) walks every object of the process: 20-100 ms with a long chat
open, one frozen frame if it lands while answers stream or the user scrolls. It is put off while
the frame scheduler has rendering to do or the user has just scrolled (``frames.note_activity``);
the young generations are still collected (about a millisecond each, at most ~5 ms measured). It
waits at most ``MAX_DEFER_S`` and runs at the first check the window is idle.

A closed qasync loop is the other Qt object that must not die on a worker thread.
qasync runs every ``call_later``/``call_soon`` through a Qt timer of one ``QObject`` (the loop's
``_timer``) and never stops the timer of a cancelled handle, so a loop closed with a cancelled
``wait_for`` timeout or anyio deadline still has Qt timers running for up to its delay, and its pending
handles keep it in a reference cycle. Freed on another thread (by a collection, or a worker dropping
the last reference), Qt cannot stop those timers ("QObject::~QObject: Timers cannot be stopped from
another thread") and the next ``processEvents`` delivers a timer event to the freed object: a
segmentation fault on the GUI thread, far from the cause. :func:`release_loop_timers` stops them on
the GUI thread once the loop is closed.

Memory the collector frees goes back to the C heap, not to the system: glibc keeps it for the next
allocation, so closing a long node left the process as large as before (issue 28: 0 of 144 MB came
back after closing 19 of 20 long nodes). After each full collection run at an idle moment, and at
the first idle check after :func:`request_trim` (a node closed, a transcript dropped views; while
answers stream back to back, after ``MAX_DEFER_S`` at the latest), the collector hands the free
pages back (``desktop.core.heap.trim``); a request may ask for a full collection first.
"""

from __future__ import annotations

import gc
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

import shiboken6
from PySide6.QtCore import QObject, QThread, QTimer

from desktop.core import heap

if TYPE_CHECKING:  # start-up: asyncio loads after the first node accepts input (tests/ui/test_startup.py)
    import asyncio

log = logging.getLogger(__name__)

__all__ = ["GuiThreadCollector", "MAX_DEFER_S", "release_loop_timers", "request_trim"]

MAX_DEFER_S = 30.0
"""A full collection waits for an idle moment at most this long (seconds)."""

_requests = {"full": False, "trim": False}


def request_trim(*, collect: bool = False) -> None:
    """Ask the collector to hand the heap's free pages back at its next idle check; with ``collect``,
    after a full collection (call it when much was just freed: views dropped; with ``collect`` when
    what was freed may sit in reference cycles: a node closed).

    Args:
        collect: Run a full collection first.
    """
    _requests["trim"] = True
    _requests["full"] = _requests["full"] or collect


def _rendering() -> bool:
    # Here, not at import time: the collector is installed before the first paint, the render tick
    # loads with the first transcript (start-up).
    from desktop.ui.frames import frame_scheduler, interacting

    # Background work (colouring code already on screen) may wait for a collection: only what a
    # stream or a scroll shows next counts. Colouring eight long answers keeps requests pending for
    # seconds after the last byte, and a trim or full collection never found its idle moment.
    return frame_scheduler().foreground_count() > 0 or interacting()


class GuiThreadCollector(QObject):
    """Disables automatic GC and collects on the GUI thread from a timer.

    Args:
        parent: Owner (the application), so the timer lives as long as it does.
        interval_ms: How often the counters are checked.
        busy: True while a full collection should wait (default: the frame scheduler has
            rendering other than background work pending, or the user just scrolled).

    Attributes:
        deferred: full collections put off so far (they ran later, at an idle check).
        trims: heap trims run so far (after each full collection at an idle moment, and for each
            :func:`request_trim`).
        full_after: young collections after which the next collection is a full one: as many as
            the interpreter's thresholds would run between two full collections.
    """

    def __init__(
        self,
        parent: QObject | None = None,
        *,
        interval_ms: int = 500,
        busy: Callable[[], bool] = _rendering,
    ) -> None:
        super().__init__(parent)
        self._busy = busy
        self._due_since: float | None = None  # when a full collection became due
        self._trim_since: float | None = None  # when the first check saw a trim requested
        self.deferred = 0
        self.trims = 0
        self._thresholds = gc.get_threshold()
        _t0, t1, t2 = self._thresholds
        self.full_after = (t1 + 1) * (t2 + 1)
        self._was_enabled = gc.isenabled()
        gc.disable()
        self._timer = QTimer(self)
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self.check)
        self._timer.start()

    def check(self) -> int:
        """Collect the oldest generation whose counter passed its threshold; returns objects found.

        A due full collection runs only when ``busy()`` is false, or has waited ``MAX_DEFER_S``;
        one put off runs at the first check that finds the window idle, whatever the counters. A
        requested trim (:func:`request_trim`) runs at an idle check too, or once it has waited
        ``MAX_DEFER_S``; a requested full collection waits for an idle check.
        """
        c0, _c1, c2 = gc.get_count()  # c2 counts the collections of generation 1 since the last full one
        busy = self._busy()
        if (self._due_since is not None or _requests["full"]) and not busy:
            self._due_since = None  # a full collection put off earlier (or asked for): now is the idle moment
            return self._full_and_trim()
        if _requests["trim"]:
            now = time.monotonic()
            if self._trim_since is None:
                self._trim_since = now
            if not busy or now - self._trim_since >= MAX_DEFER_S:
                self._trim()  # answers streaming back to back: one trim (~5-15 ms) at most every MAX_DEFER_S
        if c0 <= self._thresholds[0]:
            return 0
        if c2 >= self.full_after:
            now = time.monotonic()
            if self._due_since is None:
                self._due_since = now
            if now - self._due_since < MAX_DEFER_S and busy:
                self.deferred += 1
                return gc.collect(1)  # the young objects now, the full walk at an idle moment
            self._due_since = None
            return gc.collect(2) if busy else self._full_and_trim()
        return gc.collect(1)  # both young generations: each check stays as small as the last one

    def _full_and_trim(self) -> int:
        """A full collection, then the freed pages back to the system (at an idle moment)."""
        _requests["full"] = False
        found = gc.collect(2)
        self._trim()
        return found

    def _trim(self) -> None:
        _requests["trim"] = False
        self._trim_since = None
        self.trims += 1
        heap.trim()

    def stop(self) -> None:
        """Stop the timer and give collection back to the interpreter."""
        self._timer.stop()
        if self._was_enabled:
            gc.enable()


def release_loop_timers(loop: asyncio.AbstractEventLoop) -> int:
    """Stop the Qt timers a closed qasync loop still runs and drop its pending handles.

    Call it on the GUI thread right after ``loop.close()``. The loop's timer object then holds no
    Qt timer (it may be freed on any thread) and no handle (the loop leaves its reference cycle and
    is freed by reference counting where it is dropped). A loop without qasync's timer is left alone.

    Args:
        loop: The closed loop.

    Returns:
        How many timers were stopped.

    Raises:
        RuntimeError: The loop is not closed yet, or this is not the timer's thread.
    """
    if not loop.is_closed():
        raise RuntimeError("release_loop_timers: close the loop first")
    timer = getattr(loop, "_timer", None)
    callbacks = getattr(timer, "_SimpleTimer__callbacks", None)  # qasync's {Qt timer id: handle}
    if not isinstance(timer, QObject) or not isinstance(callbacks, dict) or not shiboken6.isValid(timer):
        return 0
    if timer.thread() != QThread.currentThread():
        raise RuntimeError("release_loop_timers: call it on the loop's (GUI) thread")
    stopped = 0
    for timer_id in list(callbacks):
        timer.killTimer(timer_id)
        stopped += 1
    callbacks.clear()
    if stopped:
        log.debug("stopped %d Qt timers of a closed event loop", stopped)
    return stopped
