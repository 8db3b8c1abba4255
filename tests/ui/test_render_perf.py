"""Work per frame is bounded: older messages are built a budget per scroll step, big code blocks are
coloured a slice per frame (and laid out once), all measured on a fake clock."""
# ruff: noqa: F811 - pytest fixtures imported from test_chat_node_support are parameters here

from __future__ import annotations

from functools import partial
from typing import Any

import pytest
from PySide6.QtGui import QTextDocument
from PySide6.QtWidgets import QWidget
from test_chat_node_support import NodeEnv, make_env, notes_state  # noqa: F401

from desktop.core.chat.conversation import create_conversation
from desktop.core.chat.types import ChatMessage
from desktop.core.store import new_node_state
from desktop.ui.markdown.code import highlight_code, highlight_runs
from desktop.ui.markdown.colour import COLOUR_SLICE, CodeColourer
from desktop.ui.markdown.render import render_markdown_blocks
from desktop.ui.markdown.theme import MarkdownTheme
from desktop.ui.markdown.view import MarkdownView, document_tables
from desktop.ui.transcript.content import OLDER_BUDGET, build_older
from desktop.ui.transcript.transcript import BATCH_MESSAGES, EAGER_MESSAGES
from desktop.ui.transcript.views import MessageView


@pytest.fixture
def whole_code_blocks(monkeypatch: Any) -> None:
    """One table per code block however long (these tests colour one big table; long blocks are
    otherwise shown as pieces, see test_code_blocks)."""
    monkeypatch.setattr("desktop.ui.markdown.render.CODE_PIECE_LINES", 100_000)


CODE = "\n".join(
    f'def f{i}(x: int) -> str:  # line {i} 完成\n    """Doc."""\n    return "<%d>" % (x + {i})'
    for i in range(70)
)  # 210 lines


class FakeClock:
    """A clock that advances ``step`` seconds each time it is read."""

    def __init__(self, step: float) -> None:
        self.now = 1000.0
        self.step = step
        self.reads = 0

    def __call__(self) -> float:
        self.reads += 1
        self.now += self.step
        return self.now


def formatted_lines(doc: QTextDocument) -> dict[int, list[tuple[int, int, str]]]:
    """Block number -> the (start, length, colour) of its layout's additional formats."""
    out: dict[int, list[tuple[int, int, str]]] = {}
    block = doc.begin()
    while block.isValid():
        ranges = block.layout().formats()
        if ranges:
            out[block.blockNumber()] = [
                (r.start, r.length, r.format.foreground().color().name()) for r in ranges
            ]
        block = block.next()
    return out


def test_build_older_stops_when_the_budget_is_spent() -> None:
    built: list[int] = []
    clock = FakeClock(0.0)

    def make(m: int) -> int:
        clock.now += 0.002  # each message costs 2 ms of the fake clock
        return m

    # A 5 ms budget is spent by the third message (6 ms): three are built, the newest first.
    assert build_older(list(range(100)), 80, 40, make, built.append, budget=0.005, clock=clock) == 77
    assert built == [79, 78, 77]
    # At least one is built whatever the budget, and never more than ``count``.
    built.clear()
    assert build_older(list(range(100)), 77, 40, lambda m: m, built.append, budget=0.0, clock=clock) == 76
    assert built == [76]
    built.clear()
    assert build_older(list(range(100)), 5, 40, lambda m: m, built.append, budget=None) == 0
    assert built == [4, 3, 2, 1, 0]
    # A message without a widget of its own (None) is skipped, but counts as built.
    built.clear()
    assert build_older(list(range(10)), 10, 4, lambda m: None if m % 2 else m, built.append, budget=None) == 6
    assert built == [8, 6]


