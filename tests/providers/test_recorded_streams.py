"""Every recorded stream decodes to the result its fixtures README gives, however the bytes arrive.

The expected results come from tests/fixtures/streams/README.md.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from provider_support import (
    FIXTURES,
    Outcome,
    anthropic_config,
    crlf,
    cut_at,
    fixture_bytes,
    openai_config,
    outcome_for,
    random_pieces,
    utf8_inner_offsets,
)

from desktop.core.chat.types import ProviderConfig, Usage

TRUNC = "response truncated: max_tokens"

ROUTER_TEXT = (
    "I'm Grok, an AI built by xAI. I'm designed to be helpful, maximally truthful, and a bit witty—think "
    "a mix of the Hitchhiker's Guide to the Galaxy and JARVIS from Iron Man. My goal is to help you "
    "understand the universe (and maybe crack a few jokes along the way). What's on your mind?"
)
GROQ_ERROR = (
    "invalid_request_error: Tool call validation failed: tool call validation failed: parameters for tool "
    "get_something_by_name did not match schema: errors: [missing properties: 'name', additionalProperties "
    "'invalid_param' not allowed]"
)
THINKING_TEXT = (
    "The user wants me to:\n1. Use the fixed_version tool\n2. Tell them the version\n3. Make a short joke "
    "about it\n\nLet me first call the fixed_version tool to see what version it returns."
)
REDACTED_TEXT = (
    "I notice that you've sent what appears to be some kind of test string or command. I don't have any "
    "special \"magic string\" triggers or backdoor commands that would expose internal systems "
    "or change my behavior."
    "\n\nI'm Claude, an AI assistant created by Anthropic to be helpful, harmless, and honest. How can I "
    "assist you today with a legitimate task or question?"
)

# name -> (api, expectations). "thinking" may be a (length, prefix, suffix) triple.
EXPECTED: dict[str, tuple[str, dict[str, Any]]] = {
    "openai_chat_text_usage.sse": ("openai", {
        "text": "I'm unable to provide real-time weather updates. To get the current weather in San "
                "Francisco, I recommend checking a reliable weather website or a weather app.",
        "usage": Usage(14, 30), "model": "gpt-4o-2024-08-06",
    }),
    "openai_chat_parallel_tool_calls.sse": ("openai", {
        "text": "",
        "calls": [
            ("call_JMW1whyEaYG438VE1OIflxA2", "GetWeatherArgs",
             {"city": "Edinburgh", "country": "GB", "units": "c"}),
            ("call_DNYTawLBoN8fj3KN6qU9N1Ou", "get_stock_price", {"ticker": "AAPL", "exchange": "NASDAQ"}),
        ],
        "usage": Usage(149, 60),
    }),
    "openai_chat_tool_call_turn1.sse": ("openai", {
        "text": "", "calls": [("call_ZR5UUuTt3pf61kjwAJIYdVMj", "get_capital", {"country": "UK"})],
        "usage": Usage(53, 15),
    }),
    "deepseek_reasoner_reasoning_content.sse": ("openai", {
        "text": "Hello there! 😊 How can I help you today?",
        "thinking": (882, 'Hmm, the user just said "Hello". It\'s a simple greeting',
                     "they might not reply further - and that's okay too."),
        "usage": Usage(6, 212, reasoning_tokens=198),
    }),
    "groq_midstream_error_event.sse": ("openai", {
        "text": "", "thinking": (412, "We need to call the tool with invalid parameters first", None),
        "usage": None, "error": (GROQ_ERROR, 400, "bad_request"),
    }),
    "openrouter_comments_cached_usage.sse": ("openai", {
        "text": ROUTER_TEXT, "usage": Usage(8, 187, cache_read_tokens=679, reasoning_tokens=118),
    }),
    "openrouter_error_in_chunk.sse": ("openai", {
        "text": "", "thinking": "We need to respond to a greeting. The user",
        "usage": Usage(43, 10, reasoning_tokens=11), "error": ("Token limit reached", 400, "bad_request"),
    }),
    "anthropic_text_basic.txt": ("anthropic", {"text": "Hello there!", "usage": Usage(11, 6)}),
    "anthropic_text_then_tool_use.txt": ("anthropic", {
        "text": "I'll check the current weather in Paris for you.",
        "calls": [("toolu_01NRLabsLyVHZPKxbKvkfSMn", "get_weather", {"location": "Paris"})],
        "usage": Usage(377, 65), "model": "claude-sonnet-4-20250514",
    }),
    "anthropic_max_tokens_partial_tool_json.txt": ("anthropic", {
        "text": "I'll create a comprehensive tax guide for someone with multiple W2s and save it in a file "
                "called taxes.txt. Let me do that for you now.",
        "usage": Usage(450, 124), "notices": [TRUNC],
    }),
    "anthropic_thinking_tool_use_turn1.sse": ("anthropic", {
        "text": "", "thinking": THINKING_TEXT,
        "calls": [("toolu_01825dXWLSoJwCst1qTsiWdb", "fixed_version", {})],
        "usage": Usage(598, 92, reasoning_tokens=53), "signature": (524, "EoQDCm0IDhgCKkCDzGs2"),
    }),
    "anthropic_parallel_tool_use.sse": ("anthropic", {
        "text": "",
        "calls": [("toolu_01LtHJmixrs9NcWQkK8hu8hj", "pelican_name_generator", {}),
                  ("toolu_01N8a4jWyf116qKTMqKKmjyt", "pelican_name_generator", {})],
        "usage": Usage(542, 62),
    }),
    "anthropic_redacted_thinking.sse": ("anthropic", {
        "text": REDACTED_TEXT, "redacted": [744, 296], "usage": Usage(92, 189),
    }),
}


def config_for(api: str) -> ProviderConfig:
    return openai_config() if api == "openai" else anthropic_config()


def check(outcome: Outcome, exp: dict[str, Any]) -> None:
    assert outcome.text == exp["text"]
    thinking = exp.get("thinking", "")
    if isinstance(thinking, tuple):
        length, prefix, suffix = thinking
        assert len(outcome.thinking) == length
        assert outcome.thinking.startswith(prefix)
        if suffix:
            assert outcome.thinking.endswith(suffix)
    else:
        assert outcome.thinking == thinking
    calls = exp.get("calls", [])
    assert [(i, n) for i, n, _ in outcome.calls] == [(i, n) for i, n, _ in calls]
    for (_, _, args_json), (_, _, args) in zip(outcome.calls, calls, strict=True):
        assert json.loads(args_json) == args
    assert outcome.usage == exp["usage"]
    if "model" in exp:
        assert outcome.model == exp["model"]
    assert outcome.notices == exp.get("notices", [])
    if "signature" in exp:
        length, prefix = exp["signature"]
        assert len(outcome.signatures) == 1
        assert len(outcome.signatures[0]) == length and outcome.signatures[0].startswith(prefix)
    else:
        assert outcome.signatures == []
    assert [len(r) for r in outcome.redacted] == exp.get("redacted", [])
    if "error" in exp:
        assert outcome.error is not None
        assert (outcome.error.message, outcome.error.status, outcome.error.kind) == exp["error"]
        assert outcome.error.provider == "openai"
    else:
        assert outcome.error is None, outcome.error


def test_every_fixture_has_expectations() -> None:
    names = {p.name for p in FIXTURES.iterdir() if p.suffix in (".sse", ".txt")}
    assert names == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
@pytest.mark.anyio
async def test_whole_body(name: str) -> None:
    api, exp = EXPECTED[name]
    check(await outcome_for(config_for(api), [fixture_bytes(name)]), exp)


@pytest.mark.parametrize("name", sorted(EXPECTED))
@pytest.mark.anyio
async def test_split_at_random_offsets_and_crlf(name: str) -> None:
    api, exp = EXPECTED[name]
    config = config_for(api)
    data = fixture_bytes(name)
    reference = (await outcome_for(config, [data])).summary()
    rng = random.Random(f"split-{name}")
    variants: list[list[bytes]] = [
        # one byte at a time (big recordings: 1-3 bytes, to keep the suite fast)
        [data[i:i + 1] for i in range(len(data))] if len(data) < 10_000 else random_pieces(data, rng, 3),
        cut_at(data, utf8_inner_offsets(data)),  # every cut inside a multi-byte character
    ]
    small = len(data) < 10_000
    sizes = [3, 17, 200, 4096] if small else [17, 200, 4096]
    variants += [random_pieces(data, rng, max_piece=rng.choice(sizes)) for _ in range(12)]
    crlf_data = crlf(data)
    variants.append([crlf_data])
    variants.append(cut_at(crlf_data, [i + 1 for i, b in enumerate(crlf_data) if b == 0x0D]))  # \r | \n
    crlf_sizes = [2, 9, 300] if small else [9, 300]
    variants += [random_pieces(crlf_data, rng, max_piece=rng.choice(crlf_sizes)) for _ in range(6)]
    cr_only = data.replace(b"\r\n", b"\n").replace(b"\n", b"\r")
    variants.append(random_pieces(cr_only, rng, max_piece=11))
    for pieces in variants:
        outcome = await outcome_for(config, pieces)
        check(outcome, exp)
        assert outcome.summary() == reference


def test_multibyte_fixtures_really_get_cut_inside_characters() -> None:
    # The split test above is only meaningful if the recordings contain multi-byte characters.
    assert utf8_inner_offsets(fixture_bytes("deepseek_reasoner_reasoning_content.sse"))
    assert utf8_inner_offsets(fixture_bytes("openrouter_comments_cached_usage.sse"))
