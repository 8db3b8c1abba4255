"""What an attachment becomes on the wire (provider-neutral parts) and the image preparation seam.

The resolver (``_resolve``) turns each reference of a user message into parts; each driver renders
them in its API's shape (``desktop.core.providers._attachment_parts``):

* ``ImagePart``: OpenAI ``image_url`` with a ``data:`` URL, Anthropic ``image`` with a base64 source;
* ``PdfPart``: OpenAI ``file`` with ``file_data``, Anthropic ``document`` with a base64 source;
* ``TextPart``: a text part/block (a fenced text file, a PDF's extracted text, or a note saying
  what was not sent and why).

Image downscaling needs an image codec, which the core does not have: the UI implements
``ImagePreparer`` (with ``QImage``) and hands it to the resolver. The core decides the limits per
provider (``image_limits``) and checks what the preparer returns.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol, TypeAlias

from desktop.core.chat.types import MAX_TOOL_IMAGE_BYTES, ApiKind

__all__ = [
    "ANTHROPIC_IMAGE_LIMITS",
    "OPENAI_IMAGE_LIMITS",
    "ImageLimits",
    "ImagePart",
    "ImagePreparer",
    "ImagePrepareError",
    "PdfPart",
    "PreparedImage",
    "TextPart",
    "WirePart",
    "image_limits",
]


@dataclass(frozen=True, slots=True)
class ImageLimits:
    """What an image sent to a provider may be.

    Attributes:
        max_side: Longest side in pixels.
        max_pixels: Most pixels (width × height), or None for no limit beyond ``max_side``.
        max_bytes: Largest encoded file (its base64 text stays within the 5 MB providers take).
    """

    max_side: int
    max_pixels: int | None
    max_bytes: int

    @property
    def tag(self) -> str:
        """A short name of these limits, part of a prepared variant's file name (``s1568p1150000``)."""
        return f"s{self.max_side}" + (f"p{self.max_pixels}" if self.max_pixels else "") + f"b{self.max_bytes}"

    def fit(self, width: int, height: int) -> tuple[int, int]:
        """``(width, height)`` scaled down (aspect kept, never up) to fit these limits."""
        scale = min(1.0, self.max_side / max(width, height, 1))
        if self.max_pixels and width * height * scale * scale > self.max_pixels:
            scale = math.sqrt(self.max_pixels / (width * height))
        return max(1, math.floor(width * scale)), max(1, math.floor(height * scale))

    def allows(self, width: int, height: int) -> bool:
        """True when an image of this pixel size needs no downscaling."""
        if max(width, height) > self.max_side:
            return False
        return not (self.max_pixels and width * height > self.max_pixels)


#: Anthropic: long side ≤ 1568 px and ≤ 1.15 megapixels (what the API would downscale to anyway).
ANTHROPIC_IMAGE_LIMITS = ImageLimits(1568, 1_150_000, MAX_TOOL_IMAGE_BYTES)
#: OpenAI-compatible: long side ≤ 2048 px (the API fits images into 2048 × 2048).
OPENAI_IMAGE_LIMITS = ImageLimits(2048, None, MAX_TOOL_IMAGE_BYTES)


def image_limits(api: ApiKind) -> ImageLimits:
    """The image limits of a provider API."""
    return ANTHROPIC_IMAGE_LIMITS if api == "anthropic" else OPENAI_IMAGE_LIMITS


@dataclass(frozen=True, slots=True)
class PreparedImage:
    """An image made ready to send.

    Attributes:
        data: The encoded image (PNG, JPEG or WebP; GIF only as a first frame re-encoded).
        media_type: ``image/png``, ``image/jpeg`` or ``image/webp``.
        width: Pixel width.
        height: Pixel height.
    """

    data: bytes
    media_type: str
    width: int
    height: int


class ImagePrepareError(Exception):
    """The image could not be prepared (undecodable, too large to decode...); the text says why."""


class ImagePreparer(Protocol):
    """Downscales one image to a provider's limits (the UI implements it with ``QImage``).

    ``prepare`` runs in a worker thread (never the GUI thread), one call at a time per image.
    It decodes ``data`` (a GIF: its first frame), applies the EXIF orientation, scales it down
    (aspect kept, smooth) so that it fits ``limits.fit`` of its oriented size, and encodes it so
    that it is at most ``limits.max_bytes`` (JPEG for photos, lowering the quality as needed; PNG
    where there is transparency). It raises ``ImagePrepareError`` (any exception is taken as one)
    when it cannot; the resolver then sends a note instead and checks every result it gets.
    """

    def prepare(self, data: bytes, limits: ImageLimits) -> PreparedImage:
        """Return ``data`` prepared for ``limits`` (see the class doc)."""
        ...


@dataclass(frozen=True, slots=True)
class ImagePart:
    """An image to send. ``data`` is base64 (no ``data:`` prefix)."""

    media_type: str
    data: str
    width: int
    height: int
    name: str


@dataclass(frozen=True, slots=True)
class PdfPart:
    """A PDF to send as a document. ``data`` is base64 (no ``data:`` prefix)."""

    data: str
    name: str
    pages: int | None


@dataclass(frozen=True, slots=True)
class TextPart:
    """Text to send: a fenced file, extracted text, or a note."""

    text: str


WirePart: TypeAlias = ImagePart | PdfPart | TextPart
