"""The incremental streaming pipeline: complete blocks are rendered once, only the tail again.

``BlockStream`` (pure Python) must only close a block where a one-shot parse of the final text
has a block boundary, whatever the deltas; the assistant view must render each closed block once,
re-render only the open tail, and render at most once when the stream ends, ending with exactly
what a one-shot render shows.
"""
# ruff: noqa: F811 - pytest fixtures imported from test_chat_node_support are parameters here

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_chat_node_support import NodeEnv, make_env  # noqa: F401

from desktop.core.chat.types import ChatMessage, Delta, Done
from desktop.ui.markdown import stream as message_body
from desktop.ui.markdown.block_stream import PARSE_LIMIT, BlockStream
from desktop.ui.markdown.parser import block_starts
from desktop.ui.markdown.render import render_markdown, render_tokens
from desktop.ui.markdown.theme import MarkdownTheme
from desktop.ui.transcript.answer import AssistantMessageView


def answer(blocks: int = 50, seed: int = 7) -> str:
    """A Markdown-rich answer of ``blocks`` top-level blocks (every kind, spanning many deltas)."""
    rng = random.Random(seed)
    kinds = [
        lambda i: f"## Section {i}\n",
        lambda i: f"Paragraph {i} with **bold**, `code` and a [link](https://e.example/{i}).\nSecond line.\n",
        lambda i: f"- item {i}\n- item with sub\n  - sub a\n  - sub b\n\n- loose item\n",
        lambda i: f"1. first\n2. second {i}\n   continued\n",
        lambda i: f"```python\ndef f{i}(x):\n\n    return x  # blank line above\n```\n",
        lambda i: f"| a | b |\n|---|--:|\n| {i} | `x \\| y` |\n| 2 | 3 |\n",
        lambda i: f"> quoted {i}\n> - in a list\nlazy line\n",
        lambda i: f"Setext {i}\n---\n",
        lambda i: "~~~~\n```\nnot a fence end\n```\n~~~~\n",
        lambda i: f"- [ ] task {i}\n- [x] done\n",
    ]
    parts = [kinds[i % len(kinds)](i) if i % 7 else rng.choice(kinds)(i) for i in range(blocks)]
    return "\n".join(parts) + "\nThe end, see [ref][r].\n\n[r]: https://e.example/ref\n"


def one_shot_boundaries(text: str) -> list[int]:
    return [offset for _line, offset, _kind in block_starts(text, {})]


def stream_boundaries(text: str, cuts: list[int]) -> tuple[list[int], BlockStream]:
    stream = BlockStream()
    bounds: list[int] = []
    pos = 0
    for cut in [*cuts, len(text)]:
        for source in stream.advance(text[:cut]):
            pos += len(source)
            bounds.append(pos)
    return bounds, stream


@pytest.mark.parametrize("size", [1, 3, 7, 64])
def test_closed_blocks_are_exactly_the_one_shot_blocks(size: int) -> None:
    text = answer()
    bounds, stream = stream_boundaries(text, list(range(size, len(text), size)))
    whole = one_shot_boundaries(text)
    # Every block closed, each at a one-shot boundary; the last paragraph too when a blank line
    # after it was seen on its own (it ends a paragraph).
    assert bounds[: len(whole) - 1] == whole[1:]
    assert bounds[len(whole) - 1 :] in ([], [text.index("[r]: ")])
    assert stream.closed_end in (whole[-1], text.index("[r]: "))


def pieces_render_like_the_whole(text: str, cuts: list[int]) -> None:
    stream = BlockStream()
    sources: list[str] = []
    tokens: list[Any] = []
    for cut in [*cuts, len(text)]:
        sources += stream.advance(text[:cut])
        tokens += stream.tokens
    assert len(tokens) == len(sources)  # each closed block comes with its block-level tokens
    sources.append(stream.tail(text))
    assert "".join(sources) == text
    refs: dict[str, Any] = {}
    block_starts(text, {"references": refs})
    whole = render_markdown(text)
    pieces = "".join(render_markdown(src, references=refs) for src in sources)
    assert pieces == whole
    # Rendering the closed blocks from the tokens their split produced (not parsed again) too.
    from_tokens = [b.html for tok, src in zip(tokens, sources, strict=False)
                   for b in render_tokens(tok, src, references=refs)]
    assert "".join(from_tokens) + render_markdown(sources[-1], references=refs) == whole


