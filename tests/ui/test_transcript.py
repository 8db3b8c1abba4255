"""Transcript performance and incremental rendering: lazy open, one render per frame."""
# ruff: noqa: F811 - pytest fixtures imported from test_chat_node_support are parameters here

from __future__ import annotations

from typing import Any

from test_chat_node_support import NodeEnv, make_env, notes_state  # noqa: F401

from desktop.core.chat.conversation import create_conversation
from desktop.core.chat.types import ChatMessage, Delta, Done, Usage
from desktop.core.store import new_node_state
from desktop.ui.transcript.answer import AssistantMessageView
from desktop.ui.transcript.transcript import EAGER_MESSAGES
from desktop.ui.transcript.views import MessageView


def big_state(n: int) -> Any:
    conv = create_conversation()
    for i in range(n):
        if i % 2 == 0:
            conv.messages.append(ChatMessage(id=f"u{i}", role="user", content=f"question {i}", ts=i))
        else:
            conv.messages.append(ChatMessage(
                id=f"a{i}", role="assistant", ts=i, model="gpt-4o-mini", usage=Usage(100, 20),
                content=f"## Answer {i}\n\nSome *text* with `code`:\n\n- one\n- two\n\n```\nx = {i}\n```"))
    state = new_node_state("Big")
    state.conversation = conv
    return state


def test_open_2000_messages_is_lazy(qtbot: Any, make_env: Any) -> None:
    """Only the newest messages are built on open (the time to first paint is benchmarks/open_nodes.py's
    open.node row, budget 300 ms)."""
    env: NodeEnv = make_env(big_state(2000))
    qtbot.waitExposed(env.node)
    transcript = env.node.transcript
    assert len(transcript.views()) == EAGER_MESSAGES
    assert transcript.unloaded_count() == 2000 - EAGER_MESSAGES
    assert transcript.views()[-1].toPlainText().startswith("Answer 1999")
    assert env.node.cost().usd > 0
    # Scrolling to the top builds the previous batch and keeps the view where it was.
    bar = transcript.verticalScrollBar()
    qtbot.waitUntil(lambda: bar.maximum() > 0)
    bar.setValue(0)
    qtbot.waitUntil(lambda: transcript.unloaded_count() < 2000 - EAGER_MESSAGES)
    qtbot.waitUntil(lambda: bar.value() > 0)  # kept in place, not jumped to the new top


def test_deltas_render_once_per_frame(qtbot: Any, make_env: Any) -> None:
    env: NodeEnv = make_env()
    node = env.node
    renders: list[int] = []
    node.transcript.rendered.connect(lambda: renders.append(1))
    parts = [f"word{i} " for i in range(400)]
    for p in parts:
        env.bridge.broadcast(node.node_id, Delta(p, message_id="live-1"))
    env.bridge.broadcast("someone-else", Delta("not mine", message_id="x"))
    assert renders == []  # nothing rendered synchronously per delta...
    # ...while the conversation took every delta at once, and only this node's.
    assert [(m.id, m.content) for m in node.conversation.messages] == [("live-1", "".join(parts))]
    qtbot.waitUntil(lambda: bool(renders))
    view = node.transcript.view_for("live-1")
    assert isinstance(view, AssistantMessageView)
    assert view.toPlainText().rstrip() == "".join(parts).rstrip()
    assert len(renders) <= 2
    env.bridge.broadcast(node.node_id, Done("end_turn", message_id="live-1"))
    assert view.toPlainText().strip() == "".join(parts).strip()
    assert node.conversation.messages[-1].content == "".join(parts)


def test_node_subscribes_to_its_own_events_and_unsubscribes_on_shutdown(qtbot: Any, make_env: Any) -> None:
    env: NodeEnv = make_env()
    node = env.node
    assert env.bridge.subscriber_count(node.node_id) == 1
    node.shutdown()
    assert env.bridge.subscriber_count(node.node_id) == 0
    env.bridge.broadcast(node.node_id, Delta("after shutdown", message_id="late"))
    assert node.conversation.messages == []


def test_hidden_node_builds_no_message_widgets_until_shown(qtbot: Any, make_env: Any) -> None:
    from desktop.ui.node.chat_node import ChatNodeWidget

    env: NodeEnv = make_env()
    hidden = ChatNodeWidget(big_state(200), env.services)
    qtbot.addWidget(hidden)
    try:
        assert hidden.findChildren(MessageView) == []  # nothing built while never shown
        hidden.resize(640, 760)
        hidden.show()
        qtbot.waitExposed(hidden)
        built = hidden.findChildren(MessageView)
        assert len(built) >= EAGER_MESSAGES
        assert all(v.isVisible() for v in built)
        assert hidden.transcript.views()[-1].toPlainText().startswith("Answer 199")
    finally:
        hidden.shutdown()


def test_short_messages_that_do_not_fill_the_view_load_older_ones(qtbot: Any, make_env: Any) -> None:
    state = notes_state("Notes", 300)
    env: NodeEnv = make_env(state)
    transcript = env.node.transcript
    bar = transcript.verticalScrollBar()
    # EAGER_MESSAGES one-line notes are shorter than the view: older ones are built until it scrolls.
    qtbot.waitUntil(lambda: bar.maximum() > 0)
    assert len(transcript.views()) > EAGER_MESSAGES
    assert transcript.unloaded_count() == 300 - len(transcript.views())
    assert transcript.views()[-1].toPlainText() == "note 299"


def test_the_text_keeps_its_width_when_an_answer_first_overflows(qtbot: Any, make_env: Any) -> None:
    """The scroll bar's gutter is always there (its handle only when there is something to scroll):
    a growing answer that overflows the view is not wrapped again at a narrower width."""
    env: NodeEnv = make_env()
    node = env.node
    bar = node.transcript.verticalScrollBar()
    env.bridge.broadcast(node.node_id, Delta("A first line. ", message_id="live-1"))
    view = None

    def shown() -> bool:
        nonlocal view
        view = node.transcript.view_for("live-1")
        return view is not None and view.isVisible()

    qtbot.waitUntil(shown)
    assert bar.maximum() == 0 and bar.property("idle") is True
    width = view.width()
    widths = {width}
    for i in range(60):
        # Each delta is rendered before the next one comes (a render per delta: the width is checked
        # after every growth step, overflowing included).
        with qtbot.waitSignal(node.transcript.rendered, timeout=10_000):
            env.bridge.broadcast(node.node_id, Delta(f"Line {i} of a long answer.\n\n", message_id="live-1"))
        widths.add(view.width())
    env.bridge.broadcast(node.node_id, Done("end_turn", message_id="live-1"))
    qtbot.waitUntil(lambda: bar.maximum() > 0 and not node.transcript.is_rendering())
    widths.add(view.width())
    assert bar.property("idle") is False
    assert widths == {width}
