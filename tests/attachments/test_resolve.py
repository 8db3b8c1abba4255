"""At send time: references become wire parts per provider. Images within the limits go as they are,
larger ones are downscaled by a real ``QImage`` preparer and the variant is kept; text files are
fenced; PDFs go as documents or as text; a missing or damaged file becomes a note and a notice."""

from __future__ import annotations

import asyncio
import base64
import threading
from pathlib import Path

import pytest
from attachment_support import QtPreparer, make_gif, make_jpeg, with_exif_orientation
from PySide6.QtGui import QImage

from desktop.core.attachments import (
    ANTHROPIC_IMAGE_LIMITS,
    OPENAI_IMAGE_LIMITS,
    TEXT_SEND_BYTES,
    AttachmentRef,
    AttachmentResolver,
    AttachmentStore,
    ImagePart,
    PdfPart,
    TextPart,
    set_attachments,
    unresolved_attachments,
)
from desktop.core.attachments._sniff import image_header
from desktop.core.chat.types import ApiKind, ChatMessage
from desktop.testing.files import make_pdf, make_png

CLAUDE = "claude-sonnet-4-5"  # takes images and PDFs
GPT = "gpt-4o"  # takes images and PDFs
LOCAL = "my-local-model"  # unknown: allowed, PDFs go as text
BLIND = "o3-mini"  # known not to take images


@pytest.fixture
def store(tmp_path: Path) -> AttachmentStore:
    return AttachmentStore(tmp_path / "project")


def user(refs: list[AttachmentRef], text: str = "Look", msg_id: str = "u1") -> ChatMessage:
    msg = ChatMessage(msg_id, "user", text, 1)
    set_attachments(msg, refs)
    return msg


def resolve(resolver: AttachmentResolver, messages: list[ChatMessage], api: ApiKind, model: str):  # type: ignore[no-untyped-def]
    return resolver.resolve_now(messages, api=api, model=model)


def decoded(part: ImagePart) -> QImage:
    image = QImage.fromData(base64.b64decode(part.data))
    assert not image.isNull()
    return image


def test_an_image_within_the_limits_is_sent_as_it_is(store: AttachmentStore) -> None:
    png = make_png(800, 600)
    ref = store.add_bytes(png, "chart.png")
    preparer = QtPreparer()
    for api, model in (("anthropic", CLAUDE), ("openai", GPT)):
        out = resolve(AttachmentResolver(store, preparer), [user([ref])], api, model)  # type: ignore[arg-type]
        same = ImagePart("image/png", base64.b64encode(png).decode(), 800, 600, "chart.png")
        assert out.parts == {"u1": (same,)}
        assert out.notices == ()
    assert preparer.calls == 0


def test_a_6000_by_4000_jpeg_is_downscaled_per_provider_and_the_original_kept(store: AttachmentStore) -> None:
    original = make_jpeg(6000, 4000)
    ref = store.add_bytes(original, "photo.jpg")
    preparer = QtPreparer()
    [anthropic] = resolve(AttachmentResolver(store, preparer), [user([ref])], "anthropic", CLAUDE).parts["u1"]
    [openai] = resolve(AttachmentResolver(store, preparer), [user([ref])], "openai", GPT).parts["u1"]
    assert isinstance(anthropic, ImagePart) and isinstance(openai, ImagePart)
    assert (anthropic.width, anthropic.height) == ANTHROPIC_IMAGE_LIMITS.fit(6000, 4000) == (1313, 875)
    assert anthropic.width * anthropic.height <= 1_150_000
    assert (openai.width, openai.height) == OPENAI_IMAGE_LIMITS.fit(6000, 4000) == (2048, 1365)
    for part in (anthropic, openai):
        assert part.media_type == "image/jpeg" and len(base64.b64decode(part.data)) <= 5 * 1024 * 1024
        assert (decoded(part).width(), decoded(part).height()) == (part.width, part.height)
    assert store.read(ref) == original
    prepared = sorted(p.name.split(".")[1] for p in (store.folder / "prepared").iterdir())
    assert prepared == [ANTHROPIC_IMAGE_LIMITS.tag, OPENAI_IMAGE_LIMITS.tag]
    # a new resolver (the next app start) reuses the prepared variants
    again = resolve(AttachmentResolver(store, preparer), [user([ref])], "anthropic", CLAUDE).parts["u1"]
    assert again == (anthropic,) and preparer.calls == 2


@pytest.mark.anyio
async def test_preparation_runs_off_the_event_loop_thread(store: AttachmentStore) -> None:
    ref = store.add_bytes(make_jpeg(3000, 2000), "photo.jpg")
    preparer = QtPreparer()
    out = await AttachmentResolver(store, preparer).resolve([user([ref])], api="anthropic", model=CLAUDE)
    assert isinstance(out.parts["u1"][0], ImagePart)
    assert preparer.threads and threading.get_ident() not in preparer.threads
    assert asyncio.get_running_loop().is_running()


