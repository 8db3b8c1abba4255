"""The history cap: measure each message's UTF-8 JSON size once and drop whole oldest exchanges.

Private module of :mod:`desktop.core.chat.conversation` (import the public names from there).
"""

from __future__ import annotations

from collections.abc import Sequence

from ._appliers import Conversation
from ._codec import _JSON, _KNOWN_MESSAGE_KEYS, _call_to_dict, _encode_conversation
from ._quoted import escape, quoted_size, utf8_size
from .types import ROLES, ChatMessage

__all__ = ["DEFAULT_MAX_BYTES", "split_for_cap", "cap_conversation_messages", "serialize_conversation"]

DEFAULT_MAX_BYTES = 200 * 1024


def _str_size(text: str) -> int:
    """Bytes of ``text`` as a JSON string literal (quotes and escapes included)."""
    return utf8_size(escape(text))


# Bytes of the fixed parts of a message object: '{"id":,"role":,"content":,"ts":,"stopped":}'.
_MSG_FIXED = len('{"id":,"role":,"content":,"ts":,"stopped":}')
_KEY_SIZES = {key: len(key) + 4 for key in _KNOWN_MESSAGE_KEYS}  # ',"key":'
_USAGE_FIXED = len(
    '{"inputTokens":,"outputTokens":,"cacheReadTokens":,"cacheWriteTokens":,"reasoningTokens":}'
)


_ROLE_SIZES = {role: len(role) + 2 for role in ROLES}
_small_str_sizes: dict[str, int] = {}  # ids repeat little, models a lot: cache model-sized strings


def _cached_str_size(text: str) -> int:
    size = _small_str_sizes.get(text)
    if size is None:
        size = _str_size(text)
        if len(_small_str_sizes) < 4096:
            _small_str_sizes[text] = size
    return size


def _message_size(msg: ChatMessage) -> int:
    """UTF-8 size of ``_JSON.encode(message_to_dict(msg))``, computed without building the text.

    The common fields are measured directly (one C escape per string; a long text's size comes
    from ``_quoted``'s cache); nested structures, which are rare, are encoded. A property test pins
    the equality with the real encoding.
    """
    size = (
        _MSG_FIXED
        + _str_size(msg.id)
        + _ROLE_SIZES[msg.role]
        + quoted_size(msg.content, (msg.id, "content"))
        + len(str(msg.ts))
        + (4 if msg.stopped else 5)
    )
    if msg.model is not None:
        size += _KEY_SIZES["model"] + _cached_str_size(msg.model)
    if msg.thinking is not None:
        size += _KEY_SIZES["thinking"] + quoted_size(msg.thinking, (msg.id, "thinking"))
    if msg.thinking_blocks is not None:
        size += _KEY_SIZES["thinkingBlocks"] + utf8_size(_JSON.encode(msg.thinking_blocks))
    if msg.tool_calls is not None:
        size += _KEY_SIZES["toolCalls"] + utf8_size(
            _JSON.encode([_call_to_dict(c) for c in msg.tool_calls])
        )
    usage = msg.usage
    if usage is not None:
        size += (
            _KEY_SIZES["usage"]
            + _USAGE_FIXED
            + len(str(usage.input_tokens))
            + len(str(usage.output_tokens))
            + len(str(usage.cache_read_tokens))
            + len(str(usage.cache_write_tokens))
            + len(str(usage.reasoning_tokens))
        )
    if msg.extra:
        for key, value in msg.extra.items():
            if key not in _KNOWN_MESSAGE_KEYS:
                size += 2 + _str_size(key) + utf8_size(_JSON.encode(value))
    return size


def _split_indices(messages: Sequence[ChatMessage], sizes: Sequence[int], max_bytes: int) -> tuple[int, int]:
    """Return ``(cut, first_user)``: what survives the cap.

    The kept set is the system messages before ``first_user`` plus every message from ``cut`` on;
    ``cut == 0`` keeps everything. Dropping happens in whole units: first the non-system messages
    before the first user message, then whole exchanges (a user message up to the next user
    message), oldest first; the newest exchange is never dropped. Linear in the number of messages.
    """
    count = len(messages)
    total = sum(sizes) + max(count - 1, 0) + 2
    if total <= max_bytes:
        return 0, 0
    user_starts = [i for i, m in enumerate(messages) if m.role == "user"]
    if not user_starts:
        return 0, 0
    first_user = user_starts[0]
    # Unit 0: the non-system messages before the first user message.
    preamble = [i for i in range(first_user) if messages[i].role != "system"]
    cut = first_user
    if preamble:
        total -= sum(sizes[i] for i in preamble) + len(preamble)
        if total <= max_bytes:
            return cut, first_user
    # Then whole exchanges, oldest first, never the newest one.
    for n in range(len(user_starts) - 1):
        start, end = user_starts[n], user_starts[n + 1]
        total -= sum(sizes[start:end]) + (end - start)
        cut = end
        if total <= max_bytes:
            break
    return cut, first_user


def _split(messages: Sequence[ChatMessage], max_bytes: int) -> tuple[list[ChatMessage], list[ChatMessage]]:
    """Split with each message measured once: (kept, dropped)."""
    sizes = [_message_size(m) for m in messages]
    cut, first_user = _split_indices(messages, sizes, max_bytes)
    if cut == 0:
        return list(messages), []
    head = [i for i in range(first_user) if messages[i].role == "system"]
    head_set = set(head)
    kept = [messages[i] for i in head]
    kept.extend(messages[cut:])
    dropped = [messages[i] for i in range(cut) if i not in head_set]
    return kept, dropped


def split_for_cap(
    messages: Sequence[ChatMessage], max_bytes: int = DEFAULT_MAX_BYTES
) -> tuple[list[ChatMessage], list[ChatMessage]]:
    """Split ``messages`` into (kept, dropped) so the kept ones fit ``max_bytes``.

    The size is the UTF-8 byte length of the compact JSON (``separators=(",", ":")``,
    ``ensure_ascii=False``) of the serialized messages array. Each message is measured once, so
    the cost is linear. Whole oldest exchanges are dropped (a user message and everything up to
    the next user message), after the non-system messages before the first user message; system
    messages before the first user message and the newest exchange are always kept, so the kept
    part may still exceed the budget. A conversation with no user message is returned whole.
    Both lists keep the original order.
    """
    return _split(messages, max_bytes)


def cap_conversation_messages(
    messages: Sequence[ChatMessage], max_bytes: int = DEFAULT_MAX_BYTES
) -> list[ChatMessage]:
    """Return the messages that survive the history cap (see ``split_for_cap``)."""
    return split_for_cap(messages, max_bytes)[0]


def serialize_conversation(conv: Conversation, max_bytes: int = DEFAULT_MAX_BYTES) -> str:
    """Return the v2 JSON text of ``conv`` with its messages capped to ``max_bytes``.

    ``{"v": 2, "id", "createdAt", "messages": [...]}``, compact, non-ASCII kept as UTF-8,
    ``None`` fields omitted, unknown message fields written back verbatim, lone surrogates
    written as U+FFFD (the text always encodes as UTF-8).
    """
    kept, _ = _split(conv.messages, max_bytes)
    return _encode_conversation(conv, kept)