@settings(max_examples=300, deadline=None)
@given(
    st.text(alphabet=st.sampled_from(list("ab -*>#|`~=1.:[]^()\\$_\n\n\n    ")), max_size=160),
    st.lists(st.integers(min_value=0, max_value=160), max_size=12),
)
def test_closed_blocks_render_like_the_whole_text_whatever_the_deltas(text: str, cuts: list[int]) -> None:
    pieces_render_like_the_whole(text, sorted(c for c in cuts if c < len(text)))


@pytest.mark.parametrize(
    "text",
    [
        "> quote\n#hashtag is text\n- \ntail\n\n| a |\n|--x\n",
        "- a\n\n  still a\n\n- b\n\n-\n\nnext\n",
        "para\n\n    indented code\n\n    more code\n\nafter\n",
        "| a | b |\n|---|---|\n| 1 | 2 |\nlazy row\n\n> q\n\n> r\n",
        "```\ncode\n\n```\n\n~~~\nunclosed\n",
        "Text $a_1 * b_2$ costs $5 and $$E=mc^2$$.\n\n$$\n\\frac{a}{b}\n$$\n\n- item $x^2$\n\n$$\nopen",
        "Use \\(x_1 * y\\) here.\n\\[\nz_2 * w\n\\]\n\n\\[ open",
        "The energy:\n\\[\nE = mc^2\n\\]\nthen\n$$\nx\n$$\nafter\n$$ never closed\nend\n",
        "A note^[inline *one* ^[two]] here.\n\n- item^[in a list]\n\n^[alone] and ^[open\n",
        "A claim.[^1] More[^n].\n[^1]: The source.\n[^n]: A note\n    continued\n\n    second\n- after\n",
        answer(),
    ],
)
def test_typed_one_character_at_a_time(text: str) -> None:
    pieces_render_like_the_whole(text, list(range(1, len(text))))


def test_an_open_code_block_is_scanned_not_reparsed() -> None:
    code = "".join(f"    value_{i} = compute({i})\n" for i in range(4000))  # ~120 KB
    text = "Intro\n\n```python\n" + code + "```\n\nAfter.\n"
    stream = BlockStream()
    closed: list[str] = []
    for end in range(0, len(text), 40):
        closed += stream.advance(text[:end])
    closed += stream.advance(text)
    assert closed == ["Intro\n\n", "```python\n" + code + "```\n\n"]
    assert stream.parses <= 6


def test_a_huge_multiline_paragraph_is_reparsed_geometrically_not_per_line() -> None:
    text = "".join(f"line {i} of one very long paragraph that keeps going\n" for i in range(3000))
    stream = BlockStream()
    for end in range(0, len(text), 50):
        stream.advance(text[:end])
    assert len(text) > 8 * PARSE_LIMIT
    assert stream.parses < 60
    assert stream.closed_end == 0


class Recorder:
    """Wraps the body's renderer and records every call."""

    def __init__(self, monkeypatch: Any) -> None:
        self.calls: list[tuple[str, bool]] = []
        real = message_body.render_markdown_blocks
        real_tokens = message_body.render_tokens

        def recording(text: str, theme: Any = None, **kw: Any) -> Any:
            self.calls.append((text, bool(kw.get("highlight", True))))
            return real(text, theme, **kw)

        def recording_tokens(tokens: Any, source: str, theme: Any = None, **kw: Any) -> Any:
            self.calls.append((source, bool(kw.get("highlight", True))))  # a block parsed once, rendered
            return real_tokens(tokens, source, theme, **kw)

        monkeypatch.setattr(message_body, "render_markdown_blocks", recording)
        monkeypatch.setattr(message_body, "render_tokens", recording_tokens)