def test_exif_orientation_is_applied(store: AttachmentStore) -> None:
    ref = store.add_bytes(with_exif_orientation(make_jpeg(400, 200), 6), "portrait.jpg")
    assert (ref.width, ref.height) == (200, 400)
    [part] = resolve(AttachmentResolver(store, QtPreparer()), [user([ref])], "openai", GPT).parts["u1"]
    assert isinstance(part, ImagePart) and (part.width, part.height) == (200, 400)
    header = image_header(base64.b64decode(part.data))
    assert header is not None and header.orientation == 1  # the rotation is in the pixels now


def test_a_gif_is_sent_as_its_first_frame(store: AttachmentStore) -> None:
    ref = store.add_bytes(make_gif(60, 40, frames=3), "anim.gif")
    [part] = resolve(AttachmentResolver(store, QtPreparer()), [user([ref])], "anthropic", CLAUDE).parts["u1"]
    assert isinstance(part, ImagePart) and part.media_type in ("image/png", "image/jpeg")
    colour = decoded(part).pixelColor(30, 20)
    assert colour.red() > 200 and colour.green() < 60  # frame 1 is red, frame 2 green


def test_an_image_that_cannot_be_prepared_becomes_a_note_and_a_notice(store: AttachmentStore) -> None:
    broken = make_png(3000, 3000)[:40] + b"garbage" * 10  # a readable header, undecodable pixels
    ref = store.add_bytes(broken, "broken.png")
    out = resolve(AttachmentResolver(store, QtPreparer()), [user([ref])], "anthropic", CLAUDE)
    [note] = out.parts["u1"]
    assert isinstance(note, TextPart)
    assert note.text.startswith("[Attached file broken.png (image/png, 3000×3000, ")
    assert "could not be sent: it could not be downscaled (cannot decode" in note.text
    assert out.notices == (f"Image “broken.png” was not sent: {note.text.split(': ', 1)[1][:-1]}.",)


def test_a_preparer_that_breaks_the_limits_is_not_trusted(store: AttachmentStore) -> None:
    ref = store.add_bytes(make_jpeg(3000, 2000), "photo.jpg")
    out = resolve(AttachmentResolver(store, QtPreparer(scale=False)), [user([ref])], "anthropic", CLAUDE)
    [note] = out.parts["u1"]
    assert isinstance(note, TextPart) and "not a PNG, JPEG or WebP within the provider's limits" in note.text
    assert len(out.notices) == 1 and not (store.folder / "prepared").exists()


def test_without_a_preparer_images_go_as_they_are_within_the_hard_limits(store: AttachmentStore) -> None:
    ok = store.add_bytes(make_jpeg(3000, 2000), "big.jpg")
    too_big = store.add_bytes(make_png(9000, 10), "strip.png")
    out = resolve(AttachmentResolver(store), [user([ok, too_big])], "anthropic", CLAUDE)
    image, note = out.parts["u1"]
    assert isinstance(image, ImagePart) and (image.width, image.height) == (3000, 2000)
    assert isinstance(note, TextPart) and "too large to send without downscaling (9000×10" in note.text
    assert len(out.notices) == 1


def test_a_model_known_not_to_see_images_gets_a_note(store: AttachmentStore) -> None:
    ref = store.add_bytes(make_png(10, 10), "a.png")
    out = resolve(AttachmentResolver(store, QtPreparer()), [user([ref])], "openai", BLIND)
    assert out.parts["u1"] == (TextPart(
        f"[Attached file a.png (image/png, 10×10, {ref.size} B) was not sent: the model o3-mini does not "
        "take images]"),)
    assert out.notices == ()  # the node asked before the send (the "can't see images" card)


