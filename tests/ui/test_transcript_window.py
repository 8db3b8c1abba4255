"""Only the messages near the viewport are built (``desktop.ui.transcript.message_window``): far ones hold no
laid-out document, come back as they come near, and the content under the eye never jumps."""
# ruff: noqa: F811 - pytest fixtures imported from test_chat_node_support are parameters here

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import QEvent, QObject, QPoint
from PySide6.QtWidgets import QApplication, QWidget
from test_chat_node_support import NodeEnv, make_env  # noqa: F401

from benchmarks.interactive import placeholder_in_view
from desktop.core.chat.conversation import create_conversation
from desktop.core.chat.types import ChatMessage, Usage
from desktop.core.store import new_node_state
from desktop.ui.markdown.view import MarkdownView
from desktop.ui.transcript import message_window
from desktop.ui.transcript.answer import AssistantMessageView
from desktop.ui.transcript.message_window import RELEASE_SCREENS
from desktop.ui.transcript.slots import CostModel
from desktop.ui.transcript.transcript import Transcript
from desktop.ui.transcript.views import MessageView, UserMessageView

ANSWER = (
    "## Answer {i}\n\nSome *text* with `code` and a list:\n\n- one\n- two\n- three\n\n"
    "```python\n" + "\n".join(f"value_{{i}}_{n} = {n} * {{i}}" for n in range(12)) + "\n```\n\n"
    "| a | b |\n|---|---|\n| {i} | {i} |\n\nThe end of answer {i}."
)


def markdown_state(pairs: int) -> Any:
    conv = create_conversation()
    for i in range(pairs):
        conv.messages.append(ChatMessage(id=f"u{i}", role="user", content=f"question {i}", ts=2 * i))
        conv.messages.append(ChatMessage(id=f"a{i}", role="assistant", ts=2 * i + 1, model="gpt-4o-mini",
                                         usage=Usage(100, 20), content=ANSWER.format(i=i)))
    state = new_node_state("Long")
    state.conversation = conv
    return state


def step(transcript: Transcript, delta: int) -> None:
    bar = transcript.verticalScrollBar()
    bar.setValue(bar.value() + delta)
    QApplication.processEvents()


def top_message(transcript: Transcript) -> tuple[QWidget, int]:
    """The slot widget at the top of the viewport and its offset from the viewport's top."""
    content = transcript.widget()
    value = transcript.verticalScrollBar().value()
    for slot in transcript._window.slots:
        widget = slot.widget()
        y = widget.mapTo(content, QPoint(0, 0)).y()
        if y + widget.height() > value:
            return widget, y - value
    raise AssertionError("no message at the top of the viewport")


def laid_out(transcript: Transcript) -> list[AssistantMessageView]:
    """Assistant views holding a laid-out body (a MarkdownView segment with text: a released view
    keeps its segment widgets, emptied)."""
    return [v for v in transcript.widget().findChildren(AssistantMessageView)
            if any(isinstance(s, MarkdownView) and not s.document().isEmpty() for s in v.body.segments)]


def test_far_messages_hold_no_document_and_come_back_as_they_come_near(qtbot: Any, make_env: Any) -> None:
    env: NodeEnv = make_env(markdown_state(60))
    transcript = env.node.transcript
    bar = transcript.verticalScrollBar()
    qtbot.waitUntil(lambda: bar.maximum() > 0)
    window = transcript._window
    page = bar.pageStep()
    steps = 0
    while bar.value() > 0 or transcript.unloaded_count():
        step(transcript, -page)
        steps += 1
        assert steps < 2000, "scrolling up is stuck"
    assert transcript.unloaded_count() == 0
    assert window.released > 0
    # Far from the viewport nothing is laid out: the views with a body document are those near it.
    height = transcript.viewport().height()
    far = (2 * RELEASE_SCREENS + 1) * height
    assert [v for v in laid_out(transcript) if v.mapTo(transcript.widget(), QPoint(0, 0)).y() > far] == []
    assert len(laid_out(transcript)) < 60
    released = [s for s in window.slots if s.holder is not None]
    assert released and all(not s.view.isVisible() for s in released)
    emptied = [all(not seg.toPlainText() for seg in s.view.body.segments)
               for s in released if not isinstance(s.view, UserMessageView)]
    assert emptied and all(emptied)
    # Back down: every message that reaches the viewport shows its text again.
    seen: set[str] = set()
    for n in range(2000):
        if n:
            step(transcript, page)
        for view in transcript.views():
            if not view.visibleRegion().isEmpty():
                assert view.toPlainText().strip(), view.message_id
                seen.add(view.message_id)
    assert {f"a{i}" for i in range(60)} <= seen
    assert window.rebuilt > 0
    shown = transcript.view_for("a0")  # a released message asked for is shown again
    assert isinstance(shown, AssistantMessageView) and "Answer 0" in shown.toPlainText()
    # Another conversation: the released views go too, not only the shown ones (at the top: the
    # newest, laid out in the transcript's own layout rather than in a page, are released).
    for _ in range(200):
        step(transcript, -page)
    assert window.slots[-1].holder is not None
    transcript.set_conversation(create_conversation())
    content = transcript.widget()
    qtbot.waitUntil(lambda: not content.findChildren(MessageView) and not content.findChildren(
        QWidget, "messagePlaceholder"))


