"""What a file is, from its first bytes: the image types the providers take and their pixel size.

Pure Python header parsing (no image library, no decoding): PNG (IHDR), GIF (logical screen),
JPEG (the first SOFn marker, and the EXIF orientation of its APP1 segment), WebP (VP8, VP8L,
VP8X) and the PDF signature. Every reader is bounded and never raises on hostile bytes: an
unreadable header is ``None``.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

__all__ = ["ImageHeader", "IMAGE_TYPES", "image_header", "is_pdf", "sniff_media_type"]

#: The image media types the providers take (Anthropic and OpenAI alike).
IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})

_PDF_WINDOW = 1024  # Acrobat accepts the signature anywhere in the first kilobyte
_JPEG_SCAN = 4 * 1024 * 1024  # bytes of a JPEG walked to find its frame header


@dataclass(frozen=True, slots=True)
class ImageHeader:
    """What an image's header says.

    Attributes:
        media_type: ``image/png``, ``image/jpeg``, ``image/gif`` or ``image/webp``.
        width: Stored width in pixels.
        height: Stored height in pixels.
        orientation: The EXIF orientation (1-8) of a JPEG, else 1.
    """

    media_type: str
    width: int
    height: int
    orientation: int = 1

    @property
    def display_size(self) -> tuple[int, int]:
        """``(width, height)`` as shown, the EXIF orientation applied (5-8 swap the sides)."""
        if self.orientation in (5, 6, 7, 8):
            return self.height, self.width
        return self.width, self.height


def sniff_media_type(data: bytes) -> str | None:
    """The media type of a PNG, JPEG, GIF, WebP or PDF by its signature, else None."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if len(data) >= 12 and data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    if is_pdf(data):
        return "application/pdf"
    return None


def is_pdf(data: bytes) -> bool:
    """True when the PDF signature ``%PDF-`` is in the first kilobyte."""
    return b"%PDF-" in data[:_PDF_WINDOW]


def image_header(data: bytes) -> ImageHeader | None:
    """The type and pixel size of a PNG, JPEG, GIF or WebP image, or None when unreadable."""
    kind = sniff_media_type(data)
    try:
        if kind == "image/png":
            return _png(data)
        if kind == "image/gif":
            return _gif(data)
        if kind == "image/jpeg":
            return _jpeg(data)
        if kind == "image/webp":
            return _webp(data)
    except (struct.error, IndexError, ValueError):
        return None
    return None


def _valid(header: ImageHeader) -> ImageHeader | None:
    return header if header.width > 0 and header.height > 0 else None


def _png(data: bytes) -> ImageHeader | None:
    if data[12:16] != b"IHDR":
        return None
    width, height = struct.unpack(">II", data[16:24])
    return _valid(ImageHeader("image/png", width, height))


def _gif(data: bytes) -> ImageHeader | None:
    width, height = struct.unpack("<HH", data[6:10])
    return _valid(ImageHeader("image/gif", width, height))


_SOF = frozenset({0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF})


def _jpeg(data: bytes) -> ImageHeader | None:
    pos = 2
    orientation = 1
    end = min(len(data), _JPEG_SCAN)
    while pos + 4 <= end:
        if data[pos] != 0xFF:
            return None
        marker = data[pos + 1]
        if marker == 0xFF:  # fill byte
            pos += 1
            continue
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:  # no length
            pos += 2
            continue
        (length,) = struct.unpack(">H", data[pos + 2 : pos + 4])
        if length < 2:
            return None
        segment = data[pos + 4 : pos + 2 + length]
        if marker == 0xE1 and segment.startswith(b"Exif\x00\x00"):
            orientation = _exif_orientation(segment[6:]) or orientation
        elif marker in _SOF:
            height, width = struct.unpack(">HH", segment[1:5])
            return _valid(ImageHeader("image/jpeg", width, height, orientation))
        elif marker in (0xD9, 0xDA):  # end of image or start of scan before any frame header
            return None
        pos += 2 + length
    return None


def _exif_orientation(tiff: bytes) -> int | None:
    """The orientation tag (0x0112) of IFD0 of an EXIF TIFF block, when 1-8."""
    order = tiff[:2]
    if order == b"II":
        fmt = "<"
    elif order == b"MM":
        fmt = ">"
    else:
        return None
    (ifd,) = struct.unpack(fmt + "I", tiff[4:8])
    (count,) = struct.unpack(fmt + "H", tiff[ifd : ifd + 2])
    for i in range(min(count, 512)):
        entry = tiff[ifd + 2 + 12 * i : ifd + 14 + 12 * i]
        if len(entry) < 12:
            return None
        tag, kind = struct.unpack(fmt + "HH", entry[:4])
        if tag == 0x0112:
            value = struct.unpack(fmt + "H", entry[8:10])[0] if kind == 3 else None
            return value if value is not None and 1 <= value <= 8 else None
    return None


def _webp(data: bytes) -> ImageHeader | None:
    chunk = data[12:16]
    if chunk == b"VP8 ":
        if data[23:26] != b"\x9d\x01\x2a":
            return None
        width, height = struct.unpack("<HH", data[26:30])
        return _valid(ImageHeader("image/webp", width & 0x3FFF, height & 0x3FFF))
    if chunk == b"VP8L":
        if data[20] != 0x2F:
            return None
        (bits,) = struct.unpack("<I", data[21:25])
        return _valid(ImageHeader("image/webp", (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1))
    if chunk == b"VP8X":
        width = int.from_bytes(data[24:27], "little") + 1
        height = int.from_bytes(data[27:30], "little") + 1
        return _valid(ImageHeader("image/webp", width, height))
    return None
