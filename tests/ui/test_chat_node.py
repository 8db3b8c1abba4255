"""The chat node on the real runtime, real drivers and the loopback fake provider."""
# ruff: noqa: F811 - pytest fixtures imported from test_chat_node_support are parameters here

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QApplication, QComboBox, QLabel, QPlainTextEdit, QPushButton, QWidget
from test_chat_node_support import NodeEnv, fake_settings, make_env  # noqa: F401

from desktop.core.chat.types import ChatEvent, ChatMessage, Delta, Done, Usage
from desktop.core.store import TrimInfo, new_node_state
from desktop.testing import Fault, ToolCallSpec, Turn
from desktop.ui.transcript.answer import AssistantMessageView
from desktop.ui.transcript.tool_card import ToolCard
from desktop.ui.transcript.transcript import Transcript


def find(node: QWidget, cls: type, name: str) -> Any:
    w = node.findChild(cls, name)
    assert w is not None, f"no {cls.__name__} named {name}"
    return w


def assistant_views(env: NodeEnv) -> list[AssistantMessageView]:
    return [v for v in env.node.transcript.views() if isinstance(v, AssistantMessageView)]


def last_text(env: NodeEnv) -> str:
    views = assistant_views(env)
    return views[-1].toPlainText() if views else ""


def type_and_enter(qtbot: Any, env: NodeEnv, text: str) -> None:
    box = find(env.node, QPlainTextEdit, "chatInput")
    box.setFocus()
    qtbot.keyClicks(box, text)
    qtbot.keyClick(box, Qt.Key.Key_Return)


def chat_requests(env: NodeEnv) -> list[Any]:
    return [r for r in env.fake.requests if r.method == "POST"]


def idle(env: NodeEnv) -> bool:
    """The run ended and what it streamed is shown (the frames after Done included)."""
    return not env.node.is_busy() and not env.node.transcript.is_rendering()


def test_object_names_and_initial_state(qtbot: Any, make_env: Any) -> None:
    env = make_env()
    node = env.node
    assert node.objectName() == "chatNode"
    for cls, name in ((QPlainTextEdit, "chatInput"), (QPushButton, "sendButton"), (Transcript, "transcript"),
                      (QComboBox, "modelPicker"), (QLabel, "tokenChip"), (QLabel, "costChip")):
        find(node, cls, name)
    assert find(node, QPushButton, "sendButton").text() == "Send"
    assert find(node, QLabel, "costChip").text() == "$0.00"  # no response yet ("n/a": no price known)
    assert find(node, QLabel, "tokenChip").text() == "0 in · 0 out"
    picker = find(node, QComboBox, "modelPicker")
    assert picker.isEditable()
    # The provider's model list arrives asynchronously (GET /v1/models on the fake server).
    qtbot.waitUntil(lambda: picker.findText("fake-model-large") >= 0, timeout=10_000)
    assert picker.findText("gpt-4o-mini") >= 0


def test_send_streams_text_and_updates_chips(qtbot: Any, make_env: Any) -> None:
    env = make_env()
    env.fake.script(Turn(text="Hello **world**, here is `code`.", usage={"input": 1000, "output": 20,
                                                                          "cache_read": 200},
                         tokens_per_second=200))
    cost_signals: list[int] = []
    env.node.cost_changed.connect(lambda: cost_signals.append(1))
    type_and_enter(qtbot, env, "Say hello")
    button = find(env.node, QPushButton, "sendButton")
    assert button.text() == "Stop"
    assert find(env.node, QPlainTextEdit, "chatInput").toPlainText() == ""
    qtbot.waitUntil(lambda: "Hello" in last_text(env), timeout=10_000)
    qtbot.waitUntil(lambda: idle(env) and env.finished == ["end_turn"], timeout=10_000)
    assert button.text() == "Send"
    assert last_text(env).startswith("Hello world, here is code.")
    assert find(env.node, QLabel, "tokenChip").text() == "1.2k in · 20 out"
    cost = find(env.node, QLabel, "costChip").text()
    assert cost.startswith("$") and cost != "$0.0000" and len(cost.split(".")[1]) == 4
    assert cost_signals
    assert env.node.cost().usd > 0
    assert [m.role for m in env.node.conversation.messages] == ["user", "assistant"]
    # The request carried the conversation as is.
    body = json.loads(chat_requests(env)[-1].body)
    assert body["messages"][-1]["content"] == "Say hello"


