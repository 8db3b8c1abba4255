"""TextFlowView (streamed plain text), body segments and the shared frame scheduler."""
# ruff: noqa: F811 - pytest fixtures imported from test_chat_node_support are parameters here

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QEvent, QObject, QPointF
from PySide6.QtGui import QTextLayout, QTextOption
from PySide6.QtWidgets import QApplication
from test_chat_node_support import NodeEnv, make_env  # noqa: F401

from desktop.core.chat.types import Delta, Done
from desktop.ui.frames import FrameScheduler
from desktop.ui.markdown.render import render_markdown, render_markdown_blocks
from desktop.ui.markdown.segments import PLAIN_SEGMENT_CHARS
from desktop.ui.markdown.text_chunks import FREEZE_LINES
from desktop.ui.markdown.textflow import TextFlowView
from desktop.ui.markdown.view import MarkdownView
from desktop.ui.transcript.answer import AssistantMessageView

WIDTH = 400


def whole_layout_lines(text: str, view: TextFlowView) -> list[tuple[int, int]]:
    """(start, length) in UTF-16 units of each line of one QTextLayout of the whole text."""
    layout = QTextLayout(text.replace("\n", "\u2028"), view.layout_font())
    option = QTextOption()
    option.setWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
    layout.setTextOption(option)
    layout.beginLayout()
    out = []
    y = 0.0
    while True:
        line = layout.createLine()
        if not line.isValid():
            break
        line.setLineWidth(WIDTH - 2.0)
        line.setPosition(QPointF(0, y))
        y += line.height()
        out.append((line.textStart(), line.textLength()))
    layout.endLayout()
    return out


def view_lines(view: TextFlowView) -> list[tuple[int, int]]:
    out = []
    for chunk in view._chunks:
        base = len(view.toPlainText()[: chunk.start].encode("utf-16-le")) // 2
        for i in range(chunk.lines):
            line = chunk.layout.lineAt(i)
            out.append((base + line.textStart(), line.textLength()))
    return out


def make_view(qtbot: Any) -> TextFlowView:
    view = TextFlowView()
    qtbot.addWidget(view)
    view.resize(WIDTH, 50)
    view.show()
    return view


def test_appended_text_wraps_exactly_like_one_layout_of_the_whole_text(qtbot: Any) -> None:
    view = make_view(qtbot)
    words = ["tok", "hello", "wörld", "😀emoji", "x" * 70, "line\nbreak", "\n\n", "a"]
    text = ""
    for i in range(300):
        piece = " ".join(words[(i * 7 + k) % len(words)] for k in range(9)) + " "
        text += piece
        view.append(piece)
    assert view.toPlainText() == text == view.text()
    assert view_lines(view) == whole_layout_lines(text, view)
    assert view.line_count() == len(whole_layout_lines(text, view))
    assert view.height() > 100 * view.fontMetrics().height()


def test_append_lays_out_only_the_tail(qtbot: Any) -> None:
    view = make_view(qtbot)
    view.set_text("tok " * 20_000)
    frozen = list(view._chunks[:-1])
    assert len(frozen) > 10
    view.append("more " * 10)
    assert all(a is b for a, b in zip(frozen, view._chunks, strict=False))  # untouched, not re-laid out
    assert len(view._chunks[-1:][0].layout.text()) < 200 * FREEZE_LINES
    # Truncating the end (the final render strips a trailing space) keeps the frozen chunks too.
    view.set_text(view.toPlainText().rstrip())
    assert all(a is b for a, b in zip(frozen, view._chunks, strict=False))
    assert view.toPlainText().endswith("more")


def test_append_work_does_not_grow_with_the_paragraph(qtbot: Any) -> None:
    """Each append lays out only the open tail: the frozen chunks stay the same objects and the tail
    stays short however long the paragraph grows (the time per append is benchmarks/hot_paths.py's
    textflow.append row; QTextDocument was ~8x slower at 100 KB than at the start)."""
    view = make_view(qtbot)
    piece = "tok " * 700
    tails = []
    for _ in range(45):
        frozen = list(view._chunks[:-1])
        view.append(piece)
        assert all(a is b for a, b in zip(frozen, view._chunks, strict=False))  # not laid out again
        tails.append(len(view._chunks[-1].layout.text()))
    assert len(view.text()) == 45 * len(piece) and len(view._chunks) > 10
    assert max(tails) < 200 * FREEZE_LINES  # a few lines, never the paragraph


