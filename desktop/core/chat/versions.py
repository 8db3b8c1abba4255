"""Versions of a conversation: edit a user message, regenerate an answer, switch, fork.

Storage (no new field anywhere: everything rides in ``ChatMessage.extra``, which every codec,
the history cap and the archive already carry verbatim):

* ``Conversation.messages`` is always the ACTIVE PATH. The runtime, the cap, the cost and every
  other reader see exactly what is sent to the model and nothing else.
* A fork point is a position of the active path where other whole tails (lists of messages from
  that point on) were kept. There are two kinds, both recorded on a *user* message (the carrier):

  - ``extra["versions"]``: the edits of that user message. The fork point is the carrier's own
    position; each stored tail starts with the earlier (or later) user message. Switching moves
    the record to the user message that becomes active.
  - ``extra["answerVersions"]``: the answers to that user message. The fork point is right after
    the carrier; each stored tail is what followed it (it may be empty while a regenerated answer
    is pending). The record stays on the carrier.

  A record is ``{"active": i, "others": [tail, ...]}``: ``i`` is the 0-based position of the
  active tail among all ``len(others) + 1`` versions (in creation order) and ``others`` are the
  inactive tails, in order, each a list of messages in their persisted form
  (``message_to_dict``), which may carry nested records of their own.

Compatibility, both directions: a file without records loads as a conversation without
versions. A file with records is still a v2 conversation whose ``messages`` is the active path;
an older loader keeps the records as unknown message fields and writes them back untouched.
The history cap measures a carrier with its records (the versions count towards the cap), keeps
or drops it with its exchange, and a dropped carrier goes to the history archive with its
records: a version is never dropped silently.

A malformed record (a hand-edited or hostile file) is ignored for display, switching and cost and
kept verbatim (moved to ``"<key>Unreadable"`` when a new record takes its place).
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ._appliers import Conversation, new_id, now_ms
from ._codec import message_from_dict, message_to_dict
from .cost import ConversationCost, Price, conversation_cost, format_cost
from .types import ChatMessage

log = logging.getLogger(__name__)

__all__ = [
    "VERSIONS_KEY",
    "ANSWERS_KEY",
    "FORKED_FROM_KEY",
    "ForkKind",
    "VersionControl",
    "edit_user_message",
    "regenerate",
    "versions_at",
    "switch_version",
    "switch_fork",
    "version_controls",
    "fork_prefix",
    "all_responses",
    "responses_in",
    "other_versions",
    "stored_versions",
    "CostSplit",
    "cost_split",
    "cost_split_text",
]

VERSIONS_KEY = "versions"
"""``extra`` key of a user message holding the other edits of it (see the module doc)."""
ANSWERS_KEY = "answerVersions"
"""``extra`` key of a user message holding the other answers to it (see the module doc)."""
FORKED_FROM_KEY = "forkedFrom"
"""``extra`` key of a message copied by ``fork_prefix``: the id of the original message."""

ForkKind = Literal["edit", "answer"]

_KEYS: dict[ForkKind, str] = {"edit": VERSIONS_KEY, "answer": ANSWERS_KEY}
_Tail = list[dict[str, Any]]


@dataclass(frozen=True, slots=True)
class VersionControl:
    """Where a ``‹ k/n ›`` switcher shows, and what it switches.

    Attributes:
        carrier_id: The user message holding the record.
        kind: ``"edit"`` (versions of that user message) or ``"answer"`` (answers to it).
        k: The active version, 1-based.
        n: How many versions there are.
    """

    carrier_id: str
    kind: ForkKind
    k: int
    n: int


# ---------------------------------------------------------------------------------------------
# Records


def _read(msg: ChatMessage, kind: ForkKind) -> tuple[int, list[_Tail]] | None:
    """The record of ``kind`` on ``msg`` as ``(active, others)``, or None (absent or malformed)."""
    raw = msg.extra.get(_KEYS[kind]) if msg.extra else None
    if raw is None:
        return None
    if isinstance(raw, dict):
        active, others = raw.get("active"), raw.get("others")
        if (
            isinstance(active, int)
            and not isinstance(active, bool)
            and isinstance(others, list)
            and 0 <= active <= len(others)
            and all(isinstance(t, list) and all(isinstance(m, dict) for m in t) for t in others)
        ):
            return active, others
    log.warning("ignoring a malformed %r record on message %s", _KEYS[kind], msg.id)
    return None


def _write(msg: ChatMessage, kind: ForkKind, active: int, others: list[_Tail]) -> None:
    """Set (or, with no other versions, remove) the record; ``extra`` is replaced, never mutated.

    A malformed record found there is not thrown away: it moves to ``"<key>Unreadable"``.
    """
    key = _KEYS[kind]
    extra = {k: v for k, v in msg.extra.items() if k != key}
    if key in msg.extra and _read(msg, kind) is None:
        extra[f"{key}Unreadable"] = msg.extra[key]
    if others:
        extra[_KEYS[kind]] = {"active": active, "others": others}
    msg.extra = extra


def _to_dicts(messages: Sequence[ChatMessage], *, strip_edit: bool) -> _Tail:
    out = [message_to_dict(m) for m in messages]
    if strip_edit and out:
        out[0] = {k: v for k, v in out[0].items() if k != VERSIONS_KEY}
    return out


def _from_dicts(tail: _Tail) -> list[ChatMessage]:
    """Messages of a stored tail (deep copies: the stored JSON is never shared with live messages).

    Raises:
        TypeError: A stored message is malformed.
    """
    return [message_from_dict(copy.deepcopy(d), i) for i, d in enumerate(tail)]


def _index(conv: Conversation, message_id: str) -> int:
    for i in range(len(conv.messages) - 1, -1, -1):
        if conv.messages[i].id == message_id:
            return i
    raise KeyError(f"no message {message_id!r} in the active path")


def _user_before(messages: Sequence[ChatMessage], index: int) -> int:
    for i in range(index - 1, -1, -1):
        if messages[i].role == "user":
            return i
    return -1


def _fork_of(conv: Conversation, message_id: str) -> tuple[int, ForkKind]:
    """``(carrier index, kind)`` of the fork point a message belongs to.

    A user message: its edits. Any other message: the answers to the user message before it.

    Raises:
        KeyError: Unknown message.
        ValueError: No user message before it (nothing to regenerate or switch).
    """
    i = _index(conv, message_id)
    if conv.messages[i].role == "user":
        return i, "edit"
    u = _user_before(conv.messages, i)
    if u < 0:
        raise ValueError("the message has no user message before it")
    return u, "answer"


def _tail_start(carrier: int, kind: ForkKind) -> int:
    return carrier if kind == "edit" else carrier + 1


# ---------------------------------------------------------------------------------------------
# Operations


def edit_user_message(conv: Conversation, message_id: str, new_text: str) -> ChatMessage:
    """Replace a user message and everything after it by a new user message.

    The old tail (from that message on) becomes a stored version of that point; the new user
    message is the active one and the last message of the active path, ready to be sent.

    Returns:
        The new user message (fresh id, current time).

    Raises:
        KeyError: Unknown message.
        ValueError: The message is not a user message.
    """
    p = _index(conv, message_id)
    old = conv.messages[p]
    if old.role != "user":
        raise ValueError(f"message {message_id!r} is a {old.role} message, not a user message")
    active, others = _read(old, "edit") or (0, [])
    versions = [*others[:active], _to_dicts(conv.messages[p:], strip_edit=True), *others[active:]]
    new = ChatMessage(id=new_id("m"), role="user", content=new_text, ts=now_ms())
    _write(new, "edit", len(versions), versions)
    conv.messages[p:] = [new]
    return new


def regenerate(conv: Conversation, assistant_message_id: str) -> ChatMessage:
    """Keep the answer to a user message as a version and end the active path at that user message.

    The answer is everything after the user message before ``assistant_message_id`` (the whole
    tail, including any later exchanges). An empty answer is not kept as a version.

    Returns:
        The user message the active path now ends with (send the conversation again).

    Raises:
        KeyError: Unknown message.
        ValueError: Not an assistant message, or no user message before it.
    """
    a = _index(conv, assistant_message_id)
    if conv.messages[a].role != "assistant":
        raise ValueError(f"message {assistant_message_id!r} is not an assistant message")
    u = _user_before(conv.messages, a)
    if u < 0:
        raise ValueError("the answer has no user message before it")
    carrier = conv.messages[u]
    active, others = _read(carrier, "answer") or (0, [])
    tail = conv.messages[u + 1 :]
    versions = list(others)
    if tail:
        versions.insert(active, _to_dicts(tail, strip_edit=False))
    _write(carrier, "answer", len(versions), versions)
    del conv.messages[u + 1 :]
    return carrier


def versions_at(conv: Conversation, message_id: str) -> tuple[int, int]:
    """``(k, n)``: the active version (1-based) and the count at the fork point of a message.

    For a user message: its edits; for any other message: the answers to the user message
    before it. ``(1, 1)`` where nothing was kept.

    Raises:
        KeyError: Unknown message.
    """
    try:
        carrier, kind = _fork_of(conv, message_id)
    except ValueError:
        return 1, 1
    record = _read(conv.messages[carrier], kind)
    if record is None:
        return 1, 1
    return record[0] + 1, len(record[1]) + 1


def switch_version(conv: Conversation, message_id: str, k: int) -> None:
    """Make version ``k`` (1-based) of the fork point of a message active (see ``versions_at``).

    Raises:
        KeyError: Unknown message.
        ValueError: ``k`` out of range, or a stored version is malformed.
    """
    carrier, kind = _fork_of(conv, message_id)
    switch_fork(conv, conv.messages[carrier].id, kind, k)


def switch_fork(conv: Conversation, carrier_id: str, kind: ForkKind, k: int) -> None:
    """Make version ``k`` (1-based) of a fork point active (what a ``VersionControl`` names).

    The active tail is stored in its place (an empty answer is dropped: it holds nothing) and the
    chosen one becomes the end of the active path.

    Raises:
        KeyError: Unknown carrier.
        ValueError: ``k`` out of range, or the chosen version is malformed (nothing changes then).
    """
    c = _index(conv, carrier_id)
    record = _read(conv.messages[c], kind)
    active, others = record or (0, [])
    n = len(others) + 1
    if not 1 <= k <= n:
        raise ValueError(f"version {k} out of range 1..{n}")
    if k - 1 == active:
        return
    start = _tail_start(c, kind)
    current = conv.messages[start:]
    versions: list[_Tail | None] = [*others[:active], None, *others[active:]]
    chosen = versions[k - 1]
    assert chosen is not None
    try:
        new_tail = _from_dicts(chosen)
    except (TypeError, ValueError, RecursionError) as exc:
        raise ValueError(f"version {k} cannot be read: {exc}") from None
    if kind == "edit" and (not new_tail or new_tail[0].role != "user"):
        raise ValueError(f"version {k} does not start with a user message")
    keep_current = kind == "edit" or bool(current)
    stored: list[_Tail] = []
    new_active = 0
    for i, tail in enumerate(versions):
        if i == k - 1:
            new_active = len(stored)
        elif tail is None:
            if keep_current:
                stored.append(_to_dicts(current, strip_edit=kind == "edit"))
        else:
            stored.append(tail)
    del conv.messages[start:]
    if kind == "edit":
        _write(new_tail[0], "edit", new_active, stored)
    else:
        _write(conv.messages[c], "answer", new_active, stored)
    conv.messages.extend(new_tail)


def version_controls(conv: Conversation) -> dict[str, VersionControl]:
    """Where the active path shows a ``‹ k/n ›`` switcher: ``{message id: control}``.

    Edits show on their user message; answers on the first assistant message of the answer, or
    on the user message itself while the answer has none and the user message has no edits.
    """
    out: dict[str, VersionControl] = {}
    msgs = conv.messages
    for i, m in enumerate(msgs):
        if m.role != "user" or not m.extra:
            continue
        edit = _read(m, "edit")
        if edit is not None:
            out[m.id] = VersionControl(m.id, "edit", edit[0] + 1, len(edit[1]) + 1)
        answer = _read(m, "answer")
        if answer is not None:
            control = VersionControl(m.id, "answer", answer[0] + 1, len(answer[1]) + 1)
            shown = next((x for x in _answer_of(msgs, i) if x.role == "assistant"), None)
            if shown is not None:
                out[shown.id] = control
            elif m.id not in out:
                out[m.id] = control
    return out


def _answer_of(msgs: Sequence[ChatMessage], user: int) -> Iterator[ChatMessage]:
    for m in msgs[user + 1 :]:
        if m.role == "user":
            return
        yield m


def fork_prefix(conv: Conversation, message_id: str) -> list[ChatMessage]:
    """Copies of the active path up to and including a message, for a new node.

    Deep copies with fresh message ids (tool call ids are kept: results pair with them); the
    version records are left out (the other versions stay in the original node) and each copy
    names its original in ``extra["forkedFrom"]`` (their cost was paid by the original node, so
    ``all_responses`` leaves them out).

    Raises:
        KeyError: Unknown message.
    """
    end = _index(conv, message_id)
    out: list[ChatMessage] = []
    for m in conv.messages[: end + 1]:
        c = copy.deepcopy(m)
        c.extra = {k: v for k, v in c.extra.items() if k not in (VERSIONS_KEY, ANSWERS_KEY)}
        c.extra.setdefault(FORKED_FROM_KEY, m.id)
        c.id = new_id("m")
        out.append(c)
    return out


# ---------------------------------------------------------------------------------------------
# Responses and cost


def _walk(messages: Sequence[ChatMessage], active: bool) -> Iterator[tuple[ChatMessage, bool]]:
    """Every message of ``messages`` and of every stored version under them, with "on this path"."""
    for m in messages:
        yield m, active
        if m.role != "user" or not m.extra:
            continue
        for kind in ("edit", "answer"):
            record = _read(m, kind)
            if record is None:
                continue
            for tail in record[1]:
                try:
                    stored = _from_dicts(tail)
                except (TypeError, ValueError, RecursionError) as exc:
                    log.warning("skipping an unreadable stored version under %s: %s", m.id, exc)
                    continue
                yield from _walk(stored, False)


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
    for m in messages:
        if m.role != "user" or not m.extra:
            continue
        for kind in ("edit", "answer"):
            record = _read(m, kind)
            if record is None:
                continue
            active, others = record
            n = len(others) + 1
            for i, tail in enumerate(others):
                number = i + 1 if i < active else i + 2
                try:
                    stored = _from_dicts(tail)
                except (TypeError, ValueError, RecursionError) as exc:
                    log.warning("skipping an unreadable stored version under %s: %s", m.id, exc)
                    continue
                if kind == "edit":
                    label = f'Version {number} of {n} of "{_snippet(m.content)}"'
                else:
                    label = f'Answer {number} of {n} to "{_snippet(m.content)}"'
                yield label, stored
                yield from stored_versions(stored)


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
