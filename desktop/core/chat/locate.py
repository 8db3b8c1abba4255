"""Where a message lives among a conversation's versions, and how to make it the shown one.

``versions`` keeps the other versions of a conversation in ``ChatMessage.extra`` records on user
messages (its module doc describes them: ``extra[VERSIONS_KEY]`` and ``extra[ANSWERS_KEY]``, each
``{"active": i, "others": [ref, ...]}`` naming tails in the owner's flat ``versionTails`` table, or
older nested tails). This module reads those records through ``_vstore`` (never writes them) to
answer two questions a search result asks:

* :func:`walk_versions`: every message of the active path and of every stored version, each with
  the :class:`VersionStep` list that brings it onto the active path (empty for the active path);
* :func:`activate_message`: switch a live conversation, through ``versions.switch_fork``, to the
  version holding a message id.

A step names the fork point by its carrier (the user message holding the record), its kind and the
1-based version number ``switch_fork`` takes. The steps are applied in order: a version stored
inside another version is reached by first switching to the outer one. Malformed records and
unreadable stored messages are skipped, as ``versions`` does.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ._appliers import Conversation
from ._vstore import KEYS, ForkKind, materialize, read, resolve, table_of
from .types import ChatMessage
from .versions import switch_fork

__all__ = ["VersionStep", "walk_versions", "version_path", "activate_message"]

log = logging.getLogger(__name__)

@dataclass(frozen=True, slots=True)
class VersionStep:
    """One switch on the way to a stored version: ``switch_fork(conv, carrier_id, kind, k)``.

    Attributes:
        carrier_id: The user message holding the record (on the path at that point).
        kind: ``"edit"`` (versions of that user message) or ``"answer"`` (answers to it).
        k: The version to make active, 1-based.
    """

    carrier_id: str
    kind: ForkKind
    k: int


def _tail(item: object, table: Mapping[str, Any]) -> list[ChatMessage] | None:
    """The stored messages ``item`` names (a ref into ``table``, or an older nested tail)."""
    tail = resolve(item, table)
    if tail is None:
        return None
    try:
        return materialize(tail, deep=False)
    except (TypeError, ValueError, RecursionError) as exc:
        log.debug("skipping an unreadable stored version: %s", exc)
        return None


def _walk(
    messages: Sequence[ChatMessage],
    path: tuple[VersionStep, ...],
    skip_first_edit: bool,
    table: Mapping[str, Any] | None,
) -> Iterator[tuple[ChatMessage, tuple[VersionStep, ...]]]:
    for i, m in enumerate(messages):
        yield m, path
        if m.role != "user" or not m.extra:
            continue
        owner_table = table_of(m.extra) if table is None else table
        for kind in KEYS:
            if kind == "edit" and skip_first_edit and i == 0:
                continue  # the fork point this tail was reached through (its record moves here)
            record = read(m, kind, owner_table)
            if record is None:
                continue
            active, others = record
            for j, item in enumerate(others):
                tail = _tail(item, owner_table)
                if tail is None:
                    continue
                step = VersionStep(m.id, kind, j + 1 if j < active else j + 2)
                yield from _walk(tail, (*path, step), kind == "edit", owner_table)


def walk_versions(messages: Sequence[ChatMessage]) -> Iterator[tuple[ChatMessage, tuple[VersionStep, ...]]]:
    """Every message of ``messages`` and of every version stored under them, with its steps.

    Depth first: each message of the active path (steps ``()``), and after a carrier the messages
    of each of its stored versions (edits first, then answers), each version followed by the
    versions stored inside it. Stored messages are built from their persisted form (new objects);
    the records are only read.

    Args:
        messages: A conversation's active path (or messages read from the history archive).

    Yields:
        ``(message, steps)``: applying ``steps`` in order with ``switch_fork`` puts the message on
        the active path.
    """
    return _walk(messages, (), False, None)


def version_path(messages: Sequence[ChatMessage], message_id: str) -> tuple[VersionStep, ...] | None:
    """The steps that bring the message ``message_id`` onto the active path, or None when absent.

    ``()`` when it already is on the active path. The first occurrence wins (the active path first).
    """
    for msg, steps in walk_versions(messages):
        if msg.id == message_id:
            return steps
    return None


def activate_message(conv: Conversation, message_id: str) -> bool:
    """Switch ``conv`` to the version holding ``message_id`` (a search hit, for example).

    Each step is one ``versions.switch_fork``; the conversation's other versions are all kept (the
    one shown before becomes a stored version, as when the user switches by hand).

    Returns:
        True when the message is on the active path now; False when no version holds it (or a
        stored version could not be switched to, in which case the steps before it stay applied).
    """
    steps = version_path(conv.messages, message_id)
    if steps is None:
        return False
    for step in steps:
        try:
            switch_fork(conv, step.carrier_id, step.kind, step.k)
        except (KeyError, ValueError) as exc:
            log.warning("could not switch to version %d at %s: %s", step.k, step.carrier_id, exc)
            return False
    return any(m.id == message_id for m in conv.messages)