def test_reaching_the_top_builds_a_frame_budget_of_older_messages(qtbot: Any, make_env: Any,
                                                                  monkeypatch: Any) -> None:
    conv = create_conversation()
    for i in range(400):
        body = f"## Answer {i}\n\nSome *text*:\n\n```python\nx = {i}\nprint(x)\n```" if i % 2 else f"Q {i}"
        role: Any = "assistant" if i % 2 else "user"
        conv.messages.append(ChatMessage(id=f"m{i}", role=role, content=body, ts=i))
    state = new_node_state("Older")
    state.conversation = conv
    env: NodeEnv = make_env(state)
    transcript = env.node.transcript
    bar = transcript.verticalScrollBar()
    qtbot.waitUntil(lambda: bar.maximum() > 0)
    before = transcript.unloaded_count()
    assert before == 400 - EAGER_MESSAGES
    # Building one message costs 2.5 ms on this clock: the budget allows three, not a batch of 40.
    assert OLDER_BUDGET < 0.01
    clock = FakeClock(0.0025)
    monkeypatch.setattr("desktop.ui.transcript.content.time.perf_counter", clock)
    built = transcript.load_older()
    monkeypatch.undo()
    assert 1 <= built <= 3 < BATCH_MESSAGES
    assert transcript.unloaded_count() == before - built
    assert transcript.views()[0].message_id == f"m{before - built}"  # the ones just above, in order
    # Scrolling to the top builds more, a step at a time, and keeps the view where it was.
    qtbot.waitUntil(lambda: transcript._anchor_from_bottom is None)  # the last build is anchored
    bar.setValue(0)
    qtbot.waitUntil(lambda: transcript.unloaded_count() < before - built)
    qtbot.waitUntil(lambda: bar.value() > 0)
    # The explicit "all of them" still builds a whole batch.
    left = transcript.unloaded_count()
    assert transcript.load_older(budget=None) == min(BATCH_MESSAGES, left)
    ids = [v.message_id for v in transcript.views()]
    assert ids == [f"m{i}" for i in range(transcript.unloaded_count(), 400)]


def test_colours_match_highlight_code_and_the_text_stays_the_code(qapp: Any, whole_code_blocks: None) -> None:
    doc = QTextDocument()
    blocks = render_markdown_blocks(f"```python\n{CODE}\n```", MarkdownTheme(), spans=False)
    assert "<span" not in blocks[0].html and blocks[0].langs == ("python",)
    doc.setHtml(blocks[0].html)
    colourer = CodeColourer(doc)
    colourer.start(document_tables(doc), blocks[0].tables, blocks[0].langs, dark=False)
    assert colourer.step(None) is False and not colourer.busy
    assert colourer.lines_coloured == CODE.count("\n") + 1
    lines = formatted_lines(doc)
    assert len(lines) == CODE.count("\n") + 1
    # The same colours as the HTML highlighting, per keyword.
    spans = highlight_code(CODE, "python", dark=False)
    first = min(lines)
    keyword = next(c for s, n, c in lines[first] if n == 3)  # "def"
    assert f"color:{keyword}" in spans
    runs = highlight_runs(CODE, "python", dark=False)
    assert runs is not None and sum(r.length for r in runs) <= len(CODE)
    cell = document_tables(doc)[0].cellAt(0, 0)
    cursor = cell.firstCursorPosition()
    cursor.setPosition(cell.lastCursorPosition().position(), cursor.MoveMode.KeepAnchor)
    assert cursor.selectedText().replace("\u2029", "\n").endswith(CODE)
    # Without a language nothing is coloured (no guessing), and the HTML has no colours either.
    plain = render_markdown_blocks(f"```\n{CODE}\n```", MarkdownTheme(), spans=False)[0]
    assert plain.langs == ("",)
    doc.setHtml(plain.html)
    colourer.start(document_tables(doc), plain.tables, plain.langs, dark=False)
    assert not colourer.busy and not formatted_lines(doc)