def test_approve_runs_write_file_in_project(qtbot: Any, make_env: Any) -> None:
    env = make_env()
    content = "line one\nline two with a long tail " + "x" * 300
    env.fake.script(
        Turn(tool_calls=[ToolCallSpec("write_file", {"path": "notes/out.txt", "content": content})]),
        Turn(text="Written."),
    )
    type_and_enter(qtbot, env, "write it")
    qtbot.waitUntil(lambda: env.node.findChild(QWidget, "permissionCard") is not None, timeout=10_000)
    card = env.node.findChild(QWidget, "permissionCard")
    shown = find(card, QPlainTextEdit, "writeContent").toPlainText()
    assert shown == content  # the FULL content, as text (not an escaped JSON string)
    assert find(card, QLabel, "writePath").text() == "File: notes/out.txt"
    assert not (env.project / "notes" / "out.txt").exists()
    qtbot.mouseClick(find(card, QPushButton, "approveButton"), Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: idle(env) and bool(env.finished), timeout=10_000)
    assert (env.project / "notes" / "out.txt").read_text() == content
    assert env.node.findChild(QWidget, "permissionCard") is None
    tool_card = env.node.findChild(ToolCard, "toolCard")
    assert tool_card.call.status == "done"
    assert "done" in tool_card.toPlainText()
    assert "Written." in last_text(env)
    assert env.finished == ["end_turn"]
    roles = [m.role for m in env.node.conversation.messages]
    assert roles == ["user", "assistant", "tool", "assistant"]


def test_deny_does_not_write(qtbot: Any, make_env: Any) -> None:
    env = make_env()
    env.fake.script(Turn(tool_calls=[ToolCallSpec("write_file", {"path": "no.txt", "content": "x"})]))
    type_and_enter(qtbot, env, "write it")
    qtbot.waitUntil(lambda: env.node.findChild(QWidget, "permissionCard") is not None, timeout=10_000)
    card = env.node.findChild(QWidget, "permissionCard")
    qtbot.mouseClick(find(card, QPushButton, "denyButton"), Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: idle(env) and bool(env.finished), timeout=10_000)
    assert not (env.project / "no.txt").exists()
    tool_card = env.node.findChild(ToolCard, "toolCard")
    assert tool_card.call.status == "denied"
    assert env.node.findChild(QWidget, "permissionCard") is None
    assert env.finished == ["denied"]
    assert env.node.always_allow == []


def test_always_allow_approves_later_calls_without_a_card(qtbot: Any, make_env: Any) -> None:
    env = make_env()
    env.fake.script(
        Turn(tool_calls=[ToolCallSpec("write_file", {"path": "a.txt", "content": "A"})]),
        Turn(tool_calls=[ToolCallSpec("write_file", {"path": "b.txt", "content": "B"})]),
        Turn(text="both written"),
    )
    changed: list[int] = []
    env.node.changed.connect(lambda: changed.append(1))
    type_and_enter(qtbot, env, "write two files")
    qtbot.waitUntil(lambda: env.node.findChild(QWidget, "permissionCard") is not None, timeout=10_000)
    seen_cards: list[int] = []
    env.node.transcript.rendered.connect(
        lambda: seen_cards.append(len(env.node.transcript.pending_permission_cards()))
    )
    card = env.node.findChild(QWidget, "permissionCard")
    qtbot.mouseClick(find(card, QPushButton, "alwaysAllowButton"), Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: idle(env) and bool(env.finished), timeout=10_000)
    assert (env.project / "a.txt").read_text() == "A"
    assert (env.project / "b.txt").read_text() == "B"
    assert env.node.always_allow == ["write_file"]
    assert env.node.to_state().always_allow == ["write_file"]
    assert seen_cards and max(seen_cards) == 0  # the second call never showed a permission card
    cards = env.node.findChildren(ToolCard, "toolCard")
    assert [c.call.status for c in cards] == ["done", "done"]
    assert "both written" in last_text(env)
    assert changed


