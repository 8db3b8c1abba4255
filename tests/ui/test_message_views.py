"""Message views talk to the transcript through signals only; the transcript keeps the decisions."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QPushButton, QWidget

from desktop.core.chat.conversation import create_conversation
from desktop.core.chat.types import ChatMessage, Done, ToolCall
from desktop.ui.markdown.theme import MarkdownTheme
from desktop.ui.transcript.answer import AssistantMessageView
from desktop.ui.transcript.tool_card import ToolCard
from desktop.ui.transcript.transcript import Transcript


def assistant(calls: list[ToolCall], mid: str = "a1", content: str = "Let me write that.") -> ChatMessage:
    return ChatMessage(id=mid, role="assistant", content=content, ts=1, model="m-1", tool_calls=calls)


def awaiting(call_id: str) -> ToolCall:
    args = '{"path": "notes/a.md", "content": "x"}'
    return ToolCall(call_id, "write_file", args, status="awaiting_approval")


def test_assistant_view_announces_its_cards_and_forwards_decisions_on_its_own(qtbot: Any) -> None:
    view = AssistantMessageView(
        assistant([awaiting("c1"), ToolCall("c2", "read_file", '{"path": "a"}', status="done")]),
        theme=MarkdownTheme(),
        meta_text=lambda m, live: f"meta of {m.id}",
    )
    qtbot.addWidget(view)
    created: list[tuple[str, Any]] = []
    decided: list[tuple[str, str]] = []
    view.card_created.connect(lambda cid, card: created.append((cid, card)))
    view.card_decided.connect(lambda cid, d: decided.append((cid, d)))
    assert view.cards == {} and view.toPlainText() == ""  # nothing shown before the first sync

    msg = assistant([awaiting("c1"), ToolCall("c2", "read_file", '{"path": "a"}', status="done")])
    view.sync(msg, live=False)
    assert [cid for cid, _ in created] == ["c1", "c2"]
    assert all(isinstance(card, ToolCard) and view.cards[cid] is card for cid, card in created)
    assert view.meta_label.text() == "meta of a1"
    assert "Let me write that." in view.toPlainText()

    view.sync(msg, live=False)  # an update is not a new card
    assert len(created) == 2
    view.show()
    approve = view.cards["c1"].findChild(QPushButton, "approveButton")
    qtbot.mouseClick(approve, Qt.MouseButton.LeftButton)
    assert decided == [("c1", "approve")]


def shown_transcript(qtbot: Any) -> Transcript:
    transcript = Transcript()
    qtbot.addWidget(transcript)
    transcript.resize(600, 500)
    transcript.show()
    qtbot.waitExposed(transcript)
    return transcript


def test_transcript_turns_a_card_decision_into_its_decision_signal(qtbot: Any) -> None:
    transcript = shown_transcript(qtbot)
    conv = create_conversation()
    transcript.set_conversation(conv)
    conv.messages.append(assistant([awaiting("c1")]))
    transcript.flush()
    card = transcript.card_for("c1")
    assert card is not None and card.permission is not None
    assert transcript.pending_permission_cards() == [card]
    with qtbot.waitSignal(transcript.decision, timeout=10_000) as got:
        qtbot.mouseClick(card.findChild(QPushButton, "denyButton"), Qt.MouseButton.LeftButton)
    assert got.args == ["c1", "deny"]
    transcript.mark_decided("c1", "deny")
    assert card.permission is None and card.status_label.text() == "denied"
    assert transcript.pending_permission_cards() == []


def test_a_decision_made_before_the_card_is_built_is_applied_to_it(qtbot: Any) -> None:
    transcript = Transcript()  # hidden: set_conversation builds no widgets yet
    qtbot.addWidget(transcript)
    conv = create_conversation()
    conv.messages.append(ChatMessage(id="u1", role="user", content="write it", ts=0))
    conv.messages.append(assistant([awaiting("c1"), awaiting("c2")]))
    transcript.set_conversation(conv)
    assert transcript.findChildren(ToolCard) == []
    transcript.mark_decided("c1", "approve")
    transcript.views()  # builds the pending widgets: the cards are announced and decided
    c1, c2 = transcript.card_for("c1"), transcript.card_for("c2")
    assert c1 is not None and c2 is not None
    assert c1.permission is None and c1.status_label.text() == "running…"
    # A persisted call awaiting approval belongs to no running loop: it shows as interrupted.
    assert c2.permission is None and c2.status_label.text() == "not run (interrupted)"


def test_meta_formatter_set_on_the_transcript_reaches_built_and_later_views(qtbot: Any) -> None:
    transcript = shown_transcript(qtbot)
    conv = create_conversation()
    conv.messages.append(assistant([], mid="a1", content="first"))
    transcript.set_conversation(conv)
    transcript.flush()
    view = transcript.view_for("a1")
    assert isinstance(view, AssistantMessageView)
    assert view.meta_label.text() == "m-1"  # the default formatter: model and usage

    transcript.meta_text = lambda m, live: f"custom {m.model}"
    conv.messages[-1].model = "m-2"  # a new meta key: the line is formatted again
    transcript.note_event(Done("end_turn", message_id="a1"))
    assert view.meta_label.text() == "custom m-2"

    conv.messages.append(assistant([], mid="a2", content="second"))
    transcript.flush()
    later = transcript.view_for("a2")
    assert isinstance(later, AssistantMessageView) and later.meta_label.text() == "custom m-1"


def test_views_hold_no_reference_to_the_transcript(qtbot: Any) -> None:
    transcript = shown_transcript(qtbot)
    conv = create_conversation()
    conv.messages.append(assistant([awaiting("c1")]))
    transcript.set_conversation(conv)
    view = transcript.view_for("a1")
    assert isinstance(view, AssistantMessageView)
    assert not any(value is transcript for value in vars(view).values())
    assert isinstance(view.parent(), QWidget) and view.parent() is not transcript
