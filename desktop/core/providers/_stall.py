"""The stream's stall timeout: one timer per stream, not one per read.

``asyncio.timeout`` around every read of a response body schedules and cancels a loop timer per
read: on the app's Qt event loop that is a Qt timer started and killed for each SSE event (8 nodes
at 1,000 events a second: 16,000 timer calls a second on the GUI thread, ~23 % of the time a
stream spends in the driver, profiled). :class:`StallGuard` keeps one timer per stream; each read
only notes the time it started. The timer fires at the earliest moment a read could have been
waiting ``seconds``; if the read then waiting began at least ``seconds`` ago, the guard cancels the
stream's task, and the read turns that cancellation into its stall error (see :meth:`expired`).
As with ``asyncio.timeout``, a cancellation from elsewhere (Stop) that arrives at the same time is
not swallowed.
"""

from __future__ import annotations

import asyncio
import logging

log = logging.getLogger(__name__)

__all__ = ["StallGuard"]


class StallGuard:
    """Cancels the current task when one read waits longer than ``seconds``.

    Use from inside the task that reads::

        guard = StallGuard(seconds)
        try:
            while True:
                guard.reading()
                try:
                    chunk = await reader.__anext__()
                except asyncio.CancelledError:
                    if guard.expired():
                        raise StallError from None
                    raise
                guard.idle()
                ...
        finally:
            guard.close()

    Args:
        seconds: The longest a read may wait.
    """

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        if task is None:
            raise RuntimeError("StallGuard needs to run inside a task")
        self._task = task
        self._cancelling = task.cancelling()
        self._since: float | None = None  # when the read now waiting began; None between reads
        self._fired = False
        self._handle: asyncio.TimerHandle | None = None

    def reading(self) -> None:
        """A read begins (its wait counts from now)."""
        now = self._loop.time()
        self._since = now
        if self._handle is None:
            self._handle = self._loop.call_at(now + self.seconds, self._check)

    def idle(self) -> None:
        """The read ended (what runs until the next read is not a wait for the server)."""
        self._since = None

    def expired(self) -> bool:
        """Whether the ``CancelledError`` being handled is the guard's own (then it is taken back).

        Returns:
            True when the guard cancelled the task and nothing else asked to cancel it meanwhile.
        """
        if not self._fired:
            return False
        self._fired = False
        return self._task.uncancel() <= self._cancelling

    def close(self) -> None:
        """Stop the timer (the stream ended)."""
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
        self._since = None

    def _check(self) -> None:
        self._handle = None
        since = self._since
        now = self._loop.time()
        if since is None:  # between reads: the next read starts its own wait
            return
        due = since + self.seconds
        if now < due:
            self._handle = self._loop.call_at(due, self._check)
            return
        log.debug("a stream read waited %.1f s: cancelling it", now - since)
        self._fired = True
        self._task.cancel()