def end_stream(view: AssistantMessageView, msg: ChatMessage) -> None:
    """Done, then the frames the transcript schedules while the view says it is still rendering."""
    view.sync(msg, live=False)
    while view.rendering():
        view.sync(msg, live=False)


def make_view(qtbot: Any, content: str = "") -> tuple[AssistantMessageView, ChatMessage]:
    msg = ChatMessage(id="a1", role="assistant", content=content, ts=0)
    view = AssistantMessageView(msg, theme=MarkdownTheme(), meta_text=lambda m, live: "")
    qtbot.addWidget(view)
    view.resize(700, 500)
    view.show()
    return view, msg


def test_complete_blocks_render_once_and_done_costs_at_most_one_render(qtbot: Any, monkeypatch: Any) -> None:
    monkeypatch.setattr(message_body, "LIVE_MARKDOWN_INTERVAL", 0.0)  # re-render the tail every frame
    rec = Recorder(monkeypatch)
    text = answer()
    view, msg = make_view(qtbot)
    for end in range(5, len(text), 5):  # a frame after every 5 characters
        msg.content = text[:end]
        view.sync(msg, live=True)
    streamed = view._streamed
    assert streamed is not None
    closed_sources = streamed._sources
    assert len(closed_sources) >= 49  # 50 blocks and the closing paragraph: all but the tail closed
    finals = [src for src, highlight in rec.calls if highlight]
    assert finals == closed_sources  # each complete block rendered once (with colours), in order
    tails = [src for src, highlight in rec.calls if not highlight]
    assert tails and max(len(t) for t in tails) <= message_body.LIVE_MARKDOWN_LIMIT
    starts = [0]
    for src in closed_sources:
        starts.append(starts[-1] + len(src))
    ends = dict(zip(starts, [*starts[1:], len(text)], strict=True))
    for t in tails:  # the tail starts where the closed blocks end and never holds a closed block
        assert any(text.startswith(t, b) and b + len(t) <= ends[b] for b in starts)
    kept = list(view.body.segments)
    before = len(rec.calls)
    msg.content = text
    end_stream(view, msg)
    assert len(rec.calls) - before <= 1  # the tail only
    assert view.body.segments[: len(kept) - 3] == kept[: len(kept) - 3]  # no swap of the whole view
    one_shot, _ = make_view(qtbot, text)
    one_shot.sync(ChatMessage(id="a1", role="assistant", content=text, ts=0), live=False)
    assert view.toPlainText() == one_shot.toPlainText()
    assert "ref" in view.toPlainText() and "[r]" not in view.toPlainText()


def test_done_right_after_the_last_frame_renders_only_the_tail(qtbot: Any, monkeypatch: Any) -> None:
    rec = Recorder(monkeypatch)
    text = "".join(f"Paragraph {i} with *some* markup.\n\n" for i in range(50)) + "Last one."
    view, msg = make_view(qtbot)
    for end in range(3, len(text) + 1, 3):
        msg.content = text[:end]
        view.sync(msg, live=True)
    msg.content = text
    view.sync(msg, live=True)
    before = len(rec.calls)
    end_stream(view, msg)
    assert rec.calls[before:] == [("Last one.", True)]
    closed = [src for src, hl in rec.calls if hl][:-1]
    assert closed == [f"Paragraph {i} with *some* markup.\n\n" for i in range(50)]


def test_a_huge_paragraph_and_code_block_are_never_rerendered_whole_while_streaming(
    qtbot: Any, monkeypatch: Any
) -> None:
    monkeypatch.setattr(message_body, "LIVE_MARKDOWN_INTERVAL", 0.0)
    rec = Recorder(monkeypatch)
    para = " ".join(f"word{i}" for i in range(16000))  # ~110 KB, one line
    code = "".join(f"x_{i} = {i}\n" for i in range(10000))  # ~100 KB
    text = f"{para}\n\n```python\n{code}```\n"
    view, msg = make_view(qtbot)
    for end in range(0, len(text), 997):
        msg.content = text[:end]
        view.sync(msg, live=True)
    live_calls = list(rec.calls)
    assert all(len(src) <= message_body.LIVE_MARKDOWN_LIMIT for src, hl in live_calls if not hl)
    assert [src for src, hl in live_calls if hl] == [para + "\n\n"]  # the paragraph, once, when closed
    msg.content = text
    end_stream(view, msg)
    assert rec.calls[len(live_calls) :] == [(f"```python\n{code}```\n", True)]
    assert view.toPlainText().rstrip("\n").endswith(code.rstrip("\n"))


