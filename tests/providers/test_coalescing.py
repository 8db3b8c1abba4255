"""The drivers hand out the events of one network read together, with adjacent text deltas merged."""

from __future__ import annotations

import contextlib

import pytest
from provider_support import MockServer, Reply, openai_config

from desktop.core.chat.types import (
    ChatMessage,
    Delta,
    Notice,
    Thinking,
    ToolCall,
    ToolCallRequested,
    Usage,
    UsageReport,
)
from desktop.core.providers import driver_for
from desktop.core.providers._base import coalesce


def test_adjacent_deltas_and_plain_thinking_merge_in_order() -> None:
    usage = UsageReport(Usage(1, 2))
    call = ToolCallRequested(ToolCall("c1", "read_file", "{}"))
    events = [
        Thinking("a"), Thinking("b"), Thinking("", signature="sig"), Thinking("c"),
        Delta("x"), Delta("y"), usage, Delta("z"), call, Notice("n"), Thinking("", redacted_data="r"),
        Thinking("d"), Delta("w"),
    ]
    assert coalesce(events) == [
        Thinking("ab"), Thinking("", signature="sig"), Thinking("c"), Delta("xy"), usage, Delta("z"), call,
        Notice("n"), Thinking("", redacted_data="r"), Thinking("d"), Delta("w"),
    ]
    assert coalesce([]) == []
    assert coalesce([Delta("only")]) == [Delta("only")]


@pytest.mark.anyio
async def test_a_burst_in_one_read_reaches_the_caller_as_one_delta_per_read(
    monkeypatch: pytest.MonkeyPatch
) -> None:
    from desktop.core.providers import _base

    # A slice also ends when its time is up (a few ms, to let the UI paint): an hour here, so a busy
    # machine cannot cut a read in two; the split by time is the next test's subject.
    monkeypatch.setattr(_base, "_slice_seconds", lambda: 3600.0)
    chunks = [
        b'data: {"choices":[{"index":0,"delta":{"content":"%d "},"finish_reason":null}]}\n\n' % i
        for i in range(50)
    ]
    end = b'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'
    server = MockServer(Reply(pieces=[b"".join(chunks[:30]), b"".join(chunks[30:]) + end]))

    async def scenario() -> list[object]:
        async with server.client() as client:
            driver = driver_for(openai_config(), client)
            return [e async for e in driver.stream(model="m", messages=[ChatMessage("u", "user", "x", 0)],
                                                    tools=[])]

    events = await scenario()
    deltas = [e for e in events if isinstance(e, Delta)]
    assert "".join(d.text for d in deltas) == "".join(f"{i} " for i in range(50))
    assert len(deltas) == 2



def test_a_stream_alone_decodes_4_ms_at_a_time_and_several_share_2_ms() -> None:
    """One stream yields to the loop every ~4 ms of decoding (each yield is a pass of the GUI loop);
    with several, the slices shrink so that a round of all of them stays ~2 ms (8 streams: 0.25 ms)."""
    from desktop.core.providers import _base

    with _base._reading():
        assert _base._slice_seconds() == _base.SOLE_SLICE_SECONDS == 0.004
        with _base._reading():
            assert _base._slice_seconds() == pytest.approx(0.001)
            with contextlib.ExitStack() as more:
                for _ in range(6):
                    more.enter_context(_base._reading())
                assert _base._slice_seconds() == pytest.approx(0.00025)
                more.enter_context(_base._reading())
                assert _base._slice_seconds() == _base.MIN_SLICE_SECONDS  # 9 streams: the floor
    assert _base._streams_reading == 0


@pytest.mark.anyio
async def test_each_decoding_slice_starts_from_a_clean_vector_state(monkeypatch: pytest.MonkeyPatch) -> None:
    """Whatever ran while the stream waited (a paint) may have left the CPU's vector registers dirty,
    which slows the decoding ~15 % (``desktop.core.cpu_state``): every slice, after a read or after
    a yield to the loop, begins by clearing that state."""
    from desktop.core.providers import _base

    chunks = [
        b'data: {"choices":[{"index":0,"delta":{"content":"%d "},"finish_reason":null}]}\n\n' % i
        for i in range(50)
    ]
    end = b'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'
    cleared: list[int] = []
    monkeypatch.setattr(_base, "clear_upper_state", lambda: cleared.append(1))

    async def slices() -> int:
        cleared.clear()
        server = MockServer(Reply(pieces=[b"".join(chunks[:30]), b"".join(chunks[30:]) + end]))
        async with server.client() as client:
            driver = driver_for(openai_config(), client)
            stream = driver.stream(model="m", messages=[ChatMessage("u", "user", "x", 0)], tools=[])
            text = [e.text async for e in stream if isinstance(e, Delta)]
        assert "".join(text) == "".join(f"{i} " for i in range(50))
        return len(cleared)

    # Slices end on the clock: an hour-long slice never ends early however loaded the machine, so the
    # count is the reads' alone; then a zero-length one ends at every clock check (each 16 events).
    monkeypatch.setattr(_base, "_slice_seconds", lambda: 3600.0)
    per_read = await slices()
    assert per_read == 2  # one slice per network read (the two pieces)
    monkeypatch.setattr(_base, "_slice_seconds", lambda: 0.0)  # a yield every 16 events
    assert await slices() == per_read + 2  # and one more after each yield (one in each piece)