def test_always_allow_from_state_skips_the_card(qtbot: Any, make_env: Any) -> None:
    state = new_node_state("Allowed")
    state.always_allow = ["write_file"]
    env = make_env(state)
    env.fake.script(Turn(tool_calls=[ToolCallSpec("write_file", {"path": "c.txt", "content": "C"})]),
                    Turn(text="ok"))
    type_and_enter(qtbot, env, "go")
    qtbot.waitUntil(lambda: idle(env) and bool(env.finished), timeout=10_000)
    assert (env.project / "c.txt").read_text() == "C"
    assert env.node.findChild(QWidget, "permissionCard") is None


def test_stop_mid_stream_keeps_partial_text_marked(qtbot: Any, make_env: Any) -> None:
    env = make_env()
    full = "word " * 400
    # The server goes silent after 10 events for an hour: the stream is still running when the test
    # presses Stop, however slow the machine.
    env.fake.script(Turn(text=full, chunk_chars=5, fault=Fault.stall(after_events=10, seconds=3600)))
    type_and_enter(qtbot, env, "talk a lot")
    qtbot.waitUntil(lambda: len(last_text(env)) > 20, timeout=10_000)
    qtbot.mouseClick(find(env.node, QPushButton, "sendButton"), Qt.MouseButton.LeftButton)  # Stop
    qtbot.waitUntil(lambda: idle(env) and bool(env.finished), timeout=10_000)
    assert env.finished == ["stopped"]
    msg = env.node.conversation.messages[-1]
    assert msg.role == "assistant" and msg.stopped
    assert 0 < len(msg.content) < len(full)
    view = assistant_views(env)[-1]
    assert view.stopped_label.isVisible()
    assert view.toPlainText().strip() == msg.content.strip()
    assert find(env.node, QPushButton, "sendButton").text() == "Send"
    assert env.node.transcript.error_text() is None


def test_retry_after_http_500(qtbot: Any, make_env: Any) -> None:
    env = make_env()
    env.fake.script(Turn(fault=Fault.http(500)), Turn(text="recovered"))
    type_and_enter(qtbot, env, "hello?")
    qtbot.waitUntil(lambda: env.node.transcript.error_text() is not None, timeout=10_000)
    assert "500" in (env.node.transcript.error_text() or "")
    assert env.finished == ["error"]
    qtbot.waitUntil(lambda: idle(env))
    qtbot.mouseClick(find(env.node, QPushButton, "retryButton"), Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "recovered" in last_text(env) and idle(env) and len(env.finished) == 2,
                    timeout=10_000)
    assert env.node.transcript.error_text() is None
    assert [m.role for m in env.node.conversation.messages if m.role != "assistant" or m.content] == [
        "user", "assistant"]
    chats = chat_requests(env)
    assert len(chats) == 2
    assert json.loads(chats[1].body)["messages"][-1]["content"] == "hello?"


