"""The canvas's view (``QGraphicsView``, object name ``canvasView``): pan, zoom and the live nodes.

Pan by dragging empty space, by space + drag or with the middle button; zoom with Ctrl+wheel or a
pinch, 10 %-400 %, about the cursor. At reading zoom (``READING_ZOOM`` and more) each card in sight
gets its real chat node widget placed over it as a child of the viewport, moved there from its
sub-window when it first comes into sight (``adopt``; the widget is not re-created, not scaled and
not proxied: input, streaming, cards and approvals work as in the desk);
off-screen and zoomed-out cards paint their summary instead and their widgets are hidden (a hidden
node keeps streaming into its transcript).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QPoint, QPointF, QRectF, Qt, Signal
from PySide6.QtGui import (
    QColor,
    QKeyEvent,
    QMouseEvent,
    QNativeGestureEvent,
    QPainter,
    QResizeEvent,
    QWheelEvent,
)
from PySide6.QtWidgets import QGestureEvent, QGraphicsScene, QGraphicsView, QPinchGesture, QWidget

from desktop.ui.canvas.card import BOTTOM_BAND, TITLE_BAND, NodeCard

if TYPE_CHECKING:
    from desktop.ui.node.chat_node import ChatNodeWidget

log = logging.getLogger(__name__)

__all__ = ["MAX_ZOOM", "MIN_ZOOM", "READING_ZOOM", "CanvasView"]

MIN_ZOOM = 0.1
MAX_ZOOM = 4.0
READING_ZOOM = 0.7
"""From this zoom up the cards in sight host their live node widgets."""
_WORLD = 1e6


class CanvasView(QGraphicsView):
    """The board's view.

    Signals:
        viewport_changed(): The visible part of the board changed (pan, zoom, resize).
    """

    viewport_changed = Signal()

    def __init__(self, parent: QWidget | None, background: str) -> None:
        super().__init__(parent)
        self.setObjectName("canvasView")
        scene = QGraphicsScene(self)
        scene.setSceneRect(QRectF(-_WORLD, -_WORLD, 2 * _WORLD, 2 * _WORLD))
        scene.setItemIndexMethod(QGraphicsScene.ItemIndexMethod.BspTreeIndex)
        self.setScene(scene)
        self.setBackgroundBrush(QColor(background))
        self.setRenderHints(QPainter.RenderHint.Antialiasing | QPainter.RenderHint.TextAntialiasing)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setTransformationAnchor(QGraphicsView.ViewportAnchor.NoAnchor)
        self.setViewportUpdateMode(QGraphicsView.ViewportUpdateMode.SmartViewportUpdate)
        self.setOptimizationFlag(QGraphicsView.OptimizationFlag.DontSavePainterState, True)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.viewport().grabGesture(Qt.GestureType.PinchGesture)
        self.cards: dict[str, NodeCard] = {}
        """The board's cards by node id (the board fills it)."""
        self.adopt: Callable[[ChatNodeWidget], bool] = lambda _node: False
        """Called for a card coming into sight at reading zoom whose node's widget is still in its
        sub-window: moves it onto the viewport (True), or leaves it there (False: the desk shows)."""
        self.on_card_moved: Callable[[NodeCard], None] = lambda _card: None
        """Called while a card moves or grows (the board moves its edges)."""
        self.card_version = 0
        """Counts changes of the cards: added, removed, moved or resized (the minimap redraws them)."""
        self._pan_from: QPoint | None = None
        self._space = False
        self.viewport_changed.connect(self.place_live)

    # -- zoom ------------------------------------------------------------------------------------------
    def zoom(self) -> float:
        """The current zoom (1.0 = 100 %)."""
        return self.transform().m11()

    def zoom_at(self, factor: float, at: QPointF | None = None) -> None:
        """Zoom by ``factor`` (clamped to 10 %-400 %) keeping the scene point under ``at`` (viewport
        coordinates; the centre when None) where it is."""
        old = self.zoom()
        new = max(MIN_ZOOM, min(MAX_ZOOM, old * factor))
        if abs(new - old) < 1e-9:
            return
        pos = at if at is not None else QPointF(self.viewport().rect().center())
        before = self.mapToScene(pos.toPoint())
        self.scale(new / old, new / old)
        after = self.mapToScene(pos.toPoint())
        delta = after - before
        self.translate(delta.x(), delta.y())
        self.viewport_changed.emit()

    def set_zoom(self, zoom: float) -> None:
        """Set the zoom about the viewport's centre."""
        self.zoom_at(zoom / self.zoom())

    def show_rect(self, rect: QRectF, *, max_zoom: float = MAX_ZOOM, margin: float = 40.0) -> None:
        """Pan and zoom so that ``rect`` (scene coordinates) fills the view, centred."""
        if rect.isEmpty():
            return
        view = self.viewport().rect()
        zoom = min((view.width() - 2 * margin) / rect.width(), (view.height() - 2 * margin) / rect.height())
        zoom = max(MIN_ZOOM, min(max_zoom, zoom))
        self.resetTransform()
        self.scale(zoom, zoom)
        self.centerOn(rect.center())
        self.viewport_changed.emit()

    def center_on(self, point: QPointF) -> None:
        """Pan so that ``point`` (scene coordinates) is in the middle of the view."""
        self.centerOn(point)
        self.viewport_changed.emit()

    def pan_by(self, dx: float, dy: float) -> None:
        """Pan by ``dx``, ``dy`` viewport pixels (the board follows the mouse)."""
        z = self.zoom()
        self.translate(dx / z, dy / z)
        self.viewport_changed.emit()

    def visible_scene_rect(self) -> QRectF:
        """The part of the board in sight (scene coordinates)."""
        return self.mapToScene(self.viewport().rect()).boundingRect()

    # -- input -----------------------------------------------------------------------------------------
    def wheelEvent(self, event: QWheelEvent) -> None:  # noqa: N802 (Qt API)
        if event.modifiers() & Qt.KeyboardModifier.ControlModifier:
            steps = event.angleDelta().y() / 120.0
            if steps:
                self.zoom_at(1.15 ** steps, event.position())
            event.accept()
            return
        delta = event.pixelDelta() if not event.pixelDelta().isNull() else event.angleDelta()
        self.pan_by(delta.x(), delta.y())
        event.accept()

    def viewportEvent(self, event: QEvent) -> bool:  # noqa: N802 (Qt API)
        zoom_gesture = Qt.NativeGestureType.ZoomNativeGesture
        if isinstance(event, QNativeGestureEvent) and event.gestureType() == zoom_gesture:
            self.zoom_at(1.0 + event.value(), event.position())
            return True
        if isinstance(event, QGestureEvent):
            pinch = event.gesture(Qt.GestureType.PinchGesture)
            if isinstance(pinch, QPinchGesture):
                centre = self.viewport().mapFromGlobal(pinch.centerPoint().toPoint())
                self.zoom_at(pinch.scaleFactor(), QPointF(centre))
                return True
        return super().viewportEvent(event)

    def _starts_pan(self, event: QMouseEvent) -> bool:
        button = event.button()
        if button == Qt.MouseButton.MiddleButton:
            return True
        if button != Qt.MouseButton.LeftButton:
            return False
        return self._space or self.itemAt(event.position().toPoint()) is None

    def mousePressEvent(self, event: QMouseEvent) -> None:  # noqa: N802 (Qt API)
        if self._starts_pan(event):
            self._pan_from = event.position().toPoint()
            self.viewport().setCursor(Qt.CursorShape.ClosedHandCursor)
            self.setFocus(Qt.FocusReason.MouseFocusReason)
            self.scene().clearSelection()
            event.accept()
            return
        super().mousePressEvent(event)

    def mouseMoveEvent(self, event: QMouseEvent) -> None:  # noqa: N802 (Qt API)
        if self._pan_from is not None:
            pos = event.position().toPoint()
            delta = pos - self._pan_from
            self._pan_from = pos
            self.pan_by(delta.x(), delta.y())
            event.accept()
            return
        super().mouseMoveEvent(event)

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:  # noqa: N802 (Qt API)
        if self._pan_from is not None:
            self._pan_from = None
            shape = Qt.CursorShape.OpenHandCursor if self._space else Qt.CursorShape.ArrowCursor
            self.viewport().setCursor(shape)
            event.accept()
            return
        super().mouseReleaseEvent(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 (Qt API)
        if event.key() == Qt.Key.Key_Space and not event.isAutoRepeat():
            self._space = True
            self.viewport().setCursor(Qt.CursorShape.OpenHandCursor)
            event.accept()
            return
        super().keyPressEvent(event)

    def keyReleaseEvent(self, event: QKeyEvent) -> None:  # noqa: N802 (Qt API)
        if event.key() == Qt.Key.Key_Space and not event.isAutoRepeat():
            self._space = False
            self.viewport().setCursor(Qt.CursorShape.ArrowCursor)
            event.accept()
            return
        super().keyReleaseEvent(event)

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 (Qt API)
        super().resizeEvent(event)
        self.viewport_changed.emit()

    def scrollContentsBy(self, dx: int, dy: int) -> None:  # noqa: N802 (Qt API)
        super().scrollContentsBy(dx, dy)
        self.place_live()

    # -- the live node widgets -------------------------------------------------------------------------
    def card_moved(self, card: NodeCard) -> None:
        """A card moves under the mouse: its edges and its live widget follow."""
        self.card_version += 1
        self.on_card_moved(card)
        if card.live:
            self._place(card, True)

    def place_live(self) -> None:
        """Put the live node widget over each card in sight at reading zoom; hide the others."""
        if self.zoom() < READING_ZOOM - 1e-6:  # zoomed out: only the live cards have a widget to hide
            for card in [c for c in self.cards.values() if c.live]:
                self._place(card, False)
            return
        seen = self.visible_scene_rect()
        for card in self.cards.values():
            self._place(card, card.rect().intersects(seen))

    def _place(self, card: NodeCard, live: bool) -> None:
        node = card.node
        if node.parentWidget() is not self.viewport() and not (live and self.adopt(node)):
            live = False  # its sub-window keeps it (out of sight, zoomed out, or the desk shows)
        elif live:
            z = self.zoom()
            rect = self.mapFromScene(card.rect()).boundingRect().adjusted(
                1, round(TITLE_BAND * z) + 1, -1, -round(BOTTOM_BAND * z))
            if node.geometry() != rect:
                node.setGeometry(rect)
            if not node.isVisible():
                node.show()
        elif node.isVisible():
            node.hide()
        if card.live != live:
            card.live = live
            card.update()
