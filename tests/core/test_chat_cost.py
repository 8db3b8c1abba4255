"""Prices and costs: matching rules, overrides (D11), cache and reasoning tokens (D12), chip text."""

from __future__ import annotations

import asyncio
import json
from importlib import resources

import httpx
import pytest

from desktop.core.chat import (
    DEFAULT_PRICES,
    ChatMessage,
    ConversationCost,
    Cost,
    Price,
    Usage,
    conversation_cost,
    cost_of,
    format_cost,
    message_cost,
    price_for,
)
from desktop.core.chat.cost import FAMILY_PREFIXES, cache_savings, conversation_cache_savings, load_prices
from desktop.core.chat.types import ProviderConfig, UsageReport
from desktop.core.providers import driver_for

DATA = json.loads(resources.files("desktop.core.chat").joinpath("model_prices.json").read_text("utf-8"))


def test_default_prices_hold_every_model_and_alias_of_the_data_file() -> None:
    for model_id, row in DATA.items():
        expected = Price(row["input"], row["output"], row["cache_read"], row["cache_write"])
        assert DEFAULT_PRICES[model_id.lower()] == expected
        for alias in row.get("aliases") or []:
            assert DEFAULT_PRICES[alias.lower()] == expected
    assert set(FAMILY_PREFIXES) <= set(DEFAULT_PRICES)


@pytest.mark.parametrize(
    ("family", "newest"),
    [
        ("gpt-", "gpt-6.1-sol"),  # version 6.1 is the highest
        ("claude-opus-", "claude-opus-5-5"),
        ("claude-sonnet-", "claude-sonnet-5-5"),
        ("claude-haiku-", "claude-haiku-5-5"),
        ("claude-", "claude-opus-5-5"),  # three models at 5.5: the most expensive wins
        ("gemini-", "gemini-3.5-flash"),
        ("deepseek-", "deepseek-v4-pro"),  # v4-flash and v4-pro tie on version: the dearer wins
    ],
)
def test_family_prefixes_price_as_the_newest_model(family: str, newest: str) -> None:
    assert DEFAULT_PRICES[family] == DEFAULT_PRICES[newest]


def test_family_choice_is_deterministic_whatever_the_table_order() -> None:
    curated = load_prices(DATA)
    assert load_prices(dict(reversed(list(DATA.items())))) == curated
    # The built-in table is the curated one plus the LiteLLM refresh, which never changes a curated key.
    assert {key: DEFAULT_PRICES[key] for key in curated} == curated


def test_load_prices_rejects_a_bad_row() -> None:
    with pytest.raises(ValueError, match="'m' has an invalid 'output'"):
        load_prices({"m": {"input": 1, "output": "free"}})


@pytest.mark.parametrize(
    ("model", "key"),
    [
        ("gpt-4o", "gpt-4o"),
        ("GPT-4o", "gpt-4o"),
        ("openai/gpt-4o", "gpt-4o"),
        ("openrouter/openai/gpt-4o-mini", "gpt-4o-mini"),
        ("gpt-4o-2024-08-06", "gpt-4o"),  # alias and dated snapshot
        ("gpt-4o-2099-01-01", "gpt-4o"),  # an unknown snapshot of a known model
        ("claude-sonnet-4-6@20260101", "claude-sonnet-4-6"),
        ("anthropic/claude-sonnet-4-6:thinking", "claude-sonnet-4-6"),
        ("o3", "o3"),
        ("o3-2025-04-16", "o3"),
        ("gpt-4o-mini-tts", "gpt-"),  # "-tts" is not a snapshot of gpt-4o-mini: the family prices it
        ("claude-opus-4-9", "claude-opus-"),
        ("claude-3-7-sonnet-20250219", "claude-"),
        ("gemini/gemini-9-ultra", "gemini-"),
        ("deepseek-v9", "deepseek-"),
    ],
)
def test_price_matching(model: str, key: str) -> None:
    assert price_for(model) == DEFAULT_PRICES[key]


@pytest.mark.parametrize(
    "model", ["o3pro", "o3-ultra-9", "llama3:8b", "mistral-large-x", "", None, "   ", "vendor/"]
)
def test_unknown_models_have_no_price(model: str | None) -> None:
    assert price_for(model) is None


