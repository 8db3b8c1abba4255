"""How versions are stored: records that name their tails in one flat table (private to ``versions``).

A fork point is recorded on a user message (the carrier) as ``extra["versions"]`` (its edits) or
``extra["answerVersions"]`` (the answers to it): ``{"active": i, "others": [ref, ...]}``. Each ref
names a stored tail (a list of persisted messages) in the **table** ``extra["versionTails"]``
(``{ref: [message, ...]}``) of the *owner*: the message of the active path the fork point hangs
under (the carrier itself when it is on the active path). Stored messages carry records of their own
(refs into the same table) but never a table, so a conversation's JSON is equally deep whatever
its history: a message, its table, a tail, a message, its record.

Records written before the table existed hold the tails themselves (``others`` items are lists of
messages, which may nest records of their own, 4 JSON levels per version). They are still read as
they are; ``flatten_owner`` moves them into the table (what a load and every operation do).

Nothing here mutates a message's ``extra``, a record, a table or a stored tail in place: they are
replaced, so a value shared with another message (a copy, a saved snapshot) never changes under it.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, Literal, TypeAlias

from ._appliers import new_id
from ._codec import message_from_dict, message_to_dict
from .types import ChatMessage

__all__ = [
    "ANSWERS_KEY",
    "FORKED_FROM_KEY",
    "KEYS",
    "TAILS_KEY",
    "VERSIONS_KEY",
    "ForkKind",
    "Item",
    "distribute",
    "flatten_owner",
    "flatten_raw_messages",
    "is_flat",
    "materialize",
    "new_ref",
    "pool_of",
    "read",
    "resolve",
    "set_table",
    "stored",
    "table_of",
    "take_tables",
]

log = logging.getLogger(__name__)

VERSIONS_KEY = "versions"
ANSWERS_KEY = "answerVersions"
TAILS_KEY = "versionTails"
FORKED_FROM_KEY = "forkedFrom"
"""``extra`` key of a message copied by ``fork_prefix``: the id of the original message."""
_UNREADABLE_TABLE = TAILS_KEY + "Unreadable"

ForkKind = Literal["edit", "answer"]
KEYS: dict[ForkKind, str] = {"edit": VERSIONS_KEY, "answer": ANSWERS_KEY}

Tail: TypeAlias = list[dict[str, Any]]
Table: TypeAlias = dict[str, Tail]
Item: TypeAlias = "str | Tail"


def new_ref() -> str:
    """A fresh table key (``v-<16 hex>``)."""
    return new_id("v")


def _is_tail(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(m, dict) for m in value)


def table_of(extra: Mapping[str, Any]) -> Table:
    """The table of an owner (a message's ``extra`` or a persisted message); ``{}`` when it has none
    or it is not an object (such a value is kept aside by ``flatten_owner``)."""
    raw = extra.get(TAILS_KEY)
    return raw if isinstance(raw, dict) else {}


def resolve(item: object, table: Mapping[str, Any]) -> Tail | None:
    """The stored tail an ``others`` item names (a ref into ``table``, or a nested tail); None when
    it names nothing readable."""
    tail = table.get(item) if isinstance(item, str) else item
    return tail if _is_tail(tail) else None  # type: ignore[return-value]


def _record_items(record: object) -> list[object]:
    """The ``others`` items of a record, whatever its state (for following refs); ``[]`` when none."""
    if isinstance(record, dict):
        others = record.get("others")
        if isinstance(others, list):
            return others
    return []


def _shape_ok(record: object) -> bool:
    if not isinstance(record, dict):
        return False
    active, others = record.get("active"), record.get("others")
    return (
        isinstance(active, int)
        and not isinstance(active, bool)
        and isinstance(others, list)
        and 0 <= active <= len(others)
    )


def _read_record(
    extra: Mapping[str, Any], kind: ForkKind, table: Mapping[str, Any]
) -> tuple[int, list[Item]] | None:
    """``(active, others)`` of the record of ``kind`` in ``extra``; None when absent or unreadable.

    A record is readable when ``active`` is in range and every item names a tail: a ref found in
    ``table`` (the owner's) or a nested tail (the older form).
    """
    raw = extra.get(KEYS[kind])
    if raw is None:
        return None
    if _shape_ok(raw) and all(resolve(item, table) is not None for item in raw["others"]):
        return raw["active"], list(raw["others"])
    return None


def read(
    msg: ChatMessage, kind: ForkKind, table: Mapping[str, Any] | None = None
) -> tuple[int, list[Item]] | None:
    """The record of ``kind`` on ``msg`` as ``(active, others)``, or None (absent or malformed).

    ``table``: the owner's table (``msg``'s own when None: ``msg`` is on the active path).
    """
    if not msg.extra:
        return None
    record = _read_record(msg.extra, kind, table_of(msg.extra) if table is None else table)
    if record is None and KEYS[kind] in msg.extra:
        log.warning("ignoring a malformed %r record on message %s", KEYS[kind], msg.id)
    return record


def materialize(tail: Tail, *, deep: bool) -> list[ChatMessage]:
    """Messages of a stored tail; ``deep`` copies (a tail becoming live never shares the stored JSON).

    Raises:
        TypeError: A stored message is malformed.
    """
    return [message_from_dict(copy.deepcopy(d) if deep else d, i) for i, d in enumerate(tail)]


def _has_nested(record: object) -> bool:
    """True for a readable-looking record holding at least one nested tail (and nothing else odd)."""
    if not _shape_ok(record):
        return False
    others: list[object] = record["others"]  # type: ignore[index]
    return any(isinstance(i, list) for i in others) and all(isinstance(i, str) or _is_tail(i) for i in others)


def is_flat(extra: Mapping[str, Any]) -> bool:
    """True when no record of ``extra`` holds a nested tail (its own records only; cheap)."""
    return not any(_has_nested(extra.get(key)) for key in KEYS.values())


def flatten_owner(owner: Mapping[str, Any], *, deep: bool = True) -> tuple[dict[str, Any], int] | None:
    """``owner`` with every nested tail under it moved into its table; None when nothing moves.

    Iterative, so a record nested any number of levels deep is flattened without recursion. A
    record that is not readable stays as it is (it is not followed). A table that is not an object
    is kept aside as ``"versionTailsUnreadable"``.

    Args:
        owner: A message's ``extra``, or a persisted message of the active path (its records and
            table are top-level keys either way).
        deep: Also look for nested tails inside the tails already in the table (a load does; an
            operation only needs the owner's own records).

    Returns:
        ``(new owner, how many nested tails moved)`` or None.
    """
    existing = table_of(owner)
    starts = [key for key in KEYS.values() if _has_nested(owner.get(key))]
    if not starts and not (deep and existing):
        return None
    table: Table = dict(existing)
    work: list[str] = list(table) if deep else []
    moved = 0

    def flat_record(record: dict[str, Any]) -> dict[str, Any]:
        nonlocal moved
        others: list[object] = []
        for item in record["others"]:
            if isinstance(item, list):
                ref = new_ref()
                table[ref] = item
                work.append(ref)
                moved += 1
                others.append(ref)
            else:
                others.append(item)
        return {**record, "others": others}

    out = dict(owner)
    for key in starts:
        out[key] = flat_record(owner[key])
    while work:
        ref = work.pop()
        tail = table.get(ref)
        if not _is_tail(tail):
            continue
        assert tail is not None
        new_tail: Tail | None = None
        for i, msg in enumerate(tail):
            keys = [key for key in KEYS.values() if _has_nested(msg.get(key))]
            if keys:
                new_tail = new_tail if new_tail is not None else list(tail)
                new_tail[i] = {**msg, **{key: flat_record(msg[key]) for key in keys}}
        if new_tail is not None:
            table[ref] = new_tail
    if not moved:
        return None
    if TAILS_KEY in owner and not isinstance(owner[TAILS_KEY], dict):
        out[_UNREADABLE_TABLE] = owner[TAILS_KEY]
    out[TAILS_KEY] = table
    return out, moved


def flatten_raw_messages(messages: list[Any]) -> int:
    """Flatten the versions of a persisted active path (a parsed ``messages`` array), in place.

    Returns:
        How many nested tails were moved into tables (0: the list is unchanged).
    """
    total = 0
    for i, msg in enumerate(messages):
        if isinstance(msg, dict):
            flat = flatten_owner(msg)
            if flat is not None:
                messages[i], moved = flat
                total += moved
    return total


def pool_of(messages: Iterable[ChatMessage]) -> Table:
    """The tables of ``messages`` in one table (a ref found twice keeps the first; the other tail
    is kept under a fresh ref, reached by nothing, never dropped)."""
    pool: Table = {}
    for m in messages:
        for ref, tail in table_of(m.extra).items():
            if ref in pool and pool[ref] is not tail:
                log.warning("version ref %s is used twice; the second tail is kept unlinked", ref)
                ref = new_ref()
            pool[ref] = tail
    return pool


def take_tables(messages: Iterable[ChatMessage], pool: Table) -> None:
    """Move the tables of ``messages`` into ``pool`` (messages becoming part of the active path
    mid-way never bring a table of their own: tables belong to owners)."""
    for m in messages:
        if TAILS_KEY in m.extra:
            for ref, tail in pool_of([m]).items():
                pool[new_ref() if ref in pool else ref] = tail
            set_table(m, {})


def stored(messages: Sequence[ChatMessage], *, strip_edit: bool) -> Tail:
    """The persisted form of a tail about to be stored: no message keeps a table (the caller moved
    them into the owner's with ``pool_of``); ``strip_edit`` drops the first message's edit record
    (it moves to the message replacing it)."""
    out: Tail = []
    for i, m in enumerate(messages):
        d = message_to_dict(m)
        if TAILS_KEY in d:
            value = d.pop(TAILS_KEY)
            if not isinstance(value, dict):
                d[_UNREADABLE_TABLE] = value
        if strip_edit and i == 0:
            d.pop(VERSIONS_KEY, None)
        out.append(d)
    return out


def set_table(msg: ChatMessage, table: Table) -> None:
    """Give ``msg`` this table (none when empty); ``extra`` is replaced, never mutated."""
    extra = {k: v for k, v in msg.extra.items() if k != TAILS_KEY}
    if table:
        extra[TAILS_KEY] = table
    msg.extra = extra


def _refs_under(extra: Mapping[str, Any], pool: Mapping[str, Tail], claimed: set[str]) -> Iterator[str]:
    """Every ref of ``pool`` reached from the records of ``extra`` through stored tails, once."""
    stack = [item for key in KEYS.values() for item in _record_items(extra.get(key))]
    while stack:
        ref = stack.pop()
        if not isinstance(ref, str) or ref in claimed or ref not in pool:
            continue
        claimed.add(ref)
        yield ref
        tail = pool[ref]
        if _is_tail(tail):
            for msg in tail:
                stack.extend(item for key in KEYS.values() for item in _record_items(msg.get(key)))


def distribute(owners: Sequence[ChatMessage], pool: Table, default: ChatMessage) -> None:
    """Give each owner (messages of the active path) the tails its records reach, the rest to ``default``.

    Tails reached by no record (only a hand-edited file has them) are kept, with ``default``.
    """
    claimed: set[str] = set()
    owner_of: dict[str, int] = {}
    for n, owner in enumerate(owners):
        for ref in _refs_under(owner.extra, pool, claimed):
            owner_of[ref] = n
    rest = -1
    for n, owner in enumerate(owners):
        if owner is default:
            rest = n
    targets = list(owners) if rest >= 0 else [*owners, default]
    rest = rest if rest >= 0 else len(owners)
    tables: list[Table] = [{} for _ in targets]
    for ref, tail in pool.items():
        tables[owner_of.get(ref, rest)][ref] = tail
    for owner, table in zip(targets, tables, strict=True):
        if table or TAILS_KEY in owner.extra:
            set_table(owner, table)
