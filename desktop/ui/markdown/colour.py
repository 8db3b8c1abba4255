"""Syntax colours for the code blocks of a shown document, applied a slice at a time.

A code block is shown as plain code (``render_markdown_blocks(..., spans=False)``: Qt parses a
``<span>`` per token about ten times slower than the plain text) and coloured afterwards with the
block layouts' additional formats, as ``QSyntaxHighlighter`` does: the document's text and
character formats stay those of the code. ``CodeColourer`` lexes (Pygments, lazily) and formats
whole lines until its time budget is spent; the rest waits for the next call, and a code block is
laid out again once, when all its lines have their formats. A big code block closing in a
streamed answer is thus shown at once and coloured over the next frames instead of costing one
long frame.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from functools import lru_cache

from PySide6.QtGui import QColor, QFont, QTextBlock, QTextCharFormat, QTextDocument, QTextLayout, QTextTable

from desktop.ui.markdown.code import PLAIN, Look, lexer_ready, styled_tokens

log = logging.getLogger(__name__)

__all__ = ["CodeColourer", "COLOUR_SLICE"]

COLOUR_SLICE = 0.002
"""Seconds one colouring step of a view may spend (at least one line is coloured)."""


@lru_cache(maxsize=256)
def _char_format(look: Look) -> QTextCharFormat:
    colour, bold, italic = look
    fmt = QTextCharFormat()
    if colour:
        fmt.setForeground(QColor(colour))
    if bold:
        fmt.setFontWeight(QFont.Weight.DemiBold)
    if italic:
        fmt.setFontItalic(True)
    return fmt


class _Job:
    """One code block being coloured: its token stream, the line it is at and that line's ranges."""

    def __init__(self, code: str, lang: str, dark: bool, block: QTextBlock) -> None:
        self.code, self.lang, self.dark = code, lang, dark
        self.tokens: Iterator[tuple[str, Look]] | None = None  # once its lexer is loaded
        lines = code.split("\n")
        self.block = block  # the document block showing ``lines[line]``
        self.lines = lines
        self.line = 0
        self.col = 0  # position in the current line
        self.ranges: list[QTextLayout.FormatRange] = []
        self.last: Look = PLAIN
        self.pending: tuple[str, Look] | None = None  # the rest of a token that spans lines
        self.first = block.position()
        self.done_to = -1  # where the last line given its formats ends in the document

    def add(self, length: int, look: Look) -> None:
        """Style the next ``length`` characters of the current line with ``look``."""
        if look != PLAIN:
            ranges = self.ranges
            if ranges and self.last == look and ranges[-1].start + ranges[-1].length == self.col:
                ranges[-1].length += length
            else:
                rng = QTextLayout.FormatRange()
                rng.start, rng.length, rng.format = self.col, length, _char_format(look)
                ranges.append(rng)
                self.last = look
        self.col += length

    def end_line(self) -> bool:
        """Apply the current line's formats and move to the next line.

        Returns:
            False when nothing was applied: no line is left, or the document's line is not the
            code's (then the rest stays plain).
        """
        block = self.block
        if self.line >= len(self.lines) or not block.isValid():
            return False
        if block.length() - 1 != len(self.lines[self.line]):
            return False
        if self.ranges:
            block.layout().setFormats(self.ranges)
        self.done_to = block.position() + block.length()
        self.ranges, self.last, self.col = [], PLAIN, 0
        self.line += 1
        self.block = block.next()
        return True


