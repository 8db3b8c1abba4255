"""The loopback provider's clock: what its drip pacing, stalls and first-byte delays wait on.

The server asks a :class:`Clock` for the time and for sleeps, never ``asyncio`` directly, so a test
can hand it a clock of its own (``desktop.testing.clock``) and check the pacing as numbers instead of
timing a socket.
"""

from __future__ import annotations

import asyncio
from typing import Protocol

__all__ = ["Clock", "LoopClock"]


class Clock(Protocol):
    """Time as the server sees it. Both methods run on the server's event loop (its own thread)."""

    def time(self) -> float:
        """The current time in seconds (any origin; only differences matter)."""
        ...

    async def sleep(self, seconds: float) -> None:
        """Wait ``seconds`` (a drip interval, a stall, a delay before the first byte)."""
        ...


class LoopClock:
    """The real clock (the default): the running loop's monotonic time and ``asyncio.sleep``."""

    def time(self) -> float:
        """The running event loop's time."""
        return asyncio.get_running_loop().time()

    async def sleep(self, seconds: float) -> None:
        """``asyncio.sleep(seconds)``."""
        await asyncio.sleep(seconds)