def test_a_reference_defined_after_its_use_re_renders_that_block_only(qtbot: Any, monkeypatch: Any) -> None:
    rec = Recorder(monkeypatch)
    text = "Uses [the ref][R1] and [inline](https://a.example).\n\nOther [x](https://b.example).\n\n" \
        "More text.\n\n[r1]: https://r.example\n\nLast."
    view, msg = make_view(qtbot)
    for end in range(1, len(text) + 1):
        msg.content = text[:end]
        view.sync(msg, live=True)
    before = len(rec.calls)
    end_stream(view, msg)
    assert [src for src, _ in rec.calls[before:]] == [
        "[r1]: https://r.example\n\nLast.",  # the tail
        "Uses [the ref][R1] and [inline](https://a.example).\n\n",  # rendered before [r1] was known
    ]
    assert view.toPlainText().startswith("Uses the ref and inline.")


def test_streaming_through_a_node_ends_as_a_one_shot_render(qtbot: Any, make_env: Any) -> None:
    env: NodeEnv = make_env()
    node = env.node
    text = answer(20, seed=3)
    for i in range(0, len(text), 11):
        env.bridge.broadcast(node.node_id, Delta(text[i : i + 11], message_id="m1"))
    qtbot.waitUntil(lambda: node.transcript.view_for("m1") is not None)
    view = node.transcript.view_for("m1")
    assert isinstance(view, AssistantMessageView)
    qtbot.waitUntil(lambda: "The end" in view.toPlainText() and not node.transcript.is_rendering())
    assert isinstance(view._streamed, message_body.StreamedBody) and len(view._streamed._sources) >= 19
    env.bridge.broadcast(node.node_id, Done("end_turn", message_id="m1"))
    qtbot.waitUntil(lambda: not node.transcript.is_rendering())
    one_shot, _ = make_view(qtbot, text)
    one_shot.sync(ChatMessage(id="x", role="assistant", content=text, ts=0), live=False)
    assert view.toPlainText() == one_shot.toPlainText()


def test_a_burst_is_rendered_a_budget_at_a_time_showing_its_text_meanwhile(
    qtbot: Any, monkeypatch: Any
) -> None:
    monkeypatch.setattr(message_body, "RENDER_BUDGET", 0.0)  # one unit of work per update
    rec = Recorder(monkeypatch)
    text = "".join(f"Paragraph {i} with *some* markup.\n\n" for i in range(30)) + "Last one."
    view, msg = make_view(qtbot)
    msg.content = text
    view.sync(msg, live=True)  # the whole answer arrives before the first frame
    assert view.rendering() and len(rec.calls) <= 1
    assert view.toPlainText().startswith("Paragraph 0 with *some* markup.")  # shown as it is meanwhile
    updates = 1
    while view.rendering():
        view.sync(msg, live=True)
        updates += 1
        shown = view.toPlainText()  # the start never goes missing, rendered or not yet
        assert shown.startswith(("Paragraph 0 with some markup.", "Paragraph 0 with *some*"))
    rendered = [src for src, hl in rec.calls if hl]
    assert rendered == [f"Paragraph {i} with *some* markup.\n\n" for i in range(30)]
    assert updates <= 2 * 30 + 5  # a block rendered, or shown, per update: never all at once
    view.sync(msg, live=False)  # Done: the tail, once
    while view.rendering():
        view.sync(msg, live=False)
    assert [src for src, hl in rec.calls if hl][-1] == "Last one."
    assert len([src for src, hl in rec.calls if hl]) == 31  # every block rendered exactly once
    one_shot, _ = make_view(qtbot, text)
    one_shot.sync(ChatMessage(id="x", role="assistant", content=text, ts=0), live=False)
    assert view.toPlainText() == one_shot.toPlainText()


