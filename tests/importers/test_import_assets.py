"""Images inside an export zip become attachments of the messages that point at them, stored once in
the project's attachment store; the note stays when the file is missing or unreadable."""

from __future__ import annotations

import struct
import zipfile
import zlib
from pathlib import Path

from import_builders import branchy_chatgpt, chatgpt_zip, write_zip

from desktop.core.attachments import ATTACHMENTS_DIR, attachments_of
from desktop.core.importers import import_into_project
from desktop.core.store import ProjectStore


def png(width: int = 3, height: int = 2) -> bytes:
    """A real RGB PNG made with the standard library."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = b"".join(b"\x00" + bytes([200, 30, 30]) * width for _ in range(height))
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    body = chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")
    return b"\x89PNG\r\n\x1a\n" + body


def test_an_image_in_the_zip_is_attached_and_stored_once(tmp_path: Path) -> None:
    image = png()
    conversations = [branchy_chatgpt("c1", "Rome"), branchy_chatgpt("c2", "Again")]
    export = chatgpt_zip(tmp_path / "export.zip", conversations)
    with zipfile.ZipFile(export, "a") as zf:
        zf.writestr("file-abc-photo.jpg", image)  # older exports: file-<id>-<original name> at the root
    with ProjectStore(tmp_path / "p") as store:
        outcome, _ = import_into_project(store, export)
    assert any("2 files of the export attached" in n for n in outcome.notices)
    loaded = ProjectStore(tmp_path / "p").load()
    for node in loaded.nodes:
        msg = next(m for m in node.conversation.messages if m.content == "What is this place?")
        (ref,) = attachments_of(msg)
        assert (ref.name, ref.kind, ref.media_type) == ("photo.jpg", "image", "image/png")
        assert (ref.width, ref.height) == (3, 2)
        assert "not imported" not in msg.content
    stored = list((tmp_path / "p" / ATTACHMENTS_DIR).glob("*.png"))
    assert len(stored) == 1 and stored[0].read_bytes() == image  # stored once for both messages


def test_the_note_stays_when_the_file_is_missing_or_unreadable(tmp_path: Path) -> None:
    missing = chatgpt_zip(tmp_path / "missing.zip", [branchy_chatgpt("c1", "Rome")])
    with ProjectStore(tmp_path / "p1") as store:
        outcome, _ = import_into_project(store, missing)
    assert any("1 not in the export or unreadable" in n for n in outcome.notices)
    loaded = ProjectStore(tmp_path / "p1").load()
    msg = next(m for m in loaded.nodes[0].conversation.messages if "What is this place?" in m.content)
    assert msg.content == "[image: photo.jpg — not imported]\n\nWhat is this place?"
    assert attachments_of(msg) == []

    # A member whose bytes do not match its CRC: the import goes on, the note stays.
    broken = tmp_path / "broken.zip"
    write_zip(broken, {"conversations.json": [branchy_chatgpt("c1", "Rome")], "file-abc.dat": png()},
              compression=zipfile.ZIP_STORED)
    data = bytearray(broken.read_bytes())
    at = data.find(b"IHDR")
    data[at + 6] ^= 0xFF
    broken.write_bytes(bytes(data))
    with ProjectStore(tmp_path / "p2") as store:
        outcome, _ = import_into_project(store, broken)
    assert len(outcome.report.imported) == 1
    loaded = ProjectStore(tmp_path / "p2").load()
    msg = next(m for m in loaded.nodes[0].conversation.messages if "What is this place?" in m.content)
    assert msg.content.startswith("[image: photo.jpg — not imported]") and attachments_of(msg) == []
