"""Where a new card goes on the board: beside its source without covering another card.

Pure geometry on ``QRectF`` (the ideas of ``desktop.ui.window.placement``, without an area to stay
inside: the board is infinite).
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QRectF

__all__ = ["GAP", "free_spot", "reading_order"]

GAP = 200.0
"""Room between a source card and the card placed beside it (an edge and its label fit)."""


def _free(rect: QRectF, others: Sequence[QRectF]) -> bool:
    grown = rect.adjusted(-GAP / 5, -GAP / 5, GAP / 5, GAP / 5)
    return not any(grown.intersects(o) for o in others)


def free_spot(source: QRectF, width: float, height: float, others: Sequence[QRectF]) -> QRectF:
    """A ``width`` x ``height`` rect right of ``source`` (top-aligned, else lower down, else further
    right) that overlaps none of ``others``."""
    step_y = height / 2 + GAP / 2
    for column in range(0, 12):
        x = source.right() + GAP + column * (width + GAP)
        for row in range(0, 10):
            for sign in ((1,) if row == 0 else (1, -1)):
                rect = QRectF(x, source.top() + sign * row * step_y, width, height)
                if _free(rect, others):
                    return rect
    return QRectF(source.right() + GAP, source.bottom() + GAP, width, height)


def reading_order(rects: dict[str, QRectF]) -> list[str]:
    """The ids of ``rects`` top to bottom, left to right (rects whose tops are within a third of the
    smaller height of each other count as one row)."""
    ids = sorted(rects, key=lambda i: (rects[i].top(), rects[i].left()))
    rows: list[list[str]] = []
    for node_id in ids:
        rect = rects[node_id]
        if rows:
            head = rects[rows[-1][0]]
            if abs(rect.top() - head.top()) <= min(rect.height(), head.height()) / 3:
                rows[-1].append(node_id)
                continue
        rows.append([node_id])
    return [i for row in rows for i in sorted(row, key=lambda j: rects[j].left())]
