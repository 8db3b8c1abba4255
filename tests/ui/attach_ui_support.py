"""Shared by the attachment UI tests: a window on the loopback provider (either API), and the user's
gestures done for real: a paste from the clipboard with Ctrl+V, a ``QDropEvent`` of file URLs, a
click on Send, and reading back what the provider received."""

from __future__ import annotations

import base64
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt, QUrl
from PySide6.QtGui import QDragEnterEvent, QDropEvent, QGuiApplication, QImage
from PySide6.QtWidgets import QApplication, QWidget
from test_app_support import write_settings

from desktop.testing import FakeProvider
from desktop.ui.attachments.images import encode_image


def provider_entry(fake: FakeProvider, api: str, model: str) -> dict[str, Any]:
    """A settings.json provider entry for the fake server's endpoint of ``api``."""
    base = fake.openai_base_url if api == "openai" else fake.anthropic_base_url
    return {"id": "fake", "name": "Fake", "api": api, "base_url": base, "needs_key": False,
            "key_env": None, "models": [model]}


def open_on(open_window: Callable[..., Any], fake: FakeProvider, tmp_path: Path, *, api: str = "openai",
            model: str = "gpt-4o-mini", project: str = "p") -> Any:
    """A window on the project ``tmp_path/project`` whose default provider is the fake one."""
    config = tmp_path / "config"
    write_settings(config, provider_entry(fake, api, model), default="fake", model=model)
    return open_window(tmp_path / project, config)


def drop_files(target: QWidget, paths: list[Path]) -> bool:
    """Drag ``paths`` over ``target`` and drop them (real drag-enter and drop events); True when the
    drop was accepted."""
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(p)) for p in paths])
    centre = target.rect().center()
    buttons, mods = Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier
    enter = QDragEnterEvent(QPoint(centre), Qt.DropAction.CopyAction, mime, buttons, mods)
    QApplication.sendEvent(target, enter)
    if not enter.isAccepted():
        return False
    drop = QDropEvent(QPointF(centre), Qt.DropAction.CopyAction, mime, buttons, mods)
    QApplication.sendEvent(target, drop)
    return drop.isAccepted()


def paste_image(qtbot: Any, node: Any, image: QImage) -> None:
    """Put ``image`` on the clipboard and press Ctrl+V in the node's input."""
    clipboard = QGuiApplication.clipboard()
    assert clipboard is not None
    clipboard.setImage(image)
    node.chat_input.setFocus()
    qtbot.keyClick(node.chat_input, Qt.Key.Key_V, Qt.KeyboardModifier.ControlModifier)


def chips(node: Any) -> list[Any]:
    """The node's pending attachment chips, in order (none before the first attachment)."""
    strip = node.attach.chips
    return strip.ordered_chips() if strip is not None and strip.isVisible() else []


def wait_chips_read(qtbot: Any, node: Any, count: int) -> list[Any]:
    """Wait until the node shows ``count`` chips, each read; return them."""
    def read() -> bool:
        shown = chips(node)
        return len(shown) == count and all(c.item.ready for c in shown)

    qtbot.waitUntil(read, timeout=10_000)
    return chips(node)


def posts(fake: FakeProvider) -> list[Any]:
    """The chat requests the provider received."""
    return [r for r in fake.requests if r.method == "POST"]


def last_user_content(fake: FakeProvider) -> Any:
    """The ``content`` of the last user message of the last chat request."""
    messages = (posts(fake)[-1].json or {})["messages"]
    return [m for m in messages if m.get("role") == "user"][-1]["content"]


def image_of(part: dict[str, Any]) -> QImage:
    """The image an OpenAI ``image_url`` part or an Anthropic ``image`` block carries."""
    if part["type"] == "image_url":
        data = part["image_url"]["url"].split(",", 1)[1]
    else:
        data = part["source"]["data"]
    image = QImage.fromData(base64.b64decode(data))
    assert not image.isNull()
    return image


def red_image(width: int = 64, height: int = 48) -> QImage:
    """A plain red image, as a screenshot would come from the clipboard."""
    image = QImage(width, height, QImage.Format.Format_RGB32)
    image.fill(Qt.GlobalColor.red)
    return image


def jpeg(width: int, height: int) -> bytes:
    """A real JPEG photo-sized image: blue with a white band on the left third."""
    image = QImage(width, height, QImage.Format.Format_RGB32)
    image.fill(Qt.GlobalColor.blue)
    for x in range(0, width // 3, max(1, width // 60)):
        for y in range(0, height, 7):
            image.setPixelColor(x, y, Qt.GlobalColor.white)
    data = encode_image(image, "JPEG", 90)
    assert data
    return data