def test_text_files_are_fenced_and_cut_at_one_mebibyte(store: AttachmentStore) -> None:
    small = store.add_bytes(b"def f():\n    return '```'\n", "f.py")
    big = store.add_bytes(b"line\n" * (TEXT_SEND_BYTES // 5 + 100), "big.log")
    out = resolve(AttachmentResolver(store), [user([small, big])], "openai", LOCAL)
    text_small, text_big = out.parts["u1"]
    assert text_small == TextPart("Attached file: f.py\n````python\ndef f():\n    return '```'\n````")
    assert isinstance(text_big, TextPart)
    assert text_big.text.startswith("Attached file: big.log\n```log\nline\n")
    assert text_big.text.endswith("(only the first 1.0 MB of 1.0 MB is included; the rest of the file "
                                  "was not sent)")
    assert len(text_big.text.encode()) < TEXT_SEND_BYTES + 200


def test_pdfs_go_as_documents_to_models_that_read_them_else_as_text(store: AttachmentStore) -> None:
    pdf = make_pdf(["Revenue grew 12%.", None, "Costs fell."])
    ref = store.add_bytes(pdf, "q3.pdf")
    for api, model in (("anthropic", CLAUDE), ("openai", GPT)):
        parts = resolve(AttachmentResolver(store), [user([ref])], api, model).parts["u1"]  # type: ignore[arg-type]
        assert parts == (PdfPart(base64.b64encode(pdf).decode(), "q3.pdf", 3),)
    [text] = resolve(AttachmentResolver(store), [user([ref])], "openai", LOCAL).parts["u1"]
    assert isinstance(text, TextPart)
    assert text.text == (
        f"Attached PDF: q3.pdf (3 pages, {ref.size / 1024:.1f} KB). The model is not known to read PDFs, "
        "so its text is sent instead. Text extracted with pypdf from 2 of 3 pages read; images, tables and "
        "layout are not included.\n\n[page 1 of 3]\nRevenue grew 12%.\n\n[page 3 of 3]\nCosts fell.\n"
    )


def test_encrypted_scanned_and_locked_pdfs(store: AttachmentStore) -> None:
    encrypted = store.add_bytes(make_pdf(["Secret plan"], user_password=""), "enc.pdf")
    scanned = store.add_bytes(make_pdf([None, None]), "scan.pdf")
    locked = store.add_bytes(make_pdf(["x"], user_password="pw"), "locked.pdf")
    resolver = AttachmentResolver(store)
    enc_text, scan_note, locked_note = resolve(resolver, [user([encrypted, scanned, locked])], "anthropic",
                                               LOCAL).parts["u1"]
    assert isinstance(enc_text, TextPart) and "[page 1 of 1]\nSecret plan" in enc_text.text
    assert isinstance(scan_note, TextPart) and "it has no text layer (a scan)" in scan_note.text
    assert isinstance(locked_note, TextPart) and "it is encrypted and needs a password" in locked_note.text
    # a model that reads PDFs gets the scan as a document, but never an encrypted file
    scan_doc, enc_text2, _ = resolve(resolver, [user([encrypted, scanned, locked])], "anthropic",
                                     CLAUDE).parts["u1"]  # documents first, then text
    assert isinstance(scan_doc, PdfPart) and scan_doc.name == "scan.pdf"
    assert isinstance(enc_text2, TextPart)
    assert "It is encrypted, which the provider does not accept" in enc_text2.text


def test_order_media_first_then_texts(store: AttachmentStore) -> None:
    notes = store.add_bytes(b"notes", "notes.txt")
    shot = store.add_bytes(make_png(5, 5), "a.png")
    other = store.add_bytes(b"\x00\x01binary", "x.bin")
    parts = resolve(AttachmentResolver(store), [user([notes, shot, other])], "anthropic", CLAUDE).parts["u1"]
    assert [type(p).__name__ for p in parts] == ["ImagePart", "TextPart", "TextPart"]
    note = f"[Attached file x.bin (application/octet-stream, 8 B) was not sent: {other.note}]"
    assert parts[2] == TextPart(note)


def test_missing_and_damaged_files_become_notes_and_only_the_newest_message_notifies(
    store: AttachmentStore,
) -> None:
    old = store.add_bytes(make_png(4, 4, (0, 0, 255)), "old.png")
    new = store.add_bytes(b"fresh notes", "new.txt")
    messages = [user([old], msg_id="u1"), ChatMessage("a1", "assistant", "ok", 2), user([new], msg_id="u2")]
    store.path_for(old).unlink()
    store.path_for(new).write_bytes(b"fresh NOTES")
    out = resolve(AttachmentResolver(store), messages, "openai", GPT)
    assert out.parts["u1"] == (TextPart(f"[Attached file old.png (image/png, 4×4, {old.size} B) could not be "
                                        "sent: the file is missing from the project]"),)
    [note] = out.parts["u2"]
    assert isinstance(note, TextPart)
    assert "could not be sent: the file in the project was changed or damaged" in note.text
    assert out.notices == (
        "Attachment “new.txt” was not sent: the file in the project was changed or damaged (its content no "
        f"longer matches the attachment) (.chatnodes/attachments/{new.sha256}.txt).",
    )


def test_a_file_that_goes_missing_after_a_send_is_noticed_on_the_next(store: AttachmentStore) -> None:
    ref = store.add_bytes(b"notes", "n.txt")
    resolver = AttachmentResolver(store)
    first = resolve(resolver, [user([ref])], "openai", GPT)
    assert first.notices == ()
    store.path_for(ref).unlink()
    second = resolve(resolver, [user([ref])], "openai", GPT)
    assert len(second.notices) == 1 and "missing" in second.notices[0]


def test_without_a_store_every_attachment_is_a_note() -> None:
    ref = AttachmentRef("a.png", "image/png", 10, "ab" * 32, "image", width=1, height=1)
    msg = user([ref])
    msg.extra["attachments"].append({"broken": True})
    out = unresolved_attachments([msg])
    assert out.parts == {"u1": (
        TextPart("[Attached file a.png (image/png, 1×1, 10 B) was not sent: attachments are not available to "
                 "this request]"),
        TextPart("[1 attachment of this message could not be sent: the reference saved in the project is "
                 "damaged]"),
    )}