def test_the_request_goes_out_before_the_message_is_built(
    qtbot: Any, make_env: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Building and painting the user's message takes milliseconds: it must not delay the request."""
    env = make_env()
    env.fake.script(Turn(text="Hi"))
    built_at_send: list[list[str]] = []
    send = httpx.AsyncClient.send

    async def spy(client: httpx.AsyncClient, request: httpx.Request, **kwargs: Any) -> httpx.Response:
        if request.method == "POST":  # the chat request (the model list is fetched with a GET)
            built_at_send.append(env.node.transcript.message_texts())
        return await send(client, request, **kwargs)

    monkeypatch.setattr(httpx.AsyncClient, "send", spy)
    with qtbot.waitSignal(env.node.run_finished, timeout=10_000):
        env.node.submit("hello")
    assert built_at_send == [[]]
    qtbot.waitUntil(lambda: idle(env), timeout=10_000)
    assert env.node.transcript.message_texts() == ["hello", "Hi"]


def test_no_provider_error_is_shown_by_the_node(qtbot: Any, make_env: Any) -> None:
    env = make_env()
    env.settings.default_provider = None
    env.node.model_choice.provider = None
    env.node.submit("anyone there?")
    qtbot.waitUntil(lambda: env.node.transcript.error_text() is not None, timeout=10_000)
    assert (env.node.transcript.error_text() or "").startswith("No provider is set up for this node.")
    qtbot.waitUntil(lambda: idle(env), timeout=10_000)  # the user's message shows at the next frame
    assert find(env.node, QPushButton, "sendButton").text() == "Send"
    assert env.node.transcript.message_texts() == ["anyone there?"]
    assert env.finished == ["error"]


def test_enter_sends_shift_enter_inserts_newline(qtbot: Any, make_env: Any) -> None:
    env = make_env()
    env.fake.script(Turn(text="got it"))
    box = find(env.node, QPlainTextEdit, "chatInput")
    box.setFocus()
    qtbot.keyClicks(box, "line 1")
    qtbot.keyClick(box, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    qtbot.keyClicks(box, "line 2")
    assert box.toPlainText() == "line 1\nline 2"
    assert env.node.conversation.messages == []
    qtbot.keyClick(box, Qt.Key.Key_Return)
    assert box.toPlainText() == ""
    assert env.node.conversation.messages[0].content == "line 1\nline 2"
    qtbot.waitUntil(lambda: idle(env) and bool(env.finished), timeout=10_000)
    # Enter on an empty box sends nothing.
    qtbot.keyClick(box, Qt.Key.Key_Return)
    assert len(env.node.conversation.messages) == 2


def test_slash_completion_popup(qtbot: Any, make_env: Any) -> None:
    env = make_env()
    box = find(env.node, QPlainTextEdit, "chatInput")
    env.node.activateWindow()
    box.setFocus()
    qtbot.waitUntil(box.hasFocus, timeout=10_000)
    qtbot.keyClicks(box, "/c")
    qtbot.waitUntil(box.completion_visible, timeout=10_000)
    model = box.completer().completionModel()
    assert [model.index(i, 0).data() for i in range(model.rowCount())] == ["/clear", "/cost"]
    qtbot.keyClick(box.completer().popup(), Qt.Key.Key_Down)
    qtbot.keyClick(box.completer().popup(), Qt.Key.Key_Return)
    assert box.toPlainText() == "/cost "
    assert env.node.conversation.messages == []  # completing did not submit


def test_slash_commands(qtbot: Any, make_env: Any) -> None:
    env = make_env()
    node = env.node
    changed: list[int] = []
    node.changed.connect(lambda: changed.append(1))
    node.submit("/help")
    assert node.conversation.messages[-1].role == "note"
    help_text = node.conversation.messages[-1].content
    assert "/clear" in help_text and "/system" in help_text
    node.submit("/model")
    assert "Usage: /model" in node.conversation.messages[-1].content
    assert "gpt-4o-mini" in node.conversation.messages[-1].content
    node.submit("/model fake-model-small")
    assert node.model == "fake-model-small"
    assert find(node, QComboBox, "modelPicker").currentText() == "fake-model-small"
    node.submit("/system")
    assert "No system prompt" in node.conversation.messages[-1].content
    node.submit("/system You answer in French.")
    assert node.system == "You answer in French."
    assert node.to_state().system == "You answer in French."
    node.submit("/cost")
    assert node.conversation.messages[-1].content.startswith("Cost: $0.00 over 0 response(s)")
    assert changed
    # The transcript shows every note.
    texts = node.transcript.message_texts()
    assert any("System prompt set" in t for t in texts)
    # The system prompt and model go with the next request; notes never do.
    env.fake.script(Turn(text="Bonjour", usage={"input": 10, "output": 2}))
    node.submit("hi")
    qtbot.waitUntil(lambda: idle(env) and bool(env.finished), timeout=10_000)
    body = json.loads(chat_requests(env)[-1].body)
    assert body["model"] == "fake-model-small"
    assert body["messages"][0] == {"role": "system", "content": "You answer in French."}
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    node.submit("/cost")
    assert "Output: 2" in node.conversation.messages[-1].content
    # /clear archives first, then empties; the export still has everything.
    count = len(node.conversation.messages)
    node.submit("/clear")
    assert node.conversation.messages == []
    assert len(env.archive[node.node_id]) == count
    assert node.transcript.views() == []
    assert find(node, QLabel, "tokenChip").text() == "0 in · 0 out"
    exported = node.export_markdown()
    assert "Bonjour" in exported and "## You" in exported and "history archive" in exported


def test_clear_keeps_everything_when_archive_fails(qtbot: Any, make_env: Any) -> None:
    env = make_env()

    def broken(_nid: str, _msgs: Any) -> None:
        raise OSError("disk full")

    env.services.archive = broken
    env.node.submit("/help")
    env.node.submit("/clear")
    assert [m.role for m in env.node.conversation.messages] == ["note", "note"]
    assert env.node.transcript.views()
    assert "disk full" in env.node.conversation.messages[-1].content


def test_anthropic_thinking_block_and_copy(qtbot: Any, make_env: Any) -> None:
    env = make_env(api="anthropic", model="claude-sonnet-4-5")
    env.fake.script(Turn(thinking="Let me think about this carefully.", text="# Answer\n\n- one\n- two",
                         usage={"input": 50, "output": 30, "cache_read": 1000, "cache_write": 100}))
    env.node.submit("think")
    qtbot.waitUntil(lambda: idle(env) and bool(env.finished), timeout=10_000)
    view = assistant_views(env)[-1]
    assert view.thinking is not None
    assert not view.thinking.is_expanded()
    qtbot.mouseClick(view.thinking.toggle, Qt.MouseButton.LeftButton)
    assert view.thinking.is_expanded()
    assert view.thinking.body.toPlainText() == "Let me think about this carefully."
    assert view.body.toPlainText().split("\n")[:3] == ["Answer", "one", "two"]
    assert find(env.node, QLabel, "tokenChip").text() == "1.1k in · 30 out"
    qtbot.mouseClick(view.copy_button, Qt.MouseButton.LeftButton)
    assert QGuiApplication.clipboard().text() == "# Answer\n\n- one\n- two"


def test_title_and_model_picker_persist(qtbot: Any, make_env: Any) -> None:
    env = make_env()
    titles: list[str] = []
    env.node.title_changed.connect(titles.append)
    env.node.set_title("Renamed")
    assert titles == ["Renamed"] and env.node.to_state().title == "Renamed"
    picker = find(env.node, QComboBox, "modelPicker")
    picker.setEditText("my-custom-model")
    picker.lineEdit().editingFinished.emit()
    assert env.node.to_state().model == "my-custom-model"
    state = env.node.to_state()
    assert state.conversation is env.node.conversation
    assert state.provider is None  # nothing was picked on the node: it follows the default provider


def test_shutdown_stops_the_run(qtbot: Any, make_env: Any) -> None:
    env = make_env()
    full = "slow " * 300
    env.fake.script(Turn(text=full, chunk_chars=5, fault=Fault.stall(after_events=10, seconds=3600)))
    node_id = env.node.node_id
    broadcast: list[ChatEvent] = []  # what the runtime sends, whether or not the node listens
    env.bridge.subscribe(node_id, broadcast.append)
    env.node.submit("go")
    qtbot.waitUntil(lambda: bool(last_text(env)), timeout=10_000)
    env.node.shutdown()
    at_shutdown = env.node.conversation.messages[-1].content
    assert env.bridge.subscriber_count(node_id) == 1  # the node unsubscribed at once
    qtbot.waitUntil(lambda: not env.runtime.is_busy(node_id), timeout=10_000)
    # The run was stopped, not left to finish: the runtime ended it with Done("stopped") and the
    # stream was cut short of the scripted text.
    assert [e.reason for e in broadcast if isinstance(e, Done)] == ["stopped"]
    streamed = "".join(e.text for e in broadcast if isinstance(e, Delta))
    assert 0 < len(streamed) < len(full)
    assert not env.node.is_busy()
    assert env.finished == []  # the closed node no longer reports runs
    # The node stopped applying events when it shut down: its message is as it was then.
    assert env.node.conversation.messages[-1].content == at_shutdown


def _priced(env: NodeEnv) -> None:
    env.settings.price_overrides = {"priced-x": {"input": 2.0, "output": 8.0}}


def _exchange(n: int, inp: int, out: int) -> list[ChatMessage]:
    return [ChatMessage(id=f"u{n}", role="user", content=f"question {n}", ts=n),
            ChatMessage(id=f"a{n}", role="assistant", content=f"answer {n}", ts=n, model="priced-x",
                        usage=Usage(inp, out))]


def _trim(removed: list[str], archived: int, kept: list[str]) -> TrimInfo:
    text = f"{archived} earlier messages moved to the history archive"
    note = ChatMessage(id="n0", role="note", content=text, ts=0)
    return TrimInfo(removed_ids=frozenset(removed), archived=archived, note=note, kept_ids=("n0", *kept))


def test_apply_saved_takes_the_trimmed_history_and_recounts(qtbot: Any, make_env: Any) -> None:
    state = new_node_state("Trimmed")
    state.conversation.messages[:] = [*_exchange(1, 1000, 1000), *_exchange(2, 500, 0)]
    env = make_env(state)
    _priced(env)
    env.node.reload_settings()
    assert env.node.cost().usd == pytest.approx(0.011)  # $0.010 + $0.001
    assert find(env.node, QLabel, "tokenChip").text() == "1.5k in · 1k out"
    saved = env.node.to_state().conversation.messages
    assert saved is env.node.conversation.messages  # shared, and a save never changes it
    env.node.submit("/help")  # arrives after the saved snapshot: it must stay
    revision = env.node.revision
    env.node.apply_saved(_trim(["u1", "a1"], 2, ["u2", "a2"]))
    assert env.node.revision > revision
    assert [m.id for m in env.node.conversation.messages][:3] == ["n0", "u2", "a2"]
    assert env.node.conversation.messages[-1].content.startswith("Commands:")
    assert env.node.cost().usd == pytest.approx(0.001)
    assert find(env.node, QLabel, "tokenChip").text() == "500 in · 0 out"
    assert find(env.node, QLabel, "costChip").text() == "$0.0010"
    assert any("moved to the history archive" in t for t in env.node.transcript.message_texts())
    assert not any("question 1" in t for t in env.node.transcript.message_texts())
    revision = env.node.revision
    env.node.apply_saved(_trim(["u1", "a1"], 2, ["u2", "a2"]))  # applying it twice changes nothing
    assert env.node.revision == revision
    assert [m.id for m in env.node.conversation.messages][:3] == ["n0", "u2", "a2"]


def test_the_cost_chip_follows_a_trim_that_keeps_the_length(qtbot: Any, make_env: Any) -> None:
    state = new_node_state("Same length")
    state.conversation.messages[:] = [*_exchange(1, 1000, 1000), *_exchange(2, 1000, 1000)]
    env = make_env(state)
    _priced(env)
    assert env.node.cost().usd == pytest.approx(0.02)
    # One message out, one note in: same length, same last message (an id()- or length-keyed cache
    # could not see this).
    env.node.apply_saved(_trim(["a1"], 1, ["u1", "u2", "a2"]))
    assert len(env.node.conversation.messages) == 4
    assert env.node.cost().usd == pytest.approx(0.01)
    assert find(env.node, QLabel, "costChip").text() == "$0.0100"


def test_apply_saved_ignores_a_history_it_does_not_know(qtbot: Any, make_env: Any) -> None:
    state = new_node_state("Mine")
    state.conversation.messages[:] = _exchange(1, 10, 10)
    env = make_env(state)
    revision = env.node.revision
    env.node.apply_saved(_trim(["u9", "a9"], 2, []))
    assert [m.id for m in env.node.conversation.messages] == ["u1", "a1"]
    assert env.node.revision == revision


def test_an_unknown_card_decision_is_ignored(qtbot: Any, make_env: Any, caplog: Any) -> None:
    env = make_env()
    env.node.transcript.decision.emit("call-1", "maybe")
    assert "unknown card decision 'maybe'" in caplog.text
    assert env.node.always_allow == []


def test_a_blank_node_says_how_to_start_and_the_hint_goes_once_there_are_messages(
        qtbot: Any, make_env: Any) -> None:
    env = make_env()
    hint = find(env.node, QLabel, "emptyState")
    qtbot.waitUntil(hint.isVisible)
    assert "asks you first" in hint.text()
    env.fake.script(Turn(text="hi there"))
    type_and_enter(qtbot, env, "hello")
    qtbot.waitUntil(lambda: idle(env) and env.finished == ["end_turn"], timeout=10_000)
    assert not hint.isVisible()
    type_and_enter(qtbot, env, "/clear")
    qtbot.waitUntil(hint.isVisible)


def test_the_input_completes_exactly_the_commands_help_lists() -> None:
    from desktop.core.chat.commands import COMMAND_HELP
    from desktop.ui.node.input import SLASH_COMPLETIONS

    assert list(SLASH_COMPLETIONS) == list(COMMAND_HELP)


def test_a_typed_character_is_painted_before_the_key_handler_returns(qtbot: Any, make_env: Any) -> None:
    # While other nodes stream, the window's next paint waits behind their rendering and network
    # reads; the input paints itself synchronously instead, so the character shows at once.
    from PySide6.QtCore import QEvent, QObject
    from PySide6.QtGui import QKeyEvent

    env = make_env()
    box = env.node.chat_input
    window = box.window()
    window.show()
    qtbot.waitUntil(lambda: window.windowHandle() is not None and window.windowHandle().isExposed())
    paints: list[str] = []

    class Spy(QObject):
        def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt API
            if event.type() == QEvent.Type.Paint:
                paints.append(box.toPlainText())
            return False

    spy = Spy()
    box.viewport().installEventFilter(spy)
    try:
        press = QKeyEvent(QEvent.Type.KeyPress, Qt.Key.Key_A, Qt.KeyboardModifier.NoModifier, "a")
        QApplication.sendEvent(box, press)  # no event processing between the key and the check
        assert paints and paints[-1] == "a"
    finally:
        box.viewport().removeEventFilter(spy)


def test_the_send_button_is_restyled_once_per_change_of_state(qtbot: Any, make_env: Any) -> None:
    """Send <-> Stop re-polishes the button's style (~0.5 ms); the end of a run sets the state twice
    (on Done and when the send returns), and the second time must cost nothing."""
    env = make_env()
    button = find(env.node, QPushButton, "sendButton")
    polishes: list[bool] = []
    style = button.style()
    original = style.polish

    def counting(widget: Any) -> None:
        if widget is button:
            polishes.append(button.property("busy"))
        original(widget)

    style.polish = counting  # type: ignore[method-assign]
    try:
        env.fake.script(Turn(text="short answer"))
        type_and_enter(qtbot, env, "hi")
        qtbot.waitUntil(lambda: idle(env) and bool(env.finished), timeout=10_000)
    finally:
        del style.polish
    assert polishes == [True, False]
    assert button.text() == "Send"
