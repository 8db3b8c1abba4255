"""Helpers shared by the ChatGPT and Claude converters: times, text, notes, the image seam."""

from __future__ import annotations

import datetime as _dt
import json
import math
from typing import Any

from desktop.core.chat.export import code_fence
from desktop.core.chat.types import ChatMessage, Role
from desktop.core.text import repair_text

__all__ = [
    "IMPORTED_KEY",
    "RAW_NOTE_CHARS",
    "UNTITLED",
    "ConversationFormatError",
    "fenced",
    "image_placeholder",
    "file_placeholder",
    "make_message",
    "ms_from_epoch_seconds",
    "ms_from_iso",
    "raw_note",
    "text_of",
    "title_of",
]

IMPORTED_KEY = "imported"
"""``extra`` key marking an imported message or node: ``{"source": "chatgpt", "id": <original id>}``."""
UNTITLED = "Untitled conversation"
RAW_NOTE_CHARS = 600
"""Characters of a content part we cannot show that its note quotes."""

_IMAGE_EXTENSIONS = (".png", ".jpg", ".jpeg", ".gif", ".webp", ".bmp", ".heic", ".heif", ".svg", ".tif",
                     ".tiff")


class ConversationFormatError(ValueError):
    """A conversation of an export has a field of the wrong shape (the message names the field)."""


def ms_from_epoch_seconds(value: object) -> int | None:
    """Epoch seconds (ChatGPT's float times) as epoch milliseconds; None for null or nonsense."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if not math.isfinite(value) or not 0 <= value < 1e11:
        return None
    return int(round(value * 1000))


def ms_from_iso(value: object) -> int | None:
    """An ISO 8601 time (Claude's ``"2025-12-08T17:00:01.000Z"``) as epoch milliseconds, or None."""
    if not isinstance(value, str) or not value:
        return None
    text = value.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    try:
        when = _dt.datetime.fromisoformat(text)
    except ValueError:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=_dt.UTC)
    try:
        return int(when.timestamp() * 1000)
    except (OverflowError, OSError, ValueError):
        return None


def text_of(value: object) -> str:
    """A string field's text with lone surrogates repaired; anything else is ``""``."""
    return repair_text(value) if isinstance(value, str) else ""


def title_of(value: object) -> str:
    """A conversation title on one line (null or blank: ``UNTITLED``)."""
    text = " ".join(text_of(value).split())
    return text[:300] if text else UNTITLED


def fenced(text: str, language: str = "") -> str:
    """``text`` in a Markdown code block whose fence no backtick run inside can close."""
    fence = code_fence(text)
    return f"{fence}{language}\n{text}\n{fence}"


def image_placeholder(name: str) -> str:
    """The text an image gets until attachments are imported: ``[image: name — not imported]``.

    The attachments seam: an importer that can store the file puts a reference in the message
    instead (the pointer and name are in ``extra["imported"]["assets"]``).
    """
    return f"[image: {name or 'unnamed'} — not imported]"


def file_placeholder(name: str) -> str:
    """``[file: name — not imported]``, or the image form for an image file name."""
    if name.lower().endswith(_IMAGE_EXTENSIONS):
        return image_placeholder(name)
    return f"[file: {name or 'unnamed'} — not imported]"


def raw_note(label: str, value: object) -> str:
    """A short note for content we cannot show: its label and the start of its JSON."""
    try:
        raw = json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError, RecursionError):
        raw = repr(type(value))
    if len(raw) > RAW_NOTE_CHARS:
        raw = raw[:RAW_NOTE_CHARS] + f"… ({len(raw) - RAW_NOTE_CHARS:,} more characters not shown)"
    return f"[{label} — not shown: {repair_text(raw)}]"


def make_message(
    role: Role, content: str, ts: int, *, source: str, original_id: str, model: str | None = None,
    thinking: str | None = None, assets: list[dict[str, Any]] | None = None,
) -> ChatMessage:
    """An imported message: no usage (it was paid elsewhere), marked with its origin."""
    marker: dict[str, Any] = {"source": source, "id": original_id}
    if assets:
        marker["assets"] = assets
    return ChatMessage(id=original_id, role=role, content=content, ts=ts, thinking=thinking or None,
                       model=model if role == "assistant" else None, extra={IMPORTED_KEY: marker})
