"""The Markdown pipe of a message: its text in, rendered segments out (streamed, or complete).

A body is a stack of *segments* (``desktop.ui.markdown.segments``): rich text (consecutive blocks,
code blocks included, grouped up to ``GROUP_CHARS`` of HTML) and plain text (a long paragraph without
inline markup, and the line being streamed). The transcript feeds this module and places what comes
back (``desktop.ui.transcript.body``); nothing here knows a widget.

``StreamedBody`` is the incremental pipeline: while an answer streams, ``BlockStream`` says which
top-level blocks are complete; each is rendered once (``render_markdown_blocks`` of its own
source) and appended to the segments, never rendered again. Only the open tail is re-rendered:
its complete lines as Markdown (at most every ``LIVE_MARKDOWN_INTERVAL`` seconds, only while
they fit in ``LIVE_MARKDOWN_LIMIT`` characters, code without colours), the rest as plain text
whose appends cost O(new text), its Markdown syntax hidden (``tail_text``, which reads only the
new text). When the stream ends, the tail is rendered once; nothing else is.
``message_segments`` renders a complete message at once.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from markdown_it.token import Token

from desktop.ui.frames import tick_deadline
from desktop.ui.markdown.block_stream import BlockStream
from desktop.ui.markdown.parser import block_starts
from desktop.ui.markdown.render import MarkdownBlock, render_markdown_blocks, render_tokens
from desktop.ui.markdown.segments import BLOCK_GAP, Segment, SegmentBuilder, body_segments
from desktop.ui.markdown.tail_text import TailText
from desktop.ui.markdown.theme import MarkdownTheme

log = logging.getLogger(__name__)

__all__ = [
    "StreamedBody",
    "message_segments",
    "LIVE_MARKDOWN_LIMIT",
    "LIVE_MARKDOWN_INTERVAL",
    "BEHIND_CHARS",
    "RENDER_BUDGET",
    "ADVANCE_CHARS",
    "BEHIND_COMMIT_INTERVAL",
]

LIVE_MARKDOWN_LIMIT = 3000
"""While streaming, the open tail's complete lines are rendered as Markdown only up to this size."""
LIVE_MARKDOWN_INTERVAL = 0.25
"""While streaming, the open tail is re-rendered at most this often (seconds)."""
BEHIND_CHARS = 1000
"""While closed blocks wait to be rendered, at most this much of the text after them is shown."""
RENDER_BUDGET = 0.002
"""Seconds of block rendering one update of a streamed body may spend (at least one block)."""
ADVANCE_CHARS = 1500
"""New text one update of a streamed body looks at for complete blocks (whole lines; a burst is
taken a slice at a time, so finding its blocks never costs more than this much parsing)."""
BEHIND_COMMIT_INTERVAL = 0.06
"""While a burst's blocks are rendered a budget at a time, what is shown changes at most this often
(seconds): the slices in between only render, so they cost no layout and no paint."""



def message_segments(content: str, theme: MarkdownTheme) -> list[Segment]:
    """The segments of a complete message (code coloured by its view: ``spans=False``)."""
    return body_segments(render_markdown_blocks(content, theme, spans=False))


def _uses(source: str, labels: list[str]) -> bool:
    """True when ``source`` may use one of the reference ``labels`` (markdown-it's normalised keys)."""
    if "]" not in source:
        return False
    flat = " ".join(source.lower().split())
    return any(f"[{' '.join(label.lower().split())}]" in flat for label in labels)


