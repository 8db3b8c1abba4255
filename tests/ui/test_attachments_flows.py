"""The other ways in and around attachments, clicked through on a real window: the paperclip's dialog,
a drop on the transcript, copied files and raw PNG on the clipboard, the "cannot see images" card,
a missing file's placeholder, the image viewer, the context meter, export links, and edit,
regenerate and fork keeping a message's attachments."""

# ruff: noqa: F811 - pytest fixtures imported from test_chat_node_support are parameters here
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from attach_ui_support import (
    chips,
    drop_files,
    jpeg,
    last_user_content,
    open_on,
    paste_image,
    posts,
    red_image,
    wait_chips_read,
)
from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt, QUrl
from PySide6.QtGui import QGuiApplication, QWheelEvent
from PySide6.QtWidgets import QApplication, QFileDialog, QPushButton, QToolButton, QWidget
from test_app_support import close_window
from test_chat_node_support import make_env  # noqa: F401  (a fixture: a node without a window)

from desktop.core.chat.attachment_ref import attachments_of
from desktop.testing import FakeProvider, Turn
from desktop.testing.files import make_png

pytest_plugins = ["test_app_support"]  # fixtures: fake, make_context, open_window


def _send_click(qtbot: Any, node: Any) -> None:
    with qtbot.waitSignal(node.run_finished, timeout=15_000):
        qtbot.mouseClick(node.send_button, Qt.MouseButton.LeftButton)


def _viewer() -> Any:
    found = [w for w in QApplication.topLevelWidgets() if w.objectName() == "imageViewer" and w.isVisible()]
    return found[-1] if found else None


def _user_refs(node: Any) -> list[Any]:
    return attachments_of(next(m for m in node.conversation.messages if m.role == "user"))


