"""Attachments and tool-result images in each API's shape.

User messages (the parts come from ``desktop.core.attachments``, resolved at send time; the parts go
before the user's typed text, images and documents first):

* OpenAI Chat Completions: ``{"type": "image_url", "image_url": {"url": "data:<mime>;base64,..."}}``,
  ``{"type": "file", "file": {"filename", "file_data": "data:application/pdf;base64,..."}}`` and
  ``{"type": "text", "text"}``; a message without attachments keeps its plain string content.
* Anthropic Messages: ``{"type": "image", "source": {"type": "base64", "media_type", "data"}}``,
  ``{"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data"},
  "title"}`` and text blocks.

Tool-result images for OpenAI: a ``tool`` message takes text only, so the images of the results of
one assistant turn follow those results as one ``user`` message of image parts, each headed by the
call it came from (only for a model known to take images; the result text describes every image
either way). Anthropic carries them inside ``tool_result`` (``anthropic._tool_result``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from desktop.core.attachments import ImagePart, PdfPart, TextPart, WirePart
from desktop.core.chat.types import ToolCall

__all__ = [
    "OPENAI_IMAGE_TYPES",
    "TOOL_IMAGES_HEADING",
    "anthropic_user_blocks",
    "openai_tool_images_message",
    "openai_user_content",
]

#: The image types OpenAI-compatible servers take in ``image_url`` (GIF: a still one).
OPENAI_IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
#: The text that opens the user message carrying tool-result images to an OpenAI-compatible model.
TOOL_IMAGES_HEADING = "The images returned by the tool calls above (a tool result can only carry text):"


def _openai_part(part: WirePart) -> dict[str, Any]:
    if isinstance(part, ImagePart):
        return {"type": "image_url", "image_url": {"url": f"data:{part.media_type};base64,{part.data}"}}
    if isinstance(part, PdfPart):
        return {"type": "file", "file": {"filename": part.name,
                                         "file_data": f"data:application/pdf;base64,{part.data}"}}
    return {"type": "text", "text": part.text}


def openai_user_content(text: str, parts: Sequence[WirePart]) -> str | list[dict[str, Any]]:
    """A user message's ``content``: ``text`` itself without parts, else the parts then the text."""
    if not parts:
        return text
    content = [_openai_part(p) for p in parts]
    if text.strip():
        content.append({"type": "text", "text": text})
    return content


def _anthropic_block(part: WirePart) -> dict[str, Any]:
    if isinstance(part, ImagePart):
        source = {"type": "base64", "media_type": part.media_type, "data": part.data}
        return {"type": "image", "source": source}
    if isinstance(part, PdfPart):
        return {"type": "document", "title": part.name,
                "source": {"type": "base64", "media_type": "application/pdf", "data": part.data}}
    assert isinstance(part, TextPart)
    return {"type": "text", "text": part.text}


def anthropic_user_blocks(text: str, parts: Sequence[WirePart]) -> list[dict[str, Any]]:
    """A user message's content blocks: the parts, then ``text`` (a blank text adds no block)."""
    blocks = [_anthropic_block(p) for p in parts]
    if text.strip():
        blocks.append({"type": "text", "text": text})
    return blocks


def openai_tool_images_message(results: Sequence[tuple[ToolCall, list[tuple[str, str]]]]) -> dict[str, Any]:
    """The user message carrying the images of some tool results: ``(call, [(mime, base64)])`` each."""
    content: list[dict[str, Any]] = [{"type": "text", "text": TOOL_IMAGES_HEADING}]
    for call, images in results:
        count = f"{len(images)} image{'s' if len(images) != 1 else ''}"
        content.append({"type": "text", "text": f"{call.name} (call {call.id}), {count}:"})
        content += [{"type": "image_url", "image_url": {"url": f"data:{mime};base64,{data}"}}
                    for mime, data in images]
    return {"role": "user", "content": content}
