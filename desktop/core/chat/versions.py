"""Versions of a conversation: edit a user message, regenerate an answer, switch, fork.

Storage (no new field on any type: everything rides in ``ChatMessage.extra``, which every codec,
the history cap and the archive already carry verbatim; the layout is ``_vstore``'s):

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

  A record is ``{"active": i, "others": [ref, ...]}``: ``i`` is the 0-based position of the
  active tail among all ``len(others) + 1`` versions (in creation order) and each ref names an
  inactive tail, in order, in the table ``extra["versionTails"]`` (``{ref: [message, ...]}``,
  messages in their persisted form, ``message_to_dict``) of the active-path message that owns the
  fork point. Stored messages may carry records of their own (refs into the same table) but never
  a table, so the JSON depth of a conversation never grows with its history.

Compatibility, both directions: a file without records loads as a conversation without
versions. A file with records is still a v2 conversation whose ``messages`` is the active path;
an older loader keeps the records and tables as unknown message fields and writes them back
untouched. Records of the older nested form (each tail inside its record) are read as they are,
and flattened into the table by a load (``flatten_versions``) and by every operation.
The history cap measures a carrier with its records and table (the versions count towards the
cap), keeps or drops it with its exchange, and a dropped carrier goes to the history archive with
them: a version is never dropped silently.

A malformed record (a hand-edited or hostile file) is ignored for display, switching and cost and
kept verbatim (moved to ``"<key>Unreadable"`` when a new record takes its place).
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from ._appliers import Conversation, new_id, now_ms
from ._vread import (
    CostSplit,
    all_responses,
    cost_split,
    cost_split_text,
    other_versions,
    responses_in,
    stored_versions,
)
from ._vstore import (
    ANSWERS_KEY,
    FORKED_FROM_KEY,
    KEYS,
    TAILS_KEY,
    VERSIONS_KEY,
    ForkKind,
    Item,
    distribute,
    flatten_owner,
    flatten_raw_messages,
    is_flat,
    materialize,
    new_ref,
    pool_of,
    read,
    resolve,
    set_table,
    stored,
    table_of,
    take_tables,
)
from .types import ChatMessage

__all__ = [
    "VERSIONS_KEY",
    "ANSWERS_KEY",
    "TAILS_KEY",
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
    "flatten_versions",
    "flatten_raw_messages",
    "CostSplit",
    "cost_split",
    "cost_split_text",
]


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


def _write(msg: ChatMessage, kind: ForkKind, active: int, others: list[Item]) -> None:
    """Set (or, with no other versions, remove) the record; ``extra`` is replaced, never mutated.

    A malformed record found there is not thrown away: it moves to ``"<key>Unreadable"``.
    """
    key = KEYS[kind]
    extra = {k: v for k, v in msg.extra.items() if k != key}
    if key in msg.extra and read(msg, kind) is None:
        extra[f"{key}Unreadable"] = msg.extra[key]
    if others:
        extra[key] = {"active": active, "others": others}
    msg.extra = extra


def _ensure_flat(messages: Sequence[ChatMessage]) -> None:
    """Move nested tails (the older form) of the active path's records into their tables."""
    for m in messages:
        if m.extra and not is_flat(m.extra):
            flat = flatten_owner(m.extra, deep=False)
            if flat is not None:
                m.extra = flat[0]


def flatten_versions(messages: Sequence[ChatMessage]) -> int:
    """Store the versions of an active path in the flat form (in place; what a load does).

    Records of the older nested form (each stored tail inside its record, nesting deeper with
    every version) are moved into their owner's table, however deep they nest; a readable
    conversation stays the same conversation (same path, versions, responses).

    Returns:
        How many nested tails were moved (0: nothing changed).
    """
    total = 0
    for m in messages:
        if m.extra:
            flat = flatten_owner(m.extra)
            if flat is not None:
                m.extra, moved = flat
                total += moved
    return total


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
    tail = conv.messages[p:]
    _ensure_flat(tail)
    record = read(old, "edit")
    active, others = record or (0, [])
    pool = pool_of(tail)
    ref = new_ref()
    pool[ref] = stored(tail, strip_edit=record is not None)  # an unreadable record stays with it
    versions: list[Item] = [*others[:active], ref, *others[active:]]
    new = ChatMessage(id=new_id("m"), role="user", content=new_text, ts=now_ms())
    _write(new, "edit", len(versions), versions)
    set_table(new, pool)
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
    _ensure_flat(conv.messages[u:])
    carrier = conv.messages[u]
    active, others = read(carrier, "answer") or (0, [])
    tail = conv.messages[u + 1 :]
    pool = pool_of([carrier, *tail])
    versions = list(others)
    if tail:
        ref = new_ref()
        pool[ref] = stored(tail, strip_edit=False)
        versions.insert(active, ref)
    _write(carrier, "answer", len(versions), versions)
    set_table(carrier, pool)
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
    record = read(conv.messages[carrier], kind)
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
    chosen one becomes the end of the active path. The stored tails are regrouped by owner: each
    message of the new path owns the tails under its own fork points.

    Raises:
        KeyError: Unknown carrier.
        ValueError: ``k`` out of range, or the chosen version is malformed (nothing changes then).
    """
    c = _index(conv, carrier_id)
    _ensure_flat(conv.messages[c:])
    carrier = conv.messages[c]
    active, others = read(carrier, kind) or (0, [])
    n = len(others) + 1
    if not 1 <= k <= n:
        raise ValueError(f"version {k} out of range 1..{n}")
    if k - 1 == active:
        return
    start = _tail_start(c, kind)
    current = conv.messages[start:]
    versions: list[Item | None] = [*others[:active], None, *others[active:]]
    chosen = versions[k - 1]
    chosen_tail = resolve(chosen, table_of(carrier.extra))
    try:
        if chosen_tail is None:
            raise ValueError("not a list of messages")
        new_tail = materialize(chosen_tail, deep=True)
    except (TypeError, ValueError, RecursionError) as exc:
        raise ValueError(f"version {k} cannot be read: {exc}") from None
    if kind == "edit" and (not new_tail or new_tail[0].role != "user"):
        raise ValueError(f"version {k} does not start with a user message")
    pool = pool_of(current if kind == "edit" else [carrier, *current])
    if isinstance(chosen, str):
        pool.pop(chosen, None)
    take_tables(new_tail, pool)
    keep_current = kind == "edit" or bool(current)
    kept: list[Item] = []
    new_active = 0
    for i, item in enumerate(versions):
        if i == k - 1:
            new_active = len(kept)
        elif item is None:
            if keep_current:
                ref = new_ref()
                pool[ref] = stored(current, strip_edit=kind == "edit")
                kept.append(ref)
        else:
            kept.append(item)
    del conv.messages[start:]
    owner = new_tail[0] if kind == "edit" else carrier
    _write(owner, kind, new_active, kept)
    conv.messages.extend(new_tail)
    distribute(new_tail if kind == "edit" else [carrier, *new_tail], pool, owner)


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
        edit = read(m, "edit")
        if edit is not None:
            out[m.id] = VersionControl(m.id, "edit", edit[0] + 1, len(edit[1]) + 1)
        answer = read(m, "answer")
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
        kept = {k: v for k, v in m.extra.items() if k not in (VERSIONS_KEY, ANSWERS_KEY, TAILS_KEY)}
        c = copy.deepcopy(dataclasses.replace(m, extra=kept))
        c.extra.setdefault(FORKED_FROM_KEY, m.id)
        c.id = new_id("m")
        out.append(c)
    return out
