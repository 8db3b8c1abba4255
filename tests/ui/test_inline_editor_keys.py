"""The inline message editor is keyed like the main input and hides the Edit link while open (issue 25,
item 7), clicked and typed through on a real node."""

# ruff: noqa: F811 - pytest fixtures imported from test_chat_node_support are parameters here
from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QPlainTextEdit, QPushButton, QToolButton
from test_chat_node_support import make_env  # noqa: F401
from test_versions import child, click, send, texts, view_of

from desktop.core.chat.versions import versions_at
from desktop.testing import Turn


def test_enter_sends_the_edit_and_shift_enter_adds_a_line(qtbot: Any, make_env: Any) -> None:
    env = make_env()
    node = env.node
    env.fake.script(Turn(text="A1"), Turn(text="A2"))
    send(qtbot, env, "one")
    user = view_of(node, 0)
    edit = child(user, QToolButton, "editButton")
    click(qtbot, edit)
    editor = child(user, QPlainTextEdit, "messageEditor")
    qtbot.waitUntil(editor.isVisible, timeout=10_000)
    assert not edit.isVisible()  # the editor is open: no Edit link beside it
    qtbot.keyClicks(editor, "first")
    qtbot.keyClick(editor, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    qtbot.keyClicks(editor, "second")
    assert editor.toPlainText() == "first\nsecond" and editor.isVisible()  # Shift+Enter: a new line
    with qtbot.waitSignal(node.run_finished, timeout=10_000):
        qtbot.keyClick(editor, Qt.Key.Key_Return)  # Enter sends, like the main input
    assert texts(node) == ["first\nsecond", "A2"]
    assert versions_at(node.conversation, node.conversation.messages[0].id) == (2, 2)


def test_the_edit_link_comes_back_when_the_editor_closes(qtbot: Any, make_env: Any) -> None:
    env = make_env()
    node = env.node
    env.fake.script(Turn(text="A1"))
    send(qtbot, env, "one")
    user = view_of(node, 0)
    edit = child(user, QToolButton, "editButton")
    click(qtbot, edit)
    editor = child(user, QPlainTextEdit, "messageEditor")
    qtbot.waitUntil(editor.isVisible, timeout=10_000)
    assert not edit.isVisible()
    qtbot.keyClick(editor, Qt.Key.Key_Escape)
    assert not editor.isVisible() and edit.isVisible()
    click(qtbot, edit)
    qtbot.waitUntil(editor.isVisible, timeout=10_000)
    click(qtbot, child(user, QPushButton, "editCancelButton"))
    assert not editor.isVisible() and edit.isVisible()
    assert texts(node) == ["one", "A1"]
