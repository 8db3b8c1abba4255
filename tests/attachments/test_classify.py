"""What a chip says: a file's kind found by its content (image headers, UTF-8 text, PDFs read with
pypdf) and why a file cannot be sent."""

from __future__ import annotations

from pathlib import Path

import pytest
from attachment_support import make_gif, make_jpeg, with_exif_orientation

from desktop.core.attachments import TEXT_SEND_BYTES, classify, classify_bytes
from desktop.core.attachments._sniff import image_header
from desktop.core.attachments._text import decode_text, fence_for, fenced_file
from desktop.testing.files import make_pdf, make_png


def test_images_by_signature_with_their_pixel_size() -> None:
    found = classify_bytes(make_png(300, 200))
    assert (found.kind, found.media_type, found.width, found.height, found.problem) == (
        "image", "image/png", 300, 200, None)
    jpeg = classify_bytes(make_jpeg(120, 80))
    assert (jpeg.kind, jpeg.media_type, jpeg.width, jpeg.height) == ("image", "image/jpeg", 120, 80)
    gif = classify_bytes(make_gif(33, 22, frames=3))
    assert (gif.kind, gif.media_type, gif.width, gif.height) == ("image", "image/gif", 33, 22)


def test_webp_headers_of_each_flavour() -> None:
    riff = b"RIFF\x00\x00\x00\x00WEBP"
    vp8 = riff + b"VP8 \x00\x00\x00\x00" + b"\x00\x00\x00\x9d\x01\x2a" + bytes([0x40, 0x01, 0xF0, 0x00])
    vp8l = riff + b"VP8L\x00\x00\x00\x00\x2f" + ((100 - 1) | ((50 - 1) << 14)).to_bytes(4, "little")
    vp8x = riff + b"VP8X\x00\x00\x00\x00" + bytes(4) + (639).to_bytes(3, "little")
    vp8x += (479).to_bytes(3, "little")
    sizes = [(h.width, h.height) if (h := image_header(data)) else None for data in (vp8, vp8l, vp8x)]
    assert sizes == [(320, 240), (100, 50), (640, 480)]


def test_the_exif_orientation_swaps_the_shown_size() -> None:
    rotated = with_exif_orientation(make_jpeg(400, 200), 6)
    header = image_header(rotated)
    assert header is not None and header.orientation == 6 and header.display_size == (200, 400)
    found = classify_bytes(rotated)
    assert (found.width, found.height) == (200, 400)
    assert image_header(with_exif_orientation(make_jpeg(40, 20), 3)).display_size == (40, 20)  # type: ignore[union-attr]


def test_damaged_and_unsupported_images_say_why() -> None:
    damaged = classify_bytes(b"\x89PNG\r\n\x1a\n" + bytes(8))
    assert damaged.kind == "other" and damaged.problem == "a damaged image: its header cannot be read"
    bmp = classify_bytes(b"BM" + bytes(60))
    assert bmp.kind == "other" and bmp.problem is not None
    assert bmp.problem.startswith("BMP images cannot be sent")
    heic = classify_bytes(b"\x00\x00\x00\x18ftypheic" + bytes(40))
    assert heic.problem is not None and "HEIC" in heic.problem
    huge = classify_bytes(make_png(1, 1)[:16] + (20000).to_bytes(4, "big") + (10000).to_bytes(4, "big"))
    assert huge.kind == "image"
    assert huge.problem == "too many pixels to downscale: 20000×10000 (at most 64 megapixels)"


def test_utf8_text_is_text_and_binary_is_not() -> None:
    assert classify_bytes("héllo\n".encode()).kind == "text"
    assert classify_bytes(b"\xef\xbb\xbfwith a BOM").kind == "text"
    assert classify_bytes(b"").kind == "text"
    nul = classify_bytes(b"abc\x00def")
    assert nul.kind == "other" and nul.problem is not None and nul.problem.startswith("not text")
    assert classify_bytes("caf\xe9".encode("latin-1")).kind == "other"


def test_a_large_text_is_sent_cut_at_one_mebibyte_on_a_character_boundary() -> None:
    data = ("é" * (TEXT_SEND_BYTES // 2 + 10)).encode()  # 2-byte characters: the cut splits one
    found = classify_bytes(data)
    assert found.kind == "text" and found.note == "only the first 1.0 MB of 1.0 MB is sent"
    decoded = decode_text(data)
    assert decoded is not None
    text, cut = decoded
    assert cut and text == "é" * (TEXT_SEND_BYTES // 2)
    bad_late = b"a" * (TEXT_SEND_BYTES - 10) + b"\xff" + b"a" * 20  # invalid inside the sent part
    assert decode_text(bad_late) is None


def test_the_fence_is_longer_than_any_backtick_run_and_headed_with_the_name() -> None:
    assert fence_for("no fences") == "```"
    assert fence_for("````\ncode\n````") == "`````"
    inner = "Example:\n```python\nprint(1)\n```\n"
    block = fenced_file("README.md", inner, total_size=len(inner), cut=False)
    assert block == f"Attached file: README.md\n````markdown\n{inner}````"
    cut = fenced_file("big.log", "x", total_size=3 * 1024 * 1024, cut=True)
    assert cut.endswith("(only the first 1.0 MB of 3.0 MB is included; the rest of the file was not sent)")


def test_pdfs_pages_encryption_and_text_layer() -> None:
    plain = classify_bytes(make_pdf(["one", "two", "three"]))
    assert (plain.kind, plain.pages, plain.problem, plain.note) == ("pdf", 3, None, "3 pages")
    scanned = classify_bytes(make_pdf([None, None]))
    assert scanned.problem is None
    assert scanned.note == "2 pages, no text layer (scanned): only a model that reads PDFs can see it"
    open_encrypted = classify_bytes(make_pdf(["text"], user_password=""))
    assert (open_encrypted.problem, open_encrypted.note) == (None, "1 page, encrypted")
    locked = classify_bytes(make_pdf(["text"], user_password="s3cret"))
    assert locked.kind == "pdf" and locked.problem == "encrypted: it cannot be read or sent"
    broken = classify_bytes(b"%PDF-1.7\nnothing else")
    assert broken.kind == "pdf" and broken.problem is not None and broken.problem.startswith("unreadable PDF")


@pytest.mark.parametrize("name", ["notes.txt", "photo.png"])
def test_classify_reads_a_path(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    path.write_bytes(b"plain words")
    assert classify(path).kind == "text"  # by content, whatever the name says