def test_content_under_the_eye_stays_put_while_views_come_and_go(qtbot: Any, make_env: Any) -> None:
    env: NodeEnv = make_env(markdown_state(40))
    transcript = env.node.transcript
    bar = transcript.verticalScrollBar()
    qtbot.waitUntil(lambda: bar.maximum() > 0)
    page = bar.pageStep()
    window = transcript._window
    moved = 0
    for direction in (-1, 1):
        for _ in range(400):
            if (direction < 0 and bar.value() == 0 and not transcript.unloaded_count()) or (
                    direction > 0 and bar.value() >= bar.maximum()):
                break
            bar.setValue(bar.value() + direction * page // 2)
            before = window.released + window.rebuilt + len(window.slots)
            widget, offset = top_message(transcript)
            QApplication.processEvents()  # the pass: older built above, far views released or rebuilt
            if window.released + window.rebuilt + len(window.slots) != before:
                moved += 1
            if widget.isVisible():
                assert widget.mapTo(transcript.widget(), QPoint(0, 0)).y() - bar.value() == offset
    assert moved > 10  # the check ran while things above and below changed


def test_a_message_being_edited_is_never_released(qtbot: Any, make_env: Any) -> None:
    env: NodeEnv = make_env(markdown_state(30))
    transcript = env.node.transcript
    bar = transcript.verticalScrollBar()
    qtbot.waitUntil(lambda: bar.maximum() > 0)
    editing = transcript.views()[0]
    assert isinstance(editing, UserMessageView) and editing.action_row is not None
    editing.action_row.open_editor(editing.toPlainText())
    bar.setValue(bar.maximum() - 1)  # away from the bottom: the window works
    for _ in range(60):
        step(transcript, -bar.pageStep())
    assert transcript._window.released > 0
    assert editing in transcript.views() and editing.action_row.editor is not None
    assert editing.action_row.editor.isVisible()


def test_the_cost_model_learns_from_what_builds_cost() -> None:
    costs = CostModel()
    first = costs.estimate("build", 2000)
    for _ in range(20):
        costs.record("build", 2000, 0.030)  # a slow machine
    assert costs.estimate("build", 2000) > 3 * first
    assert costs.estimate("render", 100) < costs.estimate("render", 5000)
    slice_before = costs.step("slice")
    for _ in range(20):
        costs.record_step("slice", 0.012)
    assert costs.step("slice") > 3 * slice_before and costs.step("place") < costs.step("slice")


class _PaintedPlaceholders(QObject):
    """Counts the paints of a transcript's content that showed a message placeholder in the viewport."""

    def __init__(self, transcript: Transcript) -> None:
        super().__init__(transcript)
        self.transcript = transcript
        self.paints = 0
        self.blank = 0
        transcript.widget().installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt API
        if event.type() == QEvent.Type.Paint:
            self.paints += 1
            self.blank += placeholder_in_view(self.transcript, self.transcript.widget())
        return False


def test_a_scroll_step_is_painted_with_its_messages_built_never_with_an_empty_placeholder(
    qtbot: Any, make_env: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A machine too slow to build anything ahead: each step's messages are built for that step.
    monkeypatch.setattr(message_window, "WINDOW_BUDGET", 0.0)
    env: NodeEnv = make_env(markdown_state(60))
    transcript = env.node.transcript
    bar = transcript.verticalScrollBar()
    qtbot.waitUntil(lambda: bar.maximum() > 0)
    page = bar.pageStep()
    for _ in range(2000):  # to the top: everything built, the newest released on the way
        if bar.value() == 0 and not transcript.unloaded_count():
            break
        step(transcript, -page)
    assert transcript._window.released > 0
    spy = _PaintedPlaceholders(transcript)
    while bar.value() < bar.maximum():  # down again: released messages come back into view
        step(transcript, page)
    assert transcript._window.rebuilt > 0 and spy.paints > 10
    assert spy.blank == 0  # the step's own paint already shows them (show_visible, before Qt paints)


def _big_answer(i: int) -> str:
    parts = [f"## Part {n} of answer {i}\n\n```python\nx_{n} = {n}\n```\n\n"
             f"| a | b |\n|---|---|\n| {n} | {i} |" for n in range(25)]
    return "\n\n".join(parts) + f"\n\nThe end of answer {i}."


def _big_answers_node(qtbot: Any, make_env: Any, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, Transcript]:
    """A shown node of 30 questions and 30 long answers, on a machine too slow to build ahead (no
    budget: every pass fills one segment of the view being made, then hands back the loop)."""
    monkeypatch.setattr(message_window, "WINDOW_BUDGET", 0.0)
    state = markdown_state(30)
    for msg in state.conversation.messages:
        if msg.role == "assistant":
            msg.content = _big_answer(int(msg.id[1:]))
    env: NodeEnv = make_env(state)
    transcript = env.node.transcript
    qtbot.waitUntil(lambda: transcript.verticalScrollBar().maximum() > 0)
    return state, transcript


def test_an_older_answer_is_made_in_slices_and_placed_only_once_complete(
    qtbot: Any, make_env: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    state, transcript = _big_answers_node(qtbot, make_env, monkeypatch)
    window = transcript._window
    bar = transcript.verticalScrollBar()
    placed: list[MessageView] = []
    sliced = 0
    place = window._hooks.place_older

    def checked_place(view: MessageView | None) -> None:
        if isinstance(view, AssistantMessageView):
            assert not view.body.pending and not view.isVisible()
            assert view.toPlainText().endswith(f"The end of answer {view.message_id[1:]}.")
            assert view.rendered_body() is not None
            placed.append(view)
        place(view)

    monkeypatch.setattr(window._hooks, "place_older", checked_place)
    for _ in range(3000):
        if bar.value() == 0 and not transcript.unloaded_count():
            break
        step(transcript, -bar.pageStep())
        making = window._making
        if making is not None and isinstance(making[1], AssistantMessageView) and making[1].body.pending:
            sliced += 1
            assert making[1] not in transcript.views()  # never in the layout half made
    assert transcript.unloaded_count() == 0 and len(placed) >= 10 and sliced >= 10
    ids = [slot.message_id for slot in window.slots]
    assert len(ids) == len(set(ids)) == len(state.conversation.messages)


def test_loading_earlier_messages_completes_the_answer_being_made(
    qtbot: Any, make_env: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    _state, transcript = _big_answers_node(qtbot, make_env, monkeypatch)
    window = transcript._window
    bar = transcript.verticalScrollBar()
    for _ in range(500):
        step(transcript, -bar.pageStep())
        if window._making is not None and isinstance(window._making[1], AssistantMessageView):
            break
    making = window._making
    assert making is not None and isinstance(making[1], AssistantMessageView)
    half_made = making[1]
    transcript.load_older(count=4)  # the "load earlier messages" link
    assert window._making is None
    assert half_made in transcript.views() and not half_made.body.pending
    ids = [slot.message_id for slot in window.slots]
    assert len(ids) == len(set(ids)) and ids.count(half_made.message_id) == 1


def test_a_pass_starts_a_step_of_an_older_answer_only_when_its_predicted_cost_fits(
    qtbot: Any, make_env: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Slices and placings predicted to cost a second each: none fits a pass's budget, so each pass
    # makes one step of an answer's view (the first step of a pass whatever it costs), never two.
    _state, transcript = _big_answers_node(qtbot, make_env, monkeypatch)
    monkeypatch.setattr(message_window, "WINDOW_BUDGET", 0.05)
    window = transcript._window
    monkeypatch.setattr(window.costs, "step", lambda kind: 1.0)
    bar = transcript.verticalScrollBar()
    steps: list[int] = [0]
    hooks = window._hooks
    make, place, run = hooks.make_older, hooks.place_older, window.run

    def counted_make(msg: ChatMessage, rendered: Any, deadline: float) -> MessageView | None:
        steps[-1] += msg.role == "assistant"
        return make(msg, rendered, deadline)

    def counted_place(view: MessageView | None) -> None:
        steps[-1] += isinstance(view, AssistantMessageView)
        place(view)

    def counted_run() -> None:
        steps.append(0)
        run()

    monkeypatch.setattr(hooks, "make_older", counted_make)
    monkeypatch.setattr(hooks, "place_older", counted_place)
    monkeypatch.setattr(window, "run", counted_run)
    window._timer.timeout.disconnect()
    window._timer.timeout.connect(counted_run)
    for _ in range(3000):
        if bar.value() == 0 and not transcript.unloaded_count():
            break
        step(transcript, -bar.pageStep())
    assert transcript.unloaded_count() == 0
    assert sum(steps) >= 20 and max(steps) == 1
