"""A fork on the canvas: an edge (``QGraphicsObject``, object name ``forkEdge``) from parent to child.

The edge leaves the parent card's side nearest the child (at the forked message's row when the
board can find it on the live node, else below the title band), ends at the child card with an
arrow head and carries the forked message's first words as its label. When the parent node was
deleted the edge starts at a small "deleted node" stub left of the child.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontMetricsF,
    QPainter,
    QPainterPath,
    QPainterPathStroker,
    QPen,
    QPolygonF,
)
from PySide6.QtWidgets import QGraphicsObject, QStyleOptionGraphicsItem, QWidget

from desktop.ui.theme import ThemeColors

if TYPE_CHECKING:
    from desktop.ui.canvas.card import NodeCard

log = logging.getLogger(__name__)

__all__ = ["DELETED_LABEL", "ForkEdge"]

DELETED_LABEL = "deleted node"
_STUB = QRectF(0, 0, 190, 50)


class ForkEdge(QGraphicsObject):
    """The edge of one fork.

    Args:
        parent_card: The card of the node forked from; None when that node is gone.
        child_card: The card of the fork.
        label: The forked message's first words.
        colors: The theme's colours.
        anchor: Returns the scene point of the forked message on the parent (None when not visible).
    """

    def __init__(self, parent_card: NodeCard | None, child_card: NodeCard, label: str, colors: ThemeColors,
                 anchor: Callable[[], QPointF | None] | None = None) -> None:
        super().__init__()
        self.setObjectName("forkEdge")
        self.parent_card = parent_card
        self.child_card = child_card
        self.label = label
        self.colors = colors
        self._anchor = anchor
        self.setZValue(1)  # over the cards (a label may reach over one); live node widgets cover both
        self._path = QPainterPath()
        self._label_rect = QRectF()
        self._stub = QRectF()
        self.text_scale = 1.0
        """How much larger than at 100 % the label is drawn (zoomed out it keeps a readable size)."""
        self.refresh()

    def set_text_scale(self, scale: float) -> None:
        """Draw the label and the stub ``scale`` times larger (the board zoomed out)."""
        if abs(scale - self.text_scale) > 0.05:
            self.text_scale = scale
            self.refresh()

    def refresh(self) -> None:
        """Follow the cards (after a move or a resize)."""
        self.prepareGeometryChange()
        child = self.child_card.rect()
        if self.parent_card is None:
            k = self.text_scale
            stub = QRectF(0, 0, _STUB.width() * k, _STUB.height() * k)
            self._stub = stub.translated(child.left(), child.top() - stub.height() - 70 * k)
            src_rect = self._stub
        else:
            self._stub = QRectF()
            src_rect = self.parent_card.rect()
        leftwards = child.center().x() < src_rect.center().x()
        anchor = self._anchor() if self._anchor is not None and self.parent_card is not None else None
        y = anchor.y() if anchor is not None else src_rect.top() + min(60.0, src_rect.height() / 2)
        start = QPointF(src_rect.left() if leftwards else src_rect.right(), y)
        end = QPointF(child.right() if leftwards else child.left(), child.top() + 17)
        bend = max(60.0, abs(end.x() - start.x()) / 2) * (-1 if leftwards else 1)
        path = QPainterPath(start)
        if self.parent_card is None:  # from the stub above the child, down into the child's left side
            start = QPointF(self._stub.left() + 24, self._stub.bottom())
            path = QPainterPath(start)
            path.cubicTo(QPointF(start.x(), end.y()), QPointF(end.x() - 40, end.y()), end)
            leftwards = False
        else:
            path.cubicTo(start + QPointF(bend, 0), end - QPointF(bend, 0), end)
        self._path = path
        self._end = end
        self._dir = -1 if leftwards else 1
        mid = path.pointAtPercent(0.5)
        font = QFont()
        font.setPointSizeF(9 * self.text_scale)
        k = self.text_scale
        room = max(abs(end.x() - start.x()) - 16, 48 * k)  # the label stays between the two cards
        width = min(220.0 * k, room, QFontMetricsF(font).horizontalAdvance(self.label) + 16 * k)
        shown = self.label and self.parent_card is not None  # a stub carries its label itself
        self._label_rect = QRectF(mid.x() - width / 2, mid.y() - 11 * k, width, 22 * k) if shown else QRectF()
        self.update()

    def boundingRect(self) -> QRectF:  # noqa: N802 (Qt API)
        rect = self._path.boundingRect().united(self._label_rect).united(self._stub)
        return rect.adjusted(-12, -12, 12, 12)

    def shape(self) -> QPainterPath:
        stroker = QPainterPathStroker()
        stroker.setWidth(10)
        shape = stroker.createStroke(self._path)
        shape.addRect(self._label_rect)
        return shape

    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem,
              widget: QWidget | None = None) -> None:
        c = self.colors
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        accent = QColor(c.accent)
        painter.setPen(QPen(accent, 2.0 * max(1.0, self.text_scale * 0.8)))
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawPath(self._path)
        tip = self._end
        d = self._dir
        painter.setBrush(accent)
        a = 10 * max(1.0, self.text_scale * 0.8)
        painter.drawPolygon(QPolygonF([tip, tip + QPointF(-a * d, -a / 2), tip + QPointF(-a * d, a / 2)]))
        font = QFont(painter.font())
        font.setPointSizeF(9 * self.text_scale)
        painter.setFont(font)
        k = self.text_scale
        if not self._stub.isEmpty():
            painter.setPen(QPen(QColor(c.muted), 1.2, Qt.PenStyle.DashLine))
            painter.setBrush(QColor(c.alt_base))
            painter.drawRoundedRect(self._stub, 8 * k, 8 * k)
            painter.setPen(QColor(c.muted))
            half = self._stub.height() / 2
            top = QRectF(self._stub.left(), self._stub.top() + 3 * k, self._stub.width(), half)
            painter.drawText(top, Qt.AlignmentFlag.AlignCenter, DELETED_LABEL)
            painter.setPen(QColor(c.text))
            bottom = top.translated(0, half - 6 * k).adjusted(8 * k, 0, -8 * k, 0)
            painter.drawText(bottom, Qt.AlignmentFlag.AlignCenter,
                             painter.fontMetrics().elidedText(self.label, Qt.TextElideMode.ElideRight,
                                                              int(bottom.width())))
        lod = option.levelOfDetailFromTransform(painter.worldTransform())
        if not self._label_rect.isEmpty() and lod > 0.08:
            painter.setPen(QPen(accent, 1.0 * k))
            painter.setBrush(QColor(c.base))
            painter.drawRoundedRect(self._label_rect, 11 * k, 11 * k)
            painter.setPen(QColor(c.text))
            painter.drawText(self._label_rect.adjusted(8 * k, 0, -8 * k, 0), Qt.AlignmentFlag.AlignCenter,
                             painter.fontMetrics().elidedText(self.label, Qt.TextElideMode.ElideRight,
                                                              int(self._label_rect.width() - 16 * k)))
