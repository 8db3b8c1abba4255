"""Deterministic synthetic conversations: realistic sizes and shapes, no randomness between runs."""

from __future__ import annotations

import logging

from desktop.core.chat.types import ChatMessage, ToolCall, Usage

log = logging.getLogger(__name__)

__all__ = ["make_messages", "USER_TEXTS", "ASSISTANT_TEXTS"]

USER_TEXTS = [
    "Can you explain how the history cap decides which messages to drop?",
    "Rewrite this paragraph so it reads better: the quick brown fox jumps over the lazy dog.",
    "Wie viele Tokens hat diese Unterhaltung ungefähr? Grüße aus Köln.",
    "List three ways to speed up a Python loop that builds a big string.",
    "What does `asyncio.timeout` do when the stream stalls?",
]

ASSISTANT_TEXTS = [
    "The cap measures the **UTF-8 bytes** of the compact JSON of the messages and drops whole exchanges, "
    "oldest first:\n\n1. non-system messages before the first user message;\n2. then each exchange "
    "(a user message up to the next one);\n3. never the newest exchange.\n\nSo no tool result is ever "
    "left without its call.",
    "Here is a tighter version:\n\n> The quick brown fox leaps over the lazy dog.\n\nI replaced *jumps* "
    "with *leaps* because it is more vivid, and kept the sentence short.",
    "Grob geschätzt etwa 1 200 Tokens — die genaue Zahl steht im Token-Chip oben rechts. "
    "Schöne Grüße zurück! 😊",
    "Three options:\n\n- collect the pieces in a list and `''.join()` them once;\n- use `io.StringIO`;\n"
    "- avoid the loop with a generator expression.\n\n```python\nparts = [f'{i}' for i in range(10)]\n"
    "text = ''.join(parts)\n```",
    "It cancels the enclosed `await` when no byte arrives in time, so the driver can raise a "
    "`network` error instead of hanging forever. The partial text received so far stays.",
]


def make_messages(n: int, *, tool_every: int = 25) -> list[ChatMessage]:
    """``n`` messages alternating user / assistant (ids ``m0``…), every ``tool_every``-th exchange with
    a finished tool call and its result, assistant messages with usage and a model. Average size is
    about 300 bytes of JSON per message."""
    out: list[ChatMessage] = []
    ts = 1_764_547_200_000
    i = 0
    exchange = 0
    while len(out) < n:
        out.append(ChatMessage(f"m{i}", "user", USER_TEXTS[exchange % len(USER_TEXTS)], ts + i))
        i += 1
        if len(out) >= n:
            break
        text = ASSISTANT_TEXTS[exchange % len(ASSISTANT_TEXTS)]
        usage = Usage(input_tokens=120 + exchange % 50, output_tokens=80 + exchange % 30,
                      cache_read_tokens=64)
        if tool_every and exchange % tool_every == tool_every - 1 and len(out) + 3 <= n:
            call = ToolCall(f"call{i}", "read_file", '{"path":"README.md"}', result="# Chat Nodes\n...",
                            status="done")
            out.append(ChatMessage(f"m{i}", "assistant", "", ts + i, tool_calls=[call], usage=usage,
                                   model="gpt-4o-mini"))
            i += 1
            out.append(ChatMessage(f"m{i}", "tool", call.result or "", ts + i, tool_calls=[call]))
            i += 1
        out.append(ChatMessage(f"m{i}", "assistant", text, ts + i, usage=usage, model="gpt-4o-mini"))
        i += 1
        exchange += 1
    return out[:n]
