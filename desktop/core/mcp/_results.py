"""Turn an MCP ``CallToolResult`` into what the model gets and what the tool card shows.

* text content is the result text; ``is_error`` marks the whole result as an error;
* ``structured_content`` goes to the model as compact JSON (it replaces a text block that merely
  repeats it, as the spec asks servers to send for old clients; a ``{"result": v}`` wrapper of a
  plain text result adds nothing);
* images (and audio) are kept for the UI as base64 + mime and described for the model as
  ``[image: image/png, 1234 bytes]``; valid images up to ``MAX_TOOL_IMAGE_BYTES`` (the first
  ``MAX_TOOL_IMAGES``) also go to the model through ``McpToolResult.model_output`` (a
  ``ToolOutput``), for the providers that take images in tool results;
* resource links are listed (``[resource link: name <uri>]``), never fetched; embedded text
  resources are included, embedded blobs described;
* text over ``MODEL_TEXT_LIMIT`` bytes is cut for the model with a note; ``full_text`` keeps it all.

The SDK objects are read by attribute, so this module does not import the SDK.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from desktop.core.chat.types import MAX_TOOL_IMAGE_BYTES, MAX_TOOL_IMAGES, ToolOutput

if TYPE_CHECKING:
    from mcp_types import CallToolResult

__all__ = [
    "MODEL_TEXT_LIMIT",
    "McpMedia",
    "McpResourceLink",
    "McpToolResult",
    "convert_result",
    "cut_for_model",
]

MODEL_TEXT_LIMIT = 100_000
"""Bytes (UTF-8) of result text the model gets; the card keeps the rest."""


@dataclass(frozen=True, slots=True)
class McpMedia:
    """An image or audio part of a result, kept for the UI (and a later image-in-tool-result path).

    Attributes:
        kind: ``image`` or ``audio``.
        mime: The MIME type the server gave.
        data_b64: The base64 data exactly as sent.
        size: Decoded size in bytes (-1 when the data is not valid base64).
    """

    kind: Literal["image", "audio"]
    mime: str
    data_b64: str
    size: int

    def describe(self) -> str:
        """What the model reads in place of the data."""
        if self.size < 0:
            return f"[{self.kind}: {self.mime}, invalid base64 data]"
        return f"[{self.kind}: {self.mime}, {self.size} bytes]"


@dataclass(frozen=True, slots=True)
class McpResourceLink:
    """A resource the server pointed at (never fetched)."""

    uri: str
    name: str
    mime: str | None = None
    description: str | None = None

    def describe(self) -> str:
        """One line for the model and the card."""
        mime = f" ({self.mime})" if self.mime else ""
        return f"[resource link: {self.name} <{self.uri}>{mime}]"


@dataclass(frozen=True, slots=True)
class McpToolResult:
    """One tool call's outcome, for the model and for the card.

    Attributes:
        server: The server's name.
        tool: The tool's own name (not the model-facing one).
        text: What the model gets (cut to ``MODEL_TEXT_LIMIT`` bytes with a note).
        full_text: The whole text (for the card's "show all").
        is_error: The server flagged the result as an error.
        truncated: ``text`` was cut.
        media: Images and audio, in order.
        resource_links: Links, in order.
        structured: The structured content, when the server sent one.
    """

    server: str
    tool: str
    text: str
    full_text: str
    is_error: bool = False
    truncated: bool = False
    media: tuple[McpMedia, ...] = ()
    resource_links: tuple[McpResourceLink, ...] = ()
    structured: Any = None

    @property
    def images(self) -> tuple[McpMedia, ...]:
        """The image parts only."""
        return tuple(m for m in self.media if m.kind == "image")

    @property
    def model_images(self) -> tuple[McpMedia, ...]:
        """The images the model may get: valid base64, at most ``MAX_TOOL_IMAGE_BYTES``, the first
        ``MAX_TOOL_IMAGES`` of them (the text describes every image either way)."""
        fit = [m for m in self.images if 0 <= m.size <= MAX_TOOL_IMAGE_BYTES]
        return tuple(fit[:MAX_TOOL_IMAGES])

    def model_output(self) -> str | ToolOutput:
        """What ``ChatToolDef.run`` returns: ``text``, or a ``ToolOutput`` with it when images go along."""
        images = self.model_images
        if not images:
            return self.text
        return ToolOutput(self.text, tuple({"mime": m.mime, "data": m.data_b64} for m in images))


def _decoded_size(data: str) -> int:
    try:
        return len(base64.b64decode(data, validate=True))
    except (binascii.Error, ValueError):
        return -1


def cut_for_model(text: str, limit: int = MODEL_TEXT_LIMIT) -> tuple[str, bool]:
    """Cut ``text`` to ``limit`` UTF-8 bytes (on a character boundary) and add a note; (text, was_cut)."""
    raw = text.encode("utf-8", "surrogatepass")
    if len(raw) <= limit:
        return text, False
    head = raw[:limit].decode("utf-8", "ignore")
    note = (
        f"\n\n[result cut: {len(raw):,} bytes in total, the first {limit:,} are shown here; "
        "the full result is in the tool card]"
    )
    return head + note, True


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def _same_json(text: str, value: Any) -> bool:
    try:
        return bool(json.loads(text) == value)
    except (ValueError, RecursionError):
        return False


def _wrapped_value(text: str, structured: Any) -> bool:
    """True when ``structured`` is the ``{"result": value}`` wrapper of a plain ``text`` result."""
    if not (isinstance(structured, dict) and len(structured) == 1 and "result" in structured):
        return False
    value = structured["result"]
    return text == value if isinstance(value, str) else _same_json(text, value)


def convert_result(server: str, tool: str, result: CallToolResult) -> McpToolResult:
    """Build the model text and the card's parts from an SDK ``CallToolResult``."""
    parts: list[str] = []
    media: list[McpMedia] = []
    links: list[McpResourceLink] = []
    structured = getattr(result, "structured_content", None)
    structured_used = False
    for block in getattr(result, "content", None) or []:
        kind = getattr(block, "type", None)
        if kind == "text":
            text = str(getattr(block, "text", ""))
            if structured is not None and not structured_used and _wrapped_value(text, structured):
                parts.append(text)  # a plain result the SDK also wrapped as {"result": ...}
                structured_used = True
            elif structured is not None and not structured_used and _same_json(text, structured):
                parts.append(_compact(structured))
                structured_used = True
            else:
                parts.append(text)
        elif kind in ("image", "audio"):
            data = str(getattr(block, "data", ""))
            item = McpMedia(
                "image" if kind == "image" else "audio",
                str(getattr(block, "mime_type", "") or "application/octet-stream"),
                data,
                _decoded_size(data),
            )
            media.append(item)
            parts.append(item.describe())
        elif kind == "resource_link":
            link = McpResourceLink(
                uri=str(getattr(block, "uri", "")),
                name=str(getattr(block, "name", "") or getattr(block, "uri", "")),
                mime=getattr(block, "mime_type", None),
                description=getattr(block, "description", None),
            )
            links.append(link)
            parts.append(link.describe())
        elif kind == "resource":
            resource = getattr(block, "resource", None)
            uri = str(getattr(resource, "uri", ""))
            embedded_text = getattr(resource, "text", None)
            if isinstance(embedded_text, str):
                parts.append(f"[resource {uri}]\n{embedded_text}")
            else:
                blob = str(getattr(resource, "blob", ""))
                mime = getattr(resource, "mime_type", None) or "application/octet-stream"
                parts.append(f"[embedded resource: {uri} ({mime}, {_decoded_size(blob)} bytes)]")
        else:
            parts.append(f"[unsupported content: {kind}]")
    if structured is not None and not structured_used:
        parts.append(_compact(structured))
    full = "\n".join(parts)
    text, cut = cut_for_model(full)
    return McpToolResult(
        server=server,
        tool=tool,
        text=text,
        full_text=full,
        is_error=bool(getattr(result, "is_error", False)),
        truncated=cut,
        media=tuple(media),
        resource_links=tuple(links),
        structured=structured,
    )
