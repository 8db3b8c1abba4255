"""One node on the canvas: a card (``QGraphicsObject``, object name ``nodeCard``).

Zoomed out the card paints a cheap summary (``summary.CardSummary``); at reading zoom the board puts
the live chat node widget over it (see ``view.CanvasView``), and the card only draws its frame. A card
is moved by dragging its title band and resized by its bottom-right grip; either reports
``geometry_changed`` once the mouse is released.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from PySide6.QtCore import QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QColor, QFont, QPainter, QPen
from PySide6.QtWidgets import (
    QGraphicsItem,
    QGraphicsObject,
    QGraphicsSceneMouseEvent,
    QStyleOptionGraphicsItem,
    QWidget,
)

from desktop.ui.canvas.summary import CardSummary
from desktop.ui.theme import ThemeColors

if TYPE_CHECKING:
    from desktop.ui.node.chat_node import ChatNodeWidget

log = logging.getLogger(__name__)

__all__ = ["BOTTOM_BAND", "MIN_CARD_HEIGHT", "MIN_CARD_WIDTH", "NodeCard", "TITLE_BAND"]

MIN_CARD_WIDTH = 280
MIN_CARD_HEIGHT = 200
TITLE_BAND = 34
"""Height of the band a card is dragged by (zoomed out: the whole card moves it)."""
BOTTOM_BAND = 12
"""Height of the strip under a live node widget whose right end resizes the card."""
_GRIP = 18
_TEXT_LOD = 0.9
"""Below this zoom a card is drawn in device pixels (its text keeps its size on screen)."""
_RADIUS = 10.0
_STATE_COLOURS = {"busy": "#2f80ed", "approval": "#e0a100", "idle": ""}
_STATE_TEXT = {"busy": "answering\u2026", "approval": "waiting for approval", "idle": ""}


class NodeCard(QGraphicsObject):
    """The card of one chat node.

    Args:
        node: The node it shows.
        rect: Its place on the board (scene coordinates).
        colors: The theme's colours.

    Signals:
        geometry_changed(): The user moved or resized the card (mouse released).
        zoom_requested(): The card was double-clicked ("Zoom to node").
    """

    geometry_changed = Signal()
    zoom_requested = Signal()

    def __init__(self, node: ChatNodeWidget, rect: QRectF, colors: ThemeColors) -> None:
        super().__init__()
        self.setObjectName("nodeCard")
        self.node = node
        self.colors = colors
        self._size = rect.size()
        self.setPos(rect.topLeft())
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemIsMovable, True)
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemIsSelectable, True)
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemSendsGeometryChanges, True)
        self.setAcceptedMouseButtons(Qt.MouseButton.LeftButton)
        # Panning blits the cached card; zooming paints it again (cheap: fixed-size text, see paint).
        self.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
        self.live = False
        """The live node widget covers the card (reading zoom): paint the frame only."""
        self._summary: CardSummary | None = None
        self._resizing: QPointF | None = None
        self._press_pos: QPointF | None = None

    # -- geometry ----------------------------------------------------------------------------------
    @property
    def node_id(self) -> str:
        """The id of the card's node."""
        return self.node.node_id

    def rect(self) -> QRectF:
        """The card's place on the board (scene coordinates)."""
        return QRectF(self.pos(), self._size)

    def set_rect(self, rect: QRectF) -> None:
        """Move and resize the card to ``rect``."""
        self.prepareGeometryChange()
        self._size = rect.size()
        if rect.topLeft() == self.pos():
            self.geometry_live()  # a move tells the view through ``itemChange``; a resize in place here
        else:
            self.setPos(rect.topLeft())
        self.update()

    def boundingRect(self) -> QRectF:  # noqa: N802 (Qt API)
        return QRectF(-2, -2, self._size.width() + 4, self._size.height() + 4)

    def set_summary(self, summary: CardSummary) -> None:
        """Show ``summary`` when zoomed out (repaints only when it changed, and not while the live
        node covers the card: repainting the card repaints the whole node on top of it)."""
        if summary != self._summary:
            self._summary = summary
            if not self.live:
                self.update()

    # -- painting ----------------------------------------------------------------------------------
    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem,
              widget: QWidget | None = None) -> None:
        lod = option.levelOfDetailFromTransform(painter.worldTransform())
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        if lod >= _TEXT_LOD or self.live:
            self._paint_card(painter, self._size.width(), self._size.height())
            return
        # Zoomed out: drawn in device pixels, so the text keeps one readable size (and the glyph cache
        # keeps serving it while the zoom changes).
        device = painter.worldTransform().mapRect(QRectF(QPointF(0, 0), self._size))
        painter.save()
        painter.resetTransform()
        painter.translate(device.topLeft())
        self._paint_card(painter, device.width(), device.height())
        painter.restore()

    def _paint_card(self, painter: QPainter, w: float, h: float) -> None:
        """The card at ``w`` x ``h`` units of one pixel each (at 100 % or in device pixels)."""
        c = self.colors
        selected = self.isSelected()
        painter.setPen(QPen(QColor(c.accent if selected else c.border), 2.5 if selected else 1.2))
        painter.setBrush(QColor(c.base))
        painter.drawRoundedRect(QRectF(0, 0, w, h), _RADIUS, _RADIUS)
        band = QRectF(1, 1, w - 2, min(TITLE_BAND, h - 2))
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(QColor(c.accent if selected else c.alt_base))
        painter.drawRoundedRect(band, _RADIUS - 1, _RADIUS - 1)
        painter.drawRect(QRectF(1, band.height() / 2, w - 2, band.height() / 2 + 1))
        summary = self._summary
        if summary is None or w < 40:
            return
        pad = 12.0
        state_colour = _STATE_COLOURS.get(summary.state, "")
        if state_colour:
            painter.setBrush(QColor(state_colour))
            painter.drawEllipse(QRectF(w - pad - 10, (band.height() - 10) / 2, 10, 10))
        font = QFont(painter.font())
        font.setPixelSize(15)
        font.setBold(True)
        painter.setFont(font)
        painter.setPen(QColor(c.accent_text if selected else c.text))
        title_rect = QRectF(pad, 0, w - 2 * pad - (14 if state_colour else 0), band.height())
        painter.drawText(title_rect, Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft,
                         painter.fontMetrics().elidedText(summary.title, Qt.TextElideMode.ElideRight,
                                                          int(title_rect.width())))
        if not self.live and h > band.height() + 30:
            self._paint_body(painter, summary, w, h, band.bottom() + 8)
        self._paint_grip(painter, w, h)

    def _paint_body(self, painter: QPainter, summary: CardSummary, w: float, h: float, y: float) -> None:
        """The meta line, the state and the last message's start, under the title band."""
        c = self.colors
        pad = 12.0
        font = QFont(painter.font())
        font.setBold(False)
        font.setPixelSize(12)
        painter.setFont(font)
        line_h = painter.fontMetrics().height() * 1.2
        painter.setPen(QColor(c.muted))
        meta = f"{summary.model} \u00b7 {summary.messages} messages"
        if summary.cost:
            meta += f" \u00b7 {summary.cost}"
        painter.drawText(QRectF(pad, y, w - 2 * pad, line_h), Qt.AlignmentFlag.AlignLeft,
                         painter.fontMetrics().elidedText(meta, Qt.TextElideMode.ElideRight,
                                                          int(w - 2 * pad)))
        y += line_h
        if summary.state != "idle":
            font.setBold(True)
            painter.setFont(font)
            painter.setPen(QColor(_STATE_COLOURS[summary.state]))
            painter.drawText(QRectF(pad, y, w - 2 * pad, line_h), Qt.AlignmentFlag.AlignLeft,
                             _STATE_TEXT[summary.state])
            y += line_h
        y += 4
        font.setBold(False)
        font.setPixelSize(13)
        painter.setFont(font)
        painter.setPen(QColor(c.text))
        body = QRectF(pad, y, w - 2 * pad, max(0.0, h - y - pad))
        if body.height() < painter.fontMetrics().height():
            return
        flags = int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop) | int(Qt.TextFlag.TextWordWrap)
        painter.drawText(body, flags, summary.last_line or "No messages yet")

    def _paint_grip(self, painter: QPainter, w: float, h: float) -> None:
        painter.setPen(QPen(QColor(self.colors.muted), 1.2))
        painter.drawLine(QPointF(w - 5, h - 12), QPointF(w - 12, h - 5))
        painter.drawLine(QPointF(w - 5, h - 8), QPointF(w - 8, h - 5))

    # -- mouse -------------------------------------------------------------------------------------
    def _in_grip(self, pos: QPointF) -> bool:
        return pos.x() >= self._size.width() - 2 * _GRIP and pos.y() >= self._size.height() - BOTTOM_BAND

    def mousePressEvent(self, event: QGraphicsSceneMouseEvent) -> None:  # noqa: N802 (Qt API)
        self._press_pos = self.pos()
        if self._in_grip(event.pos()):
            self._resizing = event.pos() - QPointF(self._size.width(), self._size.height())
            event.accept()
            return
        super().mousePressEvent(event)

    def mouseMoveEvent(self, event: QGraphicsSceneMouseEvent) -> None:  # noqa: N802 (Qt API)
        if self._resizing is not None:
            pos = event.pos() - self._resizing
            self.prepareGeometryChange()
            self._size.setWidth(max(MIN_CARD_WIDTH, pos.x()))
            self._size.setHeight(max(MIN_CARD_HEIGHT, pos.y()))
            self.update()
            self.geometry_live()
            return
        super().mouseMoveEvent(event)

    def mouseReleaseEvent(self, event: QGraphicsSceneMouseEvent) -> None:  # noqa: N802 (Qt API)
        resized = self._resizing is not None
        self._resizing = None
        super().mouseReleaseEvent(event)
        if resized or (self._press_pos is not None and self._press_pos != self.pos()):
            self.geometry_changed.emit()
        self._press_pos = None

    def mouseDoubleClickEvent(self, event: QGraphicsSceneMouseEvent) -> None:  # noqa: N802 (Qt API)
        event.accept()
        self.zoom_requested.emit()

    def itemChange(self, change: QGraphicsItem.GraphicsItemChange, value: object) -> object:  # noqa: N802
        if change == QGraphicsItem.GraphicsItemChange.ItemPositionHasChanged:
            self.geometry_live()
        return super().itemChange(change, value)

    def geometry_live(self) -> None:
        """The card moves or grows under the mouse: its edges and live widget follow."""
        scene = self.scene()
        if scene is not None:
            for view in scene.views():
                follow = getattr(view, "card_moved", None)
                if follow is not None:
                    follow(self)
