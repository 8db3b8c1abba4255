"""Where nodes go in the node area: the geometry of new, forked and reopened nodes, tiles and cascades.

Pure geometry on ``QRect`` / ``QSize`` (no widgets), so the node area's rules read in one place and
are tested without a window. ``area`` is always the size of the MDI area's viewport; every rect these
functions return lies inside it (as far as the minimum sizes allow).
"""

from __future__ import annotations

import math

from PySide6.QtCore import QRect, QSize

__all__ = [
    "CASCADE_STEP", "DEFAULT_NODE_SIZE", "MIN_NODE_SIZE", "beside", "cascade_rects", "fit_inside",
    "reachable", "slot_rect", "tile_rects",
]

DEFAULT_NODE_SIZE = QSize(600, 680)
"""The size of a new node's sub-window (shrunk to fit a small area)."""
MIN_NODE_SIZE = QSize(360, 320)
"""The smallest a placed node is made (unless the area itself is smaller)."""
CASCADE_STEP = 28
"""How far each cascaded node sits right of and below the one before it."""
_MARGIN = 12
_GAP = 8
_GRIP = 48
"""How much of a node a layout arranged by hand must keep visible: its header can still be grabbed."""


def fit_inside(rect: QRect, area: QSize) -> QRect:
    """``rect`` shrunk to at most ``area`` and moved (as little as possible) to lie inside it."""
    width = max(1, min(rect.width(), area.width()))
    height = max(1, min(rect.height(), area.height()))
    x = max(0, min(rect.x(), area.width() - width))
    y = max(0, min(rect.y(), area.height() - height))
    return QRect(x, y, width, height)


def reachable(rect: QRect, area: QSize) -> QRect:
    """``rect`` moved just enough that its header is inside ``area`` (for layouts made by hand).

    The top edge is brought into the area and at least ``_GRIP`` pixels of width stay visible; a
    node that is already reachable is returned as it is (the user may let a node hang over an edge).
    """
    x, y = rect.x(), rect.y()
    x = min(max(x, _GRIP - rect.width()), area.width() - _GRIP)
    y = min(max(y, 0), max(0, area.height() - _GRIP))
    return QRect(x, y, rect.width(), rect.height())


def _default_size(area: QSize) -> QSize:
    width = max(min(MIN_NODE_SIZE.width(), area.width()),
                min(DEFAULT_NODE_SIZE.width(), area.width() - 2 * _MARGIN))
    height = max(min(MIN_NODE_SIZE.height(), area.height()),
                 min(DEFAULT_NODE_SIZE.height(), area.height() - 2 * _MARGIN))
    return QSize(width, height)


def slot_rect(index: int, area: QSize) -> QRect:
    """A new node's place in a layout arranged by hand: the ``index``-th cascade slot, inside ``area``."""
    size = _default_size(area)
    room_x = max(0, area.width() - 2 * _MARGIN - size.width())
    room_y = max(0, area.height() - 2 * _MARGIN - size.height())
    slots = max(1, min(8, 1 + min(room_x, room_y) // CASCADE_STEP))
    step = CASCADE_STEP * (index % slots)
    return fit_inside(QRect(_MARGIN + step, _MARGIN + step, size.width(), size.height()), area)


def beside(source: QRect, area: QSize) -> QRect | None:
    """A place for a node opened from ``source`` (a fork): right of it, else left of it; None when
    neither side has room for ``MIN_NODE_SIZE``.

    The new node takes the source's height and top (kept inside the area) and its width, narrowed to
    the room on that side.
    """
    src = fit_inside(source, area)
    right_room = area.width() - (src.x() + src.width() + _GAP)
    left_room = src.x() - _GAP
    for room, right in ((right_room, True), (left_room, False)):
        if room >= MIN_NODE_SIZE.width():
            width = min(src.width(), room)
            x = src.x() + src.width() + _GAP if right else src.x() - _GAP - width
            return QRect(x, src.y(), width, src.height())
    return None


def tile_rects(count: int, area: QSize) -> list[QRect]:
    """``count`` tiles filling ``area`` in a grid (as ``QMdiArea.tileSubWindows`` lays them out):
    ``ceil(sqrt(count))`` columns; when the last row is short, the first columns span two rows."""
    if count <= 0:
        return []
    cols = max(1, math.ceil(math.sqrt(count)))
    rows = max(1, math.ceil(count / cols))
    short = cols * rows - count  # cells left empty in the last row: that many columns span two rows
    xs = [round(area.width() * c / cols) for c in range(cols + 1)]
    ys = [round(area.height() * r / rows) for r in range(rows + 1)]
    rects: list[QRect] = []
    for col in range(cols):
        r = 0
        while r < rows:
            span = 2 if col < short and r == rows - 2 else 1
            rects.append(QRect(xs[col], ys[r], xs[col + 1] - xs[col], ys[r + span] - ys[r]))
            r += span
    # Row-major order, as Qt's tiler fills them (left to right, top to bottom).
    rects.sort(key=lambda rc: (rc.y(), rc.x()))
    return rects


def cascade_rects(count: int, area: QSize) -> list[QRect]:
    """``count`` equal nodes cascaded from the top left, each ``CASCADE_STEP`` right of and below the
    one before, as large as the area allows (the steps wrap around when there are many)."""
    if count <= 0:
        return []
    free_w = area.width() - 2 * _MARGIN
    free_h = area.height() - 2 * _MARGIN
    fits = 1 + max(0, min(free_w - MIN_NODE_SIZE.width(), free_h - MIN_NODE_SIZE.height())) // CASCADE_STEP
    slots = max(1, min(count, fits))
    width = min(free_w - CASCADE_STEP * (slots - 1), max(DEFAULT_NODE_SIZE.width(), round(free_w * 0.6)))
    height = free_h - CASCADE_STEP * (slots - 1)
    out = []
    for i in range(count):
        step = CASCADE_STEP * (i % slots)
        out.append(fit_inside(QRect(_MARGIN + step, _MARGIN + step, width, height), area))
    return out
