"""Body segments: what one assistant message body shows, grouped from its rendered blocks.

A body is a stack of *segments* (``desktop.ui.transcript.body`` shows them): rich text (consecutive
blocks, code blocks included, grouped up to ``GROUP_CHARS`` of HTML), a long paragraph without
markup as plain text, and each piece of a long code block on its own.
"""

from __future__ import annotations

from typing import NamedTuple

from desktop.ui.markdown.render import MarkdownBlock

__all__ = ["Segment", "SegmentBuilder", "body_segments", "PLAIN_SEGMENT_CHARS", "GROUP_CHARS", "BLOCK_GAP"]

PLAIN_SEGMENT_CHARS = 2000
"""A paragraph without inline markup at least this long is shown by a ``TextFlowView``."""
GROUP_CHARS = 3000
"""Consecutive rich-text blocks share one ``MarkdownView`` while its HTML stays within this size
(a bigger block gets one of its own): appending a block re-lays out at most this much."""
BLOCK_GAP = 12
"""Space between two stacked body segments: Qt's collapsed margin between two paragraphs."""


class Segment(NamedTuple):
    """What one body segment shows.

    Attributes:
        kind: ``"html"`` (rich text) or ``"plain"`` (plain text).
        payload: the HTML or the plain text.
        gap: empty pixels above the segment.
        tables: for rich text, its tables in document order: the raw code of a code block, None
            for a Markdown table (``MarkdownBlock.tables`` of its blocks, joined).
        langs: for rich text, per entry of ``tables``, the language its view colours the code with
            ("" for none; ``MarkdownBlock.langs`` of its blocks, joined).
        copies: for a piece of a long code block, per entry of ``tables``, what its Copy button
            copies (``MarkdownBlock.copies``); empty: ``tables``.
        joined: the segment continues the one above without a gap (a long code block's pieces).
    """

    kind: str
    payload: str
    gap: int
    tables: tuple[str | None, ...] = ()
    langs: tuple[str, ...] = ()
    copies: tuple[str | None, ...] = ()
    joined: bool = False


class SegmentBuilder:
    """Groups rendered blocks into segments, one block at a time (append-only).

    Attributes:
        segments: the segments so far; only the last one changes when a block is added.
    """

    def __init__(self) -> None:
        self.segments: list[Segment] = []
        self._group: list[str] = []
        self._group_chars = 0

    def _gap(self) -> int:
        return BLOCK_GAP if self.segments else 0

    def add(self, block: MarkdownBlock) -> None:
        """Append ``block``: to the open rich-text group, or as a segment of its own."""
        if block.joined or block.copies:  # a piece of a long code block: a segment of its own
            self._group = []
            gap = 0 if block.joined else self._gap()
            self.segments.append(
                Segment("html", block.html, gap, block.tables, block.langs, block.copies, block.joined)
            )
        elif block.plain is not None and len(block.plain) >= PLAIN_SEGMENT_CHARS:
            self._group = []
            self.segments.append(Segment("plain", block.plain, self._gap()))
        elif self._group and self._group_chars + len(block.html) <= GROUP_CHARS:
            self._group.append(block.html)
            self._group_chars += len(block.html)
            last = self.segments[-1]
            tables, langs = last.tables + block.tables, last.langs + block.langs
            self.segments[-1] = last._replace(payload="".join(self._group), tables=tables, langs=langs)
        else:
            self._group = [block.html]
            self._group_chars = len(block.html)
            self.segments.append(Segment("html", block.html, self._gap(), block.tables, block.langs))


def body_segments(blocks: list[MarkdownBlock]) -> list[Segment]:
    """Group rendered blocks into body segments (``SegmentBuilder`` fed with all of them).

    Args:
        blocks: the rendered blocks of one message, in order.

    Returns:
        The segments to show, in order; the first has no top gap.
    """
    builder = SegmentBuilder()
    for block in blocks:
        builder.add(block)
    return builder.segments
