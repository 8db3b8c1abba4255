"""The geometry of node placement (issue 25 #3): every rect ``placement`` gives lies inside the area."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QRect, QSize

from desktop.ui.window.placement import (
    MIN_NODE_SIZE,
    beside,
    cascade_rects,
    fit_inside,
    reachable,
    slot_rect,
    tile_rects,
)


def _no_overlap(rects: list[QRect]) -> bool:
    return all(not a.intersects(b) for i, a in enumerate(rects) for b in rects[i + 1:])


@pytest.mark.parametrize("count", [1, 2, 3, 4, 5, 7, 10])
@pytest.mark.parametrize("size", [QSize(1200, 760), QSize(500, 400), QSize(300, 200)])
def test_tiles_and_cascades_lie_inside_the_area(count: int, size: QSize) -> None:
    area = QRect(0, 0, size.width(), size.height())
    tiles = tile_rects(count, size)
    assert len(tiles) == count and _no_overlap(tiles) and all(area.contains(r) for r in tiles)
    assert sum(r.width() * r.height() for r in tiles) == size.width() * size.height()
    cascade = cascade_rects(count, size)
    assert len(cascade) == count and all(area.contains(r) for r in cascade)
    assert all(area.contains(slot_rect(i, size)) for i in range(12))


def test_beside_fit_and_reachable() -> None:
    area = QSize(1000, 700)
    assert beside(QRect(0, 0, 1000, 700), area) is None  # no room on either side
    right = beside(QRect(10, 20, 400, 500), area)
    assert right is not None and right.left() > 410 and QRect(0, 0, 1000, 700).contains(right)
    left = beside(QRect(560, 20, 430, 500), area)
    assert left is not None and left.right() < 560 and left.width() >= MIN_NODE_SIZE.width()
    assert fit_inside(QRect(900, 650, 600, 680), area) == QRect(400, 20, 600, 680)
    assert fit_inside(QRect(-50, -50, 2000, 2000), area) == QRect(0, 0, 1000, 700)
    hanging = QRect(800, 100, 500, 300)
    assert reachable(hanging, area) == hanging  # its header can still be grabbed
    assert reachable(QRect(1100, -40, 500, 300), area).topLeft().x() < 1000
    assert reachable(QRect(1100, -40, 500, 300), area).top() == 0
