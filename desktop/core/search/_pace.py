"""Sharing the GIL with the GUI thread while the indexer works.

The indexer's Python work (walking versions, scrubbing, hashing) holds the GIL; the GUI thread,
woken by a timer or an event, waits for it up to the interpreter's switch interval (5 ms) and, on a
busy machine, until the indexer's thread is scheduled again to let go of it. ``Pacer.tick`` is
called between small pieces of work: after ``slice_s`` of it, the indexer sleeps ``rest_s``, so a
waiting GUI thread takes the GIL at once. Measured in ``benchmarks/search.py`` (the main thread's
loop gaps while a full build runs: p99 24 ms without, 11 ms with, on a busy 2-core machine).

A rest costs more than ``rest_s`` on a busy machine (the thread waits to be scheduled again), so
short work (indexing one save: a few milliseconds) gets a grace period without rests: ``start``.

A tick is also where the indexer notices that its service is closing: ``tick`` raises
:class:`Stopped`, the write transaction rolls back, and the window's close does not wait for the rest
of an update (an update of 4,000 messages took ~400 ms; the next start catches up from the files).
"""

from __future__ import annotations

import time
from collections.abc import Callable

__all__ = ["Pacer", "SLICE_S", "REST_S", "GRACE_S", "Stopped"]

SLICE_S = 0.002
"""Work between two rests (seconds)."""
REST_S = 0.0005
"""One rest (seconds): long enough for a waiting thread to take the GIL and run a loop pass."""
GRACE_S = 0.010
"""Work after ``start(grace=True)`` before the first rest (seconds)."""


class Stopped(Exception):  # noqa: N818 - a signal to stop, not an error
    """The service is closing: the work in progress is abandoned (its transaction rolled back)."""


class Pacer:
    """Call ``tick()`` between pieces of work; it sleeps a little every ``slice_s`` of work.

    Args:
        slice_s: Work between rests.
        rest_s: Length of a rest.
        stopping: True once the work should be abandoned (``tick`` raises :class:`Stopped`).
    """

    def __init__(self, slice_s: float = SLICE_S, rest_s: float = REST_S,
                 stopping: Callable[[], bool] | None = None) -> None:
        self._slice = slice_s
        self._rest = rest_s
        self._stopping = stopping
        self._since = time.perf_counter()

    def start(self, *, grace: bool) -> None:
        """A new piece of work begins: the first rest comes after ``GRACE_S`` with ``grace``, else
        after one slice."""
        self._since = time.perf_counter() + (GRACE_S - self._slice if grace else 0.0)

    def tick(self) -> None:
        """Rest when a slice of work is done.

        Raises:
            Stopped: ``stopping()`` is true.
        """
        if self._stopping is not None and self._stopping():
            raise Stopped
        now = time.perf_counter()
        if now - self._since >= self._slice:
            time.sleep(self._rest)
            self._since = time.perf_counter()
