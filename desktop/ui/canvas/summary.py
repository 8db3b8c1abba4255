"""What a zoomed-out card shows: a node's title, model, last message's first line, cost and state.

Pure data from a live ``ChatNodeWidget`` (no painting), read when the card paints its summary.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

from desktop.ui.markdown.tail_text import display_text

if TYPE_CHECKING:
    from desktop.ui.node.chat_node import ChatNodeWidget

log = logging.getLogger(__name__)

__all__ = ["CardSummary", "first_words", "summary_of"]


@dataclass(frozen=True, slots=True)
class CardSummary:
    """The summary of one node.

    Attributes:
        title: The node's title.
        model: The model id the node uses (its own, else the default one; "no model" when none).
        last_line: The start of the last message with text ("" for an empty node).
        cost: The node's cost as the cost chip shows it ("" when nothing was spent).
        state: ``idle``, ``busy`` or ``approval`` (a tool call waits for the user).
        messages: How many messages the active path has.
    """

    title: str
    model: str
    last_line: str
    cost: str
    state: str
    messages: int


def plain_preview(text: str) -> str:
    """``text`` with its Markdown syntax hidden (headings, emphasis, code markers), as the streaming
    tail shows it: a card and an edge label show words, not ``## `` or ``**``."""
    return display_text(text + "\n")


def first_words(text: str, limit: int = 6) -> str:
    """The first ``limit`` words of ``text``'s first non-blank line, with "…" when cut."""
    line = next((ln.strip() for ln in plain_preview(text[:2000]).splitlines() if ln.strip()), "")
    words = line.split()
    return " ".join(words[:limit]) + ("\u2026" if len(words) > limit else "")


def summary_of(node: ChatNodeWidget) -> CardSummary:
    """The summary of ``node`` as it is now."""
    from desktop.core.chat.cost import format_cost

    messages = node.conversation.messages
    last_line = ""
    waiting = False
    for message in reversed(messages):
        if not last_line and message.content.strip():
            last_line = plain_preview(message.content.strip()[:400]).strip()
        if any(call.status == "awaiting_approval" for call in message.tool_calls or ()):
            waiting = True
        if last_line:
            break
    try:
        cost = format_cost(node.cost())
    except Exception:  # a price table problem must not break painting
        log.debug("no cost for %s", node.node_id, exc_info=True)
        cost = ""
    state = "approval" if waiting else "busy" if node.is_busy() else "idle"
    model = node.model or node.model_choice.default_model() or "no model"  # as the sidebar says it
    return CardSummary(node.title or "Chat", model, last_line, cost, state,
                       len(messages))
