"""Budget 1: our drivers vs the official ``openai`` and ``anthropic`` SDKs on the same loopback stream.

The fake provider serves one pre-rendered fast stream of ``n`` tiny text deltas over a real socket.
Each side sends one streaming request and consumes every event of the answer on a plain asyncio
loop: ours through ``driver.stream()`` (SSE decoding, JSON, chat events), the SDKs by iterating the
chunks of ``chat.completions.create(stream=True)`` / the events of ``messages.create(stream=True)``.
The OpenAI SDK is asked for ``stream_options.include_usage`` like our driver, so both sides receive
the very same bytes, and each side must deliver all of the text (checked). Our driver merges the
adjacent text deltas of one network read into one ``Delta`` (``desktop.core.providers._base.coalesce``),
so it yields fewer, longer events than the SDKs; the bytes decoded and the JSON parsed are the same.
Each client is created and closed per run (connection set-up is included on both sides).
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

import httpx

from benchmarks._harness import Budget, Row, Settings, paired
from desktop.core.chat.types import ChatMessage, Delta, ProviderConfig
from desktop.core.providers import driver_for
from desktop.testing import FakeProvider, Turn

log = logging.getLogger(__name__)

__all__ = ["run", "ours_ms", "openai_sdk_ms", "anthropic_sdk_ms"]

MODEL = "fake-fast"
TOKEN = "tok "  # the text of each delta of ``FakeProvider.fast_turn``
_MESSAGES = [ChatMessage("u1", "user", "Say many words.", 0)]


async def _ours(fake: FakeProvider, api: str, turn: Turn) -> tuple[float, int]:
    base = fake.openai_base_url if api == "openai" else fake.anthropic_base_url
    config = ProviderConfig(id="bench", name="Bench", api=api, base_url=base, api_key="x")  # type: ignore[arg-type]
    fake.script(turn)
    start = time.perf_counter()
    chars = 0
    async with httpx.AsyncClient() as client:
        driver = driver_for(config, client)
        async for event in driver.stream(model=MODEL, messages=_MESSAGES, tools=[]):
            if type(event) is Delta:
                chars += len(event.text)
    return (time.perf_counter() - start) * 1000.0, chars


async def _openai_sdk(fake: FakeProvider, turn: Turn) -> tuple[float, int]:
    import openai

    fake.script(turn)
    start = time.perf_counter()
    chars = 0
    async with openai.AsyncOpenAI(base_url=fake.openai_base_url, api_key="x", max_retries=0) as client:
        stream: Any = await client.chat.completions.create(
            model=MODEL,
            messages=[{"role": "user", "content": "Say many words."}],
            stream=True,
            stream_options={"include_usage": True},
        )
        async for chunk in stream:
            if chunk.choices and chunk.choices[0].delta.content:
                chars += len(chunk.choices[0].delta.content)
    return (time.perf_counter() - start) * 1000.0, chars


async def _anthropic_sdk(fake: FakeProvider, turn: Turn) -> tuple[float, int]:
    import anthropic

    fake.script(turn)
    start = time.perf_counter()
    chars = 0
    sdk = anthropic.AsyncAnthropic(base_url=fake.anthropic_base_url, api_key="x", max_retries=0)
    async with sdk as client:
        stream: Any = await client.messages.create(
            model=MODEL,
            max_tokens=1024,
            messages=[{"role": "user", "content": "Say many words."}],
            stream=True,
        )
        async for event in stream:
            if event.type == "content_block_delta" and event.delta.type == "text_delta":
                chars += len(event.delta.text)
    return (time.perf_counter() - start) * 1000.0, chars


def _checked(result: tuple[float, int], n: int, who: str) -> float:
    ms, chars = result
    if chars != len(TOKEN) * n:
        raise RuntimeError(f"{who} received {chars} characters of text, expected {len(TOKEN) * n}")
    return ms


def ours_ms(fake: FakeProvider, api: str, turn: Turn, n: int) -> float:
    """One run of our driver: milliseconds to consume the whole stream."""
    return _checked(asyncio.run(_ours(fake, api, turn)), n, f"our {api} driver")


def openai_sdk_ms(fake: FakeProvider, turn: Turn, n: int) -> float:
    """One run of the official OpenAI SDK on the same stream."""
    return _checked(asyncio.run(_openai_sdk(fake, turn)), n, "the openai SDK")


def anthropic_sdk_ms(fake: FakeProvider, turn: Turn, n: int) -> float:
    """One run of the official Anthropic SDK on the same stream."""
    return _checked(asyncio.run(_anthropic_sdk(fake, turn)), n, "the anthropic SDK")


def run(settings: Settings) -> list[Row]:
    """Measure both drivers against both SDKs; one row per protocol."""
    import anthropic
    import openai

    n = settings.events
    turn = FakeProvider.fast_turn(n, model=MODEL)
    rows: list[Row] = []
    with FakeProvider() as fake:
        ours, sdk = paired(lambda: ours_ms(fake, "openai", turn, n), lambda: openai_sdk_ms(fake, turn, n),
                           settings.runs, warmup=settings.warmup)
        rows.append(Row(
            "drivers.openai", f"OpenAI stream, {n:,} deltas over loopback: our driver",
            "ms", ours, f"openai SDK {openai.__version__}", sdk, Budget.ratio(1.0),
        ))
        ours, sdk = paired(lambda: ours_ms(fake, "anthropic", turn, n),
                           lambda: anthropic_sdk_ms(fake, turn, n), settings.runs, warmup=settings.warmup)
        rows.append(Row(
            "drivers.anthropic", f"Anthropic stream, {n:,} deltas over loopback: our driver",
            "ms", ours, f"anthropic SDK {anthropic.__version__}", sdk, Budget.ratio(1.0),
        ))
    return rows
