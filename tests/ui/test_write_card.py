"""The write_file card shows the content as text and what it does to the file there (issue 25, item 7).

Through the real app: the fake provider (a real loopback server) makes the model call ``write_file``
in a real project folder; the permission card shows the new file as it will read, or the warning
"Overwrites an existing file" and a coloured diff; Approve and Deny are clicked.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QFontInfo
from PySide6.QtWidgets import QLabel, QPlainTextEdit, QPushButton, QWidget
from test_app_support import fake_provider_entry, write_settings
from test_mcp_app import pending_card

from desktop.testing import FakeProvider, ToolCallSpec, Turn
from desktop.ui.transcript.write_view import WRITE_SHOW_CHARS

pytest_plugins = ["test_app_support"]  # fixtures: fake, make_context, open_window

OLD = "# Todo\n- milk\n- report\n- bank\n- bike\n"
NEW = "# Todo\n- milk and bread\n- report\n- bike\n- train to Lyon\n"


def window_with(qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path) -> tuple[Any, Path]:
    project, config = tmp_path / "project", tmp_path / "config"
    project.mkdir()
    write_settings(config, fake_provider_entry(fake), default="fake")
    return open_window(project, config), project


def ask_to_write(qtbot: Any, window: Any, fake: FakeProvider, path: str, content: str) -> Any:
    fake.script(Turn(tool_calls=[ToolCallSpec("write_file", {"path": path, "content": content})]),
                Turn(text="Saved."))
    node = window.nodes()[0]
    node.submit("save it")
    return pending_card(qtbot, node)


def click(qtbot: Any, widget: QWidget) -> None:
    qtbot.waitUntil(widget.isVisible, timeout=10_000)  # a card built by a flush is shown by its layout
    qtbot.mouseClick(widget, Qt.MouseButton.LeftButton)


def test_a_new_file_shows_its_content_as_text(qtbot: Any, open_window: Any, fake: FakeProvider,
                                              tmp_path: Path) -> None:
    window, project = window_with(qtbot, open_window, fake, tmp_path)
    content = 'Budget: "under $2,000" — Chloé\n\tindented\nlast line'
    card = ask_to_write(qtbot, window, fake, "notes/new.md", content)
    assert card.findChild(QLabel, "writePath").text() == "File: notes/new.md"
    assert card.findChild(QLabel, "writeState").text() == "Creates a new file (3 lines)."
    assert card.findChild(QLabel, "overwriteWarning") is None
    shown = card.findChild(QPlainTextEdit, "writeContent")
    assert shown.toPlainText() == content  # as the file will read: no \n, no \", no \u2014
    assert QFontInfo(shown.font()).fixedPitch()  # monospace
    assert card.findChild(QPlainTextEdit, "permissionArgs") is None
    node = window.nodes()[0]
    with qtbot.waitSignal(node.run_finished, timeout=10_000):
        click(qtbot, card.findChild(QPushButton, "approveButton"))
    assert (project / "notes" / "new.md").read_text(encoding="utf-8") == content


def test_an_overwrite_warns_and_shows_a_coloured_diff(qtbot: Any, open_window: Any, fake: FakeProvider,
                                                      tmp_path: Path) -> None:
    window, project = window_with(qtbot, open_window, fake, tmp_path)
    (project / "todo.md").write_text(OLD, encoding="utf-8")
    card = ask_to_write(qtbot, window, fake, "todo.md", NEW)
    warning = card.findChild(QLabel, "overwriteWarning")
    assert warning is not None
    assert warning.text() == "Overwrites an existing file: 2 lines added, 2 removed (5 lines in all)."
    view = card.findChild(QPlainTextEdit, "writeContent")
    lines = view.toPlainText().splitlines()
    assert lines[0] == "@@ -1,5 +1,5 @@"
    assert "-- milk" in lines and "+- milk and bread" in lines and "-- bank" in lines and " - report" in lines
    colours = {s.cursor.block().text(): s.format.background().color() for s in view.extraSelections()}
    added, removed = colours["+- milk and bread"], colours["-- milk"]
    assert added.green() > added.red() and removed.red() > removed.green()
    assert " - report" not in colours  # context lines keep the box's background

    toggle = card.findChild(QPushButton, "writeToggleButton")
    click(qtbot, toggle)
    assert view.toPlainText() == NEW
    assert view.extraSelections() == []
    click(qtbot, toggle)
    assert view.toPlainText().startswith("@@")

    node = window.nodes()[0]
    with qtbot.waitSignal(node.run_finished, timeout=10_000):
        click(qtbot, card.findChild(QPushButton, "denyButton"))
    assert (project / "todo.md").read_text(encoding="utf-8") == OLD


@pytest.mark.parametrize(
    ("setup", "path", "expected"),
    [
        ("binary", "logo.png", "Overwrites an existing file: binary file (6 bytes), not shown."),
        ("fifo", "pipe.txt", "At this path there is a special file, not a regular file: "
                             "the write will fail or replace it."),
        ("none", ".git/config", "The tool will refuse this write: write_file refuses .git/config"),
        ("none", "../outside.txt", "The tool will refuse this write: path escapes the project folder"),
    ],
)
def test_what_is_there_is_read_safely(qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path,
                                      setup: str, path: str, expected: str) -> None:
    window, project = window_with(qtbot, open_window, fake, tmp_path)
    if setup == "binary":
        (project / path).write_bytes(b"PNG\x00\x01\x02")
    elif setup == "fifo":
        if not hasattr(os, "mkfifo"):
            pytest.skip("needs POSIX FIFOs")
        os.mkfifo(project / path)  # opening it would block the window: it must never be opened
    card = ask_to_write(qtbot, window, fake, path, "new text\n")
    warning = card.findChild(QLabel, "overwriteWarning")
    assert warning is not None and warning.text().startswith(expected)
    assert card.findChild(QPlainTextEdit, "writeContent").toPlainText() == "new text\n"
    node = window.nodes()[0]
    with qtbot.waitSignal(node.run_finished, timeout=10_000):
        click(qtbot, card.findChild(QPushButton, "denyButton"))


def test_long_content_is_cut_with_show_all(qtbot: Any, open_window: Any, fake: FakeProvider,
                                           tmp_path: Path) -> None:
    window, _project = window_with(qtbot, open_window, fake, tmp_path)
    content = "".join(f"line {i}\u202e\n" for i in range(3000))
    card = ask_to_write(qtbot, window, fake, "long.txt", content)
    view = card.findChild(QPlainTextEdit, "writeContent")
    assert len(view.toPlainText()) <= WRITE_SHOW_CHARS + 2 and view.toPlainText().endswith("\n…")
    assert "\u202e" not in view.toPlainText() and "line 0<U+202E>" in view.toPlainText()
    click(qtbot, card.findChild(QPushButton, "writeShowAllButton"))
    assert view.toPlainText() == content.replace("\u202e", "<U+202E>")
    assert not card.findChild(QPushButton, "writeShowAllButton").isVisible()
    node = window.nodes()[0]
    with qtbot.waitSignal(node.run_finished, timeout=10_000):
        click(qtbot, card.findChild(QPushButton, "denyButton"))
