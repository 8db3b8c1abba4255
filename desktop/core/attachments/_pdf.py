"""PDFs with ``pypdf``: what a PDF holds (pages, encryption, a text layer) and its text, pages marked.

``pypdf`` is imported on first use (it is only needed once a PDF is attached). A PDF is untrusted:
every ``pypdf`` failure (``PyPdfError`` and its kin, ``DependencyError`` for AES without the
``cryptography`` package, and whatever a malformed file makes the parser raise) becomes a readable
``problem``, never an exception. An encrypted PDF whose user password is empty still reads; one
that needs a password is ``locked``.
"""

from __future__ import annotations

import io
import logging
from dataclasses import dataclass
from typing import Any

from desktop.core.chat.attachment_ref import format_size

log = logging.getLogger(__name__)

__all__ = [
    "PDF_SAMPLE_PAGES",
    "MAX_PDF_TEXT_PAGES",
    "PdfInfo",
    "PdfText",
    "describe_pdf_text",
    "extract_pdf_text",
    "inspect_pdf",
]

#: Pages read to decide whether a PDF has a text layer (a scanned PDF has none).
PDF_SAMPLE_PAGES = 5
#: At most this many pages are extracted as text; later pages are named in the note.
MAX_PDF_TEXT_PAGES = 1000


@dataclass(frozen=True, slots=True)
class PdfInfo:
    """What a PDF holds.

    Attributes:
        pages: The page count (0 when unreadable).
        encrypted: The file is encrypted (even with an empty password).
        locked: It needs a password: nothing can be read.
        has_text: One of the first ``PDF_SAMPLE_PAGES`` pages has text (False: image-only, scanned).
        problem: Why it cannot be read at all, or None.
    """

    pages: int
    encrypted: bool = False
    locked: bool = False
    has_text: bool = False
    problem: str | None = None

    def note(self) -> str | None:
        """What a chip says about it besides name and size."""
        if self.problem is not None:
            return self.problem
        if self.locked:
            return "password-protected: it cannot be read or sent"
        pages = f"{self.pages} page{'s' if self.pages != 1 else ''}"
        if not self.has_text:
            return f"{pages}, no text layer (scanned): only a model that reads PDFs can see it"
        return f"{pages}, encrypted" if self.encrypted else pages


@dataclass(frozen=True, slots=True)
class PdfText:
    """A PDF's text, each page headed ``[page N of M]``.

    Attributes:
        text: The text (only pages with text are included).
        pages: The page count.
        pages_read: Pages extracted (at most ``MAX_PDF_TEXT_PAGES``, fewer when the limit was met).
        pages_with_text: Extracted pages that had any text.
        cut: The text was cut at the byte limit (or pages were left unread).
    """

    text: str
    pages: int
    pages_read: int
    pages_with_text: int
    cut: bool


def _reader(data: bytes) -> tuple[Any, PdfInfo | None]:
    """A ``PdfReader`` ready to read, or the ``PdfInfo`` saying why there is none."""
    import pypdf  # imported on first use: only PDFs need it

    try:
        reader = pypdf.PdfReader(io.BytesIO(data))
        encrypted = bool(reader.is_encrypted)
        if encrypted and not reader.decrypt(""):
            return None, PdfInfo(0, encrypted=True, locked=True)
        return reader, None
    except Exception as exc:  # hostile input: any parser failure is a problem, never a crash
        if _looks_encrypted(exc):
            return None, PdfInfo(0, encrypted=True, locked=True)
        log.info("PDF not readable: %s", exc)
        return None, PdfInfo(0, problem=_problem(exc))


def _looks_encrypted(exc: Exception) -> bool:
    # AES without the ``cryptography`` package, or a password needed later on.
    return type(exc).__name__ in ("DependencyError", "FileNotDecryptedError")


def _problem(exc: BaseException) -> str:
    return f"unreadable PDF ({type(exc).__name__})"


def _page_text(page: Any) -> str:
    text = page.extract_text()
    return text if isinstance(text, str) else ""


def inspect_pdf(data: bytes) -> PdfInfo:
    """Pages, encryption and whether the first pages have text (see ``PdfInfo``); never raises."""
    reader, failed = _reader(data)
    if failed is not None:
        return failed
    try:
        pages = len(reader.pages)
        has_text = any(_page_text(reader.pages[i]).strip() for i in range(min(pages, PDF_SAMPLE_PAGES)))
        return PdfInfo(pages, encrypted=bool(reader.is_encrypted), has_text=has_text)
    except Exception as exc:
        if _looks_encrypted(exc):
            return PdfInfo(0, encrypted=True, locked=True)
        log.info("PDF not readable: %s", exc)
        return PdfInfo(0, problem=_problem(exc))


def extract_pdf_text(data: bytes, limit: int) -> PdfText | PdfInfo:
    """The PDF's text, pages marked, at most ``limit`` UTF-8 bytes; a ``PdfInfo`` when unreadable.

    Pages are read in order up to ``MAX_PDF_TEXT_PAGES``; the text stops at the page that passes
    ``limit`` (cut on a character boundary).
    """
    reader, failed = _reader(data)
    if failed is not None:
        return failed
    parts: list[str] = []
    used = 0
    read = with_text = 0
    cut = False
    try:
        pages = len(reader.pages)
        for i in range(min(pages, MAX_PDF_TEXT_PAGES)):
            text = _page_text(reader.pages[i]).strip()
            read += 1
            if not text:
                continue
            with_text += 1
            block = f"[page {i + 1} of {pages}]\n{text}\n"
            size = len(block.encode("utf-8", "surrogatepass"))
            if used + size > limit:
                room = max(limit - used, 0)
                parts.append(block.encode("utf-8", "surrogatepass")[:room].decode("utf-8", "ignore"))
                cut = True
                break
            parts.append(block)
            used += size
    except Exception as exc:
        if _looks_encrypted(exc):
            return PdfInfo(0, encrypted=True, locked=True)
        log.info("PDF text extraction failed after %d pages: %s", read, exc)
        if not parts:
            return PdfInfo(0, problem=_problem(exc))
        cut = True
    if read < pages:
        cut = True
    return PdfText("\n".join(parts), pages, read, with_text, cut)


def describe_pdf_text(name: str, size: int, result: PdfText, *, reason: str) -> str:
    """The note heading a PDF's extracted text: what was sent and why it is text."""
    pages = f"{result.pages} page{'s' if result.pages != 1 else ''}"
    parts = [f"Attached PDF: {name} ({pages}, {format_size(size)}). {reason}"]
    parts.append(f"Text extracted with pypdf from {result.pages_with_text} of {result.pages_read} pages read")
    if result.cut:
        parts[-1] += " (cut: the rest of the document was not sent)"
    parts[-1] += "; images, tables and layout are not included."
    return " ".join(parts)
