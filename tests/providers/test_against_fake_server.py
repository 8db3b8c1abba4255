"""End-to-end: the drivers over real loopback sockets against desktop.testing.FakeProvider.

Retries, HTTP errors and closing a response are tested here, over a real socket, so the real HTTP
parsing of error responses runs and a leaked connection would show in the client's pool
(``assert_no_connection_in_use``; a response cut short must leave the pool empty). Byte-exact splits
and endless bodies stay on ``httpx.MockTransport`` (test_recorded_streams.py, test_hostile_input.py).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from provider_support import (
    SECRET,
    Outcome,
    Sleeps,
    assert_no_connection_in_use,
    instant_policy,
    pooled_connections,
)

from desktop.core.chat.types import ChatError, ChatEvent, ChatMessage, ChatToolDef, Delta, ProviderConfig
from desktop.core.providers import RetryPolicy, driver_for, list_models
from desktop.testing._spec import Fault, ToolCallSpec, Turn, huge_text
from desktop.testing.fake_provider import FakeProvider

APIS = ["openai", "anthropic"]
HELLO = [ChatMessage("u", "user", "hi", 0)]


@pytest.fixture
def fake() -> Iterator[FakeProvider]:
    """A fresh server per test: a turn a test leaves queued (one that must not be asked for) cannot
    reach the next test."""
    with FakeProvider(api_key=SECRET, models=["m-a", "m-b"]) as server:
        yield server


def config(fake: FakeProvider, api: str, **kw: Any) -> ProviderConfig:
    base = fake.openai_base_url if api == "openai" else fake.anthropic_base_url
    args: dict[str, Any] = {"id": f"fake-{api}", "name": "Fake", "api": api, "base_url": base,
                            "api_key": SECRET}
    args.update(kw)
    return ProviderConfig(**args)


async def _noop(args: dict[str, Any]) -> str:
    return ""


TOOL = ChatToolDef("lookup", "Look something up", {"type": "object", "properties": {"q": {"type": "string"}}},
                   False, _noop)


@dataclass
class Run(Outcome):
    """An outcome plus what the retry policy slept and the pool as the stream left it."""

    sleeps: list[float]
    pooled: int


async def stream(cfg: ProviderConfig, *, stream_timeout: float = 60.0, retry: RetryPolicy | None = None,
                 sleeps: Sleeps | None = None) -> Run:
    """Stream one answer over a fresh client; check (before the client closes) that no response was
    left open, and report how many connections stayed pooled."""
    if retry is None:
        retry, sleeps = instant_policy()
    events: list[ChatEvent] = []
    error: ChatError | None = None
    async with httpx.AsyncClient() as client:
        driver = driver_for(cfg, client, retry=retry, stream_timeout=stream_timeout)
        try:
            async for event in driver.stream(model="fake-model", tools=[TOOL], messages=HELLO):
                events.append(event)
        except ChatError as exc:
            error = exc
        assert_no_connection_in_use(client)
        pooled = len(pooled_connections(client))
    return Run(events, error, sleeps.delays if sleeps is not None else [], pooled)


@pytest.mark.parametrize("api", APIS)
@pytest.mark.anyio
async def test_text_thinking_tool_call_and_usage(fake: FakeProvider, api: str) -> None:
    fake.script(Turn(text="Hello, wörld 😊!", thinking="Let me see.", chunk_chars=3,
                     tool_calls=[ToolCallSpec("lookup", {"q": "x"}, id="call_1")],
                     usage={"input": 7, "output": 20, "cache_read": 30, "cache_write": 0, "reasoning": 4}))
    out = await stream(config(fake, api))
    assert out.error is None
    assert (out.text, out.thinking) == ("Hello, wörld 😊!", "Let me see.")
    assert [(n, a) for _, n, a in out.calls] == [("lookup", '{"q":"x"}')]
    assert out.usage is not None
    assert (out.usage.input_tokens, out.usage.output_tokens, out.usage.cache_read_tokens) == (7, 20, 30)


# -- retries ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("api", APIS)
@pytest.mark.anyio
async def test_429_with_retry_after_then_success(fake: FakeProvider, api: str) -> None:
    fake.script(Turn(fault=Fault.http(429, retry_after="3")), Turn(text="ok"))
    out = await stream(config(fake, api))
    assert out.error is None and out.text == "ok"
    assert out.sleeps == [3.0]  # the server's retry-after header, read off the real response
    assert len(fake.requests) == 2
    assert fake.connection_count == 1  # the 429 body was read whole: its connection served the retry


@pytest.mark.anyio
async def test_529_overloaded_twice_then_success_uses_backoff(fake: FakeProvider) -> None:
    fake.script(Turn(fault=Fault.http(529)), Turn(fault=Fault.http(529)), Turn(text="ok"))
    out = await stream(config(fake, "anthropic"))
    assert out.error is None and out.text == "ok"
    assert out.sleeps == [0.5, 1.0]
    assert len(fake.requests) == 3


@pytest.mark.anyio
async def test_retries_are_bounded_and_the_last_error_is_reported(fake: FakeProvider) -> None:
    fake.script(*[Turn(fault=Fault.http(529)) for _ in range(3)], Turn(text="never asked for"))
    out = await stream(config(fake, "anthropic"))
    assert len(fake.requests) == 3 and out.sleeps == [0.5, 1.0] and fake.pending_turns == 1
    assert out.error is not None
    assert (out.error.message, out.error.status, out.error.kind) == (
        "529 overloaded_error: Overloaded", 529, "overloaded")


@pytest.mark.anyio
async def test_retry_after_longer_than_the_cap_is_not_waited_for(fake: FakeProvider) -> None:
    fake.script(Turn(fault=Fault.http(429, retry_after="600", message="quota")), Turn(text="never asked for"))
    out = await stream(config(fake, "openai"))
    assert out.error is not None and out.error.kind == "rate_limit" and out.sleeps == []
    assert out.error.message == "429 rate_limit_error: quota" and fake.pending_turns == 1


@pytest.mark.parametrize("api", APIS)
@pytest.mark.anyio
async def test_wrong_key_is_an_auth_error_not_retried_without_the_key(fake: FakeProvider, api: str) -> None:
    wrong = "sk-wrong-0123456789abcdef"
    out = await stream(config(fake, api, api_key=wrong))
    assert out.error is not None and (out.error.kind, out.error.status) == ("auth", 401)
    expected = {"openai": "401 authentication_error: Incorrect API key provided.",
                "anthropic": "401 authentication_error: invalid x-api-key"}[api]
    assert out.error.message == expected and wrong not in out.error.message
    assert len(fake.requests) == 1 and out.sleeps == []
    assert out.pooled == 1  # the 401 body was read whole: its connection is idle, ready for reuse


@pytest.mark.parametrize(("api", "text_before_error"), [("openai", "abcdef"), ("anthropic", "ab")])
@pytest.mark.anyio
async def test_a_midstream_overloaded_error_is_retried_before_any_text_but_not_after(
    fake: FakeProvider, api: str, text_before_error: str
) -> None:
    fake.script(Turn(text="abcdefgh", chunk_chars=2, fault=Fault.midstream_error(1)), Turn(text="ok"))
    out = await stream(config(fake, api))
    assert out.error is None and out.text == "ok" and len(fake.requests) == 2

    fake.script(Turn(text="abcdefgh", chunk_chars=2, fault=Fault.midstream_error(4)), Turn(text="not asked"))
    out = await stream(config(fake, api))
    assert out.text == text_before_error  # the events before the error, no more, no less
    assert out.error is not None and (out.error.kind, out.error.message) == (
        "overloaded", "overloaded_error: Overloaded")
    assert len(fake.requests) == 3 and fake.pending_turns == 1


@pytest.mark.parametrize(("api", "text_before_drop"), [("openai", "abcdef"), ("anthropic", "ab")])
@pytest.mark.anyio
async def test_drop_mid_stream_keeps_the_text_is_a_network_error_and_is_not_retried(
    fake: FakeProvider, api: str, text_before_drop: str
) -> None:
    # After 4 events: OpenAI's role chunk and three deltas; Anthropic's message_start,
    # content_block_start, ping and one delta.
    fake.script(Turn(text="abcdefghijkl", chunk_chars=2, fault=Fault.drop(4, clean_eof=True)),
                Turn(text="not asked"))
    out = await stream(config(fake, api))
    assert out.text == text_before_drop
    assert out.error is not None and out.error.kind == "network"
    assert out.error.message == "stream ended before the response was complete"
    assert len(fake.requests) == 1 and fake.pending_turns == 1
    assert out.pooled == 0  # the server closed it: nothing left to reuse


# -- the key stays secret ---------------------------------------------------------------------------


@pytest.mark.anyio
async def test_key_echoed_in_an_error_body_is_scrubbed(fake: FakeProvider, caplog: pytest.LogCaptureFixture
                                                       ) -> None:
    caplog.set_level(logging.DEBUG)
    body = {"error": {"message": f"Incorrect API key provided: {SECRET}.", "type": "invalid_request_error"}}
    fake.script(Turn(fault=Fault.http(401, body=body)))
    out = await stream(config(fake, "openai"))
    assert out.error is not None and SECRET not in out.error.message and SECRET not in repr(out.error)
    assert out.error.message == "401 invalid_request_error: Incorrect API key provided: [redacted]."
    assert SECRET not in caplog.text


@pytest.mark.anyio
async def test_key_in_a_midstream_error_is_scrubbed(fake: FakeProvider) -> None:
    fake.script(Turn(text="abcdefgh", chunk_chars=2,  # after some text: reported, not retried
                     fault=Fault.midstream_error(4, error_type="api_error", message=f"key {SECRET}")))
    out = await stream(config(fake, "anthropic"))
    assert out.text == "ab" and out.error is not None and out.error.message == "api_error: key [redacted]"


@pytest.mark.anyio
async def test_retry_logs_do_not_contain_the_key(
    fake: FakeProvider, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    leaky = {"error": {"message": f"oops {SECRET}", "type": "server_error"}}
    fake.script(Turn(fault=Fault.http(500, body=leaky)), Turn(text="ok"))
    out = await stream(config(fake, "openai"))
    assert out.text == "ok" and out.sleeps == [0.5]
    assert "retry 1/2" in caplog.text and SECRET not in caplog.text


# -- stalls, stop and cancel close the response ------------------------------------------------------


@pytest.mark.parametrize(("api", "text_before_stall"), [("openai", "abcd"), ("anthropic", "")])
@pytest.mark.anyio
async def test_a_stalled_stream_is_a_network_error_and_closes_the_response(
    fake: FakeProvider, api: str, text_before_stall: str
) -> None:
    # The server goes silent for an hour after 3 events: only the driver's own 0.3 s stall timeout
    # can end this (the stall's length is not what is measured).
    fake.script(Turn(text="abcdefgh", chunk_chars=2, fault=Fault.stall(3, seconds=3600)))
    out = await stream(config(fake, api), stream_timeout=0.3)
    assert out.text == text_before_stall
    assert out.error is not None and out.error.kind == "network" and "no data" in out.error.message
    assert len(fake.requests) == 1
    assert out.pooled == 0  # the stalled connection was closed, not kept


@pytest.mark.parametrize("api", APIS)
@pytest.mark.anyio
async def test_a_server_silent_before_its_response_head_is_a_stall_too(fake: FakeProvider, api: str) -> None:
    # The stream's request has no httpx read timeout (a timer per socket read): the wait for the
    # status line is the stall guard's, like the waits for the body.
    fake.script(Turn(text="late", delay_first_byte=3600.0))
    out = await stream(config(fake, api), stream_timeout=0.3)
    assert out.text == ""
    assert out.error is not None and out.error.kind == "network" and "no data" in out.error.message
    assert out.pooled == 0


async def _first_delta_then(fake: FakeProvider, stop: str) -> tuple[str, int]:
    """Stream against an answer that stalls for an hour after its first delta (the role chunk and "ab":
    nothing else can arrive, however the reads fall); once it arrived, stop reading the way ``stop``
    says. Returns the text received and the connections still pooled."""
    fake.script(Turn(text="abcdefgh", chunk_chars=2, fault=Fault.stall(2, seconds=3600)))
    async with httpx.AsyncClient() as client:
        driver = driver_for(config(fake, "openai"), client, retry=instant_policy()[0])
        gen: AsyncIterator[ChatEvent] = driver.stream(model="m", messages=HELLO, tools=[])
        got_delta = asyncio.Event()
        text: list[str] = []

        async def consume() -> None:
            async for event in gen:
                if isinstance(event, Delta):
                    text.append(event.text)
                    got_delta.set()
                    if stop == "break":
                        break

        task = asyncio.create_task(consume())
        await asyncio.wait_for(got_delta.wait(), 30)  # a hang guard
        assert len(pooled_connections(client)) == 1  # the response is open, its connection in use
        if stop == "cancel":
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
        else:
            await asyncio.wait_for(task, 30)
            await gen.aclose()  # type: ignore[attr-defined]
        pooled = len(pooled_connections(client))
    return "".join(text), pooled


@pytest.mark.anyio
async def test_cancelling_the_task_closes_the_response_at_once(fake: FakeProvider) -> None:
    text, pooled = await _first_delta_then(fake, "cancel")
    assert text == "ab" and pooled == 0  # closed although the server still holds the stream open


@pytest.mark.anyio
async def test_breaking_out_of_the_stream_closes_the_response(fake: FakeProvider) -> None:
    text, pooled = await _first_delta_then(fake, "break")
    assert text == "ab" and pooled == 0


# -- big, listed -------------------------------------------------------------------------------


@pytest.mark.parametrize("api", APIS)
@pytest.mark.anyio
async def test_a_one_megabyte_delta_arrives_whole(fake: FakeProvider, api: str) -> None:
    fake.script(Turn(text="before ", fault=Fault.huge_chunk(1_000_000)))
    out = await stream(config(fake, api))
    assert out.error is None
    assert out.text == "before " + huge_text(1_000_000)


@pytest.mark.parametrize("api", APIS)
@pytest.mark.anyio
async def test_list_models(fake: FakeProvider, api: str) -> None:
    async with httpx.AsyncClient() as client:
        assert await list_models(config(fake, api), client) == ["m-a", "m-b"]
        assert_no_connection_in_use(client)
