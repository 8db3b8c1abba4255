"""Edit and resend, regenerate, versions and fork, clicked through on real nodes and a real window."""

# ruff: noqa: F811 - pytest fixtures imported from test_chat_node_support are parameters here
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QPlainTextEdit, QPushButton, QToolButton, QWidget
from test_app_support import fake_provider_entry, write_settings
from test_chat_node_support import NodeEnv, make_env  # noqa: F401

from desktop.core.chat.conversation import Conversation, append_message
from desktop.core.chat.types import ToolCall
from desktop.core.chat.versions import FORKED_FROM_KEY, versions_at
from desktop.core.store import new_node_state
from desktop.testing import FakeProvider, Fault, Turn
from desktop.ui.node.chat_node import ChatNodeWidget
from desktop.ui.transcript.actions import BUSY_TOOLTIP
from desktop.ui.transcript.views import MessageView

pytest_plugins = ["test_app_support"]  # fixtures: fake, open_window

USAGE = {"input": 100_000, "output": 10_000, "cache_read": 0, "cache_write": 0}


def view_of(node: ChatNodeWidget, index: int) -> MessageView:
    msg = node.conversation.messages[index]
    view = node.transcript.view_for(msg.id)
    assert view is not None, f"message {index} has no view"
    return view


def child(widget: QWidget, cls: type, name: str) -> Any:
    found = widget.findChild(cls, name)
    assert found is not None, f"no {cls.__name__} named {name}"
    return found


def click(qtbot: Any, button: QWidget) -> None:
    qtbot.waitUntil(button.isVisible, timeout=10_000)  # a view built by a flush is shown by its layout
    assert button.isEnabled(), f"{button.objectName()} is disabled"
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)


def texts(node: ChatNodeWidget) -> list[str]:
    return [m.content for m in node.conversation.messages]


def shown(node: ChatNodeWidget) -> list[str]:
    return [t.strip() for t in node.transcript.message_texts()]


def send(qtbot: Any, env: NodeEnv, text: str) -> None:
    with qtbot.waitSignal(env.node.run_finished, timeout=10_000):
        env.node.submit(text)


def bodies(env: NodeEnv) -> list[list[str]]:
    out = []
    for r in env.fake.requests:
        if r.method == "POST":
            out.append([m["content"] for m in json.loads(r.body)["messages"] if m["role"] != "system"])
    return out


def test_edit_resends_and_keeps_the_previous_version(qtbot: Any, make_env: Any) -> None:
    env = make_env()
    node = env.node
    env.fake.script(Turn(text="A1"), Turn(text="A2"))
    send(qtbot, env, "first")
    user_view = view_of(node, 0)
    click(qtbot, child(user_view, QToolButton, "editButton"))
    editor = child(user_view, QPlainTextEdit, "messageEditor")
    assert editor.isVisible() and editor.toPlainText() == "first"
    assert not user_view.bubble.isVisible()  # the editor takes the message's place
    editor.setPlainText("second")
    with qtbot.waitSignal(node.run_finished, timeout=10_000):
        click(qtbot, child(user_view, QPushButton, "editSendButton"))
    assert texts(node) == ["second", "A2"]
    assert bodies(env)[-1] == ["second"]  # only the active path goes to the model
    assert shown(node) == ["second", "A2"]
    edited = view_of(node, 0)
    assert "2/2" in child(edited, QLabel, "versionLabel").text()
    click(qtbot, child(edited, QToolButton, "prevVersionButton"))
    assert texts(node) == ["first", "A1"] and shown(node) == ["first", "A1"]
    back = view_of(node, 0)
    assert "1/2" in child(back, QLabel, "versionLabel").text()
    assert not child(back, QToolButton, "prevVersionButton").isEnabled()
    click(qtbot, child(back, QToolButton, "nextVersionButton"))
    assert texts(node) == ["second", "A2"]


