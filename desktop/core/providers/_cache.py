"""Anthropic prompt caching: ``cache_control`` breakpoints on a Messages request body.

Anthropic caches a request's prefix (tools, then system, then messages) up to each block marked
``cache_control: {"type": "ephemeral"}``; a later request with the same prefix reads it at a tenth
of the input price (a cache write costs 1.25x). A request may carry at most
:data:`MAX_BREAKPOINTS` marks. We mark, in this order while marks are left:

1. the last tool definition (the tools rarely change between requests),
2. the system prompt (sent as a list of one text block),
3. the last block of the last ``user`` message (the whole conversation so far; the next request
   of the same node reads it back). A string content becomes one text block first.

Thinking and redacted thinking blocks cannot carry a mark, nor can an empty text block (nor, to
be safe, a tool result with empty content): such a block is passed over for the block before
it. A tool result with images (content: a text block and image blocks) is marked as a whole, on
the ``tool_result`` block; the blocks inside it are never marked. Marks already present are
counted and never doubled, so applying :func:`add_cache_breakpoints` twice changes nothing.
"""

from __future__ import annotations

import logging
from typing import Any

log = logging.getLogger(__name__)

__all__ = ["EPHEMERAL", "MAX_BREAKPOINTS", "add_cache_breakpoints", "count_breakpoints"]

#: The one ``cache_control`` value sent (the default five-minute cache).
EPHEMERAL: dict[str, str] = {"type": "ephemeral"}
#: Anthropic rejects a request with more ``cache_control`` blocks than this.
MAX_BREAKPOINTS = 4
_NEVER_MARKED = frozenset({"thinking", "redacted_thinking"})


def _blocks(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def count_breakpoints(body: dict[str, Any]) -> int:
    """Number of blocks of ``body`` (tools, system, message content) carrying ``cache_control``."""
    blocks: list[Any] = list(_blocks(body.get("tools"))) + list(_blocks(body.get("system")))
    for message in _blocks(body.get("messages")):
        if isinstance(message, dict):
            blocks += _blocks(message.get("content"))
    return sum(1 for b in blocks if isinstance(b, dict) and "cache_control" in b)


def _markable(block: Any) -> bool:
    if not isinstance(block, dict) or block.get("type") in _NEVER_MARKED:
        return False
    if block.get("type") == "text":
        text = block.get("text")
        return isinstance(text, str) and bool(text.strip())
    if block.get("type") == "tool_result":
        # An empty result may reach the API as an empty text block: not marked, to stay valid.
        content = block.get("content")
        return bool(content.strip()) if isinstance(content, str) else bool(content)
    return True


def _mark_last(blocks: list[Any]) -> tuple[list[Any], bool]:
    """``blocks`` with the last markable block marked (a copy); False when none could be."""
    for i in range(len(blocks) - 1, -1, -1):
        block = blocks[i]
        if isinstance(block, dict) and "cache_control" in block:
            return blocks, False  # already marked: counted, not doubled
        if _markable(block):
            out = list(blocks)
            out[i] = {**block, "cache_control": dict(EPHEMERAL)}
            return out, True
    return blocks, False


def _as_blocks(content: Any) -> list[Any] | None:
    """Content as a list of blocks (a non-blank string becomes one text block); None otherwise."""
    if isinstance(content, list):
        return content
    if isinstance(content, str) and content.strip():
        return [{"type": "text", "text": content}]
    return None


def add_cache_breakpoints(body: dict[str, Any]) -> dict[str, Any]:
    """Return ``body`` with prompt cache breakpoints added (see the module doc).

    The input is not changed: the returned body shares every part it does not mark. Only
    ``cache_control`` keys are added, and the system prompt and the last user message's string
    content are turned into equivalent text-block lists; every other field stays as it was.

    Args:
        body: An Anthropic Messages request body.

    Returns:
        The body with at most :data:`MAX_BREAKPOINTS` ``cache_control`` blocks in all.
    """
    out = dict(body)
    left = MAX_BREAKPOINTS - count_breakpoints(body)

    tools = body.get("tools")
    if left > 0 and isinstance(tools, list) and tools:
        marked, added = _mark_last(tools)
        if added:
            out["tools"] = marked
            left -= 1

    system = _as_blocks(body.get("system"))
    if left > 0 and system is not None:
        marked, added = _mark_last(system)
        if added:
            out["system"] = marked
            left -= 1

    messages = body.get("messages")
    if left > 0 and isinstance(messages, list):
        for i in range(len(messages) - 1, -1, -1):
            message = messages[i]
            if not isinstance(message, dict) or message.get("role") != "user":
                continue
            content = _as_blocks(message.get("content"))
            if content is not None:
                marked, added = _mark_last(content)
                if added:
                    new_messages = list(messages)
                    new_messages[i] = {**message, "content": marked}
                    out["messages"] = new_messages
                    left -= 1
            break
    log.debug("request carries %d cache breakpoint(s)", MAX_BREAKPOINTS - left)
    return out
