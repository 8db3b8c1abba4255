"""Attachments through the window, as a user adds them: a screenshot pasted with Ctrl+V, a text file
and a PDF dropped on the input, Send clicked; the loopback provider receives each part the way its
API wants it, the files are in the project before the message is saved, and they come back on reopen."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from attach_ui_support import (
    chips,
    drop_files,
    image_of,
    jpeg,
    last_user_content,
    open_on,
    paste_image,
    posts,
    red_image,
    wait_chips_read,
)
from PySide6.QtCore import Qt
from PySide6.QtGui import QIcon
from test_app_support import close_window

from desktop.core.chat.attachment_ref import attachments_of
from desktop.testing import FakeProvider, Turn
from desktop.testing.files import make_pdf

pytest_plugins = ["test_app_support"]  # fixtures: fake, make_context, open_window

MODELS = {"openai": "gpt-4o-mini", "anthropic": "claude-sonnet-4-5"}  # both take images and PDFs


def _files(tmp_path: Path) -> tuple[Path, Path]:
    notes = tmp_path / "in" / "notes.txt"
    notes.parent.mkdir()
    notes.write_text("the build fails on line 42\n", encoding="utf-8")
    pdf = tmp_path / "in" / "report.pdf"
    pdf.write_bytes(make_pdf(["Quarterly figures", "Second page"]))
    return notes, pdf


def _saved_user(project: Path) -> dict[str, Any]:
    data = json.loads((project / "project.json").read_text(encoding="utf-8"))
    msgs = data["nodes"][0]["data"]["conversation"]["messages"]
    return next(m for m in msgs if m["role"] == "user")


@pytest.mark.parametrize("api", ["openai", "anthropic"])
def test_paste_drop_and_send_reach_the_provider_in_its_shape(
    qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path, api: str
) -> None:
    window = open_on(open_window, fake, tmp_path, api=api, model=MODELS[api])
    node = window.nodes()[0]
    notes, pdf = _files(tmp_path)
    paste_image(qtbot, node, red_image())
    assert node.chat_input.toPlainText() == ""  # an image is attached, never pasted as text
    assert drop_files(node.chat_input.viewport(), [notes, pdf])
    shown = wait_chips_read(qtbot, node, 3)
    assert [c.item.name.rsplit(".", 1)[1] for c in shown] == ["png", "txt", "pdf"]
    assert "2 pages" in shown[2].note_label.text()
    qtbot.keyClicks(node.chat_input, "What is wrong?")
    fake.script(Turn(text="Line 42."))
    with qtbot.waitSignal(node.run_finished, timeout=15_000):
        qtbot.mouseClick(node.send_button, Qt.MouseButton.LeftButton)

    content = last_user_content(fake)
    if api == "openai":
        assert [p["type"] for p in content] == ["image_url", "file", "text", "text"]
        assert content[0]["image_url"]["url"].startswith("data:image/png;base64,")
        assert content[1]["file"]["filename"] == "report.pdf"
        assert content[1]["file"]["file_data"].startswith("data:application/pdf;base64,")
    else:
        assert [p["type"] for p in content] == ["image", "document", "text", "text"]
        assert content[0]["source"]["media_type"] == "image/png"
        assert content[1]["source"]["media_type"] == "application/pdf"
    image = image_of(content[0])
    assert (image.width(), image.height()) == (64, 48) and image.pixelColor(5, 5).red() > 200
    assert "notes.txt" in content[2]["text"] and "the build fails on line 42" in content[2]["text"]
    assert content[3]["text"] == "What is wrong?"
    # nothing waits any more; the files are in the project, named by their SHA-256
    assert chips(node) == [] and node.chat_input.toPlainText() == ""
    refs = attachments_of(next(m for m in node.conversation.messages if m.role == "user"))
    assert [r.name for r in refs][1:] == ["notes.txt", "report.pdf"]
    store = tmp_path / "p" / ".chatnodes" / "attachments"
    for ref in refs:
        data = (store / ref.file_name).read_bytes()
        assert hashlib.sha256(data).hexdigest() == ref.sha256
    assert (store / refs[2].file_name).read_bytes() == pdf.read_bytes()
    # project.json keeps references only
    saved = _saved_user(tmp_path / "p")
    assert [a["sha256"] for a in saved["attachments"]] == [r.sha256 for r in refs]
    assert len((tmp_path / "p" / "project.json").read_bytes()) < 20_000


def test_reopening_the_project_shows_the_thumbnails_again(
    qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path
) -> None:
    window = open_on(open_window, fake, tmp_path)
    node = window.nodes()[0]
    notes, pdf = _files(tmp_path)
    paste_image(qtbot, node, red_image(300, 200))
    drop_files(node.chat_input.viewport(), [pdf])
    wait_chips_read(qtbot, node, 2)
    with qtbot.waitSignal(node.run_finished, timeout=15_000):
        qtbot.mouseClick(node.send_button, Qt.MouseButton.LeftButton)  # no text: attachments only
    content = last_user_content(fake)
    assert [p["type"] for p in content] == ["image_url", "file"]  # no empty text part
    close_window(qtbot, window)

    again = open_on(open_window, fake, tmp_path)
    view = again.nodes()[0].transcript.views()[0]
    row = view.attachment_row
    assert row is not None and not view.bubble.isVisibleTo(view)  # no text: no empty bubble
    qtbot.waitUntil(lambda: len(row.thumbs) == 1 and row.thumbs[0].is_loaded, timeout=10_000)
    thumb = row.thumbs[0]
    assert thumb.objectName() == "attachmentThumb" and thumb.problem is None
    assert isinstance(thumb.icon(), QIcon) and not thumb.icon().isNull()
    [chip] = row.files
    assert chip.objectName() == "attachmentFile" and chip.name_label.text() == "report.pdf"
    assert "2 pages" in chip.details_label.text()


def test_a_6000_by_4000_jpeg_is_sent_downscaled_and_kept_whole(
    qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path
) -> None:
    photo = tmp_path / "photo.jpg"
    photo.write_bytes(jpeg(6000, 4000))
    window = open_on(open_window, fake, tmp_path)
    node = window.nodes()[0]
    drop_files(node.chat_input.viewport(), [photo])
    [chip] = wait_chips_read(qtbot, node, 1)
    assert "6000×4000" in chip.note_label.text()
    qtbot.keyClicks(node.chat_input, "Where is this?")
    with qtbot.waitSignal(node.run_finished, timeout=30_000):
        qtbot.keyClick(node.chat_input, Qt.Key.Key_Return)
    image = image_of(last_user_content(fake)[0])
    assert (image.width(), image.height()) == (2048, 1365)
    [ref] = attachments_of(next(m for m in node.conversation.messages if m.role == "user"))
    stored = tmp_path / "p" / ".chatnodes" / "attachments" / ref.file_name
    assert stored.read_bytes() == photo.read_bytes()  # the original is kept


def test_backspace_and_the_remove_button_take_chips_off(
    qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path
) -> None:
    window = open_on(open_window, fake, tmp_path)
    node = window.nodes()[0]
    notes, pdf = _files(tmp_path)
    drop_files(node.chat_input.viewport(), [notes, pdf])
    paste_image(qtbot, node, red_image())
    first, _second, _third = wait_chips_read(qtbot, node, 3)
    qtbot.keyClick(node.chat_input, Qt.Key.Key_Backspace)
    assert [c.item.name for c in chips(node)] == ["notes.txt", "report.pdf"]
    qtbot.mouseClick(first.remove_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: [c.item.name for c in chips(node)] == ["report.pdf"], timeout=10_000)
    qtbot.keyClicks(node.chat_input, "ab")
    qtbot.keyClick(node.chat_input, Qt.Key.Key_Backspace)  # deletes a character, not a chip
    assert node.chat_input.toPlainText() == "a" and len(chips(node)) == 1
    qtbot.keyClick(node.chat_input, Qt.Key.Key_Backspace)
    qtbot.keyClick(node.chat_input, Qt.Key.Key_Backspace)
    assert chips(node) == [] and posts(fake) == []