def test_d11_a_short_override_prefix_beats_a_longer_builtin() -> None:
    cheap = Price(0.01, 0.02)
    assert price_for("claude-sonnet-4-6", {"claude-": cheap}) == cheap
    assert price_for("claude-sonnet-4-6-20260101", {"claude-": cheap}) == cheap


def test_d11_override_order_exact_then_longest() -> None:
    exact, family, short = Price(1, 1), Price(2, 2), Price(3, 3)
    overrides = {"Claude-": short, "claude-sonnet-": family, "claude-sonnet-4-6": exact}
    assert price_for("claude-sonnet-4-6", overrides) == exact
    assert price_for("claude-sonnet-9", overrides) == family
    assert price_for("claude-haiku-4-5", overrides) == short
    assert price_for("gpt-4o", overrides) == DEFAULT_PRICES["gpt-4o"]
    assert price_for("my-local-model", {"my-local-model": exact}) == exact
    assert price_for("my-local-model:q4", {"my-local-model": exact}) == exact
    # The same matching rules apply to overrides: an "o3" override never prices o3-pro, which keeps
    # its own built-in price (and a model with no price of its own stays unpriced).
    assert price_for("o3-pro", {"o3": exact}) == DEFAULT_PRICES["o3-pro"] != exact
    assert price_for("o3-ultra-9", {"o3": exact}) is None


def test_d12_cache_reads_and_writes_have_their_own_rates() -> None:
    # Anthropic semantics: input excludes cache tokens
    usage = Usage(input_tokens=1_000, output_tokens=500, cache_read_tokens=10_000, cache_write_tokens=2_000)
    cost = cost_of(usage, "claude-sonnet-4-6")
    expected = (1_000 * 3.0 + 500 * 15.0 + 10_000 * 0.3 + 2_000 * 3.75) / 1e6
    assert cost == Cost(pytest.approx(expected), False)


def _drive_openai(body: bytes) -> list[UsageReport]:
    """Run the real OpenAI driver over a recorded stream served by an in-process transport."""

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body)

    async def scenario() -> list[UsageReport]:
        config = ProviderConfig("openrouter", "OpenRouter", "openai", "https://openrouter.test/v1", "k" * 20)
        async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
            driver = driver_for(config, client)
            messages = [ChatMessage("u1", "user", "hi", 0)]
            return [e async for e in driver.stream(model="m", messages=messages, tools=[])
                    if isinstance(e, UsageReport)]

    return asyncio.run(scenario())


def test_d12_openai_cached_tokens_are_not_double_counted() -> None:
    # What the driver makes of openrouter_comments_cached_usage.sse (prompt 687 incl. 679 cached,
    # completion 187 incl. 118 reasoning); the decode itself is tests/providers/test_recorded_streams.py's.
    usage = Usage(input_tokens=8, output_tokens=187, cache_read_tokens=679, reasoning_tokens=118)
    cost = cost_of(usage, "openai/gpt-4o")
    # 8 uncached input at $2.50, 679 cached at $1.25, 187 output (reasoning included) at $10 per million
    assert cost.usd == pytest.approx(0.00273875)  # (20 + 848.75 + 1870) / 1e6
    assert not cost.estimated


def test_d12_openai_cache_write_tokens_are_taken_out_of_the_input_too() -> None:
    usage = {"prompt_tokens": 1000, "completion_tokens": 10,
             "prompt_tokens_details": {"cached_tokens": 600, "cache_write_tokens": 300}}
    body = (b'data: {"choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}]}\n\n'
            b'data: {"choices":[],"usage":' + json.dumps(usage).encode() + b"}\n\ndata: [DONE]\n\n")
    (report,) = _drive_openai(body)
    assert report.usage == Usage(100, 10, cache_read_tokens=600, cache_write_tokens=300)
    price = Price(input=1.0, output=2.0, cache_read=0.5, cache_write=1.5)
    assert cost_of(report.usage, "x", {"x": price}).usd == pytest.approx((100 + 20 + 300 + 450) / 1e6)