def test_selection_resize_and_replacement(qtbot: Any) -> None:
    view = make_view(qtbot)
    view.set_text("alpha beta 😀 gamma\ndelta")
    assert view.selected_text() == ""
    view.select_all()
    assert view.selected_text() == "alpha beta 😀 gamma\ndelta"
    index = view._index_at(QPointF(view.width() - 2, view.height() - 2))
    assert index == len(view.text())
    view.set_text("new text")  # not an extension: laid out again from the start
    assert view.toPlainText() == "new text"
    assert view.selected_text() in ("", "new text")
    lines_wide = view.line_count()
    view.set_text("word " * 200)
    lines_wide = view.line_count()
    view.resize(WIDTH // 2, 50)
    qtbot.waitUntil(lambda: view.line_count() > lines_wide)
    view.set_text("")
    assert view.line_count() == 0 and view.toPlainText() == ""


def test_markdown_blocks_join_to_the_whole_render_and_mark_plain_paragraphs() -> None:
    text = ("Intro with **bold**\n\n" + "plain words " * 300
            + "\n\n- a\n- b\n\nsee https://x.org\n\nlast & <b>")
    blocks = render_markdown_blocks(text)
    assert "".join(b.html for b in blocks) == render_markdown(text)
    plain = [b.plain for b in blocks]
    assert plain[0] is None and plain[2] is None and plain[3] is None  # bold, list, link
    assert plain[1] == ("plain words " * 300).strip()
    assert plain[4] == "last & <b>"


def test_long_plain_answer_is_rendered_by_a_text_flow_and_markdown_stays(qtbot: Any, make_env: Any) -> None:
    env: NodeEnv = make_env()
    node = env.node
    para = "word " * (PLAIN_SEGMENT_CHARS // 4)
    parts = ["# Title\n\n", "Some **bold** text.\n\n", para[: len(para) // 2], para[len(para) // 2 :]]
    for p in parts:
        env.bridge.broadcast(node.node_id, Delta(p, message_id="m1"))
    view = node.transcript.view_for("m1")
    qtbot.waitUntil(lambda: node.transcript.view_for("m1") is not None)
    view = node.transcript.view_for("m1")
    assert isinstance(view, AssistantMessageView)
    qtbot.waitUntil(lambda: "".join(parts).rstrip() in view.toPlainText() or "word" in view.toPlainText())
    env.bridge.broadcast(node.node_id, Done("end_turn", message_id="m1"))
    qtbot.waitUntil(lambda: not node.transcript.is_rendering())
    kinds = [type(seg).__name__ for seg in view.body.segments]
    assert kinds == ["MarkdownView", "TextFlowView"]
    md = view.body.segments[0]
    assert isinstance(md, MarkdownView)
    assert "Title" in md.toPlainText() and "**" not in md.toPlainText()
    assert view.body.segments[1].toPlainText() == para.strip()
    assert view.toPlainText().split("\n")[0] == "Title"


def test_live_text_is_shown_whole(qtbot: Any, make_env: Any) -> None:
    env: NodeEnv = make_env()
    node = env.node
    text = "first line\nsecond line without end " + "tok " * 500
    for i in range(0, len(text), 97):
        env.bridge.broadcast(node.node_id, Delta(text[i : i + 97], message_id="live"))
    node.transcript.flush()
    view = node.transcript.view_for("live")
    assert isinstance(view, AssistantMessageView)
    shown = view.toPlainText()
    assert shown.endswith(text[text.rindex("\n") + 1 :])  # the line in progress, exactly
    assert shown.count("tok") == 500


def test_frame_scheduler_coalesces_and_defers_over_budget(qtbot: Any, monkeypatch: Any) -> None:
    # Each callback costs exactly 3 ms of the scheduler's clock, so the budget split does not depend on
    # how busy the machine is (a real sleep of 3 ms can take 5 ms on a loaded CI runner).
    clock = [1000.0]
    monkeypatch.setattr("desktop.ui.frames.time.perf_counter", lambda: clock[0])
    sched = FrameScheduler(interval_ms=1, budget_ms=4.0, resume_ms=1)
    ran: list[str] = []

    def slow(name: str) -> Any:
        def run() -> None:
            ran.append(name)
            clock[0] += 0.003

        return run

    for name in "abc":
        sched.request(name, slow(name))
    sched.request("a", slow("a"))  # coalesced: still one pending request for "a"
    assert sched.pending_count() == 3
    sched.tick()
    assert ran == ["a", "b"] and sched.is_pending("c")  # 6 ms spent: "c" waits for the next tick
    sched.cancel("c")
    assert sched.pending_count() == 0
    again: list[int] = []

    def asks_again() -> None:
        again.append(1)
        sched.request("x", asks_again)  # served at the next tick, not in this one

    sched.request("x", asks_again)
    sched.tick()
    assert again == [1] and sched.is_pending("x")
    monkeypatch.undo()  # the follow-up tick runs on real time
    qtbot.waitUntil(lambda: len(again) >= 2)
    sched.cancel("x")


def test_a_tick_starts_from_a_clean_cpu_vector_state(qtbot: Any, monkeypatch: Any) -> None:
    """A paint leaves the CPU's vector registers dirty on some CPUs (``desktop.core.cpu_state``): each
    render tick clears them before its callbacks run."""
    events: list[str] = []
    monkeypatch.setattr("desktop.ui.frames.clear_upper_state", lambda: events.append("clear"))
    sched = FrameScheduler(interval_ms=16, budget_ms=4.0, resume_ms=16)
    sched.request("x", lambda: events.append("render"))
    sched.tick()
    assert events == ["clear", "render"]


def test_catching_up_ticks_come_soon_even_after_a_tick_over_budget(qtbot: Any, monkeypatch: Any) -> None:
    from desktop.ui.frames import CATCH_UP_MS

    clock = [1000.0]
    monkeypatch.setattr("desktop.ui.frames.time.perf_counter", lambda: clock[0])
    sched = FrameScheduler(interval_ms=16, budget_ms=4.0, resume_ms=16)
    sched.paced_ms = 66.0  # a busy scheduler spaces its ticks out

    def slow() -> None:
        clock[0] += 0.005

    sched.request("a", slow, soon=True)
    sched.request("b", slow, soon=True)
    assert sched._timer.remainingTime() <= CATCH_UP_MS
    sched.tick()  # "a" spends the budget: "b" waits, but only CATCH_UP_MS
    assert sched.is_pending("b") and sched._timer.remainingTime() <= CATCH_UP_MS
    sched.cancel("b")
    sched._timer.stop()
    sched.request("c", slow)  # an ordinary request keeps the paced delay
    assert sched._timer.remainingTime() > CATCH_UP_MS
    sched.cancel("c")
    sched._timer.stop()


def test_background_work_waits_for_the_rest_and_uses_what_is_left(qtbot: Any, monkeypatch: Any) -> None:
    from desktop.ui.frames import BACKGROUND_MS

    clock = [1000.0]
    monkeypatch.setattr("desktop.ui.frames.time.perf_counter", lambda: clock[0])
    sched = FrameScheduler(interval_ms=16, budget_ms=4.0, resume_ms=16)
    ran: list[str] = []

    def costs(name: str, seconds: float) -> Any:
        def run() -> None:
            ran.append(name)
            clock[0] += seconds

        return run

    sched.request("colour", costs("colour", 0.001), background=True)
    assert sched.is_pending("colour") and sched.pending_count() == 1
    assert 0 < sched._timer.remainingTime() <= BACKGROUND_MS
    sched.request("a", costs("a", 0.004))
    sched.request("b", costs("b", 0.004))
    sched.tick()  # "a" spends the budget: "b" waits, and so does the background work
    assert ran == ["a"]
    sched.tick()
    assert ran == ["a", "b"]  # nothing else pending after "b": the background work would go next,
    sched.tick()  # but "b" spent the budget; this tick has it all
    assert ran == ["a", "b", "colour"] and sched.pending_count() == 0
    sched.request("colour", costs("colour", 0.001), background=True)
    sched.request("c", costs("c", 0.001))
    sched.tick()  # 1 ms of 4 for "c": the background work gets the rest of the same tick
    assert ran[-2:] == ["c", "colour"]
    sched.request("colour", costs("colour", 0.001), background=True)
    sched.cancel("colour")
    assert not sched.is_pending("colour") and sched.pending_count() == 0
    sched._timer.stop()



class _PaintCounter(QObject):
    def __init__(self) -> None:
        super().__init__()
        self.paints = 0

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        if event.type() == QEvent.Type.Paint:
            self.paints += 1
        return False


def test_setting_the_same_colour_again_paints_nothing(qtbot: Any) -> None:
    """Every streamed frame sets the text colour; only a new colour repaints the view."""
    view = make_view(qtbot)
    view.set_text("Some text " * 40)
    view.set_color("#202020")
    view.repaint()  # paint now: nothing of the above is still pending
    QApplication.processEvents()
    counter = _PaintCounter()
    view.installEventFilter(counter)
    view.set_color("#202020")
    QApplication.processEvents()  # delivers any paint the call asked for
    assert counter.paints == 0
    view.set_color("#a02020")
    QApplication.processEvents()  # the same flush shows the paint a new colour asks for
    assert counter.paints == 1
