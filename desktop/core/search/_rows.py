"""The rows of the index: one per message of every version of a node, and of its history archive.

Each row carries what a search hit shows and what opening it needs: the message id, role, model,
time, whether it is archived, the version steps that bring it onto the active path (JSON, empty on
the active path) and the scrubbed text: the message's ``content`` (a tool message's content is the
tool's result; the arguments of tool calls and reasoning are not searched). Its ``digest``
(BLAKE2b of all of it) tells an incremental update whether the stored row is still right.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

from ..chat.locate import VersionStep, walk_versions
from ..chat.types import ChatMessage
from ._snapshot import MESSAGE_FIELDS
from ._text import clean_text

__all__ = ["Row", "Known", "Memo", "make_row", "message_rows", "encode_path", "decode_path", "SKIPPED_ROLES"]

log = logging.getLogger(__name__)

SKIPPED_ROLES = frozenset({"note"})
"""Roles not indexed: local notes (errors, "moved to the history archive") are not conversation."""
_MAX_TS = (1 << 42) - 1  # year 2109; keeps (ts << 20) within a signed 64-bit rowid


@dataclass(frozen=True, slots=True)
class Row:
    """One message as the index stores it.

    Attributes:
        msg_id: The message id.
        role: Its role.
        model: The model that wrote it, or None.
        ts: Its time, epoch milliseconds (clamped to 0 … 2^42).
        archived: True when it comes from the history archive.
        path: The version steps as JSON (``[[carrier, kind, k], ...]``), ``""`` on the active path.
        body: The searchable text, keys scrubbed.
        digest: BLAKE2b-128 of all of the above.
    """

    msg_id: str
    role: str
    model: str | None
    ts: int
    archived: bool
    path: str
    body: str
    digest: bytes


def encode_path(steps: Sequence[VersionStep]) -> str:
    """Version steps as the index stores them."""
    return json.dumps([[s.carrier_id, s.kind, s.k] for s in steps], ensure_ascii=False) if steps else ""


def decode_path(text: str) -> tuple[VersionStep, ...]:
    """The version steps stored by :func:`encode_path` (``()`` for anything unreadable)."""
    if not text:
        return ()
    try:
        raw = json.loads(text)
        return tuple(
            VersionStep(str(c), "edit" if kind == "edit" else "answer", int(k)) for c, kind, k in raw
        )
    except (ValueError, TypeError):
        return ()


def make_row(
    msg: ChatMessage, steps: Sequence[VersionStep], archived: bool, secrets: Sequence[str]
) -> Row | None:
    """The row of one message (None for an empty one)."""
    text = msg.content
    if not text or text.isspace():
        return None
    body = clean_text(text, secrets)
    ts = min(max(msg.ts, 0), _MAX_TS)
    model = clean_text(msg.model, secrets) if msg.model else None
    path = encode_path(steps)
    head = f"{msg.role}\0{model or ''}\0{ts}\0{int(archived)}\0{path}\0".encode("utf-8", "replace")
    digest = hashlib.blake2b(head + body.encode("utf-8"), digest_size=16).digest()
    return Row(msg.id, msg.role, model, ts, archived, path, body, digest)


@dataclass(frozen=True, slots=True)
class Known:
    """A message unchanged since the last walk of its node (same fields, same version steps): its
    row is not built again unless the index lacks it (``row()``).

    Attributes:
        msg_id: The message id.
        digest: The digest its row had.
    """

    msg_id: str
    digest: bytes
    msg: ChatMessage
    steps: tuple[VersionStep, ...]
    archived: bool

    def row(self, secrets: Sequence[str]) -> Row | None:
        """Build the row after all."""
        return make_row(self.msg, self.steps, self.archived, secrets)


Memo = dict[str, tuple[tuple[object, ...], tuple[VersionStep, ...], bytes]]
"""``{message id: (MESSAGE_FIELDS of the message, its steps, its row's digest)}`` of one node."""


def message_rows(
    messages: Sequence[ChatMessage],
    *,
    archived: bool,
    secrets: Sequence[str] = (),
    skip: Iterable[str] = (),
    memo: Memo | None = None,
    new_memo: Memo | None = None,
    pace: Callable[[], None] | None = None,
) -> Iterator[Row | Known]:
    """The rows of ``messages`` and of every version stored under them.

    Args:
        messages: A node's active path, or its archived messages.
        archived: They come from the history archive.
        secrets: Known keys, scrubbed from the text (key-shaped words always are).
        skip: Message ids not to index here (already archived: the archive's row wins).
        memo: What the last walk of this node recorded: a message found there with the same fields
            (compared by reference first) and steps is yielded as ``Known`` (no scrubbing, no hash).
        new_memo: Filled with this walk's record (pass it as ``memo`` next time).
        pace: Called after each message (``Pacer.tick``: lets the GUI thread have the GIL).

    Yields:
        One item per message id (the first occurrence), notes and empty messages left out.
    """
    seen = set(skip)
    for msg, steps in walk_versions(messages):
        if pace is not None:
            pace()
        if msg.id in seen or msg.role in SKIPPED_ROLES:
            continue
        seen.add(msg.id)
        fields = MESSAGE_FIELDS(msg)
        old = memo.get(msg.id) if memo is not None else None
        if old is not None and old[1] == steps and old[0] == fields:
            if new_memo is not None:
                new_memo[msg.id] = old
            yield Known(msg.id, old[2], msg, steps, archived)
            continue
        row = make_row(msg, steps, archived, secrets)
        if row is not None:
            if new_memo is not None:
                new_memo[msg.id] = (fields, steps, row.digest)
            yield row
