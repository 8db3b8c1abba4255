"""Real files for attachment tests, made without an image library: PNGs and PDFs.

* ``make_png``: a valid RGB PNG of any size (one colour), encoded with ``zlib``;
* ``make_pdf``: a valid PDF whose pages hold the given texts (Helvetica, one line per text line),
  or, for a ``None`` page, only an image (a scanned page: no text layer); optionally encrypted
  with ``pypdf`` (an empty user password still opens; any other needs it).
"""

from __future__ import annotations

import io
import struct
import zlib
from collections.abc import Sequence

__all__ = ["make_pdf", "make_png", "pdf_escape"]


def _chunk(kind: bytes, data: bytes) -> bytes:
    crc = zlib.crc32(kind + data) & 0xFFFFFFFF
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)


def make_png(width: int, height: int, rgb: tuple[int, int, int] = (200, 30, 30)) -> bytes:
    """A ``width`` × ``height`` RGB PNG filled with ``rgb``."""
    row = b"\x00" + bytes(rgb) * width
    raw = row * height
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header) + _chunk(b"IDAT", zlib.compress(raw, 9))
            + _chunk(b"IEND", b""))


def pdf_escape(text: str) -> str:
    """``text`` as the inside of a PDF literal string (Latin-1 text only)."""
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def make_pdf(
    pages: Sequence[str | None], *, user_password: str | None = None, owner_password: str = "owner"
) -> bytes:
    """A PDF with one page per item: its text (lines of Helvetica), or an image only for ``None``.

    Args:
        pages: The text of each page; ``None`` makes a page with an image and no text.
        user_password: Encrypt the file (AES-256) with this user password (``""``: opens without).
        owner_password: The owner password when encrypting.
    """
    objects: list[bytes] = []  # object n is objects[n - 1]

    def add(body: bytes) -> int:
        objects.append(body)
        return len(objects)

    catalog = add(b"")  # filled in once the pages are known
    pages_obj = add(b"")
    font = add(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
    image = add(b"<< /Type /XObject /Subtype /Image /Width 2 /Height 2 /ColorSpace /DeviceGray "
                b"/BitsPerComponent 8 /Length 4 >>\nstream\n\x00\xff\xff\x00\nendstream")
    kids: list[int] = []
    for text in pages:
        if text is None:
            content = b"q 200 0 0 200 72 500 cm /Im1 Do Q"
        else:
            lines = " T* ".join(f"({pdf_escape(line)}) Tj" for line in text.split("\n"))
            content = f"BT /F1 12 Tf 14 TL 72 720 Td {lines} ET".encode("latin-1")
        stream = add(b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream")
        page = add(
            b"<< /Type /Page /Parent %d 0 R /MediaBox [0 0 612 792] /Contents %d 0 R "
            b"/Resources << /Font << /F1 %d 0 R >> /XObject << /Im1 %d 0 R >> >> >>"
            % (pages_obj, stream, font, image)
        )
        kids.append(page)
    objects[catalog - 1] = b"<< /Type /Catalog /Pages %d 0 R >>" % pages_obj
    objects[pages_obj - 1] = (b"<< /Type /Pages /Kids [" + b" ".join(b"%d 0 R" % k for k in kids)
                              + b"] /Count %d >>" % len(kids))
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for n, body in enumerate(objects, start=1):
        offsets.append(out.tell())
        out.write(b"%d 0 obj\n" % n + body + b"\nendobj\n")
    xref = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1))
    for offset in offsets:
        out.write(b"%010d 00000 n \n" % offset)
    out.write(b"trailer\n<< /Size %d /Root %d 0 R >>\nstartxref\n%d\n%%%%EOF\n"
              % (len(objects) + 1, catalog, xref))
    data = out.getvalue()
    if user_password is None:
        return data
    import pypdf

    writer = pypdf.PdfWriter(clone_from=pypdf.PdfReader(io.BytesIO(data)))
    writer.encrypt(user_password=user_password, owner_password=owner_password, algorithm="AES-256")
    encrypted = io.BytesIO()
    writer.write(encrypted)
    return encrypted.getvalue()