def test_d12_reasoning_tokens_are_part_of_output() -> None:
    with_reasoning = cost_of(Usage(0, 1000, reasoning_tokens=900), "o3")
    assert with_reasoning.usd == pytest.approx(1000 * 8.0 / 1e6)


def test_d12_cache_rates_fall_back_to_the_input_rate() -> None:
    price = Price(input=2.0, output=4.0)
    cost = cost_of(Usage(0, 0, cache_read_tokens=1_000_000, cache_write_tokens=1_000_000), "x", {"x": price})
    assert cost.usd == pytest.approx(4.0)
    free_write = cost_of(Usage(0, 0, cache_write_tokens=1_000_000), "deepseek-v4-pro")
    assert free_write.usd == 0.0 and not free_write.estimated  # listed as 0.0, not missing


def test_cost_of_an_unknown_model_is_estimated_zero() -> None:
    assert cost_of(Usage(10, 10), "mystery") == Cost(0.0, True)


def assistant(i: int, usage: Usage | None, model: str | None = None) -> ChatMessage:
    return ChatMessage(f"a{i}", "assistant", "x", i, usage=usage, model=model)


def test_d12_message_cost_uses_the_message_model_then_the_fallback() -> None:
    assert message_cost(assistant(1, None)) is None
    own = message_cost(assistant(1, Usage(1_000_000, 0), "gpt-4o"), "o3")
    fallback = message_cost(assistant(2, Usage(1_000_000, 0)), "o3")
    assert own == Cost(pytest.approx(2.5), False) and fallback == Cost(pytest.approx(2.0), False)


def test_d12_conversation_cost_sums_assistant_messages_per_model() -> None:
    messages = [
        ChatMessage("u", "user", "q", 0, usage=Usage(10**6, 10**6)),  # not an assistant message: ignored
        assistant(1, Usage(1_000_000, 0), "gpt-4o"),
        assistant(2, Usage(0, 1_000_000)),  # priced with the conversation model
        assistant(3, None, "gpt-4o"),
    ]
    cc = conversation_cost(messages, "claude-sonnet-4-6")
    assert cc == ConversationCost(pytest.approx(2.5 + 15.0), False, 0)


def test_seed_estimated_when_nothing_is_priced_or_nothing_has_usage() -> None:
    assert conversation_cost([], "gpt-4o") == ConversationCost(0.0, True, 0)
    assert conversation_cost([assistant(1, None)], "gpt-4o").estimated
    unpriced = conversation_cost([assistant(1, Usage(5, 5), "mystery")], None)
    assert unpriced == ConversationCost(0.0, True, 1)


def test_d12_mixed_conversation_counts_unpriced_messages() -> None:
    messages = [assistant(1, Usage(1_000_000, 0), "gpt-4o"), assistant(2, Usage(10, 10), "mystery-model")]
    cc = conversation_cost(messages, None)
    assert cc == ConversationCost(pytest.approx(2.5), False, 1)
    assert format_cost(cc) == "≥ $2.5000"


def test_conversation_cost_respects_overrides() -> None:
    cc = conversation_cost([assistant(1, Usage(1_000_000, 0), "mystery")], None, {"mystery": Price(1.5, 0)})
    assert cc == ConversationCost(pytest.approx(1.5), False, 0)


@pytest.mark.parametrize(
    ("cc", "text"),
    [
        (ConversationCost(0.0123, False, 0), "$0.0123"),
        (ConversationCost(0.0, False, 0), "$0.0000"),
        (ConversationCost(0.012345, False, 2), "≥ $0.0123"),
        (ConversationCost(0.0, True, 0), "$0.00"),  # no response yet: nothing cost anything
        (ConversationCost(0.0, True, 3), "n/a"),  # responses without a price
        (ConversationCost(12.5, False, 0), "$12.5000"),
    ],
)
def test_format_cost(cc: ConversationCost, text: str) -> None:
    assert format_cost(cc) == text


# -- what cache reads saved ----------------------------------------------------------------------

SONNET = {"sonnet-test": Price(3.0, 15.0, cache_read=0.30, cache_write=3.75)}