def test_the_paperclip_opens_a_multi_file_dialog(
    qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    one, two = tmp_path / "a.txt", tmp_path / "b.txt"
    one.write_text("alpha", encoding="utf-8")
    two.write_text("beta", encoding="utf-8")
    asked: list[tuple[Any, ...]] = []

    def pick(*args: Any) -> tuple[list[str], str]:
        asked.append(args)
        return [str(one), str(two)], ""

    monkeypatch.setattr(QFileDialog, "getOpenFileNames", staticmethod(pick))
    window = open_on(open_window, fake, tmp_path)
    node = window.nodes()[0]
    button = node.findChild(QToolButton, "attachButton")
    assert button is not None and button.isVisible() and not button.icon().isNull()
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    assert len(asked) == 1
    assert [c.item.name for c in wait_chips_read(qtbot, node, 2)] == ["a.txt", "b.txt"]


def test_files_dropped_on_the_transcript_or_pasted_as_copied_files_are_attached(
    qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path
) -> None:
    window = open_on(open_window, fake, tmp_path)
    node = window.nodes()[0]
    log = tmp_path / "build.log"
    log.write_text("error: x\n", encoding="utf-8")
    assert drop_files(node.transcript.viewport(), [log])
    wait_chips_read(qtbot, node, 1)
    copied = QMimeData()
    copied.setUrls([QUrl.fromLocalFile(str(log))])
    copied.setText(str(log))  # a file manager puts the path as text too: the file wins
    QGuiApplication.clipboard().setMimeData(copied)
    node.chat_input.setFocus()
    qtbot.keyClick(node.chat_input, Qt.Key.Key_V, Qt.KeyboardModifier.ControlModifier)
    wait_chips_read(qtbot, node, 2)
    assert node.chat_input.toPlainText() == ""
    QGuiApplication.clipboard().setText("plain words")  # text is still pasted as text
    qtbot.keyClick(node.chat_input, Qt.Key.Key_V, Qt.KeyboardModifier.ControlModifier)
    assert node.chat_input.toPlainText() == "plain words" and len(chips(node)) == 2


def test_raw_png_on_the_clipboard_is_stored_as_it_is(
    qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path
) -> None:
    window = open_on(open_window, fake, tmp_path)
    node = window.nodes()[0]
    png = make_png(20, 10)
    mime = QMimeData()
    mime.setData("image/png", png)
    QGuiApplication.clipboard().setMimeData(mime)
    node.chat_input.setFocus()
    qtbot.keyClick(node.chat_input, Qt.Key.Key_V, Qt.KeyboardModifier.ControlModifier)
    [chip] = wait_chips_read(qtbot, node, 1)
    assert chip.item.name.startswith("pasted-") and chip.item.name.endswith(".png")
    _send_click(qtbot, node)
    [ref] = _user_refs(node)
    assert (tmp_path / "p" / ".chatnodes" / "attachments" / ref.file_name).read_bytes() == png


def test_a_model_that_cannot_see_images_gets_a_card_first(
    qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path
) -> None:
    window = open_on(open_window, fake, tmp_path, model="o3-mini")  # known not to take images
    node = window.nodes()[0]
    notes = tmp_path / "notes.txt"
    notes.write_text("context", encoding="utf-8")
    paste_image(qtbot, node, red_image())
    drop_files(node.chat_input.viewport(), [notes])
    wait_chips_read(qtbot, node, 2)
    qtbot.keyClicks(node.chat_input, "Describe it")
    qtbot.mouseClick(node.send_button, Qt.MouseButton.LeftButton)
    card = node.findChild(QWidget, "visionCard")
    assert card is not None and card.isVisible() and "o3-mini cannot see images" in card.label.text()
    assert posts(fake) == [] and node.chat_input.toPlainText() == "Describe it" and len(chips(node)) == 2
    # Pick another model: the picker opens, nothing is sent
    qtbot.mouseClick(card.findChild(QPushButton, "pickModelButton"), Qt.MouseButton.LeftButton)
    assert not card.isVisible() and posts(fake) == []
    node.header.model_picker.hidePopup()
    qtbot.mouseClick(node.send_button, Qt.MouseButton.LeftButton)
    assert card.isVisible()
    with qtbot.waitSignal(node.run_finished, timeout=15_000):
        qtbot.mouseClick(card.findChild(QPushButton, "sendTextOnlyButton"), Qt.MouseButton.LeftButton)
    content = last_user_content(fake)
    assert [p["type"] for p in content] == ["text", "text"]
    assert "notes.txt" in content[0]["text"] and content[1]["text"] == "Describe it"
    assert [r.name for r in _user_refs(node)] == ["notes.txt"]


def test_an_unknown_model_is_allowed_to_get_images(
    qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path
) -> None:
    window = open_on(open_window, fake, tmp_path, model="my-local-model")
    node = window.nodes()[0]
    paste_image(qtbot, node, red_image())
    wait_chips_read(qtbot, node, 1)
    _send_click(qtbot, node)
    assert [p["type"] for p in last_user_content(fake)] == ["image_url"]
    assert node.findChild(QWidget, "visionCard") is None


def test_a_missing_file_shows_a_placeholder_and_stops_nothing(
    qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path
) -> None:
    window = open_on(open_window, fake, tmp_path)
    node = window.nodes()[0]
    doc = tmp_path / "doc.txt"
    doc.write_text("to be lost", encoding="utf-8")
    paste_image(qtbot, node, red_image())
    drop_files(node.chat_input.viewport(), [doc])
    wait_chips_read(qtbot, node, 2)
    qtbot.keyClicks(node.chat_input, "look")
    _send_click(qtbot, node)
    close_window(qtbot, window)
    store = tmp_path / "p" / ".chatnodes" / "attachments"
    for path in store.glob("*.*"):
        path.unlink()

    again = open_on(open_window, fake, tmp_path)
    node = again.nodes()[0]
    row = node.transcript.views()[0].attachment_row
    qtbot.waitUntil(lambda: row.thumbs[0].problem is not None and row.files[0].problem is not None,
                    timeout=10_000)
    thumb, chip = row.thumbs[0], row.files[0]
    assert thumb.objectName() == chip.objectName() == "attachmentPlaceholder"
    assert "missing" in thumb.toolTip() and chip.details_label.text() == "missing from the project"
    qtbot.mouseClick(thumb, Qt.MouseButton.LeftButton)
    assert _viewer() is None  # nothing to view
    fake.script(Turn(text="still here"))
    with qtbot.waitSignal(node.run_finished, timeout=15_000):
        node.submit("and now?")  # a send goes on: the model gets notes in place of the files
    first_user = [m for m in posts(fake)[-1].json["messages"] if m["role"] == "user"][0]
    assert all(p["type"] == "text" for p in first_user["content"])
    assert "could not be sent" in first_user["content"][0]["text"]
    assert node.conversation.messages[-1].content == "still here"


def test_the_viewer_zooms_fits_and_saves_the_original(
    qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    photo = tmp_path / "photo.jpg"
    photo.write_bytes(jpeg(1600, 1200))
    window = open_on(open_window, fake, tmp_path)
    node = window.nodes()[0]
    drop_files(node.chat_input.viewport(), [photo])
    wait_chips_read(qtbot, node, 1)
    _send_click(qtbot, node)
    row = node.transcript.views()[0].attachment_row
    qtbot.waitUntil(lambda: row.thumbs[0].is_loaded, timeout=10_000)
    qtbot.mouseClick(row.thumbs[0], Qt.MouseButton.LeftButton)
    viewer = _viewer()
    assert viewer is not None
    qtbot.waitUntil(lambda: viewer.image_size == (1600, 1200), timeout=10_000)
    fitted = viewer.zoom
    assert fitted < 1.0  # the whole photo fits the window
    qtbot.mouseClick(viewer.findChild(QPushButton, "zoomInButton"), Qt.MouseButton.LeftButton)
    assert viewer.zoom == pytest.approx(fitted * 1.25)
    qtbot.keyClick(viewer, Qt.Key.Key_Minus)
    qtbot.keyClick(viewer, Qt.Key.Key_Minus)
    assert viewer.zoom == pytest.approx(fitted / 1.25)
    qtbot.mouseClick(viewer.findChild(QPushButton, "fitButton"), Qt.MouseButton.LeftButton)
    assert viewer.zoom == pytest.approx(fitted)
    canvas = viewer.view.viewport()
    centre = QPointF(canvas.rect().center())
    notch = QWheelEvent(centre, QPointF(canvas.mapToGlobal(centre.toPoint())), QPoint(), QPoint(0, 240),
                        Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier, Qt.ScrollPhase.NoScrollPhase,
                        False)
    QApplication.sendEvent(canvas, notch)  # two notches away from you: two steps in
    assert viewer.zoom == pytest.approx(fitted * 1.25 ** 2)
    qtbot.keyClick(viewer, Qt.Key.Key_0)
    assert viewer.zoom == pytest.approx(fitted)
    target = tmp_path / "saved" / "copy.jpg"
    target.parent.mkdir()
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(lambda *a: (str(target), "")))
    qtbot.mouseClick(viewer.findChild(QPushButton, "saveImageButton"), Qt.MouseButton.LeftButton)
    assert target.read_bytes() == photo.read_bytes()
    viewer.close()


def test_the_context_meter_counts_pending_attachments(
    qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path
) -> None:
    window = open_on(open_window, fake, tmp_path)
    node = window.nodes()[0]
    meter = node.header.context_meter
    assert not meter.isVisibleTo(node)  # nothing known before a reply
    photo = tmp_path / "photo.jpg"
    photo.write_bytes(jpeg(2048, 2048))
    drop_files(node.chat_input.viewport(), [photo])
    wait_chips_read(qtbot, node, 1)
    qtbot.waitUntil(lambda: meter.isVisibleTo(node), timeout=10_000)
    assert "~765 for the attachments waiting" in meter.toolTip()  # 85 + 170 × 4 tiles
    qtbot.keyClick(node.chat_input, Qt.Key.Key_Backspace)
    assert not meter.isVisibleTo(node)


def test_export_links_the_files_edit_regenerate_and_fork_keep_them(
    qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path
) -> None:
    window = open_on(open_window, fake, tmp_path)
    node = window.nodes()[0]
    paste_image(qtbot, node, red_image())
    wait_chips_read(qtbot, node, 1)
    qtbot.keyClicks(node.chat_input, "first")
    fake.script(Turn(text="A1"), Turn(text="A2"), Turn(text="A3"))
    _send_click(qtbot, node)
    [ref] = _user_refs(node)
    out = tmp_path / "exports" / "chat.md"
    out.parent.mkdir()
    assert window.export_conversation(out, node) == out
    text = out.read_text(encoding="utf-8")
    assert f"](<../p/.chatnodes/attachments/{ref.file_name}>)" in text
    assert (out.parent / f"../p/.chatnodes/attachments/{ref.file_name}").is_file()

    answer = node.transcript.views()[1]
    with qtbot.waitSignal(node.run_finished, timeout=15_000):
        qtbot.mouseClick(answer.findChild(QToolButton, "regenerateButton"), Qt.MouseButton.LeftButton)
    assert _user_refs(node) == [ref] and last_user_content(fake)[0]["type"] == "image_url"

    user_view = node.transcript.views()[0]
    qtbot.mouseClick(user_view.findChild(QToolButton, "editButton"), Qt.MouseButton.LeftButton)
    editor = user_view.action_row.editor
    editor.text.setPlainText("second")
    with qtbot.waitSignal(node.run_finished, timeout=15_000):
        qtbot.mouseClick(editor.send_button, Qt.MouseButton.LeftButton)
    assert node.conversation.messages[0].content == "second" and _user_refs(node) == [ref]
    assert [p["type"] for p in last_user_content(fake)] == ["image_url", "text"]
    edited = node.transcript.views()[0]
    assert edited.attachment_row is not None and len(edited.attachment_row.thumbs) == 1
    qtbot.mouseClick(edited.findChild(QToolButton, "prevVersionButton"), Qt.MouseButton.LeftButton)
    assert node.conversation.messages[0].content == "first" and _user_refs(node) == [ref]  # the old version
    qtbot.mouseClick(node.transcript.views()[0].findChild(QToolButton, "nextVersionButton"),
                     Qt.MouseButton.LeftButton)
    assert node.conversation.messages[0].content == "second" and _user_refs(node) == [ref]

    fork_button = node.transcript.views()[1].findChild(QToolButton, "forkButton")
    qtbot.mouseClick(fork_button, Qt.MouseButton.LeftButton)
    fork = window.nodes()[1]
    assert attachments_of(fork.conversation.messages[0]) == [ref]
    fork_row = fork.transcript.views()[0].attachment_row
    qtbot.waitUntil(lambda: fork_row.thumbs[0].is_loaded, timeout=10_000)
    assert fork_row.thumbs[0].problem is None


def test_files_are_read_off_the_gui_thread_and_a_message_takes_at_most_20(
    qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path
) -> None:
    window = open_on(open_window, fake, tmp_path)
    node = window.nodes()[0]
    many = []
    for i in range(25):
        path = tmp_path / f"f{i:02}.txt"
        path.write_text(f"file {i}", encoding="utf-8")
        many.append(path)
    assert drop_files(node.chat_input.viewport(), many)
    # the drop returned before any file was read: the results come back through the event loop
    assert [c.note_label.text() for c in chips(node)] == ["reading…"] * 20
    assert "at most 20 attachments: 5 more were not attached" in node.attach.chips.status.text()
    shown = wait_chips_read(qtbot, node, 20)
    assert shown[0].note_label.text() == "6 B" and shown[-1].item.name == "f19.txt"


def test_without_a_project_folder_the_send_says_why_and_keeps_everything(qtbot: Any, make_env: Any) -> None:
    env = make_env()  # a node outside a window: no project, so no attachment store
    node = env.node
    paste_image(qtbot, node, red_image())
    wait_chips_read(qtbot, node, 1)
    qtbot.keyClicks(node.chat_input, "hello")
    qtbot.mouseClick(node.send_button, Qt.MouseButton.LeftButton)
    assert "need a project folder" in node.attach.chips.status.text()
    assert node.chat_input.toPlainText() == "hello" and len(chips(node)) == 1
    assert node.conversation.messages == [] and posts(env.fake) == []
