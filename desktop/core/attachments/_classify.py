"""What kind of attachment a file is, and why it could not be sent: what a chip shows.

By content, never by the name alone: PNG, JPEG, WebP and GIF by their signature (``image``), PDFs by
``%PDF-`` (``pdf``), UTF-8 text without NUL bytes (``text``), anything else ``other`` with the
reason it cannot be sent. ``classify`` may take a while for a large PDF (``pypdf`` reads its first
pages): a UI calls it off its event thread.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from desktop.core.chat.attachment_ref import AttachmentKind, format_size

from ._files import AttachmentError, read_regular_file
from ._pdf import inspect_pdf
from ._sniff import image_header, sniff_media_type
from ._text import TEXT_SEND_BYTES, decode_text

__all__ = ["MAX_IMAGE_PIXELS", "Classification", "classify", "classify_bytes"]

#: The most pixels an image may have to be downscaled: Qt's default image allocation limit is
#: 256 MB, 4 bytes a pixel.
MAX_IMAGE_PIXELS = 64 * 1024 * 1024

_OTHER_IMAGES = (
    (b"BM", "BMP"),
    (b"II*\x00", "TIFF"),
    (b"MM\x00*", "TIFF"),
    (b"<svg", "SVG"),
)
_SENDABLE = "only images (PNG, JPEG, WebP, GIF), PDFs and UTF-8 text files can be sent"


@dataclass(frozen=True, slots=True)
class Classification:
    """A file's kind and what its chip says.

    Attributes:
        kind: ``image``, ``text``, ``pdf`` or ``other``.
        media_type: The type found by content (``text/plain`` for text, ``application/octet-stream``
            when unknown).
        size: Bytes.
        problem: Why it cannot be sent at all, or None.
        note: Anything else worth showing (``12 pages``, ``only the first 1 MB is sent``...).
        width: An image's width, EXIF orientation applied.
        height: An image's height, EXIF orientation applied.
        pages: A PDF's page count.
    """

    kind: AttachmentKind
    media_type: str
    size: int
    problem: str | None = None
    note: str | None = None
    width: int | None = None
    height: int | None = None
    pages: int | None = None

    @property
    def chip_note(self) -> str | None:
        """The problem, else the note."""
        return self.problem or self.note


def classify(path: Path) -> Classification:
    """Classify the file at ``path`` (regular files only, at most ``MAX_ATTACHMENT_BYTES``).

    A file that cannot be read at all is ``other`` with the reason as ``problem``; never raises.
    """
    try:
        data = read_regular_file(path)
    except AttachmentError as exc:
        return Classification("other", "application/octet-stream", _size_of(path), problem=str(exc))
    return classify_bytes(data)


def _size_of(path: Path) -> int:
    try:
        return max(path.stat().st_size, 0)
    except OSError:
        return 0


def classify_bytes(data: bytes) -> Classification:
    """Classify a file's bytes (see the module doc); never raises."""
    size = len(data)
    media = sniff_media_type(data)
    if media == "application/pdf":
        info = inspect_pdf(data)
        problem = info.problem or ("encrypted: it cannot be read or sent" if info.locked else None)
        return Classification("pdf", media, size, problem=problem, note=None if problem else info.note(),
                              pages=info.pages or None)
    if media is not None:
        header = image_header(data)
        if header is None:
            return Classification("other", media, size, problem="a damaged image: its header cannot be read")
        width, height = header.display_size
        problem = None
        if width * height > MAX_IMAGE_PIXELS:
            problem = f"too many pixels to downscale: {width}×{height} (at most 64 megapixels)"
        return Classification("image", media, size, problem=problem, width=width, height=height)
    decoded = decode_text(data)
    if decoded is not None:
        _, cut = decoded
        note = None
        if cut:
            note = f"only the first {format_size(TEXT_SEND_BYTES)} of {format_size(size)} is sent"
        return Classification("text", "text/plain", size, note=note)
    for signature, label in _OTHER_IMAGES:
        if data.startswith(signature):
            return Classification("other", "application/octet-stream", size,
                                  problem=f"{label} images cannot be sent: use PNG, JPEG, WebP or GIF")
    if data[4:12] in (b"ftypheic", b"ftypheix", b"ftypmif1", b"ftypavif"):
        return Classification("other", "application/octet-stream", size,
                              problem="HEIC/AVIF images cannot be sent: use PNG, JPEG, WebP or GIF")
    return Classification("other", "application/octet-stream", size, problem=f"not text: {_SENDABLE}")
