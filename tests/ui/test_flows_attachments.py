"""Attachments as a user adds and removes them (issue 31 item 3): the paperclip clicked (the platform's
file dialog stood in for by ``QFileDialog.getOpenFileNames``, the one call the paperclip makes), an image
pasted with Ctrl+V, a chip removed with its × and the last one with Backspace in the empty input, and
the message sent with Enter carrying exactly what is left."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from attach_ui_support import (
    chips,
    image_of,
    last_user_content,
    open_on,
    paste_image,
    posts,
    red_image,
    wait_chips_read,
)
from flows_support import child, click, type_text
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog, QToolButton

from desktop.testing import FakeProvider, Turn

pytest_plugins = ["test_app_support"]  # fixtures: fake, open_window


def _names(node: Any) -> list[str]:
    return [c.item.name for c in chips(node)]


def test_paperclip_picks_files_a_chips_x_removes_one_and_enter_sends_the_rest(
    qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    one, two = tmp_path / "alpha.txt", tmp_path / "beta.txt"
    one.write_text("ALPHA-CONTENT", encoding="utf-8")
    two.write_text("BETA-CONTENT", encoding="utf-8")
    asked: list[str] = []

    def pick(_parent: Any, caption: str, _folder: str, *_rest: Any) -> tuple[list[str], str]:
        asked.append(caption)
        return [str(one), str(two)], ""

    monkeypatch.setattr(QFileDialog, "getOpenFileNames", staticmethod(pick))
    window = open_on(open_window, fake, tmp_path)
    node = window.nodes()[0]
    click(qtbot, child(node, QToolButton, "attachButton"))
    assert asked == ["Attach files"]
    assert [c.item.name for c in wait_chips_read(qtbot, node, 2)] == ["alpha.txt", "beta.txt"]
    first = chips(node)[0]
    click(qtbot, child(first, QToolButton, "removeAttachmentButton"))
    qtbot.waitUntil(lambda: _names(node) == ["beta.txt"], timeout=10_000)
    fake.script(Turn(text="read it"))
    type_text(qtbot, node.chat_input, "summarise")
    with qtbot.waitSignal(node.run_finished, timeout=10_000):
        qtbot.keyClick(node.chat_input, Qt.Key.Key_Return)
    sent = json.dumps(last_user_content(fake))
    assert "BETA-CONTENT" in sent and "summarise" in sent
    assert "ALPHA-CONTENT" not in sent  # the removed chip's file never left
    assert _names(node) == []  # the chips went with the message
    assert node.conversation.messages[-1].content == "read it"


def test_ctrl_v_pastes_an_image_backspace_takes_it_off_and_enter_sends_the_second(
    qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path
) -> None:
    window = open_on(open_window, fake, tmp_path)
    node = window.nodes()[0]
    paste_image(qtbot, node, red_image(64, 48))
    [chip] = wait_chips_read(qtbot, node, 1)
    assert chip.item.name.startswith("pasted-") and chip.item.name.endswith(".png")
    assert node.chat_input.toPlainText() == ""  # the image is a chip, not text
    qtbot.keyClicks(node.chat_input, "ab")
    qtbot.keyClick(node.chat_input, Qt.Key.Key_Backspace)  # text in the box: Backspace deletes a letter
    assert node.chat_input.toPlainText() == "a" and len(chips(node)) == 1
    qtbot.keyClick(node.chat_input, Qt.Key.Key_Backspace)
    qtbot.keyClick(node.chat_input, Qt.Key.Key_Backspace)  # the box is empty: the last chip goes
    qtbot.waitUntil(lambda: chips(node) == [], timeout=10_000)
    assert posts(fake) == []

    paste_image(qtbot, node, red_image(40, 30))
    wait_chips_read(qtbot, node, 1)
    fake.script(Turn(text="a red rectangle"))
    qtbot.keyClicks(node.chat_input, "what is it?")
    with qtbot.waitSignal(node.run_finished, timeout=10_000):
        qtbot.keyClick(node.chat_input, Qt.Key.Key_Return)
    parts = last_user_content(fake)
    images = [p for p in parts if p["type"] == "image_url"]
    assert len(images) == 1
    image = image_of(images[0])
    assert (image.width(), image.height()) == (40, 30)  # the second paste, not the removed first
    assert image.pixelColor(5, 5) == Qt.GlobalColor.red
    assert [p["text"] for p in parts if p["type"] == "text"] == ["what is it?"]
    assert node.conversation.messages[-1].content == "a red rectangle"
