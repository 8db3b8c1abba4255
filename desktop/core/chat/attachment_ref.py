"""Attachment references: what a message keeps of a file the user attached to it.

A user message keeps only references, in ``ChatMessage.extra["attachments"]`` (the files themselves
live in the project, content-addressed: ``<project>/.chatnodes/attachments/<sha256>.<ext>``, see
``desktop.core.attachments``). ``extra`` is the field every codec, the history cap, the history
archive, the versions (``versions.py`` stores whole messages in their persisted form) and a fork
(deep copies) already carry verbatim, so a reference rides along everywhere a message goes without
a new field in the contract; an older build keeps it as an unknown field and writes it back.

Persisted form of one reference (camelCase like the rest of format v2; optional keys omitted)::

    {"name": "shot.png", "mediaType": "image/png", "size": 48213, "sha256": "<64 hex>",
     "kind": "image", "width": 1280, "height": 800, "pages": 12, "note": "12 pages"}

``kind`` is ``image`` (PNG, JPEG, WebP, GIF), ``text`` (valid UTF-8), ``pdf`` or ``other``
(a file that cannot be sent; ``note`` says why). ``width``/``height`` are an image's pixel size
with its EXIF orientation applied; ``pages`` a PDF's page count; ``note`` what the classifier found
worth saying on the chip (``"scanned: no text layer"``, ``"only the first 1 MB is sent"``...).

References come from saved files, so they are read as untrusted: an entry that is not a valid
reference (above all a ``sha256`` that is not 64 hex digits: it names a file) is skipped by
``attachments_of`` and counted by ``attachment_entries``, and left in ``extra`` untouched.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias, get_args

from ._appliers import Conversation
from .types import ChatMessage
from .versions import edit_user_message

log = logging.getLogger(__name__)

__all__ = [
    "ATTACHMENTS_KEY",
    "AttachmentKind",
    "AttachmentRef",
    "ATTACHMENT_KINDS",
    "MAX_NAME_CHARS",
    "attachment_entries",
    "attachments_of",
    "clean_name",
    "edit_keeping_attachments",
    "extension_for",
    "format_size",
    "ref_from_dict",
    "ref_to_dict",
    "set_attachments",
]

#: The ``ChatMessage.extra`` key (so the persisted message key) holding a message's references.
ATTACHMENTS_KEY = "attachments"
#: Longest file name kept (characters); a longer one is cut, keeping its extension.
MAX_NAME_CHARS = 255

AttachmentKind: TypeAlias = Literal["image", "text", "pdf", "other"]
ATTACHMENT_KINDS: frozenset[str] = frozenset(get_args(AttachmentKind))

_SHA256 = re.compile(r"[0-9a-f]{64}")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_EXTENSIONS = {
    "image/png": "png",
    "image/jpeg": "jpg",
    "image/gif": "gif",
    "image/webp": "webp",
    "application/pdf": "pdf",
}
_MAX_PIXELS_SIDE = 1_000_000
_MAX_NOTE_CHARS = 500


def clean_name(name: str) -> str:
    """A file name safe to show and to put in a request: control and bidi characters become ``?``,
    path separators ``_``, at most ``MAX_NAME_CHARS`` characters (the extension kept), never empty."""
    text = _CONTROL.sub("?", name).replace("/", "_").replace("\\", "_").strip()
    if len(text) > MAX_NAME_CHARS:
        stem, dot, ext = text.rpartition(".")
        if dot and 0 < len(ext) <= 16:
            text = stem[: MAX_NAME_CHARS - len(ext) - 2] + "…." + ext
        else:
            text = text[: MAX_NAME_CHARS - 1] + "…"
    return text or "attachment"


def extension_for(kind: str, media_type: str) -> str:
    """The store's file extension for a reference: by media type for images and PDFs, ``txt`` for
    text, ``bin`` for anything else (never taken from the user's file name)."""
    if kind == "text":
        return "txt"
    if kind in ("image", "pdf"):
        return _EXTENSIONS.get(media_type, "bin")
    return "bin"


def format_size(size: int) -> str:
    """``size`` bytes for people: ``512 B``, ``4.2 KB``, ``1.3 MB`` (powers of 1024)."""
    if size < 1024:
        return f"{size} B"
    value = float(size)
    for unit in ("KB", "MB", "GB"):
        value /= 1024
        if value < 1024 or unit == "GB":
            return f"{value:.1f} {unit}" if value < 100 else f"{value:.0f} {unit}"
    return f"{size} B"  # pragma: no cover - the loop always returns


@dataclass(frozen=True, slots=True)
class AttachmentRef:
    """A reference to one attached file (see the module doc for the persisted form).

    Attributes:
        name: The file name the user attached (cleaned: ``clean_name``).
        media_type: ``image/png``, ``image/jpeg``, ``image/gif``, ``image/webp``,
            ``application/pdf``, ``text/plain`` or, for ``other``, what the file looked like
            (``application/octet-stream`` when unknown).
        size: The file's size in bytes.
        sha256: The SHA-256 of the file's bytes, 64 lower-case hex digits (its name in the store).
        kind: ``image``, ``text``, ``pdf`` or ``other``.
        width: An image's width in pixels, EXIF orientation applied.
        height: An image's height in pixels, EXIF orientation applied.
        pages: A PDF's page count.
        note: What the chip says besides name and size (a problem or what was extracted).
    """

    name: str
    media_type: str
    size: int
    sha256: str
    kind: AttachmentKind
    width: int | None = None
    height: int | None = None
    pages: int | None = None
    note: str | None = None

    @property
    def ext(self) -> str:
        """The store's file extension (``extension_for``)."""
        return extension_for(self.kind, self.media_type)

    @property
    def file_name(self) -> str:
        """The file's name in the store: ``<sha256>.<ext>``."""
        return f"{self.sha256}.{self.ext}"

    def describe(self) -> str:
        """One line for the model and for people: ``shot.png (image/png, 1280×800, 47.1 KB)``."""
        details = [self.media_type]
        if self.width and self.height:
            details.append(f"{self.width}×{self.height}")
        if self.pages is not None:
            details.append(f"{self.pages} page{'s' if self.pages != 1 else ''}")
        details.append(format_size(self.size))
        return f"{self.name} ({', '.join(details)})"


def ref_to_dict(ref: AttachmentRef) -> dict[str, Any]:
    """The persisted form of a reference (optional keys omitted)."""
    out: dict[str, Any] = {
        "name": ref.name,
        "mediaType": ref.media_type,
        "size": ref.size,
        "sha256": ref.sha256,
        "kind": ref.kind,
    }
    if ref.width is not None:
        out["width"] = ref.width
    if ref.height is not None:
        out["height"] = ref.height
    if ref.pages is not None:
        out["pages"] = ref.pages
    if ref.note is not None:
        out["note"] = ref.note
    return out


def _count(value: object, upper: int) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= upper:
        return None
    return value


def ref_from_dict(value: object) -> AttachmentRef | None:
    """A reference from its persisted form, or None when it is not one.

    Required: ``sha256`` (64 hex digits, any case), a string ``name`` and ``mediaType``, a
    non-negative integer ``size``. An unknown ``kind`` reads as ``other`` (the file is never sent
    then, only named); a bad optional field reads as absent. Names and notes are cleaned.
    """
    if not isinstance(value, dict):
        return None
    sha = value.get("sha256")
    name, media = value.get("name"), value.get("mediaType")
    size = _count(value.get("size"), 1 << 62)
    if not (isinstance(sha, str) and _SHA256.fullmatch(sha.lower())):
        return None
    if not isinstance(name, str) or not isinstance(media, str) or size is None:
        return None
    kind = value.get("kind")
    note = value.get("note")
    width = _count(value.get("width"), _MAX_PIXELS_SIDE)
    height = _count(value.get("height"), _MAX_PIXELS_SIDE)
    if not width or not height:
        width = height = None
    return AttachmentRef(
        name=clean_name(name),
        media_type=_CONTROL.sub("", media.strip().lower())[:100] or "application/octet-stream",
        size=size,
        sha256=sha.lower(),
        kind=kind if isinstance(kind, str) and kind in ATTACHMENT_KINDS else "other",  # type: ignore[arg-type]
        width=width,
        height=height,
        pages=_count(value.get("pages"), 1 << 31),
        note=_CONTROL.sub(" ", note)[:_MAX_NOTE_CHARS] if isinstance(note, str) and note.strip() else None,
    )


def attachment_entries(msg: ChatMessage) -> tuple[list[AttachmentRef], int]:
    """A message's readable references, and how many entries were not readable references."""
    raw = msg.extra.get(ATTACHMENTS_KEY) if msg.extra else None
    if raw is None:
        return [], 0
    if not isinstance(raw, list):
        log.warning("message %s: 'attachments' is not a list; ignored", msg.id)
        return [], 1
    refs: list[AttachmentRef] = []
    bad = 0
    for entry in raw:
        ref = ref_from_dict(entry)
        if ref is None:
            bad += 1
        else:
            refs.append(ref)
    if bad:
        log.warning("message %s: %d unreadable attachment reference(s) ignored", msg.id, bad)
    return refs, bad


def attachments_of(msg: ChatMessage) -> list[AttachmentRef]:
    """A message's attachment references, in order (unreadable entries left out)."""
    if not msg.extra or ATTACHMENTS_KEY not in msg.extra:
        return []
    return attachment_entries(msg)[0]


def set_attachments(msg: ChatMessage, refs: Sequence[AttachmentRef]) -> None:
    """Set a message's references (none removes the key). ``extra`` is replaced, never mutated,
    so a dict shared with a copy or a stored version is left as it was."""
    extra = {k: v for k, v in msg.extra.items() if k != ATTACHMENTS_KEY}
    if refs:
        extra[ATTACHMENTS_KEY] = [ref_to_dict(r) for r in refs]
    msg.extra = extra


def edit_keeping_attachments(
    conv: Conversation, message_id: str, new_text: str, attachments: Sequence[AttachmentRef] | None = None
) -> ChatMessage:
    """``versions.edit_user_message`` that keeps the message's attachments on the edited message.

    The old message (with its references) becomes a stored version as usual; the new one gets
    ``attachments`` when given (the chips the user left on the edit), else the old message's.

    Raises:
        KeyError: Unknown message.
        ValueError: The message is not a user message.
    """
    old = next((m for m in reversed(conv.messages) if m.id == message_id), None)
    kept = list(attachments) if attachments is not None else (attachments_of(old) if old is not None else [])
    new = edit_user_message(conv, message_id, new_text)
    if kept:
        set_attachments(new, kept)
    return new