def test_cache_savings_of_100k_cached_tokens_at_sonnet_prices() -> None:
    usage = Usage(2_000, 500, cache_read_tokens=100_000, cache_write_tokens=7_000, reasoning_tokens=50)
    # 100 000 tokens at $3/M would have cost $0.30; read from the cache they cost $0.03.
    assert cache_savings(usage, "sonnet-test", SONNET) == pytest.approx(0.27)
    # The built-in Claude Sonnet price gives the same (input $3/M, cache read $0.30/M).
    assert DEFAULT_PRICES["claude-sonnet-4-5"].cache_read == pytest.approx(0.30)
    assert cache_savings(usage, "claude-sonnet-4-5", None) == pytest.approx(0.27)
    # The savings are exactly the gap between the uncached cost and the real cost of those tokens.
    uncached = cost_of(Usage(102_000, 500, cache_write_tokens=7_000), "sonnet-test", SONNET).usd
    assert uncached - cost_of(usage, "sonnet-test", SONNET).usd == pytest.approx(0.27)


def test_cache_savings_without_reads_without_a_rate_or_without_a_price() -> None:
    assert cache_savings(Usage(10_000, 10, cache_write_tokens=5_000), "sonnet-test", SONNET) == 0.0
    no_rate = {"plain": Price(2.0, 8.0)}  # cache reads priced at the input rate: nothing saved
    assert cache_savings(Usage(0, 0, cache_read_tokens=10**6), "plain", no_rate) == 0.0
    assert cache_savings(Usage(0, 0, cache_read_tokens=10**6), "mystery-model-xyz") is None
    assert cache_savings(Usage(0, 0, cache_read_tokens=10**6), None) is None
    # An override pricing cache reads above input says so: the amount is negative.
    dear = {"dear": Price(1.0, 1.0, cache_read=1.5)}
    assert cache_savings(Usage(0, 0, cache_read_tokens=10**6), "dear", dear) == pytest.approx(-0.5)


def test_conversation_savings_sum_over_priced_assistant_messages() -> None:
    messages = [
        ChatMessage("u", "user", "q", 0, usage=Usage(0, 0, cache_read_tokens=10**6)),  # not an answer
        assistant(1, Usage(100, 10, cache_read_tokens=100_000), "sonnet-test"),
        assistant(2, Usage(100, 10, cache_read_tokens=200_000)),  # priced with the conversation model
        assistant(3, Usage(100, 10, cache_read_tokens=300_000), "mystery-model-xyz"),  # unpriced: left out
        assistant(4, None, "sonnet-test"),
    ]
    assert conversation_cache_savings(messages, "sonnet-test", SONNET) == pytest.approx(0.81)
    cc = conversation_cost(messages, "sonnet-test", SONNET)
    assert cc.cache_saved == pytest.approx(0.81) and cc.unpriced == 1
    assert conversation_cache_savings(messages[3:], "sonnet-test", SONNET) is None
    assert conversation_cache_savings([], "sonnet-test", SONNET) is None
    assert conversation_cost([], "sonnet-test").cache_saved == 0.0
    no_reads = [assistant(1, Usage(100, 10), "sonnet-test")]
    assert conversation_cache_savings(no_reads, None, SONNET) == 0.0


def test_the_litellm_refresh_prices_models_the_curated_table_lacks() -> None:
    import json
    from importlib import resources

    from desktop.core.chat.cost import LITELLM_FILE, price_source

    package = resources.files("desktop.core.chat")
    refreshed = json.loads(package.joinpath(LITELLM_FILE).read_text("utf-8"))
    curated = json.loads(package.joinpath("model_prices.json").read_text("utf-8"))
    extra = [m for m in refreshed["models"] if m not in curated]
    assert len(extra) > 100  # today's OpenAI, Anthropic, Gemini, DeepSeek, Mistral, xAI and Groq models
    for model in extra[:50]:
        row = refreshed["models"][model]
        price = price_for(model)
        assert price is not None and (price.input, price.output) == (row["input"], row["output"]), model
    for vendor in ("mistral", "grok", "gemini", "deepseek", "claude", "gpt"):
        assert any(vendor in m for m in refreshed["models"]), vendor
    source, date = price_source()
    assert source.startswith("litellm ") and len(date) == 10
    # The curated table still wins where both have a model (today they agree).
    assert price_for("gpt-4o-mini") == Price(0.15, 0.6, 0.075, None)