class CodeColourer:
    """Colours the code blocks of one document, a time budget per ``step``.

    Attributes:
        lines_coloured: lines given their formats since the last ``start``.
    """

    def __init__(self, doc: QTextDocument, clock: Callable[[], float] | None = None) -> None:
        self._doc = doc
        self._clock = clock or (lambda: time.perf_counter())
        self._jobs: list[_Job] = []
        self._revision = -1
        self.lines_coloured = 0

    @property
    def busy(self) -> bool:
        """True while code blocks wait to be (completely) coloured."""
        return bool(self._jobs)

    def stop(self) -> None:
        """Colour nothing more (the document is going away)."""
        self._jobs = []

    def start(self, tables: list[QTextTable], codes: tuple[str | None, ...], langs: tuple[str, ...],
              dark: bool) -> None:
        """Forget earlier work and colour the code blocks of the document just set.

        Args:
            tables: the document's tables in document order.
            codes: per table, the raw code of a code block (None for a Markdown table).
            langs: per table, the language to colour it with ("" for none).
            dark: use the dark style.
        """
        self._jobs = []
        self._revision = self._doc.revision()
        self.lines_coloured = 0
        for index, (code, lang) in enumerate(zip(codes, langs, strict=False)):
            if not lang or not code or index >= len(tables):
                continue
            cell = tables[index].cellAt(0, 0)
            first = cell.firstCursorPosition().block()
            last = cell.lastCursorPosition().block()
            if last.blockNumber() - first.blockNumber() + 1 > code.count("\n") + 1:
                first = first.next()  # the label line comes first (a long block's later pieces have none)
            job = _Job(code, lang, dark, first)
            if lexer_ready(lang):
                job.tokens = styled_tokens(code, lang, dark)
                if job.tokens is None:
                    continue  # an unknown language, or too long: shown plain
            self._jobs.append(job)

    def step(self, budget: float | None = COLOUR_SLICE) -> bool:
        """Colour lines until ``budget`` seconds are spent (at least one line); None: all of them.

        A code block's lines take their formats as they are lexed; the block is laid out again
        once, when all of them have them (Qt lays a table out whole: one relayout per slice would
        cost that many layouts of the whole block).

        Returns:
            True while more remains (call again at a later frame).
        """
        if self._jobs and self._doc.revision() != self._revision:
            self._jobs = []  # the document changed since: its blocks are not the ones to colour
        deadline = None if budget is None else self._clock() + budget
        while True:
            job = self._ready_job(wait=budget is None)
            if job is None:
                break  # nothing left, or only blocks whose lexer is still being loaded
            try:
                done = self._line(job)
            except Exception:  # noqa: BLE001 - a lexer bug leaves the rest of the code plain
                log.exception("colouring a code block failed; the rest of it stays plain")
                done = True
            if done:
                self._jobs.remove(job)
                if job.done_to > job.first:
                    self._doc.markContentsDirty(job.first, job.done_to - job.first)
                if not self._jobs:
                    log.debug("code coloured: %d lines", self.lines_coloured)
            if deadline is not None and self._clock() >= deadline:
                break
        return bool(self._jobs)

    def _ready_job(self, *, wait: bool) -> _Job | None:
        """The first job whose tokens can be read now (``wait``: load its lexer here if need be)."""
        for job in list(self._jobs):
            if job.tokens is None:
                if not (wait or lexer_ready(job.lang)):
                    continue
                job.tokens = styled_tokens(job.code, job.lang, job.dark)
                if job.tokens is None:
                    self._jobs.remove(job)  # an unknown language: the block stays plain
                    continue
            return job
        return None

    def _line(self, job: _Job) -> bool:
        """Colour the job's current line; True when the job is finished."""
        assert job.tokens is not None, "only a job whose lexer is loaded is coloured"
        while True:
            token = job.pending
            job.pending = None
            if token is None:
                token = next(job.tokens, None)
            if token is None:  # the tokens are done: so is the last line
                if job.end_line():
                    self.lines_coloured += 1
                return True
            value, look = token
            cut = value.find("\n")
            if cut < 0:
                if value:
                    job.add(len(value), look)
                continue
            if cut:
                job.add(cut, look)
            if value[cut + 1 :]:
                job.pending = (value[cut + 1 :], look)  # the rest of the token starts the next line
            if not job.end_line():
                return True
            self.lines_coloured += 1
            return job.line >= len(job.lines)
