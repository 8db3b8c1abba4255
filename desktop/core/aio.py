"""Small asyncio helpers shared by the layers above the core."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any

__all__ = ["cancel_and_wait", "retrieve"]


def retrieve(future: asyncio.Future[Any]) -> None:
    """A done callback that reads a finished future's exception, for a future whose caller may have
    stopped waiting (asyncio would otherwise report "exception was never retrieved")."""
    if not future.cancelled():
        future.exception()


async def cancel_and_wait(tasks: Iterable[asyncio.Future[Any]]) -> None:
    """Cancel ``tasks`` and wait until each has finished (their results and errors are dropped).

    Args:
        tasks: The futures to stop; a set the tasks remove themselves from may be passed (it is copied).
    """
    pending = [t for t in list(tasks) if not t.done()]
    for task in pending:
        task.cancel()
    if pending:
        await asyncio.gather(*pending, return_exceptions=True)
