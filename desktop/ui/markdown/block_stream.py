"""Splitting a streamed Markdown answer into closed blocks and an open tail (no Qt needed).

While an answer streams, ``BlockStream.advance(text)`` is called with the whole text so far. It
re-tokenises (block structure only, no rendering) the *tail*: the text from the start of the
last top-level block that is not known to be complete, up to the last complete line. A top-level
block is closed when markdown-it says the next top-level block began on a complete line: lines
already seen can then never change it (CommonMark looks at most one line ahead, and the partial
last line is never looked at). A paragraph, heading, table, quote or rule followed by a blank
line is closed too: nothing after a blank line can continue it (lists, code blocks and fences
can be continued, so they wait for the next block). Each closed block's source is handed out
exactly once, in order; the caller renders it once and never again.

The work per call is bounded however long the tail grows: an open fenced code block is only
scanned for its closing fence in the new lines, and any other tail longer than ``PARSE_LIMIT`` is
re-tokenised only after it grew by a quarter (amortised linear over the whole answer).
Reference definitions met on the way are collected in ``references`` for rendering later blocks.
"""

from __future__ import annotations

import re
from typing import Any

from markdown_it.token import Token

from desktop.ui.markdown.parser import block_parse

__all__ = ["BlockStream", "PARSE_LIMIT"]

PARSE_LIMIT = 1024
"""A tail longer than this (characters) is re-tokenised only after growing by a quarter."""
_FENCE_OPEN = re.compile(r" {0,3}(`{3,}|~{3,})")
_ENDED_BY_BLANK_LINE = frozenset({"paragraph_open", "heading_open", "table_open", "blockquote_open", "hr"})


class BlockStream:
    """Tracks which top-level blocks of a growing Markdown text are complete.

    Attributes:
        closed_end: offset where the open tail starts (everything before it was handed out).
        references: link reference definitions seen so far (markdown-it's ``env["references"]``).
        parses: how many times the tail was tokenised (for tests and benchmarks).
        tokens: the block-level tokens of each block the last ``advance`` returned, in order.
    """

    def __init__(self) -> None:
        self.closed_end = 0
        self.references: dict[str, Any] = {}
        self.parses = 0
        self.tokens: list[list[Token]] = []
        self._parsed_to = 0  # end of the complete lines last looked at
        self._tokenised_size = 0  # size of the tail at its last tokenisation
        self._fence_close: re.Pattern[str] | None = None

    @property
    def parsed_to(self) -> int:
        """Where the complete lines looked at so far end."""
        return self._parsed_to

    @property
    def open_fence(self) -> bool:
        """True while the open tail is a fenced code block not closed yet."""
        return self._fence_close is not None

    def advance(self, text: str) -> list[str]:
        """The sources of the blocks of ``text`` that became complete since the last call.

        ``tokens`` then holds, per block returned, its block-level tokens (``render_tokens``).

        Args:
            text: the whole text so far; it must extend the text of the previous calls.

        Returns:
            The new closed blocks' sources, in order (they tile ``text`` from the old
            ``closed_end`` to the new one).
        """
        start = self.closed_end
        self.tokens = []
        end = text.rfind("\n", start) + 1
        if end <= max(start, self._parsed_to):
            return []
        new_from = max(start, self._parsed_to)
        self._parsed_to = end
        if self._fence_close is not None:
            if self._fence_close.search(text, new_from, end) is None:
                return []  # still inside the open code block: nothing can have closed
        elif end - start > PARSE_LIMIT and end - start < self._tokenised_size * 5 // 4:
            return []
        return self._split(text, start, end)

    def _split(self, text: str, start: int, end: int) -> list[str]:
        complete = text[start:end]
        env: dict[str, Any] = {"references": self.references}
        starts, groups = block_parse(complete, env)
        self.parses += 1
        self._tokenised_size = len(complete)
        out: list[str] = []
        prev = 0
        for _line, offset, _kind in starts[1:]:
            out.append(complete[prev:offset])
            prev = offset
        if starts and starts[-1][2] in _ENDED_BY_BLANK_LINE and _ends_with_blank_line(complete):
            out.append(complete[prev:])
            prev = len(complete)
        self.tokens = groups[: len(out)]
        self.closed_end = start + prev
        if out:
            self._tokenised_size = len(complete) - prev
        self._watch_fence(text)
        return out

    def _watch_fence(self, text: str) -> None:
        """When the open tail is an unclosed fenced code block, remember how its closing fence looks."""
        self._fence_close = None
        m = _FENCE_OPEN.match(text, self.closed_end)
        if m is None:
            return
        opening_end = text.find("\n", m.end())
        if opening_end < 0 or "`" in text[m.end() : opening_end] and m.group(1)[0] == "`":
            return  # the opening line is incomplete, or not a fence (a backtick fence's info has none)
        marker = m.group(1)
        close = re.compile(rf"(?m)^ {{0,3}}{re.escape(marker[0])}{{{len(marker)},}}[ \t]*$")
        if close.search(text, opening_end + 1, self._parsed_to) is None:
            self._fence_close = close  # still open: only a closing fence can change anything

    def tail(self, text: str) -> str:
        """The open part of ``text`` (from the first block not handed out yet)."""
        return text[self.closed_end :]


def _ends_with_blank_line(complete: str) -> bool:
    """True when the last line of ``complete`` (which ends with a newline) is blank."""
    last = complete.rfind("\n", 0, len(complete) - 1)
    return last >= 0 and not complete[last + 1 : -1].strip(" \t")
