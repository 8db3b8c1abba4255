"""End-to-end: the drivers over real loopback sockets against desktop.testing.FakeProvider."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from provider_support import SECRET, Outcome, fixture_bytes, instant_policy

from desktop.core.chat.types import ChatError, ChatEvent, ChatMessage, ChatToolDef, ProviderConfig, Usage
from desktop.core.providers import driver_for, list_models
from desktop.testing._spec import Fault, ToolCallSpec, Turn, huge_text
from desktop.testing.fake_provider import FakeProvider

APIS = ["openai", "anthropic"]


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeProvider]:
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


async def stream(cfg: ProviderConfig, *, stream_timeout: float = 60.0) -> Outcome:
    policy, _ = instant_policy()

    async def go() -> Outcome:
        events: list[ChatEvent] = []
        error: ChatError | None = None
        async with httpx.AsyncClient() as client:
            driver = driver_for(cfg, client, retry=policy, stream_timeout=stream_timeout)
            try:
                async for event in driver.stream(model="fake-model", tools=[TOOL],
                                                 messages=[ChatMessage("u", "user", "hi", 0)]):
                    events.append(event)
            except ChatError as exc:
                error = exc
        return Outcome(events, error)

    return await go()


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


@pytest.mark.parametrize("api", APIS)
@pytest.mark.anyio
async def test_http_429_then_success(fake: FakeProvider, api: str) -> None:
    fake.script(Turn(fault=Fault.http(429, retry_after="0")), Turn(text="ok"))
    out = await stream(config(fake, api))
    assert out.error is None and out.text == "ok"


@pytest.mark.parametrize("api", APIS)
@pytest.mark.anyio
async def test_drop_mid_stream_keeps_text_and_is_a_network_error(fake: FakeProvider, api: str) -> None:
    fake.script(Turn(text="abcdefghijkl", chunk_chars=2, fault=Fault.drop(4, clean_eof=True)))
    out = await stream(config(fake, api))
    assert out.text and "abcdefghijkl".startswith(out.text)
    assert out.error is not None and out.error.kind == "network"
    assert out.error.message == "stream ended before the response was complete"


@pytest.mark.parametrize("api", APIS)
@pytest.mark.anyio
async def test_a_one_megabyte_delta_arrives_whole(fake: FakeProvider, api: str) -> None:
    fake.script(Turn(text="before ", fault=Fault.huge_chunk(1_000_000)))
    out = await stream(config(fake, api))
    assert out.error is None
    assert out.text == "before " + huge_text(1_000_000)


@pytest.mark.parametrize("api", APIS)
@pytest.mark.anyio
async def test_slow_drip_streams_in_pieces_at_the_given_rate(fake: FakeProvider, api: str) -> None:
    import time

    fake.script(Turn(text="x" * 40, chunk_chars=2, tokens_per_second=100))  # 20 deltas, ~0.2 s
    started = time.perf_counter()
    out = await stream(config(fake, api))
    elapsed = time.perf_counter() - started
    assert out.error is None and out.text == "x" * 40
    assert 0.15 <= elapsed < 3.0
    assert sum(1 for e in out.events if type(e).__name__ == "Delta") >= 5  # pieces, not one lump


@pytest.mark.parametrize("api", APIS)
@pytest.mark.anyio
async def test_stall_ends_with_a_network_error(fake: FakeProvider, api: str) -> None:
    fake.script(Turn(text="abcdefgh", chunk_chars=2, fault=Fault.stall(3, seconds=3.0)))
    out = await stream(config(fake, api), stream_timeout=0.3)
    assert out.error is not None and out.error.kind == "network" and "no data" in out.error.message


@pytest.mark.parametrize("api", APIS)
@pytest.mark.anyio
async def test_midstream_error_after_text(fake: FakeProvider, api: str) -> None:
    fake.script(Turn(text="abcdefgh", chunk_chars=2, fault=Fault.midstream_error(4)))
    out = await stream(config(fake, api))
    assert out.text
    assert out.error is not None and out.error.kind == "overloaded"
    assert out.error.message == "overloaded_error: Overloaded"


@pytest.mark.parametrize("api", APIS)
@pytest.mark.anyio
async def test_wrong_key_is_an_auth_error_without_the_key(fake: FakeProvider, api: str) -> None:
    wrong = "sk-wrong-0123456789abcdef"
    out = await stream(config(fake, api, api_key=wrong))
    assert out.error is not None and out.error.kind == "auth" and out.error.status == 401
    assert out.error.message.startswith("401 ") and wrong not in out.error.message


@pytest.mark.anyio
async def test_recorded_fixture_over_a_real_socket(fake: FakeProvider) -> None:
    fake.script(Turn(raw_body=fixture_bytes("openrouter_comments_cached_usage.sse")))
    out = await stream(config(fake, "openai"))
    assert out.error is None and out.text.startswith("I'm Grok")
    assert out.usage == Usage(8, 187, cache_read_tokens=679, reasoning_tokens=118)


@pytest.mark.parametrize("api", APIS)
@pytest.mark.anyio
async def test_list_models(fake: FakeProvider, api: str) -> None:
    async def go() -> list[str]:
        async with httpx.AsyncClient() as client:
            return await list_models(config(fake, api), client)

    assert await go() == ["m-a", "m-b"]