def test_an_update_that_rendered_leaves_showing_it_to_the_next(qtbot: Any, monkeypatch: Any) -> None:
    # With the frame's budget spent by rendering, the update returns what was returned last time
    # (the view has nothing to do); the next update shows it and does nothing else.
    monkeypatch.setattr(message_body, "RENDER_BUDGET", 0.0)
    clock = [100.0]
    monkeypatch.setattr(message_body.time, "monotonic", lambda: clock[0])
    rec = Recorder(monkeypatch)
    body = message_body.StreamedBody(MarkdownTheme())
    text = "".join(f"Para {i}.\n\n" for i in range(3))
    first = body.live(text)  # the first update always shows what it has
    assert first == ([], [message_body.Segment("plain", text, 0)])
    second = body.live(text)  # renders "Para 0." and has no time left: shows nothing new
    assert second is first and len(rec.calls) == 1 and body.busy
    clock[0] += message_body.BEHIND_COMMIT_INTERVAL
    third = body.live(text)  # shows it, renders nothing
    assert len(rec.calls) == 1 and len(third[0]) == 1 and "Para 0." in third[0][0].payload
def test_a_node_catches_up_with_a_burst_over_frames(qtbot: Any, make_env: Any, monkeypatch: Any) -> None:
    monkeypatch.setattr(message_body, "RENDER_BUDGET", 0.0)
    env: NodeEnv = make_env()
    node = env.node
    text = answer(40, seed=5)
    env.bridge.broadcast(node.node_id, Delta(text, message_id="b1"))
    env.bridge.broadcast(node.node_id, Done("end_turn", message_id="b1"))
    view = node.transcript.view_for("b1")
    assert isinstance(view, AssistantMessageView) and view.rendering()  # Done did not render it all
    assert node.transcript.is_rendering()
    qtbot.waitUntil(lambda: not node.transcript.is_rendering(), timeout=10000)
    assert not view.rendering()
    one_shot, _ = make_view(qtbot, text)
    one_shot.sync(ChatMessage(id="x", role="assistant", content=text, ts=0), live=False)
    assert view.toPlainText() == one_shot.toPlainText()


