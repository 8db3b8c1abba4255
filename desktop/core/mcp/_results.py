"""Turn an MCP ``CallToolResult`` into what the model gets and what the tool card shows.

* text content is the result text; ``is_error`` marks the whole result as an error;
* ``structured_content`` goes to the model as compact JSON (it replaces a text block that merely
  repeats it, as the spec asks servers to send for old clients; a ``{"result": v}`` wrapper of a
  plain text result adds nothing);
* base64 image or audio data never reaches the model as text: structured content that only
  repeats the content blocks (``{"content": [{"type": "image", "data", "mimeType"}]}``, what
  ``@modelcontextprotocol/server-filesystem``'s ``read_media_file`` sends) is dropped, and in any
  other structured content (or a text block) a string that repeats a block's binary data, a
  ``data:image/...;base64,`` URL, or base64 beside an image/audio ``mimeType`` is replaced by a
  one-line description (``full_text`` too: the card has the images themselves);
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
import re
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


_DATA_URL = re.compile(r"data:((?:image|audio)/[\w.+-]+);base64,", re.IGNORECASE)
_BASE64 = re.compile(r"[A-Za-z0-9+/\r\n]+={0,2}")
_MEDIA_KEYS = ("mimeType", "mime_type", "mediaType", "media_type")
_MIN_BINARY_CHARS = 64  # shorter base64 beside a media type is left alone (it costs nothing)
_MAX_DEPTH = 64


def _binary_payloads(blocks: list[Any]) -> dict[str, str]:
    """The base64 payloads of a result's image, audio and embedded-blob blocks, each with the line
    the model reads in its place."""
    payloads: dict[str, str] = {}
    for block in blocks:
        kind = getattr(block, "type", None)
        if kind in ("image", "audio"):
            data = str(getattr(block, "data", ""))
            mime = str(getattr(block, "mime_type", "") or "application/octet-stream")
        elif kind == "resource":
            resource = getattr(block, "resource", None)
            blob = getattr(resource, "blob", None)
            if not isinstance(blob, str):
                continue
            data = blob
            mime = str(getattr(resource, "mime_type", None) or "application/octet-stream")
        else:
            continue
        if data:
            size = max(_decoded_size(data), 0)
            payloads[data] = f"[{mime} data of {size} bytes: the same as the content above]"
    return payloads


def _binary_line(mime: str, data: str) -> str:
    size = _decoded_size(re.sub(r"\s+", "", data))
    return f"[{mime} data{f' of {size} bytes' if size >= 0 else ''}: left out]"


def _summarise(value: Any, payloads: dict[str, str], depth: int = 0) -> tuple[Any, int]:
    """``value`` with every string of binary data replaced by a description, and how many were."""
    if depth > _MAX_DEPTH:  # what is this deep is not read for the model: it could hide binary data
        return "[nested too deep: left out]", 1
    if isinstance(value, str):
        if value in payloads:
            return payloads[value], 1
        url = _DATA_URL.match(value)
        if url is not None:
            return _binary_line(url.group(1).lower(), value[url.end():]), 1
        return value, 0
    if isinstance(value, list):
        items = [_summarise(v, payloads, depth + 1) for v in value]
        return [v for v, _ in items], sum(n for _, n in items)
    if isinstance(value, dict):
        mime = next((value[k] for k in _MEDIA_KEYS if isinstance(value.get(k), str)), "")
        binary = mime.lower().startswith(("image/", "audio/"))
        out: dict[Any, Any] = {}
        count = 0
        for key, item in value.items():
            if (binary and isinstance(item, str) and item not in payloads and len(item) >= _MIN_BINARY_CHARS
                    and _BASE64.fullmatch(item)):
                out[key], found = _binary_line(mime.lower(), item), 1
            else:
                out[key], found = _summarise(item, payloads, depth + 1)
            count += found
        return out, count
    return value, 0


def _repeats_content(structured: Any, blocks: list[Any]) -> bool:
    """True when ``structured`` is only ``{"content": [...]}`` repeating the media blocks."""
    if not (isinstance(structured, dict) and set(structured) == {"content"}):
        return False
    items = structured["content"]
    if not (isinstance(items, list) and items and len(items) == len(blocks)):
        return False
    saw_media = False
    for item, block in zip(items, blocks, strict=True):
        kind = getattr(block, "type", None)
        if not isinstance(item, dict) or item.get("type") != kind:
            return False
        if kind in ("image", "audio"):
            saw_media = True
            if item.get("data") != getattr(block, "data", None):
                return False
        elif kind == "text":
            if item.get("text") != getattr(block, "text", None):
                return False
        else:
            return False
    return saw_media


def convert_result(server: str, tool: str, result: CallToolResult) -> McpToolResult:
    """Build the model text and the card's parts from an SDK ``CallToolResult``."""
    parts: list[str] = []
    media: list[McpMedia] = []
    links: list[McpResourceLink] = []
    blocks = list(getattr(result, "content", None) or [])
    payloads = _binary_payloads(blocks)
    structured = getattr(result, "structured_content", None)
    structured_used = structured is not None and _repeats_content(structured, blocks)
    shown = _summarise(structured, payloads)[0] if structured is not None and not structured_used else None
    for block in blocks:
        kind = getattr(block, "type", None)
        if kind == "text":
            text = str(getattr(block, "text", ""))
            if structured is not None and not structured_used and _wrapped_value(text, structured):
                parts.append(_summarise(text, payloads)[0])  # a plain result also wrapped as {"result": ...}
                structured_used = True
            elif structured is not None and not structured_used and _same_json(text, structured):
                parts.append(_compact(shown))
                structured_used = True
            elif text in payloads:
                parts.append("[binary data repeated as text: left out]")
            else:
                parts.append(_summarise(text, payloads)[0])
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
        parts.append(_compact(shown))
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
