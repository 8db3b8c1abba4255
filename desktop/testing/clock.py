"""A clock for the loopback provider that records every wait instead of spending it.

``FakeProvider(clock=RecordingClock())`` paces its drip, stalls and first-byte delays on virtual
time: each ``sleep`` is recorded and moves the clock on by exactly that much at once, so a test checks
the pacing as numbers (``clock.sleeps``) and runs at full speed whatever the machine's load. With
``hold=True`` every sleep also waits until the test calls ``release()``: a stall lasts exactly as long
as the test wants it to, however slow the machine.
"""

from __future__ import annotations

import asyncio
import threading

__all__ = ["RecordingClock"]


class RecordingClock:
    """Virtual time for ``desktop.demo``'s ``Clock`` protocol (see the module docstring).

    Args:
        hold: Make each sleep also wait for ``release()`` (from any thread).

    Attributes:
        sleeps: Every wait asked for, in seconds, in order.
    """

    def __init__(self, *, hold: bool = False) -> None:
        self.sleeps: list[float] = []
        self._now = 0.0
        self._hold = hold
        self._lock = threading.Lock()
        self._held = threading.Event()
        self._released = threading.Event()

    def time(self) -> float:
        """The virtual time: the sum of the sleeps so far."""
        with self._lock:
            return self._now

    async def sleep(self, seconds: float) -> None:
        """Record the wait and move the clock on (after ``release()`` when holding)."""
        with self._lock:
            self.sleeps.append(seconds)
            self._now += max(seconds, 0.0)
        if self._hold:
            self._held.set()
            while not self._released.is_set():  # the server's loop keeps serving other connections
                await asyncio.sleep(0.005)
        else:
            await asyncio.sleep(0)

    def wait_held(self, timeout: float = 30.0) -> bool:
        """Block until a sleep is being held (the server is inside its stall); False after ``timeout``."""
        return self._held.wait(timeout)

    def release(self) -> None:
        """Let every held sleep (and every later one) return."""
        self._released.set()