def test_a_long_paragraph_keeps_its_text_view_when_it_closes(qtbot: Any) -> None:
    from desktop.ui.markdown.textflow import TextFlowView

    para = " ".join(f"word{i}" for i in range(2000))
    view, msg = make_view(qtbot)
    for end in range(0, len(para) + 1, 500):
        msg.content = para[:end]
        view.sync(msg, live=True)
    flows = [seg for seg in view.body.segments if isinstance(seg, TextFlowView)]
    assert len(flows) == 1 and flows[0].toPlainText() == para[: len(para) // 500 * 500]
    msg.content = para + "\n\nNext paragraph."
    view.sync(msg, live=True)  # the paragraph closes: shown by the same widget, now a closed segment
    while view.rendering():
        view.sync(msg, live=True)
    assert view.body.segments[0] is flows[0] and flows[0].toPlainText() == para


def test_while_catching_up_the_view_changes_at_most_once_per_commit_interval(
    qtbot: Any, monkeypatch: Any
) -> None:
    # A burst is rendered a block per update; the updates in between only render (no layout, no
    # paint): the view is given the very same segments until BEHIND_COMMIT_INTERVAL has passed.
    monkeypatch.setattr(message_body, "RENDER_BUDGET", 0.0)
    clock = [100.0]
    monkeypatch.setattr(message_body.time, "monotonic", lambda: clock[0])
    text = "".join(f"Paragraph {i} with *some* markup.\n\n" for i in range(12)) + "Last one."
    view, msg = make_view(qtbot)
    msg.content = text
    view.sync(msg, live=True)
    streamed = view._streamed
    assert streamed is not None and view.rendering()
    first = view.toPlainText()
    widgets = list(view.body.segments)
    for _ in range(8):  # blocks rendered, nothing new shown
        view.sync(msg, live=True)
    rendered = len(streamed.blocks)
    assert rendered >= 3
    assert view.toPlainText() == first and list(view.body.segments) == widgets
    clock[0] += message_body.BEHIND_COMMIT_INTERVAL
    for _ in range(2):  # the interval passed: the next update that shows, shows them all
        view.sync(msg, live=True)
    assert view.toPlainText() != first
    assert f"Paragraph {rendered - 1} with some markup." in view.toPlainText()
    while view.rendering():
        clock[0] += message_body.BEHIND_COMMIT_INTERVAL
        view.sync(msg, live=False)
    one_shot, _ = make_view(qtbot, text)
    one_shot.sync(ChatMessage(id="x", role="assistant", content=text, ts=0), live=False)
    assert view.toPlainText() == one_shot.toPlainText()  # the end is never held back


def test_a_snapshot_from_before_a_newer_frame_is_never_shown_again(qtbot: Any, monkeypatch: Any) -> None:
    monkeypatch.setattr(message_body, "RENDER_BUDGET", 0.0)
    clock = [100.0]
    monkeypatch.setattr(message_body.time, "monotonic", lambda: clock[0])
    body = message_body.StreamedBody(MarkdownTheme())
    text = "".join(f"Para {i}.\n\n" for i in range(3))
    closed, _tail = body.live(text)  # busy: a snapshot, nothing rendered yet
    assert body.busy and closed == []
    while body.busy:
        clock[0] += 0.001  # well within the interval: snapshots repeat while busy
        closed, _tail = body.live(text)
    payload = "".join(seg.payload for seg in closed)  # caught up: all of it shown, whatever the interval
    assert all(f"Para {i}." in payload for i in range(3))
    more = text + "".join(f"More {i}.\n\n" for i in range(3))
    closed, _tail = body.live(more)  # busy again at once: a fresh snapshot, not an older one
    payload = "".join(seg.payload for seg in closed)
    assert all(f"Para {i}." in payload for i in range(3))


class _CostlySegments:
    """Every segment change is expected to cost far more than any deadline leaves."""

    def estimate(self, spec: Any, creating: bool) -> float:
        return 100.0

    def learn(self, spec: Any, created: Any, filled: float) -> None:
        pass


def test_an_update_that_rendered_starts_no_segment_change_that_would_not_fit(
    qtbot: Any, monkeypatch: Any
) -> None:
    # A tick ran past its budget by the segment an update changed after rendering (a new rich-text
    # view ~1 ms, its HTML 1-3 ms): with its expected cost past the deadline the change waits, and
    # the next update shows it before rendering anything more.
    from desktop.ui.transcript import body as body_module

    monkeypatch.setattr(message_body, "RENDER_BUDGET", 10.0)  # rendering leaves time: only the cost decides
    monkeypatch.setattr(message_body, "LIVE_MARKDOWN_INTERVAL", 0.0)
    monkeypatch.setattr(body_module, "_costs", _CostlySegments(), raising=False)
    view, msg = make_view(qtbot)
    msg.content = "Para 0 with *markup*"
    view.sync(msg, live=True)  # nothing rendered yet: the first change is free
    before = list(view.body.segments)
    assert [type(s).__name__ for s in before] == ["TextFlowView"]
    rec = Recorder(monkeypatch)
    msg.content = "Para 0 with *markup*.\n\nPara 1"
    view.sync(msg, live=True)  # renders the closed paragraph, has no room to show it
    assert len(rec.calls) == 1
    assert view.body.segments == before and view.rendering()
    view.sync(msg, live=True)  # shows it first, renders nothing
    assert len(rec.calls) == 1
    assert [type(s).__name__ for s in view.body.segments][0] == "MarkdownView"
    assert view.toPlainText().startswith("Para 0 with markup.")
