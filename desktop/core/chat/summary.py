"""Text about tokens and cost: the node's chips, the per-message meta line and the ``/cost`` note.

Pure formatting over the messages and the cost functions of ``desktop.core.chat.cost``; the UI
only puts the strings on screen.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

from .cost import (
    ConversationCost,
    Price,
    cache_savings,
    conversation_cache_savings,
    conversation_cost,
    format_cost,
    message_cost,
)
from .export import TokenTotals, token_totals
from .types import ChatMessage

__all__ = [
    "CHARS_PER_TOKEN",
    "cost_breakdown",
    "cost_tooltip",
    "estimate_output_tokens",
    "format_tokens",
    "message_meta",
    "savings_text",
    "token_chip_text",
    "token_tooltip",
]


def format_tokens(n: int) -> str:
    """Compact token count: ``950``, ``1.2k``, ``34k``, ``1.5M``.

    Args:
        n: A token count (not negative).

    Returns:
        The count with at most two significant digits after the unit.
    """
    if n < 1000:
        return str(n)
    if n < 10_000:
        return f"{n / 1000:.1f}k".replace(".0k", "k")
    if n < 1_000_000:
        return f"{round(n / 1000)}k"
    return f"{n / 1_000_000:.1f}M".replace(".0M", "M")


def token_chip_text(totals: TokenTotals) -> str:
    """The token chip: ``"1.2k in · 20 out"`` (input counts cache reads and writes)."""
    return f"{format_tokens(totals.total_input)} in · {format_tokens(totals.output)} out"


def token_tooltip(totals: TokenTotals) -> str:
    """The token chip's tooltip: the input split by cache use, the output with its reasoning part."""
    return (
        f"Input: {totals.input:,} uncached + {totals.cache_read:,} cache reads + "
        f"{totals.cache_write:,} cache writes\nOutput: {totals.output:,} "
        f"(reasoning {totals.reasoning:,})\nResponses: {totals.responses:,}"
    )


def savings_text(usd: float | None) -> str:
    """``"cache reads saved $0.2700"`` for an amount above zero, else ``""``."""
    return f"cache reads saved ${usd:.4f}" if usd is not None and usd > 0 else ""


def cost_tooltip(cost: ConversationCost) -> str:
    """The cost chip's tooltip: the exact sum, or why there is none or only a lower bound; then,
    on a line of its own, what cache reads saved when that is above zero."""
    if cost.estimated and not cost.unpriced:
        return "No response yet"
    if cost.estimated:
        return "No price known for this model (Settings → price overrides)"
    if cost.unpriced:
        text = f"{cost.unpriced} response(s) without a known price are not counted"
    else:
        text = f"${cost.usd:.6f}"
    saved = savings_text(cost.cache_saved)
    return f"{text}\n{saved}" if saved else text


CHARS_PER_TOKEN = 4
"""About how many characters of English text or code make one token (for estimates only)."""


def estimate_output_tokens(msg: ChatMessage) -> int:
    """A rough count of the tokens ``msg`` holds so far: its text, thinking and tool-call arguments at
    ``CHARS_PER_TOKEN`` characters a token. What a streamed or stopped answer has produced while the
    provider has not said (Anthropic reports 1 output token when a stream starts, OpenAI nothing)."""
    chars = len(msg.content) + len(msg.thinking or "")
    for call in msg.tool_calls or ():
        chars += len(call.name) + len(call.args_json)
    return -(-chars // CHARS_PER_TOKEN)


def message_meta(
    msg: ChatMessage, fallback_model: str | None = None, overrides: Mapping[str, Price] | None = None,
    *, live: bool = False,
) -> str:
    """The line under a message: model, tokens and, when a price is known, the message's cost.

    While the answer streams (``live``) and after it was stopped, the provider has not reported its
    output yet: the count is the running estimate (:func:`estimate_output_tokens`, shown ``~1.2k out``,
    the cost ``~$0.0031``) whenever that is more than the provider said. A finished answer shows the
    provider's figures.

    Args:
        msg: The message.
        fallback_model: Prices a message that does not name its model (the node's model).
        overrides: The user's price overrides.
        live: The answer is still streaming.

    Returns:
        E.g. ``"gpt-4o · 1.2k in · 20 out · $0.0031"``, followed by ``"· cache reads saved $0.0027"``
        when cache reads saved anything; ``""`` when there is nothing to say.
    """
    parts: list[str] = []
    if msg.model:
        parts.append(msg.model)
    u = msg.usage
    approx = ""
    if (live or msg.stopped) and msg.role == "assistant":
        estimate = estimate_output_tokens(msg)
        if u is None and estimate:
            parts.append(f"~{format_tokens(estimate)} out")  # no input count yet: no cost either
        elif u is not None and estimate > u.output_tokens:
            u, approx = dataclasses.replace(u, output_tokens=estimate), "~"
            msg = dataclasses.replace(msg, usage=u)
    if u is not None:
        output = approx + format_tokens(u.output_tokens)
        parts.append(f"{format_tokens(u.total_input_tokens)} in · {output} out")
        cost = message_cost(msg, fallback_model, overrides)
        if cost is not None and not cost.estimated:
            parts.append(f"{approx}${cost.usd:.4f}")
            saved = savings_text(cache_savings(u, msg.model or fallback_model, overrides))
            if saved:
                parts.append(saved)
    return " · ".join(parts)


def cost_breakdown(
    messages: Sequence[ChatMessage],
    model: str | None,
    overrides: Mapping[str, Price] | None = None,
    *,
    cost: ConversationCost | None = None,
) -> str:
    """The ``/cost`` note: the total, the token split, what cache reads saved (when anything) and
    one line per model used.

    Args:
        messages: The conversation's messages.
        model: Prices the messages that do not name their model (the node's model).
        overrides: The user's price overrides.
        cost: The conversation's cost when the caller has it cached (computed otherwise).

    Returns:
        Several lines of plain text.
    """
    t = token_totals(messages)
    cc = cost if cost is not None else conversation_cost(messages, model, overrides)
    lines = [
        f"Cost: {format_cost(cc)} over {t.responses} response(s)",
        f"Input: {t.input:,} uncached · {t.cache_read:,} cache reads · {t.cache_write:,} cache writes",
        f"Output: {t.output:,} (reasoning {t.reasoning:,})",
    ]
    saved = savings_text(conversation_cache_savings(messages, model, overrides))
    if saved:
        lines.append(f"{saved[0].upper()}{saved[1:]} compared with the uncached input price")
    per_model: dict[str, tuple[int, float, int]] = {}
    for m in messages:
        if m.role != "assistant" or m.usage is None:
            continue
        name = m.model or model or "unknown model"
        c = message_cost(m, model, overrides)
        count, usd, unpriced = per_model.get(name, (0, 0.0, 0))
        if c is not None and not c.estimated:
            per_model[name] = (count + 1, usd + c.usd, unpriced)
        else:
            per_model[name] = (count + 1, usd, unpriced + 1)
    for name, (count, usd, unpriced) in per_model.items():
        price = "no price known" if unpriced == count else f"${usd:.4f}"
        lines.append(f"  {name}: {count} response(s), {price}")
    if cc.unpriced:
        lines.append(f"{cc.unpriced} response(s) have no known price (add an override in Settings).")
    return "\n".join(lines)
