"""A node's flows as a user drives them (issue 31 item 3), in a real window on the loopback provider:
type and Enter to send (Shift+Enter a new line), Stop clicked mid-stream, the Tools button's menu,
Edit clicked / typed / Enter, Regenerate clicked, the version arrows ‹ › clicked, Fork clicked, the
permission card's Approve and Deny clicked, the node closed with its × and reopened with Ctrl+Shift+T."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from first_hour_support import click_close_button, open_with_fake, press
from flows_support import child, click, pick_from_popup, replace_text, type_text
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QLabel, QPlainTextEdit, QPushButton, QToolButton, QWidget

from desktop.testing import FakeProvider, Fault, ToolCallSpec, Turn

pytest_plugins = ["test_app_support"]  # fixtures: fake, open_window


def _view(qtbot: Any, node: Any, index: int) -> Any:
    msg = node.conversation.messages[index]
    qtbot.waitUntil(lambda: node.transcript.view_for(msg.id) is not None, timeout=10_000)
    return node.transcript.view_for(msg.id)


def _texts(node: Any) -> list[str]:
    return [m.content for m in node.conversation.messages]


def _shown(node: Any) -> list[str]:
    return [t.strip() for t in node.transcript.message_texts()]


def _bodies(fake: FakeProvider) -> list[list[str]]:
    """The non-system message texts of each chat request the provider received."""
    out = []
    for r in fake.requests:
        if r.method == "POST":
            out.append([m["content"] for m in json.loads(r.body)["messages"] if m["role"] != "system"])
    return out


def _send(qtbot: Any, node: Any, text: str) -> None:
    type_text(qtbot, node.chat_input, text)
    with qtbot.waitSignal(node.run_finished, timeout=10_000):
        qtbot.keyClick(node.chat_input, Qt.Key.Key_Return)


def test_enter_sends_what_was_typed_and_shift_enter_breaks_the_line(
    qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path
) -> None:
    window = open_with_fake(open_window, fake, tmp_path)
    node = window.nodes()[0]
    fake.script(Turn(text="Two lines read."))
    type_text(qtbot, node.chat_input, "first line")
    qtbot.keyClick(node.chat_input, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    qtbot.keyClicks(node.chat_input, "second line")
    assert node.chat_input.toPlainText() == "first line\nsecond line"
    assert _texts(node) == []  # Shift+Enter sent nothing
    with qtbot.waitSignal(node.run_finished, timeout=10_000):
        qtbot.keyClick(node.chat_input, Qt.Key.Key_Return)
    assert node.chat_input.toPlainText() == ""
    assert _texts(node) == ["first line\nsecond line", "Two lines read."]
    assert _bodies(fake) == [["first line\nsecond line"]]
    qtbot.waitUntil(lambda: _shown(node) == ["first line\nsecond line", "Two lines read."], timeout=10_000)


def test_stop_clicked_mid_stream_keeps_what_came_and_says_so(
    qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path
) -> None:
    window = open_with_fake(open_window, fake, tmp_path)
    node = window.nodes()[0]
    full = "word " * 400
    # Silent after 10 events for an hour: still streaming when Stop is clicked, however slow the machine.
    fake.script(Turn(text=full, chunk_chars=5, fault=Fault.stall(after_events=10, seconds=3600)))
    type_text(qtbot, node.chat_input, "talk")
    qtbot.keyClick(node.chat_input, Qt.Key.Key_Return)
    button = child(node, QPushButton, "sendButton")
    qtbot.waitUntil(lambda: button.text() == "Stop" and len(node.conversation.messages) == 2
                    and len(node.conversation.messages[1].content) >= 25, timeout=10_000)
    with qtbot.waitSignal(node.run_finished, timeout=10_000) as done:
        click(qtbot, button)
    assert done.args == ["stopped"]
    answer = node.conversation.messages[1]
    assert answer.stopped and full.startswith(answer.content) and 0 < len(answer.content) < len(full)
    view = _view(qtbot, node, 1)
    qtbot.waitUntil(view.stopped_label.isVisible, timeout=10_000)
    assert view.toPlainText().strip() == answer.content.strip()
    assert button.text() == "Send"


def test_the_tools_menu_switches_a_tool_off_for_this_node(
    qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path
) -> None:
    window = open_with_fake(open_window, fake, tmp_path)
    node = window.nodes()[0]
    button = child(node, QToolButton, "toolsButton")
    assert button.text() == "Tools"
    pick_from_popup(qtbot, button, button.menu(), "builtin:write_file")
    assert button.text() == "Tools (1 off)"
    fake.script(Turn(text="ok"))
    _send(qtbot, node, "which tools?")
    (post,) = [r for r in fake.requests if r.method == "POST"]
    offered = [t["function"]["name"] for t in json.loads(post.body)["tools"]]
    assert "write_file" not in offered and "read_file" in offered
    pick_from_popup(qtbot, button, button.menu(), "builtin:write_file")  # on again
    assert button.text() == "Tools"


def test_edit_clicked_typed_and_enter_then_regenerate_and_the_version_arrows(
    qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path
) -> None:
    window = open_with_fake(open_window, fake, tmp_path)
    node = window.nodes()[0]
    fake.script(Turn(text="A1"), Turn(text="A2"), Turn(text="A3"))
    _send(qtbot, node, "first")
    user = _view(qtbot, node, 0)
    click(qtbot, child(user, QToolButton, "editButton"))
    editor = child(user, QPlainTextEdit, "messageEditor")
    qtbot.waitUntil(editor.isVisible, timeout=10_000)
    assert editor.toPlainText() == "first"
    replace_text(qtbot, editor, "second")
    with qtbot.waitSignal(node.run_finished, timeout=10_000):
        qtbot.keyClick(editor, Qt.Key.Key_Return)
    assert _texts(node) == ["second", "A2"]
    assert _bodies(fake)[-1] == ["second"]
    assert "2/2" in child(_view(qtbot, node, 0), QLabel, "versionLabel").text()

    with qtbot.waitSignal(node.run_finished, timeout=10_000):
        click(qtbot, child(_view(qtbot, node, 1), QToolButton, "regenerateButton"))
    assert _texts(node) == ["second", "A3"]
    assert _bodies(fake)[-1] == ["second"]  # the same question asked again
    answer = _view(qtbot, node, 1)
    assert "2/2" in child(answer, QLabel, "versionLabel").text()
    click(qtbot, child(answer, QToolButton, "prevVersionButton"))
    assert _texts(node) == ["second", "A2"]
    qtbot.waitUntil(lambda: _shown(node) == ["second", "A2"], timeout=10_000)
    click(qtbot, child(_view(qtbot, node, 1), QToolButton, "nextVersionButton"))
    assert _texts(node) == ["second", "A3"]
    # The question's first version, with its own answer.
    click(qtbot, child(_view(qtbot, node, 0), QToolButton, "prevVersionButton"))
    assert _texts(node) == ["first", "A1"]
    qtbot.waitUntil(lambda: _shown(node) == ["first", "A1"], timeout=10_000)
    assert "1/2" in child(_view(qtbot, node, 0), QLabel, "versionLabel").text()


def test_fork_clicked_opens_a_copy_up_to_that_answer(
    qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path
) -> None:
    window = open_with_fake(open_window, fake, tmp_path)
    node = window.nodes()[0]
    node.set_title("Plan")
    fake.script(Turn(text="A1"), Turn(text="A2"), Turn(text="B"))
    _send(qtbot, node, "q1")
    _send(qtbot, node, "q2")
    click(qtbot, child(_view(qtbot, node, 1), QToolButton, "forkButton"))
    assert len(window.nodes()) == 2
    fork = window.nodes()[1]
    assert window.active_node() is fork and fork.title == "Plan (fork)"
    assert _texts(fork) == ["q1", "A1"]
    _send(qtbot, fork, "other way")
    assert _texts(fork) == ["q1", "A1", "other way", "B"]
    assert _texts(node) == ["q1", "A1", "q2", "A2"]


def _card(qtbot: Any, node: Any) -> Any:
    qtbot.waitUntil(lambda: node.findChild(QWidget, "permissionCard") is not None, timeout=10_000)
    return node.findChild(QWidget, "permissionCard")


def test_approve_clicked_writes_the_file_and_deny_clicked_writes_nothing(
    qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path
) -> None:
    window = open_with_fake(open_window, fake, tmp_path)
    project = tmp_path / "project"
    node = window.nodes()[0]
    yes = {"path": "notes/yes.txt", "content": "approved\n"}
    fake.script(Turn(tool_calls=[ToolCallSpec("write_file", yes)]),
                Turn(text="Written."),
                Turn(tool_calls=[ToolCallSpec("write_file", {"path": "no.txt", "content": "denied\n"})]))
    type_text(qtbot, node.chat_input, "write yes")
    with qtbot.waitSignal(node.run_finished, timeout=10_000):
        qtbot.keyClick(node.chat_input, Qt.Key.Key_Return)
        card = _card(qtbot, node)
        assert child(card, QLabel, "writePath").text() == "File: notes/yes.txt"
        assert not (project / "notes" / "yes.txt").exists()  # nothing before the click
        click(qtbot, child(card, QPushButton, "approveButton"))
    assert (project / "notes" / "yes.txt").read_text(encoding="utf-8") == "approved\n"
    assert node.conversation.messages[-1].content == "Written."

    type_text(qtbot, node.chat_input, "write no")
    with qtbot.waitSignal(node.run_finished, timeout=10_000) as finished:
        qtbot.keyClick(node.chat_input, Qt.Key.Key_Return)
        card = _card(qtbot, node)
        click(qtbot, child(card, QPushButton, "denyButton"))
    assert finished.args == ["denied"]  # the run ends there: the model is not asked again
    assert not (project / "no.txt").exists()
    assert [(m.role, m.content) for m in node.conversation.messages[-1:]] == [("tool", "denied by user")]
    assert len([r for r in fake.requests if r.method == "POST"]) == 3
    assert node.findChild(QWidget, "permissionCard") is None


def test_the_x_closes_the_node_and_ctrl_shift_t_brings_it_back_with_its_talk(
    qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path
) -> None:
    window = open_with_fake(open_window, fake, tmp_path)
    keep = window.nodes()[0]
    node = window.add_node()
    node.set_title("Closable")
    fake.script(Turn(text="kept answer"))
    _send(qtbot, node, "kept question")
    node_id = node.node_id
    click_close_button(qtbot, window.subwindow_of(node))
    qtbot.waitUntil(lambda: [n.node_id for n in window.nodes()] == [keep.node_id], timeout=10_000)
    press(qtbot, "Ctrl+Shift+T", keep.chat_input)
    back = window.node_area.node(node_id)
    assert back is not None and window.active_node() is back
    assert back.title == "Closable"
    assert _texts(back) == ["kept question", "kept answer"]
    assert QApplication.focusWidget() is back.chat_input
