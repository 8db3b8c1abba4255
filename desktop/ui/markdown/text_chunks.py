"""Plain text laid out in *chunks* of lines, so that appending re-lays out the tail only.

A chunk is lines of the text laid out by one ``QTextLayout``. :func:`lay_out` lays out
``text[start:]`` a piece (``PIECE_CHARS``) at a time; as soon as a piece has more than
``FREEZE_LINES`` lines, all of them but the last are frozen in a chunk (kept and painted as they
are) and the layout restarts at the last line. Greedy line breaking only looks forward, so the
frozen lines are exactly those a single layout of the whole text would produce.
``desktop.ui.markdown.textflow.TextFlowView`` shows the chunks.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

from PySide6.QtCore import QPointF
from PySide6.QtGui import QFont, QTextLayout, QTextOption

__all__ = ["Chunk", "FREEZE_LINES", "PIECE_CHARS", "astral_offsets", "common_prefix", "lay_out"]

FREEZE_LINES = 8
"""The tail is re-laid out on every append; past this many lines its first lines are frozen."""
PIECE_CHARS = 4096
"""Longest text laid out in one go (a long text is laid out piece by piece, same result)."""
_LINE_SEPARATOR = "\u2028"  # what QTextLayout breaks a line at; same length as "\n"


@dataclass(slots=True)
class Chunk:
    """Lines of the text laid out by one ``QTextLayout`` (a frozen chunk, or the tail)."""

    layout: QTextLayout
    start: int  # index in the text of the layout's first character
    lines: int  # how many of the layout's lines belong to this chunk (the rest belong to later ones)
    top: float  # y of the chunk's first line in the view (without the margin)
    height: float
    astral: list[int]  # UTF-16 offsets of the layout's non-BMP characters (QTextLayout counts in UTF-16)
    chars: int = 0  # how many characters (Python indices) the chunk's lines cover

    def to_py(self, u16: int) -> int:
        """A UTF-16 offset in the layout as a Python index relative to ``start``."""
        return u16 - bisect.bisect_left(self.astral, u16) if self.astral else u16

    def to_u16(self, py: int) -> int:
        """A Python index relative to ``start`` as a UTF-16 offset in the layout."""
        if not self.astral:
            return py
        # astral[k] - k is the Python index of the k-th non-BMP character.
        lo, hi = 0, len(self.astral)
        while lo < hi:
            mid = (lo + hi) // 2
            if self.astral[mid] - mid < py:
                lo = mid + 1
            else:
                hi = mid
        return py + lo


def lay_out(text: str, start: int, top: float, width: float, font: QFont, option: QTextOption) -> list[Chunk]:
    """Lay out ``text[start:]`` in pieces, freezing full chunks, leaving one tail chunk.

    Args:
        text: The whole text.
        start: Where the lines to lay out start (a chunk boundary).
        top: The y of their first line.
        width: The line width.
        font: The font (see ``shaping.layout_font``).
        option: The text option (wrap mode).

    Returns:
        The chunks, top to bottom; the last one is the tail.
    """
    out: list[Chunk] = []
    while start < len(text):
        piece_end = min(len(text), start + PIECE_CHARS)
        last_piece = piece_end >= len(text)
        piece = text[start:piece_end]
        astral = astral_offsets(piece)
        layout = QTextLayout(piece.replace("\n", _LINE_SEPARATOR), font)
        layout.setTextOption(option)
        layout.setCacheEnabled(True)
        layout.beginLayout()
        y = 0.0
        count = 0
        while True:
            line = layout.createLine()
            if not line.isValid():
                break
            line.setLeadingIncluded(True)
            line.setLineWidth(width)
            line.setPosition(QPointF(0.0, y))
            y += line.height()
            count += 1
        layout.endLayout()
        if count == 0:
            return out
        if last_piece and count <= FREEZE_LINES:
            out.append(_counted(Chunk(layout, start, count, top, y, astral)))
            return out
        # Freeze all lines but the last (which may still change), continue from its start.
        keep = max(1, count - 1)  # one line: a piece without a break opportunity, frozen whole
        height = y if keep == count else layout.lineAt(keep).y()
        chunk = _counted(Chunk(layout, start, keep, top, height, astral))
        out.append(chunk)
        top += chunk.height
        start += chunk.chars
    return out


def _counted(chunk: Chunk) -> Chunk:
    """``chunk`` with ``chars`` set: how many characters its lines cover."""
    last = chunk.layout.lineAt(chunk.lines - 1)
    chunk.chars = chunk.to_py(last.textStart() + last.textLength())
    return chunk


def astral_offsets(piece: str) -> list[int]:
    """UTF-16 offsets of the characters outside the BMP in ``piece`` (empty for most text)."""
    if piece.isascii() or max(piece) < "\U00010000":
        return []
    out: list[int] = []
    extra = 0
    for i, ch in enumerate(piece):
        if ch >= "\U00010000":
            out.append(i + extra)
            extra += 1
    return out


def common_prefix(a: str, b: str) -> int:
    """Length of the longest common prefix of ``a`` and ``b`` (binary search on slices: C speed)."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo
