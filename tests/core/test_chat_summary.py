"""Token and cost texts: chips, tooltips, the per-message meta line and the /cost breakdown (no Qt)."""

from __future__ import annotations

import pytest

from desktop.core.chat import (
    ChatMessage,
    ConversationCost,
    Price,
    TokenTotals,
    Usage,
    conversation_cost,
    cost_breakdown,
    cost_tooltip,
    format_tokens,
    message_meta,
    token_chip_text,
    token_tooltip,
)

# USD per million tokens: 1 000 input tokens cost $0.002, 1 000 output tokens $0.008.
PRICES = {"priced-model": Price(2.0, 8.0, cache_read=0.5, cache_write=2.5)}


def assistant(mid: str, usage: Usage | None, model: str | None = None) -> ChatMessage:
    return ChatMessage(id=mid, role="assistant", content="x", ts=0, usage=usage, model=model)


@pytest.mark.parametrize(("n", "text"), [(0, "0"), (950, "950"), (1000, "1k"), (1234, "1.2k"),
                                         (9_999, "10k"), (34_400, "34k"), (999_499, "999k"),
                                         (1_000_000, "1M"), (1_500_000, "1.5M")])
def test_format_tokens(n: int, text: str) -> None:
    assert format_tokens(n) == text


def test_token_chip_and_tooltip() -> None:
    t = TokenTotals(input=1000, cache_read=200, cache_write=0, output=20, reasoning=5, responses=1)
    assert token_chip_text(t) == "1.2k in · 20 out"
    assert token_tooltip(t) == ("Input: 1,000 uncached + 200 cache reads + 0 cache writes\n"
                                "Output: 20 (reasoning 5)\nResponses: 1")


def test_cost_tooltip_says_why() -> None:
    none = "No price known for this model (Settings → price overrides)"
    assert cost_tooltip(ConversationCost(0.0, True, 1)) == none
    assert cost_tooltip(ConversationCost(0.0, True)) == "No response yet"
    some = "2 response(s) without a known price are not counted"
    assert cost_tooltip(ConversationCost(0.5, False, 2)) == some
    assert cost_tooltip(ConversationCost(0.0123456, False)) == "$0.012346"


def test_message_meta() -> None:
    m = assistant("a", Usage(1000, 1000), model="priced-model")
    assert message_meta(m, None, PRICES) == "priced-model · 1k in · 1k out · $0.0100"
    # The node's model prices a message that does not name its own.
    bare = assistant("b", Usage(1000, 0))
    assert message_meta(bare, "priced-model", PRICES) == "1k in · 0 out · $0.0020"
    # No price: tokens only; no usage: the model only; nothing: empty.
    assert message_meta(bare, "no-such-model-xyz", PRICES) == "1k in · 0 out"
    assert message_meta(assistant("c", None, model="m1"), None, PRICES) == "m1"
    assert message_meta(ChatMessage(id="u", role="user", content="hi", ts=0)) == ""


def test_cost_breakdown_per_model() -> None:
    messages = [
        ChatMessage(id="u", role="user", content="hi", ts=0),
        assistant("a1", Usage(1000, 1000, cache_read_tokens=2000, reasoning_tokens=10), model="priced-model"),
        assistant("a2", Usage(500, 0), model="mystery-model-xyz"),
        assistant("a3", Usage(1000, 0)),  # priced with the node's model
        assistant("a4", None),
    ]
    text = cost_breakdown(messages, "priced-model", PRICES)
    assert text.split("\n") == [
        "Cost: ≥ $0.0130 over 3 response(s)",
        "Input: 2,500 uncached · 2,000 cache reads · 0 cache writes",
        "Output: 1,000 (reasoning 10)",
        # 2 000 cache reads at $0.50/M instead of $2/M input
        "Cache reads saved $0.0030 compared with the uncached input price",
        "  priced-model: 2 response(s), $0.0130",
        "  mystery-model-xyz: 1 response(s), no price known",
        "1 response(s) have no known price (add an override in Settings).",
    ]


