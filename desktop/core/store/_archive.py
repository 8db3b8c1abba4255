"""The history archive of a project (D9) and the history cap plan (D8).

Each chat node's trimmed history is appended to ``.chatnodes/archive/<node-id>.jsonl`` (one message
per line, fsynced). ``plan_trim`` computes what a save keeps of a conversation, without touching it;
``apply_trim`` is what a node calls afterwards to show the same thing.

Crash safety: a save appends to the archive before it replaces ``project.json``. Before the first
append, ``mark_pending`` creates ``.chatnodes/archive-pending``; the store removes the marker once
``project.json`` has been replaced. A marker found at load time means a crash came in between, so
the loader drops from the conversations every message that already is in the archive: a message is
never both archived and in ``project.json``, and never lost. Reading an archive also skips repeated
ids, so an export lists each message once.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import json
import logging
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..chat.conversation import (
    Conversation,
    message_from_dict,
    message_to_dict,
    new_id,
    now_ms,
    split_for_cap,
)
from ..chat.types import ChatMessage
from ..files import fsync_dir, open_regular, read_regular
from ..text import repair_surrogates, utf8_bytes

__all__ = [
    "ARCHIVE_DIR",
    "ArchiveContents",
    "HistoryArchive",
    "TrimInfo",
    "apply_trim",
    "archive_file_name",
    "archive_note_count",
    "drop_archived",
    "plan_trim",
]

log = logging.getLogger(__name__)

ARCHIVE_DIR = Path(".chatnodes") / "archive"
PENDING_MARKER = Path(".chatnodes") / "archive-pending"
_ARCHIVE_NOTE_KEY = "archivedCount"
_SAFE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
_JSON = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


@dataclass(frozen=True, slots=True)
class ArchiveContents:
    """A node's history archive as read back.

    Attributes:
        messages: The archived messages, oldest first, each id once.
        bad_lines: Lines that could not be read (skipped).
    """

    messages: list[ChatMessage]
    bad_lines: int = 0


@dataclass(frozen=True, slots=True)
class TrimInfo:
    """What a save trimmed of one node's conversation (the conversation itself is not changed).

    Attributes:
        removed_ids: Ids of the messages ``project.json`` no longer holds: the archived ones and
            earlier trim notes (folded into ``note``).
        archived: How many messages this trim moved to the history archive.
        note: The note that replaces them ("N earlier messages moved to the history archive ...").
        kept_ids: The ids ``project.json`` now holds for this node, in order (``note`` included).
    """

    removed_ids: frozenset[str]
    archived: int
    note: ChatMessage
    kept_ids: tuple[str, ...]


def archive_note_count(msg: ChatMessage) -> int:
    """The count carried by a note the store wrote about trimmed history, else 0."""
    if msg.role != "note":
        return 0
    value = msg.extra.get(_ARCHIVE_NOTE_KEY)
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def archive_file_name(node_id: str) -> str:
    """A safe file name for a node's archive; ids that are not plain names get a hashed form."""
    if _SAFE_ID.fullmatch(node_id) and ".." not in node_id:
        return f"{node_id}.jsonl"
    digest = hashlib.sha256(node_id.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    stem = re.sub(r"[^A-Za-z0-9_-]", "_", node_id)[:40].strip("_") or "node"
    return f"{stem}-{digest}.jsonl"


def _note(node_id: str, total: int) -> ChatMessage:
    return ChatMessage(
        id=new_id(),
        role="note",
        content=(
            f"{total} earlier message{'s' if total != 1 else ''} moved to the history archive "
            f"({(ARCHIVE_DIR / archive_file_name(node_id)).as_posix()})"
        ),
        ts=now_ms(),
        extra={_ARCHIVE_NOTE_KEY: total},
    )


def _insert_after_system(messages: list[ChatMessage], note: ChatMessage) -> None:
    lead = 0
    while lead < len(messages) and messages[lead].role == "system":
        lead += 1
    messages.insert(lead, note)


def plan_trim(
    node_id: str, messages: Sequence[ChatMessage], cap_bytes: int
) -> tuple[list[ChatMessage], list[ChatMessage], TrimInfo] | None:
    """What the history cap keeps of ``messages``; ``messages`` is not changed.

    Returns:
        None when everything fits. Else ``(kept, to_archive, info)``: the list ``project.json``
        should hold (a note about the trimmed history after the leading system messages), the
        messages to append to the archive (earlier notes are not archived, their counts are added
        to the new note), and the ``TrimInfo`` a node applies with ``apply_trim``.
    """
    # The store's notes are not measured against the cap: a node the last save left at the cap
    # (its note included) is not trimmed again, so a save moves messages only when some arrived.
    notes = [m for m in messages if archive_note_count(m)]
    content = [m for m in messages if not archive_note_count(m)] if notes else messages
    kept, to_archive = split_for_cap(content, cap_bytes)
    if not to_archive:
        return None
    earlier = sum(archive_note_count(m) for m in notes)
    note = _note(node_id, earlier + len(to_archive))
    _insert_after_system(kept, note)
    removed = frozenset(m.id for m in (*notes, *to_archive))
    info = TrimInfo(removed, len(to_archive), note, tuple(m.id for m in kept))
    return kept, to_archive, info


def apply_trim(conversation: Conversation, info: TrimInfo) -> bool:
    """Make a live conversation show what the save wrote: what a node does with a ``TrimInfo``.

    Removes every message whose id is in ``info.removed_ids`` (they are in the history archive
    now, or folded into the note) and inserts a copy of ``info.note`` after the leading system
    messages. Messages added since the save stay where they are. Idempotent: nothing happens when
    the note is already there or none of the removed messages is left (e.g. after ``/clear``).
    The list is changed in place (``conversation.messages[:] = ...``).

    Returns:
        True when the conversation changed (the node should re-render and drop cached totals).
    """
    msgs = conversation.messages
    if any(m.id == info.note.id for m in msgs):
        return False
    remaining = [m for m in msgs if m.id not in info.removed_ids]
    if len(remaining) == len(msgs):
        return False
    note = copy.copy(info.note)
    note.extra = dict(info.note.extra)
    _insert_after_system(remaining, note)
    msgs[:] = remaining
    return True


def drop_archived(node_id: str, messages: list[ChatMessage], archived_ids: set[str]) -> int:
    """Remove from ``messages`` (in place) those already in the archive; fold them into one note.

    Used after a crash between an archive append and the ``project.json`` replace.

    Returns:
        How many messages were removed.
    """
    dup = [m for m in messages if m.id in archived_ids and archive_note_count(m) == 0]
    if not dup:
        return 0
    earlier = sum(archive_note_count(m) for m in messages)
    dup_ids = {m.id for m in dup}
    remaining = [m for m in messages if m.id not in dup_ids and archive_note_count(m) == 0]
    _insert_after_system(remaining, _note(node_id, earlier + len(dup)))
    messages[:] = remaining
    return len(dup)


class HistoryArchive:
    """The ``.chatnodes/archive`` folder of a project.

    Args:
        folder: The project folder.

    Attributes:
        dir: ``folder / ".chatnodes/archive"``.
        marker: ``folder / ".chatnodes/archive-pending"``.
    """

    def __init__(self, folder: Path) -> None:
        self.dir = Path(folder) / ARCHIVE_DIR
        self.marker = Path(folder) / PENDING_MARKER
        self._ids: dict[str, set[str]] = {}

    def path(self, node_id: str) -> Path:
        """The archive file of ``node_id``."""
        return self.dir / archive_file_name(node_id)

    # -- the pending marker ------------------------------------------------------------------

    @property
    def pending(self) -> bool:
        """True when an archive append may not be reflected in ``project.json`` yet."""
        return self.marker.exists()

    def mark_pending(self) -> None:
        """Create the marker (durably) before appending to an archive.

        Raises:
            OSError: It could not be created (the append must not happen then).
        """
        if self.marker.exists():
            return
        self.marker.parent.mkdir(parents=True, exist_ok=True)
        fd = open_regular(self.marker, os.O_WRONLY | os.O_CREAT, 0o644)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        fsync_dir(self.marker.parent)

    def clear_pending(self) -> None:
        """Remove the marker once ``project.json`` reflects every append."""
        with contextlib.suppress(OSError):
            self.marker.unlink()

    # -- appending and reading ---------------------------------------------------------------

    def append(self, node_id: str, messages: Iterable[ChatMessage]) -> int:
        """Append ``messages`` not archived yet (by id), one JSON object per line, and fsync.

        Returns:
            How many messages were written.

        Raises:
            OSError: The archive could not be written (nothing is remembered as archived).
        """
        known = self.ids(node_id)
        fresh: list[ChatMessage] = []
        for m in messages:
            if m.id not in known:
                known.add(m.id)
                fresh.append(m)
        if not fresh:
            return 0
        path = self.path(node_id)
        try:
            self.mark_pending()
            created = not path.exists()
            path.parent.mkdir(parents=True, exist_ok=True)
            text = "".join(_JSON.encode(message_to_dict(m)) + "\n" for m in fresh)
            lines, _ = utf8_bytes(text)
            # A FIFO or device in the archive's place is refused, never waited on (open_regular).
            with os.fdopen(open_regular(path, os.O_RDWR | os.O_APPEND | os.O_CREAT), "a+b") as fh:
                end = fh.seek(0, os.SEEK_END)
                if end > 0:
                    fh.seek(end - 1)
                    if fh.read(1) != b"\n":  # a torn last line from a crash: start a fresh line
                        lines = b"\n" + lines
                fh.write(lines)
                fh.flush()
                os.fsync(fh.fileno())
        except BaseException:
            for m in fresh:
                known.discard(m.id)
            raise
        if created:
            fsync_dir(path.parent)
        return len(fresh)

    def remove(self, node_id: str) -> bool:
        """Delete a node's archive file (the node was deleted for good); True when it existed.

        Raises:
            OSError: It could not be removed.
        """
        self._ids.pop(node_id, None)
        try:
            self.path(node_id).unlink()
        except FileNotFoundError:
            return False
        return True

    def ids(self, node_id: str) -> set[str]:
        """The ids in a node's archive (read once, then kept up to date by ``append``)."""
        ids = self._ids.get(node_id)
        if ids is None:
            ids = {m.id for m in self.read(node_id).messages}
            self._ids[node_id] = ids
        return ids

    def read(self, node_id: str) -> ArchiveContents:
        """Read a node's archive back; unreadable lines are skipped and counted, repeated ids skipped."""
        path = self.path(node_id)
        try:
            data = read_regular(path)
        except FileNotFoundError:
            return ArchiveContents([], 0)
        except OSError as exc:
            log.warning("could not read the history archive %s: %s", path, exc)
            return ArchiveContents([], 0)
        return _parse(data, path)

    def read_appended(self, node_id: str, offset: int) -> ArchiveContents | None:
        """The messages appended after the first ``offset`` bytes of a node's archive (appends only
        ever add whole lines); None when ``offset`` is not the end of a line there (read it all).

        Args:
            node_id: The node.
            offset: The archive's size when it was last read.
        """
        path = self.path(node_id)
        try:
            with os.fdopen(open_regular(path, os.O_RDONLY), "rb") as fh:
                if offset <= 0 or fh.seek(0, os.SEEK_END) < offset:
                    return None
                fh.seek(offset - 1)
                data = fh.read()
        except OSError as exc:
            log.debug("could not read the end of the history archive %s: %s", path, exc)
            return None
        if not data.startswith(b"\n"):
            return None
        return _parse(data[1:], path)


def _parse(data: bytes, path: Path) -> ArchiveContents:
    """The messages of an archive's lines; unreadable lines are skipped and counted, repeated ids skipped."""
    messages: list[ChatMessage] = []
    seen: set[str] = set()
    bad = 0
    for n, line in enumerate(data.split(b"\n"), start=1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line.decode("utf-8"))
            if b"\\u" in line:
                raw, _ = repair_surrogates(raw)
            msg = message_from_dict(raw)
        except (ValueError, TypeError, UnicodeDecodeError, RecursionError) as exc:
            bad += 1
            log.debug("skipping line %d of %s: %s", n, path, exc)
            continue
        if msg.id not in seen:
            seen.add(msg.id)
            messages.append(msg)
    if bad:
        log.warning("skipped %d unreadable line(s) in %s", bad, path)
    return ArchiveContents(messages, bad)