def test_a_big_code_block_is_coloured_a_slice_per_step_and_laid_out_once(
    qapp: Any, monkeypatch: Any, whole_code_blocks: None
) -> None:
    doc = QTextDocument()
    block = render_markdown_blocks(f"```python\n{CODE}\n```", MarkdownTheme(), spans=False)[0]
    doc.setHtml(block.html)
    doc.setTextWidth(600)
    doc.size()  # laid out once, plain
    relayouts: list[tuple[int, int]] = []
    monkeypatch.setattr(doc, "markContentsDirty", lambda pos, n: relayouts.append((pos, n)), raising=False)
    clock = FakeClock(0.0005)  # every read of the clock costs half a millisecond
    colourer = CodeColourer(doc, clock=clock)
    colourer.start(document_tables(doc), block.tables, block.langs, dark=False)
    per_step: list[int] = []
    while colourer.busy:
        before = colourer.lines_coloured
        reads = clock.reads
        colourer.step(COLOUR_SLICE)
        per_step.append(colourer.lines_coloured - before)
        assert (clock.reads - reads - 1) * clock.step <= COLOUR_SLICE + clock.step  # the budget holds
        assert len(per_step) < 1000
    total = CODE.count("\n") + 1
    assert sum(per_step) == total and len(per_step) > 10 and max(per_step) <= 5
    assert relayouts and len(relayouts) == 1  # the table is laid out again once, not once per slice
    assert len(formatted_lines(doc)) == total


def test_a_view_colours_a_big_block_over_frames(qtbot: Any, whole_code_blocks: None) -> None:
    view = MarkdownView()
    qtbot.addWidget(view)
    view.resize(600, 200)
    block = render_markdown_blocks(f"```python\n{CODE * 4}\n```", MarkdownTheme(), spans=False)[0]
    view.set_html(block.html, MarkdownTheme(), block.tables, block.langs)
    total = (CODE * 4).count("\n") + 1
    assert view.colourer.busy and view.colourer.lines_coloured < total  # not all in set_html's call
    assert CODE[-40:] in view.toPlainText()  # shown at once, uncoloured
    qtbot.waitUntil(lambda: not view.colourer.busy, timeout=10_000)
    assert view.colourer.lines_coloured == total
    assert len(view.copy_buttons) == 1
    # Showing other content stops the old work at once (no formats on the new document's blocks).
    view.set_html("<p>done</p>", MarkdownTheme())
    assert not view.colourer.busy and not formatted_lines(view.document())


def test_one_frame_budget_is_shared_by_every_streamed_body(qapp: Any, monkeypatch: Any) -> None:
    import desktop.ui.frames as frames_mod
    import desktop.ui.markdown.stream as body_mod
    from desktop.ui.frames import FrameScheduler
    from desktop.ui.markdown.stream import StreamedBody

    clock = [1000.0]
    monkeypatch.setattr("desktop.ui.frames.time.perf_counter", lambda: clock[0])
    real_render = render_markdown_blocks

    def render(*args: Any, **kwargs: Any) -> Any:
        clock[0] += 0.001  # every block render costs 1 ms of the fake clock
        return real_render(*args, **kwargs)

    real_tokens = body_mod.render_tokens

    def render_tokens(*args: Any, **kwargs: Any) -> Any:
        clock[0] += 0.001  # a closed block is rendered from the tokens of its split: the same cost
        return real_tokens(*args, **kwargs)

    monkeypatch.setattr(body_mod, "render_markdown_blocks", render)
    monkeypatch.setattr(body_mod, "render_tokens", render_tokens)
    monkeypatch.setattr(body_mod, "RENDER_BUDGET", 0.010)  # each body alone would render 10 blocks
    sched = FrameScheduler(interval_ms=1, budget_ms=4.5, resume_ms=1)
    monkeypatch.setattr(frames_mod, "_scheduler", sched)
    text = "".join(f"Paragraph {i} with words.\n\n" for i in range(40))
    bodies = [StreamedBody(MarkdownTheme()) for _ in range(3)]
    rendered: list[list[int]] = [[] for _ in bodies]

    def flush(k: int) -> None:
        before = bodies[k].renders
        bodies[k].live(text)
        rendered[k].append(bodies[k].renders - before)

    for k in range(3):
        sched.request(k, partial(flush, k))
    assert frames_mod.tick_deadline() is None
    sched.tick()
    assert frames_mod.tick_deadline() is None  # only while a tick runs
    # The first body spends the tick's 4.5 ms (5 blocks, not its own 10 ms); the others wait.
    assert rendered == [[5], [], []]
    assert sched.is_pending(1) and sched.is_pending(2)
    # A body served with little of the budget left renders one block (progress), not ten.
    clock[0] += 1.0
    sched.cancel(0)
    sched._pending.clear()

    def late() -> None:
        clock[0] += 0.004  # something else took 4 of the 4.5 ms first
        flush(1)

    sched.request(1, late)
    sched.request(2, lambda: flush(2))
    sched.tick()
    assert rendered[1] == [1] and rendered[2] == []
    sched._pending.clear()
    monkeypatch.undo()