class StreamedBody:
    """The segments of one streamed answer: closed blocks rendered once, the open tail live.

    Each update renders closed blocks for at most ``RENDER_BUDGET`` seconds (at least one block);
    blocks left over (a burst of text arrived at once) wait for the next frame, their text shown
    as it is meanwhile, and ``busy`` says so.

    Attributes:
        theme: the theme blocks are rendered with.
        stream: which blocks are complete.
        blocks: the rendered closed blocks, in order.
        renders: how many times the renderer ran (closed blocks, tail updates and the final tail).
        deadline: when the current update's budget ends (``time.perf_counter()``): the view
            shows the segments up to then (``MessageBody.show_segments(deadline=...)``).
        worked: the current update parsed or rendered: the view then starts only the segment
            changes that fit before ``deadline`` (``show_first`` when none did).
    """

    def __init__(self, theme: MarkdownTheme) -> None:
        self.theme = theme
        self.stream = BlockStream()
        self.blocks: list[MarkdownBlock] = []
        self.renders = 0
        self._sources: list[str] = []
        self._ref_counts: list[int] = []  # references known when each closed block was rendered
        self._counts: list[int] = []  # how many blocks each closed source rendered to
        self._builder = SegmentBuilder()
        self._pending: list[str] = []  # closed sources waiting to be rendered
        self._pending_tokens: list[list[Token] | None] = []  # their block-level tokens (None: parse)
        self._caught_up = True  # the stream has looked at every complete line of the text
        self._rendered_end = 0  # where the text of the rendered blocks ends
        self._finished = False
        self._tail: list[Segment] = []  # the tail's Markdown part, rendered from [_tail_from, _tail_to)
        self._tail_from = -1
        self._tail_to = -1
        self._tail_text = TailText()  # the rest after the tail's Markdown part, as plain text
        self._last_tail = 0.0
        self._behind_shown: tuple[list[Segment], list[Segment]] | None = None
        self._behind_at = 0.0
        self.deadline: float | None = None
        self._last: tuple[list[Segment], list[Segment]] | None = None  # what the last update returned
        self._deferred = False  # the last update rendered, and left showing it to this one
        self._ending = False  # the stream ended (``finish``): the open tail is the last block
        self.worked = False  # this update parsed or rendered (its view changes only what still fits)

    @property
    def busy(self) -> bool:
        """True while closed blocks wait to be rendered or shown (call ``live``/``finish`` again
        next frame)."""
        return (
            bool(self._pending)
            or not self._caught_up
            or self._deferred
            or self._ending and not self._finished
        )

    def _advance(self, content: str) -> None:
        """Find the blocks closed in ``content``, looking at ``ADVANCE_CHARS`` of new text at most."""
        stream = self.stream
        seen = max(stream.parsed_to, stream.closed_end)
        limit = seen + ADVANCE_CHARS
        complete = content.rfind("\n") + 1
        if complete <= limit:
            self._hand_out(stream.advance(content))
            self._caught_up = True
            return
        cut = content.rfind("\n", seen, limit) + 1
        if cut <= seen:  # one very long line: take it whole
            cut = content.find("\n", limit) + 1
        while cut < complete and content[cut] == "\n":  # and the blank lines after it (they end blocks)
            cut += 1
        self._hand_out(stream.advance(content[:cut]))
        self._caught_up = cut >= complete

    def _hand_out(self, sources: list[str]) -> None:
        """Queue newly closed blocks for rendering, with their tokens (parsed once, not again)."""
        tokens = self.stream.tokens
        for i, source in enumerate(sources):
            self._pending.append(source)
            self._pending_tokens.append(tokens[i] if i < len(tokens) else None)

    def _render(self, source: str, *, highlight: bool = True) -> list[MarkdownBlock]:
        self.renders += 1
        refs: dict[str, Any] = self.stream.references
        return render_markdown_blocks(source, self.theme, references=refs, highlight=highlight, spans=False)

    def _close(self, source: str, tokens: list[Token] | None) -> None:
        if tokens is None:
            blocks = self._render(source)
        else:
            self.renders += 1
            refs: dict[str, Any] = self.stream.references
            blocks = render_tokens(tokens, source, self.theme, references=refs, spans=False)
        for block in blocks:
            self.blocks.append(block)
            self._builder.add(block)
        self._counts.append(len(blocks))
        self._sources.append(source)
        self._ref_counts.append(len(self.stream.references))
        self._rendered_end += len(source)

    def _start_update(self) -> None:
        """An update begins: it may spend ``RENDER_BUDGET`` (and no more than what is left of the
        frame's budget shared by all nodes, ``tick_deadline``); ``deadline`` says until when."""
        deadline = time.perf_counter() + RENDER_BUDGET
        shared = tick_deadline()
        self.deadline = deadline if shared is None else min(deadline, shared)
        self.worked = False

    def show_first(self) -> None:
        """The view could not show what this update rendered within its budget: the next update
        shows it before parsing or rendering anything more (so showing is never starved)."""
        self._deferred = True

    def _drain(self) -> None:
        """Render pending closed blocks: at least one, then until ``deadline``."""
        deadline = self.deadline
        if self._pending:
            self._close(self._pending.pop(0), self._pending_tokens.pop(0))
        while self._pending and (deadline is None or time.perf_counter() < deadline):
            self._close(self._pending.pop(0), self._pending_tokens.pop(0))

    def _behind(self, content: str) -> tuple[list[Segment], list[Segment]]:
        """The segments while blocks wait: the rendered ones, then the next of the text as it is.

        Only ``BEHIND_CHARS`` of it: it moves on as blocks are rendered, and laying out all of a
        long remainder again at every frame would cost more than rendering it. What is shown
        changes at most every ``BEHIND_COMMIT_INTERVAL``; in between the same segments come back.
        """
        now = time.monotonic()
        if self._behind_shown is not None and now - self._behind_at < BEHIND_COMMIT_INTERVAL:
            return self._behind_shown  # the same segments: the view has nothing to do
        closed = list(self._builder.segments)
        rest = content[self._rendered_end : self._rendered_end + BEHIND_CHARS]
        shown = closed, [Segment("plain", rest, BLOCK_GAP if closed else 0)] if rest else []
        self._behind_shown, self._behind_at = shown, now
        return shown

    def _time_left(self) -> bool:
        return self.deadline is None or time.perf_counter() < self.deadline

    def _work(self, content: str) -> bool:
        """One update's rendering: pending blocks first, else the new text's block boundaries (once
        the stream ended and every line was looked at: the open tail, as the last block).

        Returns:
            True when something was parsed or rendered (the update may have no time left to show
            it: ``_deferred``).
        """
        parses = self.stream.parses
        if not self._pending and not (self._finished or self._ending and self._caught_up):
            self._advance(content)
        worked = self.stream.parses != parses
        if self._ending and self._caught_up and not self._finished:
            self._finished = True
            tail = self.stream.tail(content)
            # Its reference definitions are needed first; a tail of definitions only renders nothing.
            if tail.strip() and block_starts(tail, {"references": self.stream.references}):
                self._pending.append(tail)
                self._pending_tokens.append(None)
            else:
                self._rendered_end = len(content)
        if self._pending and (not worked or self._time_left()):
            self._drain()
            worked = True
        self.worked = worked
        return worked

    def _keep(self, shown: tuple[list[Segment], list[Segment]]) -> tuple[list[Segment], list[Segment]]:
        """Remember what this update returns (copies: the builder's list grows in place)."""
        self._last = (list(shown[0]), list(shown[1]))
        return self._last

    def live(self, content: str) -> tuple[list[Segment], list[Segment]]:
        """The segments showing ``content`` (the whole text so far) while it streams.

        An update that rendered something and has no time left returns what it returned last time
        (the view has nothing to do) and leaves showing it to the next update, which then does
        nothing else: parsing, rendering and showing each fit in a frame's budget with the others'.

        Returns:
            The closed blocks' segments (they only grow at the end) and the open tail's.
        """
        self._start_update()
        if self._deferred:
            self._deferred = False
        elif self._work(content) and not self._time_left() and self._last is not None:
            self._deferred = True
            return self._last
        if self.busy:
            self._tail_from = -1
            return self._keep(self._behind(content))
        self._behind_shown = None  # what is shown next is newer than any earlier snapshot
        start = self.stream.closed_end
        closed = self._builder.segments
        gap = BLOCK_GAP if closed else 0
        # Only the lines the stream has looked at: one that skipped parsing this time (it rendered
        # instead) must not show a block that closed in the lines after them as part of the tail.
        complete = min(content.rfind("\n", start) + 1, max(start, self.stream.parsed_to))
        now = time.monotonic()
        if self._tail_from != start:  # a block closed: the tail's Markdown part starts over
            self._tail, self._tail_to, self._tail_from = [], start, start
            self._last_tail = 0.0
        if (
            complete > self._tail_to
            and complete - start <= LIVE_MARKDOWN_LIMIT
            and now - self._last_tail >= LIVE_MARKDOWN_INTERVAL
        ):
            tail = body_segments(self._render(content[start:complete], highlight=False))
            if tail:
                tail[0] = tail[0]._replace(gap=gap)
            self._tail, self._tail_to, self._last_tail = tail, complete, now
        rest = content[self._tail_to :]
        tail = list(self._tail)
        if rest:
            blank_before = content.endswith("\n\n", 0, self._tail_to)
            fenced = self.stream.open_fence and self._tail_to > start  # the fence's opening is above
            gap = BLOCK_GAP if (closed or tail) and blank_before else 0
            shown = self._tail_text.show(content, self._tail_to, in_fence=fenced)  # no raw syntax
            tail.append(Segment("plain", shown, gap))
        return self._keep((closed, tail))

    def finish(self, content: str) -> tuple[list[Segment], list[Segment]]:
        """The final segments of ``content``: the open tail is rendered once (with colours).

        While ``busy`` (blocks wait, or the last update had no time left to show what it
        rendered), call again next frame with the same content.
        """
        self._start_update()
        self._ending = True
        if self._deferred:
            self._deferred = False
        elif self._work(content) and not self._time_left() and self._last is not None:
            self._deferred = True
            return self._last
        if self.busy:
            return self._keep(self._behind(content))
        self._behind_shown = None
        self._refresh_late_references()
        self._tail = []
        log.debug(
            "streamed body finished: %d characters, %d blocks, %d renders, %d block parses",
            len(content), len(self.blocks), self.renders, self.stream.parses,
        )
        return self._keep((self._builder.segments, []))

    def _refresh_late_references(self) -> None:
        """Render again the blocks that use a reference defined after they were rendered."""
        labels = list(self.stream.references)
        counts = self._ref_counts
        stale = {i for i, n in enumerate(counts) if n < len(labels) and _uses(self._sources[i], labels[n:])}
        if not stale:
            return
        blocks: list[MarkdownBlock] = []
        pos = 0
        for i, source in enumerate(self._sources):
            count = self._counts[i]
            blocks.extend(self._render(source) if i in stale else self.blocks[pos : pos + count])
            pos += count
        self.blocks = blocks
        self._builder = SegmentBuilder()
        for block in blocks:
            self._builder.add(block)
        self._ref_counts = [len(labels)] * len(self._sources)
