"""The minimap (object name ``canvasMinimap``): the whole board in a corner of the canvas.

It draws every card as a small rectangle and the part of the board in sight as a frame; a click or a
drag on it centres the view there. The cards' extent and their layer (a pixmap) are kept until a card
is added, removed, moved or resized, or the extent shown changes: a pan or a zoom repaints the minimap
in every frame, and walking 200 cards twice per paint took a fifth of a zoom step's 15 ms.
"""

from __future__ import annotations

import logging

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QMouseEvent, QPainter, QPaintEvent, QPen, QPixmap
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
        self._extent_version = -1
        self._extent = QRectF()
        self._layer_key: tuple[object, ...] = ()
        self._layer = QPixmap()
        view.viewport_changed.connect(self.follow)

    def follow(self) -> None:
        """Keep to the view's corner and repaint (the view panned, zoomed or changed size)."""
        view = self._view.viewport().geometry()
        self.move(view.right() - self.width() - _MARGIN, view.bottom() - self.height() - _MARGIN)
        self.raise_()
        self.update()

    def board_rect(self) -> QRectF:
        """The board's extent: every card and the part in sight."""
        return self._view.visible_scene_rect().united(self._cards_extent()).adjusted(-80, -80, 80, 80)

    def _cards_extent(self) -> QRectF:
        version = self._view.card_version
        if version != self._extent_version:
            rect = QRectF()
            for card in self._view.cards.values():
                rect = rect.united(card.rect())
            self._extent, self._extent_version = rect, version
        return self._extent

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

        ratio = self.devicePixelRatioF()
        key = (self._extent_version, board.getRect(), self.width(), self.height(), ratio, c.muted)
        if key != self._layer_key:  # the cards, drawn once for this extent and size
            layer = QPixmap(round(self.width() * ratio), round(self.height() * ratio))
            layer.setDevicePixelRatio(ratio)
            layer.fill(Qt.GlobalColor.transparent)
            card_colour = QColor(c.muted)
            card_colour.setAlpha(150)
            cards = QPainter(layer)  # 200 small rects: plain fills, no antialiasing
            for card in self._view.cards.values():
                cards.fillRect(mapped(card.rect()), card_colour)
            cards.end()
            self._layer, self._layer_key = layer, key
        painter.drawPixmap(0, 0, self._layer)
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