def test_a_tick_does_not_start_a_callback_its_recent_cost_would_overrun(qapp: Any, monkeypatch: Any) -> None:
    from desktop.ui.frames import FrameScheduler

    clock = [1000.0]
    monkeypatch.setattr("desktop.ui.frames.time.perf_counter", lambda: clock[0])
    sched = FrameScheduler(interval_ms=16, budget_ms=3.0, resume_ms=16)
    ran: list[str] = []

    def work(key: str, ms: float) -> Any:
        def run() -> None:
            ran.append(key)
            clock[0] += ms / 1000.0

        return run

    def ask() -> None:
        for key, ms in (("a", 2.0), ("b", 2.0), ("c", 0.5)):
            sched.request(key, work(key, ms))

    ask()
    sched.tick()
    assert ran == ["a", "b"]  # b's cost was not known yet: the tick ran 4 ms
    ran.clear()
    ask()
    sched.tick()
    assert ran == ["c", "a"]  # c waited since the last tick; a fits after it; b (2 ms more) would not
    assert sched.is_pending("b")
    ran.clear()
    sched.tick()
    assert ran[0] == "b"  # first in the next tick
    for key in "abc":
        sched.cancel(key)
    monkeypatch.undo()


def test_older_messages_go_into_pages_in_order(qtbot: Any, make_env: Any) -> None:
    from PySide6.QtCore import QPoint

    from desktop.ui.frames import settle
    from desktop.ui.transcript.content import PAGE_MESSAGES

    state = notes_state("Pages", 200)
    conv = state.conversation
    env: NodeEnv = make_env(state)
    transcript = env.node.transcript
    qtbot.waitUntil(lambda: transcript.verticalScrollBar().maximum() > 0)
    while transcript.unloaded_count():
        transcript.load_older(budget=None)
    settle()
    views = transcript.views()
    assert [v.message_id for v in views] == [f"n{i}" for i in range(200)]
    content = transcript.widget()
    assert content is not None
    tops = [v.mapTo(content, QPoint(0, 0)).y() for v in views]
    assert tops == sorted(tops) and len(set(tops)) == len(tops)  # shown top to bottom, oldest first
    pages = content.findChildren(QWidget, "transcriptPage")
    assert pages and all(len(p.findChildren(MessageView)) <= PAGE_MESSAGES for p in pages)
    # New messages still go at the bottom, under the pages and the newest messages.
    conv.messages.append(ChatMessage(id="new", role="note", content="the newest", ts=999))
    transcript.flush()
    assert transcript.views()[-1].message_id == "new"
    newest = transcript.views()[-1]
    qtbot.waitUntil(lambda: newest.mapTo(content, QPoint(0, 0)).y() > tops[-1])
    # Showing another conversation drops the pages with their messages.
    transcript.set_conversation(create_conversation())
    qtbot.waitUntil(lambda: not content.findChildren(QWidget, "transcriptPage"))