def test_cost_breakdown_uses_the_given_cost_and_names_unknown_models() -> None:
    messages = [assistant("a", Usage(10, 2))]
    text = cost_breakdown(messages, None, {}, cost=ConversationCost(0.25, False))
    assert text.split("\n")[0] == "Cost: $0.2500 over 1 response(s)"
    assert "  unknown model: 1 response(s), no price known" in text.split("\n")
    assert cost_breakdown([], None).split("\n")[0] == "Cost: $0.00 over 0 response(s)"


def test_cost_tooltip_adds_what_cache_reads_saved() -> None:
    assert cost_tooltip(ConversationCost(0.0123456, False, 0, 0.27)) == "$0.012346\ncache reads saved $0.2700"
    assert cost_tooltip(ConversationCost(0.5, False, 2, 0.00005)) == (
        "2 response(s) without a known price are not counted\ncache reads saved $0.0001"
    )
    # Nothing saved (or a negative amount from an odd override): no line.
    assert cost_tooltip(ConversationCost(0.01, False, 0, 0.0)) == "$0.010000"
    assert cost_tooltip(ConversationCost(0.01, False, 0, -0.5)) == "$0.010000"
    assert "saved" not in cost_tooltip(ConversationCost(0.0, True, 0, 0.0))


def test_cost_tooltip_of_a_cached_conversation() -> None:
    sonnet = {"sonnet-test": Price(3.0, 15.0, cache_read=0.30, cache_write=3.75)}
    messages = [assistant("a", Usage(0, 0, cache_read_tokens=100_000), model="sonnet-test")]
    assert cost_tooltip(conversation_cost(messages, None, sonnet)).split("\n") == [
        "$0.030000", "cache reads saved $0.2700"]


def test_message_meta_shows_what_cache_reads_saved() -> None:
    m = assistant("a", Usage(1000, 1000, cache_read_tokens=2000), model="priced-model")
    # 1 000 × $2 + 1 000 × $8 + 2 000 × $0.50 per million = $0.0110; saved 2 000 × $1.50/M.
    assert message_meta(m, None, PRICES) == (
        "priced-model · 3k in · 1k out · $0.0110 · cache reads saved $0.0030"
    )
    # The node's model prices it when the message names none; no price: no amounts at all.
    bare = assistant("b", Usage(0, 0, cache_read_tokens=2000))
    assert message_meta(bare, "priced-model", PRICES) == "2k in · 0 out · $0.0010 · cache reads saved $0.0030"
    assert message_meta(bare, "no-such-model-xyz", PRICES) == "2k in · 0 out"
    # No cache reads: no savings part.
    assert "saved" not in message_meta(assistant("c", Usage(10, 10), model="priced-model"), None, PRICES)


def test_cost_breakdown_leaves_out_savings_when_there_are_none() -> None:
    text = cost_breakdown([assistant("a", Usage(1000, 0), model="priced-model")], None, PRICES)
    assert "saved" not in text


def test_message_meta_counts_a_streaming_or_stopped_answer() -> None:
    from desktop.core.chat.summary import estimate_output_tokens

    text = "word " * 200  # 1,000 characters: about 250 tokens
    streaming = ChatMessage(id="s", role="assistant", content=text, ts=0, model="priced-model",
                            usage=Usage(1000, 1))  # Anthropic says 1 output token when a stream starts
    assert estimate_output_tokens(streaming) == 250
    assert message_meta(streaming, None, PRICES, live=True) == "priced-model · 1k in · ~250 out · ~$0.0040"
    assert message_meta(streaming, None, PRICES) == "priced-model · 1k in · 1 out · $0.0020"  # finished
    streaming.stopped = True  # Stop: the provider never sent its final count
    assert message_meta(streaming, None, PRICES) == "priced-model · 1k in · ~250 out · ~$0.0040"
    openai = ChatMessage(id="o", role="assistant", content=text, ts=0, model="priced-model")
    assert message_meta(openai, None, PRICES, live=True) == "priced-model · ~250 out"  # no usage yet
    final = ChatMessage(id="f", role="assistant", content="short", ts=0, usage=Usage(10, 400), stopped=True)
    assert message_meta(final, None, PRICES).startswith("10 in · 400 out")  # the provider's figure wins
