"""The stream's stall timeout (``desktop.core.providers._stall.StallGuard``): one timer per stream,
only the reads' waits count, and a Stop arriving with a stall is not swallowed."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from desktop.core.providers._stall import StallGuard


class Stalled(Exception):
    """What the reader raises for the guard's cancellation (the driver's ChatError in the app)."""


async def _reads(guard: StallGuard, chunks: AsyncIterator[int], between_s: float = 0.0) -> list[int]:
    """Read ``chunks`` as the driver does; ``between_s``: the consumer's time between reads."""
    got: list[int] = []
    try:
        while True:
            guard.reading()
            try:
                chunk = await chunks.__anext__()
            except StopAsyncIteration:
                return got
            except asyncio.CancelledError:
                if guard.expired():
                    raise Stalled from None
                raise
            guard.idle()
            got.append(chunk)
            if between_s:
                await asyncio.sleep(between_s)  # not a wait for the server
    finally:
        guard.close()


async def _every(seconds: float, count: int) -> AsyncIterator[int]:
    for i in range(count):
        await asyncio.sleep(seconds)
        yield i


@pytest.mark.anyio
async def test_a_read_that_waits_too_long_is_a_stall() -> None:
    async def silent_after_two() -> AsyncIterator[int]:
        yield 0
        yield 1
        await asyncio.sleep(3600)
        yield 2

    with pytest.raises(Stalled):
        await _reads(StallGuard(0.05), silent_after_two())
    task = asyncio.current_task()
    assert task is not None and task.cancelling() == 0  # the guard's cancellation was taken back


@pytest.mark.anyio
async def test_only_the_reads_waits_count_not_the_consumers_time_between_them() -> None:
    # Each read waits 10 ms, the consumer spends 40 ms after each: 0.5 s in all, never a 30 ms read.
    got = await _reads(StallGuard(0.03), _every(0.01, 10), between_s=0.04)
    assert got == list(range(10))


@pytest.mark.anyio
async def test_thousands_of_reads_cost_a_handful_of_timers_not_one_each(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    loop = asyncio.get_running_loop()
    scheduled: list[float] = []
    call_at = loop.call_at

    def counting(when: float, callback: object, *args: object, **kwargs: object) -> asyncio.TimerHandle:
        scheduled.append(when)
        return call_at(when, callback, *args, **kwargs)  # type: ignore[arg-type]

    async def instant(count: int) -> AsyncIterator[int]:
        for i in range(count):
            await asyncio.sleep(0)
            yield i

    monkeypatch.setattr(loop, "call_at", counting)
    got = await _reads(StallGuard(30.0), instant(5000))
    assert len(got) == 5000
    assert len(scheduled) <= 2  # asyncio.timeout per read scheduled 5,000


@pytest.mark.anyio
async def test_a_stop_arriving_with_a_stall_is_not_swallowed() -> None:
    started = asyncio.Event()
    guards: list[StallGuard] = []

    async def never() -> AsyncIterator[int]:
        started.set()
        await asyncio.sleep(3600)
        yield 0

    async def reader() -> list[int]:
        guards.append(StallGuard(3600.0))
        return await _reads(guards[0], never())

    task = asyncio.create_task(reader())
    await started.wait()
    # In one turn of the loop: the guard's timer finds the read waiting too long (its start moved
    # back an hour stands for the hour passing) and the user presses Stop.
    guard = guards[0]
    guard._since = asyncio.get_running_loop().time() - 7200.0  # noqa: SLF001 - the hour passed
    guard._check()  # noqa: SLF001 - the timer fires
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


@pytest.mark.anyio
async def test_a_cancellation_from_elsewhere_is_not_a_stall() -> None:
    started = asyncio.Event()

    async def slow() -> AsyncIterator[int]:
        started.set()
        await asyncio.sleep(3600)
        yield 0

    task = asyncio.create_task(_reads(StallGuard(30.0), slow()))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