def test_keys_ctrl_enter_sends_esc_cancels_up_edits_the_last_message(qtbot: Any, make_env: Any) -> None:
    env = make_env()
    node = env.node
    env.fake.script(Turn(text="A1"), Turn(text="A2"), Turn(text="A3"))
    send(qtbot, env, "one")
    send(qtbot, env, "two")
    box = child(node, QPlainTextEdit, "chatInput")
    box.setFocus()
    qtbot.keyClick(box, Qt.Key.Key_Up)
    last_user = view_of(node, 2)
    editor = child(last_user, QPlainTextEdit, "messageEditor")
    # A run this fast ends before its first frame: the views built at its end show one loop pass later.
    qtbot.waitUntil(editor.isVisible, timeout=10_000)
    assert editor.toPlainText() == "two"
    qtbot.keyClick(editor, Qt.Key.Key_Escape)
    assert not editor.isVisible() and last_user.bubble.isVisible()
    assert texts(node) == ["one", "A1", "two", "A2"]
    qtbot.keyClicks(box, "draft")
    qtbot.keyClick(box, Qt.Key.Key_Up)  # not empty: Up moves the cursor, no editor
    assert not editor.isVisible()
    box.clear()
    qtbot.keyClick(box, Qt.Key.Key_Up)
    editor.setPlainText("TWO")
    with qtbot.waitSignal(node.run_finished, timeout=10_000):
        qtbot.keyClick(editor, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert texts(node) == ["one", "A1", "TWO", "A3"]
    assert versions_at(node.conversation, node.conversation.messages[2].id) == (2, 2)


def test_regenerate_gets_a_new_answer_and_counts_both(qtbot: Any, make_env: Any) -> None:
    env = make_env()
    node = env.node
    env.fake.script(
        Turn(text="A1", usage=USAGE, model="gpt-4o-mini"), Turn(text="A2", usage=USAGE, model="gpt-4o-mini")
    )
    send(qtbot, env, "q")
    one = node.cost().usd
    with qtbot.waitSignal(node.run_finished, timeout=10_000):
        click(qtbot, child(view_of(node, 1), QToolButton, "regenerateButton"))
    assert texts(node) == ["q", "A2"] and shown(node) == ["q", "A2"]
    assert bodies(env)[-1] == ["q"]  # the old answer is not sent
    answer = view_of(node, 1)
    assert "2/2" in child(answer, QLabel, "versionLabel").text()
    assert node.cost().usd == pytest.approx(2 * one)  # the replaced answer was paid for too
    tooltip = child(node, QLabel, "costChip").toolTip()
    assert "This path: $" in tooltip and "other versions: $" in tooltip
    click(qtbot, child(answer, QToolButton, "prevVersionButton"))
    assert texts(node) == ["q", "A1"]
    assert node.cost().usd == pytest.approx(2 * one)
    node.submit("/cost")
    assert "over 2 response(s)" in node.conversation.messages[-1].content  # /cost agrees with the chip
    md = node.export_markdown(include_versions=True)
    assert md.index("A1") < md.index("Other versions") < md.index("A2")
    assert "A2" not in node.export_markdown()


def test_busy_disables_edit_regenerate_and_switch_with_a_reason(qtbot: Any, make_env: Any) -> None:
    env = make_env()
    node = env.node
    # Silent for an hour after 10 events: still streaming whenever the test looks, until it stops it.
    slow = Turn(text="word " * 300, chunk_chars=5, fault=Fault.stall(after_events=10, seconds=3600))
    env.fake.script(Turn(text="A1"), Turn(text="A2"), slow)
    send(qtbot, env, "q")
    with qtbot.waitSignal(node.run_finished, timeout=10_000):
        click(qtbot, child(view_of(node, 1), QToolButton, "regenerateButton"))
    child(view_of(node, 0), QToolButton, "editButton").click()  # an editor left open...
    node.submit("long one")
    qtbot.waitUntil(lambda: len(node.conversation.messages) == 4, timeout=10_000)
    send_edit = child(view_of(node, 0), QPushButton, "editSendButton")  # ...cannot send meanwhile
    assert not send_edit.isEnabled() and send_edit.toolTip() == BUSY_TOOLTIP
    for index, name in ((0, "editButton"), (1, "regenerateButton"), (1, "prevVersionButton")):
        button = child(view_of(node, index), QToolButton, name)
        assert not button.isEnabled() and button.toolTip() == BUSY_TOOLTIP
    assert child(view_of(node, 1), QToolButton, "forkButton").isEnabled()
    node.versions.apply("regenerate", node.conversation.messages[1].id, "")  # refused while busy
    assert node.conversation.messages[1].content == "A2"
    node.stop()
    qtbot.waitUntil(lambda: not node.is_busy(), timeout=10_000)
    button = child(view_of(node, 0), QToolButton, "editButton")
    assert button.isEnabled() and button.toolTip() != BUSY_TOOLTIP


def test_a_pending_approval_on_a_replaced_branch_is_denied(
    qtbot: Any, make_env: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    state = new_node_state("Pending")
    conv = Conversation(id="c-p")
    append_message(conv, "user", "write it")
    ask = append_message(conv, "assistant", "")
    ask.tool_calls = [ToolCall("call-1", "write_file", '{"path": "x"}', status="awaiting_approval")]
    state.conversation = conv
    env = make_env(state)
    calls: list[tuple[str, str, str]] = []
    monkeypatch.setattr(env.runtime, "approve", lambda *args: calls.append(args))
    env.fake.script(Turn(text="fresh"))
    with qtbot.waitSignal(env.node.run_finished, timeout=10_000):
        click(qtbot, child(view_of(env.node, 1), QToolButton, "regenerateButton"))
    assert calls == [(env.node.node_id, "call-1", "deny")]
    assert texts(env.node) == ["write it", "fresh"]


def test_fork_opens_an_independent_node_beside_this_one(
    qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path
) -> None:
    project, config = tmp_path / "project", tmp_path / "config"
    write_settings(config, fake_provider_entry(fake), default="fake", model="gpt-4o-mini")
    window = open_window(project, config)
    node = window.nodes()[0]
    node.set_title("Plan")
    node._system = "Be brief."
    node._always_allow.append("write_file")
    fake.script(Turn(text="A1", usage=USAGE), Turn(text="A2", usage=USAGE), Turn(text="B", usage=USAGE))
    for q in ("q1", "q2"):
        with qtbot.waitSignal(node.run_finished, timeout=10_000):
            node.submit(q)
    cost_before = window.session_cost().usd
    click(qtbot, child(view_of(node, 1), QToolButton, "forkButton"))
    assert len(window.nodes()) == 2
    fork = window.nodes()[1]
    assert window.active_node() is fork
    assert fork.title == "Plan (fork)"
    assert texts(fork) == ["q1", "A1"] and texts(node) == ["q1", "A1", "q2", "A2"]
    assert not {m.id for m in fork.conversation.messages} & {m.id for m in node.conversation.messages}
    assert (fork.provider, fork.model, fork.system) == (node.provider, node.model, "Be brief.")
    assert fork.always_allow == []
    src, dst = window.subwindow_of(node).geometry(), window.subwindow_of(fork).geometry()
    assert dst.x() > src.x()  # beside (or one cascade step right of) the source
    assert window.session_cost().usd == pytest.approx(cost_before)  # the copies were paid once
    with qtbot.waitSignal(fork.run_finished, timeout=10_000):
        fork.submit("other way")
    assert texts(fork) == ["q1", "A1", "other way", "B"]
    assert texts(node) == ["q1", "A1", "q2", "A2"]
    assert all(FORKED_FROM_KEY in m.extra for m in fork.conversation.messages[:2])


def test_versions_survive_save_and_reopen(
    qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path
) -> None:
    project, config = tmp_path / "project", tmp_path / "config"
    write_settings(config, fake_provider_entry(fake), default="fake", model="gpt-4o-mini")
    window = open_window(project, config)
    node = window.nodes()[0]
    fake.script(Turn(text="A1"), Turn(text="A2"))
    with qtbot.waitSignal(node.run_finished, timeout=10_000):
        node.submit("q")
    with qtbot.waitSignal(node.run_finished, timeout=10_000):
        click(qtbot, child(view_of(node, 1), QToolButton, "regenerateButton"))
    click(qtbot, child(view_of(node, 1), QToolButton, "prevVersionButton"))
    assert texts(node) == ["q", "A1"]
    window.projects.save()
    data = json.loads((project / "project.json").read_text(encoding="utf-8"))
    saved = data["nodes"][0]["data"]["conversation"]["messages"]
    assert [m["content"] for m in saved] == ["q", "A1"]  # the active path, as today's loader reads it
    window.close()
    qtbot.waitUntil(lambda: window.is_shut_down(), timeout=10_000)
    again = open_window(project, config)
    reopened = again.nodes()[0]
    assert texts(reopened) == ["q", "A1"]
    assert "1/2" in child(view_of(reopened, 1), QLabel, "versionLabel").text()
    click(qtbot, child(view_of(reopened, 1), QToolButton, "nextVersionButton"))
    assert texts(reopened) == ["q", "A2"]
