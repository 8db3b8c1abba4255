"""Reading versions: every response of every version, the stored versions, the cost split.

Private module of :mod:`desktop.core.chat.versions` (import the public names from there). Works on
any message list (a conversation's active path, or history read from the archive), in the flat
form and in the older nested one, without recursion however deep the versions nest.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ._appliers import Conversation
from ._vstore import FORKED_FROM_KEY, KEYS, ForkKind, materialize, read, resolve, table_of
from .cost import ConversationCost, Price, conversation_cost, format_cost
from .types import ChatMessage

__all__ = [
    "CostSplit",
    "all_responses",
    "cost_split",
    "cost_split_text",
    "other_versions",
    "responses_in",
    "stored_versions",
]

log = logging.getLogger(__name__)

_Point = tuple[ForkKind, int, int, ChatMessage, list[ChatMessage], Mapping[str, Any]]


def _fork_points(
    messages: Sequence[ChatMessage], table: Mapping[str, Any] | None, seen: set[tuple[int, str]]
) -> Iterator[_Point]:
    """Each stored version at the fork points of ``messages`` (not below them), in order.

    Yields ``(kind, number, n, carrier, stored messages, owner's table)``: the version's 1-based
    number among the ``n`` of its fork point. ``table`` is the owner's table for stored messages,
    None for messages of a path (each owns its table). A ref named twice (only a hand-edited file
    does that) is followed once; unreadable versions are skipped and logged.
    """
    for m in messages:
        if m.role != "user" or not m.extra:
            continue
        owner_table = table_of(m.extra) if table is None else table
        for kind in KEYS:
            record = read(m, kind, owner_table)
            if record is None:
                continue
            active, others = record
            for i, item in enumerate(others):
                if isinstance(item, str):
                    key = (id(owner_table), item)
                    if key in seen:
                        continue
                    seen.add(key)
                tail = resolve(item, owner_table)
                try:
                    if tail is None:
                        raise ValueError("not a list of messages")
                    msgs = materialize(tail, deep=False)
                except (TypeError, ValueError, RecursionError) as exc:
                    log.warning("skipping an unreadable stored version under %s: %s", m.id, exc)
                    continue
                yield kind, i + 1 if i < active else i + 2, len(others) + 1, m, msgs, owner_table


def _walk(messages: Sequence[ChatMessage], active: bool) -> Iterator[tuple[ChatMessage, bool]]:
    """Every message of ``messages`` and of every stored version under them, with "on this path".

    Depth first (a message, then the versions stored under it), without recursion: the older
    nested form may nest any number of levels.
    """
    seen: set[tuple[int, str]] = set()
    stack: list[tuple[Iterator[ChatMessage], bool, Mapping[str, Any] | None]]
    stack = [(iter(messages), active, None)]
    while stack:
        it, on_path, table = stack[-1]
        m = next(it, None)
        if m is None:
            stack.pop()
            continue
        yield m, on_path
        if m.role != "user" or not m.extra:
            continue
        points = list(_fork_points([m], table, seen))
        for *_, msgs, owner_table in reversed(points):
            stack.append((iter(msgs), False, owner_table))


def responses_in(messages: Sequence[ChatMessage]) -> list[ChatMessage]:
    """The assistant messages of ``messages`` and of every version stored under them.

    Copies made by ``fork_prefix`` are left out (their cost belongs to the node they came from).
    Works on any message list: a conversation's active path, or history read from the archive.
    """
    return [m for m, _ in _walk(messages, True) if m.role == "assistant" and FORKED_FROM_KEY not in m.extra]


def all_responses(conv: Conversation) -> list[ChatMessage]:
    """Every assistant message of every version of ``conv`` (what its cost counts)."""
    return responses_in(conv.messages)


def other_versions(conv: Conversation) -> list[ChatMessage]:
    """The assistant messages of the versions that are not on the active path."""
    return [
        m
        for m, on_path in _walk(conv.messages, True)
        if not on_path and m.role == "assistant" and FORKED_FROM_KEY not in m.extra
    ]


def _snippet(text: str, limit: int = 40) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def stored_versions(messages: Sequence[ChatMessage]) -> Iterator[tuple[str, list[ChatMessage]]]:
    """The versions kept under ``messages`` that are not on the path, as ``(label, tail)``.

    Depth first: each fork point in order, each of its stored versions followed by the versions
    stored inside it. The label says where the version branches off, e.g.
    ``'Version 1 of 2 of "What is…"'`` (an edit) or ``'Answer 1 of 3 to "What is…"'``.
    Unreadable versions are skipped (and logged).
    """
    seen: set[tuple[int, str]] = set()
    stack = [_fork_points(messages, None, seen)]
    while stack:
        point = next(stack[-1], None)
        if point is None:
            stack.pop()
            continue
        kind, number, n, carrier, msgs, owner_table = point
        if kind == "edit":
            label = f'Version {number} of {n} of "{_snippet(carrier.content)}"'
        else:
            label = f'Answer {number} of {n} to "{_snippet(carrier.content)}"'
        yield label, msgs
        stack.append(_fork_points(msgs, owner_table, seen))


@dataclass(frozen=True, slots=True)
class CostSplit:
    """A conversation's cost split by version.

    Attributes:
        total: Every response of every version.
        this_path: The responses on the active path.
        other: The responses of the other versions.
    """

    total: ConversationCost
    this_path: ConversationCost
    other: ConversationCost


def cost_split(
    conv: Conversation, model: str | None, overrides: Mapping[str, Price] | None = None
) -> CostSplit:
    """The cost of every response, of the active path and of the other versions."""
    on_path: list[ChatMessage] = []
    other: list[ChatMessage] = []
    for m, active in _walk(conv.messages, True):
        if m.role == "assistant" and FORKED_FROM_KEY not in m.extra:
            (on_path if active else other).append(m)
    return CostSplit(
        conversation_cost([*on_path, *other], model, overrides),
        conversation_cost(on_path, model, overrides),
        conversation_cost(other, model, overrides),
    )


def cost_split_text(split: CostSplit) -> str:
    """The tooltip line splitting the cost: ``"This path: $0.0100 · other versions: $0.0200"``.

    Empty when there are no other versions with usage (nothing to split).
    """
    if split.other.estimated and not split.other.unpriced:
        return ""
    return f"This path: {format_cost(split.this_path)} · other versions: {format_cost(split.other)}"