def test_a_view_laid_out_at_its_width_is_not_laid_out_again_when_shown(qtbot: Any) -> None:
    words = "words that wrap across the line " * 12
    html = "".join(f"<p>Paragraph {i}: {words}</p>" for i in range(30))
    view = MarkdownView()
    qtbot.addWidget(view)
    view.resize(500, 100)
    view.set_html(html, MarkdownTheme())
    laid_out = view.document().size()
    assert view.document().textWidth() == 500
    view.show()
    qtbot.waitExposed(view)
    assert view.resize_relayouts_skipped == 1
    assert view.document().textWidth() == view.viewport().width() == 500
    # The layout kept is the one a fresh layout at that width gives.
    fresh = QTextDocument()
    fresh.setDefaultStyleSheet(view.document().defaultStyleSheet())
    fresh.setDocumentMargin(view.document().documentMargin())
    fresh.setHtml(html)
    fresh.setTextWidth(500)
    assert view.document().size() == laid_out == fresh.size()
    # A real change of width still re-wraps the text.
    view.resize(300, view.height())
    qtbot.waitUntil(lambda: view.document().textWidth() == 300)
    assert view.document().size().height() > laid_out.height()
    # A view shown at another width than it was laid out at is laid out again.
    other = MarkdownView()
    qtbot.addWidget(other)
    other.resize(400, 100)
    other.set_html(html, MarkdownTheme())
    other.setFixedWidth(450)
    other.show()
    qtbot.waitExposed(other)
    assert other.resize_relayouts_skipped == 0 and other.document().textWidth() == 450


OCAML = "\n".join(f"let f{i} x = x + {i} (* line {i} *)" for i in range(40))


def test_code_in_a_language_not_loaded_yet_is_plain_until_its_lexer_is_ready(
    qapp: Any, monkeypatch: Any, whole_code_blocks: None
) -> None:
    """A lexer's first use compiles its expressions (25-45 ms): that happens on the lexer thread,
    the frame goes on with the code plain, and the block is coloured once the lexer is loaded."""
    import threading
    import time

    from desktop.ui.markdown import code as md_code

    real = md_code.get_lexer_by_name
    gate = threading.Event()
    loaded_on: list[str] = []

    def slow_to_load(name: str, **options: Any) -> Any:
        loaded_on.append(threading.current_thread().name)
        gate.wait(5.0)
        return real(name, **options)

    monkeypatch.setattr(md_code, "get_lexer_by_name", slow_to_load)
    monkeypatch.setattr(md_code, "_LEXERS", {}, raising=False)  # nothing loaded yet
    block = render_markdown_blocks(f"```ocaml\n{OCAML}\n```", MarkdownTheme(), spans=False)[0]
    doc = QTextDocument()
    doc.setHtml(block.html)
    colourer = CodeColourer(doc)
    started = time.perf_counter()
    colourer.start(document_tables(doc), block.tables, block.langs, dark=False)
    assert colourer.step(COLOUR_SLICE) is True  # still to colour ...
    assert time.perf_counter() - started < 1.0  # ... and the frame did not wait for the lexer
    assert not formatted_lines(doc)
    gate.set()
    deadline = time.perf_counter() + 5.0
    while colourer.busy and time.perf_counter() < deadline:
        colourer.step(COLOUR_SLICE)
        time.sleep(0.002)
    assert not colourer.busy and len(formatted_lines(doc)) == OCAML.count("\n") + 1
    assert loaded_on and all(name.startswith("chatnodes-lexers") for name in loaded_on)
    # Asked for everything at once (budget None), a block in another new language is coloured here.
    loaded_on.clear()
    block = render_markdown_blocks("```erlang\nf(X) -> X + 1.\n```", MarkdownTheme(), spans=False)[0]
    doc.setHtml(block.html)
    colourer.start(document_tables(doc), block.tables, block.langs, dark=False)
    assert colourer.step(None) is False and formatted_lines(doc)
