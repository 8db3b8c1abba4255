"""The minimap (object name ``canvasMinimap``): the whole board in a corner of the canvas.

It draws every card as a small rectangle and the part of the board in sight as a frame; a click or a
drag on it centres the view there.
"""

from __future__ import annotations

import logging

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QMouseEvent, QPainter, QPaintEvent, QPen
from PySide6.QtWidgets import QWidget

from desktop.ui.canvas.view import CanvasView
from desktop.ui.theme import ThemeColors

log = logging.getLogger(__name__)

__all__ = ["Minimap"]

_SIZE = (220, 150)
_MARGIN = 14


class Minimap(QWidget):
    """The minimap of ``view``, in the view's bottom-right corner.

    Args:
        view: The canvas view (the minimap is a child of it, over its viewport).
        colors: The theme's colours.
    """

    def __init__(self, view: CanvasView, colors: ThemeColors) -> None:
        super().__init__(view)
        self.setObjectName("canvasMinimap")
        self.setToolTip("The whole board: click or drag to go there")
        self._view = view
        self.colors = colors
        self.resize(*_SIZE)
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        view.viewport_changed.connect(self.follow)

    def follow(self) -> None:
        """Keep to the view's corner and repaint (the view panned, zoomed or changed size)."""
        view = self._view.viewport().geometry()
        self.move(view.right() - self.width() - _MARGIN, view.bottom() - self.height() - _MARGIN)
        self.raise_()
        self.update()

    def board_rect(self) -> QRectF:
        """The board's extent: every card and the part in sight."""
        rect = self._view.visible_scene_rect()
        for card in self._view.cards.values():
            rect = rect.united(card.rect())
        return rect.adjusted(-80, -80, 80, 80)

    def _scale(self) -> tuple[QRectF, float, QPointF]:
        board = self.board_rect()
        inner = QRectF(self.rect()).adjusted(6, 6, -6, -6)
        scale = min(inner.width() / board.width(), inner.height() / board.height())
        offset = QPointF(inner.left() + (inner.width() - board.width() * scale) / 2,
                         inner.top() + (inner.height() - board.height() * scale) / 2)
        return board, scale, offset

    def to_scene(self, pos: QPointF) -> QPointF:
        """The board point under minimap point ``pos``."""
        board, scale, offset = self._scale()
        return QPointF(board.left() + (pos.x() - offset.x()) / scale,
                       board.top() + (pos.y() - offset.y()) / scale)

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 (Qt API)
        c = self.colors
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        back = QColor(c.base)
        back.setAlpha(235)
        painter.setPen(QPen(QColor(c.border), 1))
        painter.setBrush(back)
        painter.drawRoundedRect(QRectF(self.rect()).adjusted(0.5, 0.5, -0.5, -0.5), 8, 8)
        board, scale, offset = self._scale()

        def mapped(rect: QRectF) -> QRectF:
            return QRectF(offset.x() + (rect.left() - board.left()) * scale,
                          offset.y() + (rect.top() - board.top()) * scale, rect.width() * scale,
                          rect.height() * scale)

        card_colour = QColor(c.muted)
        card_colour.setAlpha(150)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, False)  # 200 small rects: plain fills
        for card in self._view.cards.values():
            painter.fillRect(mapped(card.rect()), card_colour)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        painter.setPen(QPen(QColor(c.accent), 1.5))
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawRect(mapped(self._view.visible_scene_rect()))
        painter.end()

    def mousePressEvent(self, event: QMouseEvent) -> None:  # noqa: N802 (Qt API)
        if event.button() == Qt.MouseButton.LeftButton:
            self._view.center_on(self.to_scene(event.position()))
            event.accept()

    def mouseMoveEvent(self, event: QMouseEvent) -> None:  # noqa: N802 (Qt API)
        if event.buttons() & Qt.MouseButton.LeftButton:
            self._view.center_on(self.to_scene(event.position()))
            event.accept()
