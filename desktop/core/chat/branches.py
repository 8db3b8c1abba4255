"""A conversation's versions as a tree of branches: what the node's branch map shows.

``versions`` keeps every edit and regenerate as records on user messages naming stored tails
(``_vstore``; ``locate`` walks them message by message). This module reads the same records (never
writes them) and returns their shape:

* a :class:`BranchMap` is the shown conversation (the *main line*): its message count and cost,
  the :class:`BranchPoint` s along it and the forks made from its messages;
* a :class:`BranchPoint` is a user message where alternatives exist: ``"edit"`` (versions of the
  user message) or ``"answer"`` (regenerated answers to it), at the path position where the
  alternatives start, with one :class:`Branch` per version in version order;
* a :class:`Branch` is one alternative: its 1-based number, whether it is the shown one, the
  :class:`~desktop.core.chat.locate.VersionStep` s that make it shown (``switch_fork`` each, in
  order, as ``locate.activate_message`` does), its message count and cost from the fork point to
  its end as it reads when shown, its first words, and (for a stored branch) the fork points and
  forks inside it. The shown branch of a point has no children: what follows it is the main line,
  whose later points are the map's own.

Counts and costs: a branch counts the messages of its path (stored alternatives below it are
their own rows); its cost prices the assistant messages of that path with ``conversation_cost``
(each message's own model, else the node's), leaving out copies a fork brought in (their cost
belongs to the node they came from), as the node's cost chip does.

Forks: ``fork_prefix`` marks each copied message with ``extra["forkedFrom"]`` (the original's id).
A node's fork origin is the ``forkedFrom`` of the last message of the leading run of such copies on
its shown path (:func:`fork_origin`); the link shows under the branch holding that message. A fork
of a fork copied from the grandparent's messages names the grandparent's message (``fork_prefix``
keeps the first origin), so it shows there. A fork whose copied prefix was edited away shows
nowhere.

Nesting is followed :data:`MAX_DEPTH` levels deep (stored branches inside stored branches); below
that a branch shows no points (a hand-made file could nest without bound; the app never gets near).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ._vread import responses_in
from ._vstore import FORKED_FROM_KEY, KEYS, ForkKind, materialize, read, resolve, table_of
from .cost import ConversationCost, Price, conversation_cost
from .locate import VersionStep
from .types import ChatMessage

__all__ = [
    "MAX_DEPTH",
    "Branch",
    "BranchMap",
    "BranchPoint",
    "ForkLink",
    "Peer",
    "branch_map",
    "fork_origin",
    "preview",
]

log = logging.getLogger(__name__)

MAX_DEPTH = 64
"""How many levels of stored branches inside stored branches the map follows."""


@dataclass(frozen=True, slots=True)
class Peer:
    """Another node of the project, as far as forks go.

    Attributes:
        node_id: Its id.
        title: Its title.
        messages: Its shown path (only the leading ``forkedFrom`` copies are read).
    """

    node_id: str
    title: str
    messages: Sequence[ChatMessage]


@dataclass(frozen=True, slots=True)
class ForkLink:
    """A node forked from a message of this conversation.

    Attributes:
        node_id: The fork's node.
        title: Its title.
        message_id: The message it was forked from (the last one it copied).
        index: That message's 0-based position in the path of the branch holding it.
        preview: The first words of that message.
    """

    node_id: str
    title: str
    message_id: str
    index: int
    preview: str


@dataclass(frozen=True, slots=True)
class Branch:
    """One alternative at a fork point (see the module docstring).

    Attributes:
        k: Its number among the point's versions, 1-based.
        shown: True for the version on the shown path.
        steps: The switches that make it shown (``()`` for the shown one).
        messages: Messages from the fork point to the branch's end.
        cost: What the assistant messages of those cost.
        preview: The first words of its first message with text.
        points: The fork points inside it (a stored branch only).
        forks: The forks made from its messages (a stored branch only).
    """

    k: int
    shown: bool
    steps: tuple[VersionStep, ...]
    messages: int
    cost: ConversationCost
    preview: str
    points: tuple[BranchPoint, ...] = ()
    forks: tuple[ForkLink, ...] = ()


@dataclass(frozen=True, slots=True)
class BranchPoint:
    """A user message where alternatives exist.

    Attributes:
        carrier_id: The user message holding the record.
        kind: ``"edit"`` (versions of that message) or ``"answer"`` (regenerated answers to it).
        index: The 0-based path position where the alternatives start (the carrier's own for an
            edit, the one after it for an answer).
        prompt: The first words of the carrier (the shown version's, for an edit).
        branches: Every readable version, in version order (an unreadable one is left out and logged).
        versions: How many versions the point records (``n`` of ``k/n``, as its ``‹ k/n ›`` row).
    """

    carrier_id: str
    kind: ForkKind
    index: int
    prompt: str
    branches: tuple[Branch, ...]
    versions: int


@dataclass(frozen=True, slots=True)
class BranchMap:
    """A conversation's branches (see the module docstring).

    Attributes:
        messages: Messages of the shown path.
        cost: What its assistant messages cost.
        total: What every version's assistant messages cost (the node's cost chip).
        points: The fork points along it, in path order (an edit before an answer at one carrier).
        forks: The forks made from its messages, in path order.
        leaves: How many whole conversations the versions make (1: no versions).
    """

    messages: int
    cost: ConversationCost
    total: ConversationCost
    points: tuple[BranchPoint, ...]
    forks: tuple[ForkLink, ...]
    leaves: int


def preview(messages: Sequence[ChatMessage], words: int = 8) -> str:
    """The first ``words`` words of the first message with text (``"…"`` marks a cut; ``""`` if none)."""
    for m in messages:
        parts = m.content.split()
        if parts:
            text = " ".join(parts[:words])
            return text + "…" if len(parts) > words else text
    return ""


def fork_origin(messages: Sequence[ChatMessage]) -> str | None:
    """The id of the message a node was forked from (see the module docstring); None if no fork."""
    origin: str | None = None
    for m in messages:
        value = m.extra.get(FORKED_FROM_KEY) if m.extra else None
        if not isinstance(value, str):
            break
        origin = value
    return origin


class _Builder:
    """Builds a map for one set of prices and forks (the origins index the forks)."""

    def __init__(self, model: str | None, overrides: Mapping[str, Price] | None,
                 origins: Mapping[str, list[Peer]]) -> None:
        self._model = model
        self._overrides = overrides
        self._origins = origins
        self.stored = 0  # stored versions met (each is one more whole conversation)

    def cost(self, messages: Sequence[ChatMessage]) -> ConversationCost:
        return conversation_cost(
            (m for m in messages if m.role == "assistant" and FORKED_FROM_KEY not in m.extra),
            self._model, self._overrides)

    def forks(self, messages: Sequence[ChatMessage], base: int) -> tuple[ForkLink, ...]:
        if not self._origins:
            return ()
        out: list[ForkLink] = []
        for i, m in enumerate(messages):
            for peer in self._origins.get(m.id, ()):
                out.append(ForkLink(peer.node_id, peer.title, m.id, base + i, preview([m])))
        return tuple(out)

    def points(self, messages: Sequence[ChatMessage], base: int, steps: tuple[VersionStep, ...],
               table: Mapping[str, Any] | None, skip_first_edit: bool, depth: int) -> list[BranchPoint]:
        """The fork points of a path: the shown path (``table`` None: each message owns its table)
        or a stored tail starting at position ``base`` (its owner's ``table``)."""
        out: list[BranchPoint] = []
        for i, m in enumerate(messages):
            if m.role != "user" or not m.extra:
                continue
            owner_table = table_of(m.extra) if table is None else table
            for kind in KEYS:
                if kind == "edit" and skip_first_edit and i == 0:
                    continue  # the point this tail was reached through
                record = read(m, kind, owner_table)
                if record is not None:
                    start = i if kind == "edit" else i + 1
                    out.append(self.point(m, kind, record, messages[start:], base + start, steps,
                                          owner_table, depth))
        return out

    def point(self, carrier: ChatMessage, kind: ForkKind, record: tuple[int, list[Any]],
              shown_tail: Sequence[ChatMessage], start: int, steps: tuple[VersionStep, ...],
              table: Mapping[str, Any], depth: int) -> BranchPoint:
        active, others = record
        branches: list[Branch] = []
        for j in range(len(others) + 1):
            if j == active:
                branches.append(Branch(j + 1, not steps, steps, len(shown_tail), self.cost(shown_tail),
                                       preview(shown_tail)))
                continue
            item = others[j if j < active else j - 1]
            k = j + 1
            tail = _tail(resolve(item, table))
            if tail is None:
                log.warning("skipping an unreadable stored version %d under %s", k, carrier.id)
                continue
            self.stored += 1
            here = (*steps, VersionStep(carrier.id, kind, k))
            inner: tuple[BranchPoint, ...] = ()
            if depth < MAX_DEPTH:
                inner = tuple(self.points(tail, start, here, table, kind == "edit", depth + 1))
            branches.append(Branch(k, False, here, len(tail), self.cost(tail), preview(tail), inner,
                                   self.forks(tail, start)))
        return BranchPoint(carrier.id, kind, start, preview([carrier]), tuple(branches), len(others) + 1)


def _tail(raw: object) -> list[ChatMessage] | None:
    if raw is None:
        return None
    try:
        return materialize(raw, deep=False)  # type: ignore[arg-type]
    except (TypeError, ValueError, RecursionError) as exc:
        log.debug("unreadable stored version: %s", exc)
        return None


def branch_map(messages: Sequence[ChatMessage], model: str | None,
               overrides: Mapping[str, Price] | None = None,
               peers: Sequence[Peer] = ()) -> BranchMap:
    """The branches of a conversation (see the module docstring).

    Args:
        messages: The conversation's shown path (``Conversation.messages``).
        model: Prices the messages that do not name their model (the node's pricing model).
        overrides: The user's price overrides.
        peers: The project's other nodes (their forks from this conversation become links).
    """
    origins: dict[str, list[Peer]] = {}
    for peer in peers:
        origin = fork_origin(peer.messages)
        if origin is not None:
            origins.setdefault(origin, []).append(peer)
    b = _Builder(model, overrides, origins)
    points = tuple(b.points(messages, 0, (), None, False, 0))
    total = conversation_cost(responses_in(messages), model, overrides)
    return BranchMap(len(messages), b.cost(messages), total, points, b.forks(messages, 0), 1 + b.stored)
