"""The image viewer (object name ``imageViewer``): an attached or tool-returned image at full size.

Zoom with the wheel, ``+`` / ``-`` (``zoomInButton``, ``zoomOutButton``) and ``0`` or Fit
(``fitButton``, the default on opening: the whole image in the window, never enlarged); drag to pan.
"Save as…" (``saveImageButton``) writes the image's original bytes (the stored file, not a
re-encoding). The image is read and decoded in a worker; the window shows at once with a "Loading…"
line (``viewerStatus``).
"""

from __future__ import annotations

import contextlib
import logging
import os
from pathlib import Path

from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QImage, QKeyEvent, QPainter, QPalette, QPixmap, QResizeEvent, QWheelEvent
from PySide6.QtWidgets import (
    QDialog,
    QFileDialog,
    QGraphicsPixmapItem,
    QGraphicsScene,
    QGraphicsView,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from desktop.ui.attachments.images import decode_image
from desktop.ui.attachments.items import ImageItem, Unreadable
from desktop.ui.attachments.jobs import run_job

log = logging.getLogger(__name__)

__all__ = ["ImageViewer", "MAX_ZOOM", "MIN_ZOOM", "ZOOM_STEP", "show_viewer"]

ZOOM_STEP = 1.25
MIN_ZOOM = 0.05
MAX_ZOOM = 16.0


def _read(item: ImageItem) -> tuple[bytes, QImage]:
    """The image's bytes and its full-size decoding (a worker thread)."""
    data = item.read()
    image = decode_image(data)
    if image.isNull():
        raise Unreadable("the image cannot be decoded")
    return data, image


class _View(QGraphicsView):
    """The picture: wheel zooms about the cursor, a drag pans."""

    def __init__(self, viewer: ImageViewer) -> None:
        super().__init__(viewer)
        self._viewer = viewer
        self.setObjectName("imageCanvas")
        self.setDragMode(QGraphicsView.DragMode.ScrollHandDrag)
        self.setTransformationAnchor(QGraphicsView.ViewportAnchor.NoAnchor)  # zoom_by keeps its point
        self.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform, True)
        self.setAlignment(Qt.AlignmentFlag.AlignCenter)

    def wheelEvent(self, event: QWheelEvent) -> None:  # noqa: N802 - Qt override
        """Zoom in (away from you) or out, one step per notch."""
        steps = event.angleDelta().y() / 120
        if steps:
            self._viewer.zoom_by(ZOOM_STEP ** steps, event.position().toPoint())
        event.accept()


class ImageViewer(QDialog):
    """A window showing one image (see the module doc); delete on close.

    Args:
        item: The image.
        parent: The window it belongs to.
    """

    def __init__(self, item: ImageItem, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("imageViewer")
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose, True)
        self.setWindowTitle(item.name)
        self.item = item
        self.image_size: tuple[int, int] | None = None
        self._data: bytes | None = None
        self._fit = True
        self._zoom = 1.0
        lay = QVBoxLayout(self)
        lay.setContentsMargins(6, 6, 6, 6)
        bar = QHBoxLayout()
        self.status = QLabel("Loading…", self)
        self.status.setObjectName("viewerStatus")
        self.status.setTextFormat(Qt.TextFormat.PlainText)
        bar.addWidget(self.status, 1)
        self.zoom_out_button = self._button("−", "zoomOutButton", "Zoom out (-)", bar)
        self.zoom_out_button.clicked.connect(lambda: self.zoom_by(1 / ZOOM_STEP))
        self.zoom_in_button = self._button("+", "zoomInButton", "Zoom in (+)", bar)
        self.zoom_in_button.clicked.connect(lambda: self.zoom_by(ZOOM_STEP))
        self.fit_button = self._button("Fit", "fitButton", "Fit the window (0)", bar)
        self.fit_button.clicked.connect(self.fit)
        self.save_button = self._button("Save as…", "saveImageButton", "Save the original file", bar)
        self.save_button.clicked.connect(self.save_as)
        self.save_button.setEnabled(False)
        lay.addLayout(bar)
        self._scene = QGraphicsScene(self)
        self._pixmap = QGraphicsPixmapItem()
        self._pixmap.setTransformationMode(Qt.TransformationMode.SmoothTransformation)
        self._scene.addItem(self._pixmap)
        self.view = _View(self)
        self.view.setScene(self._scene)
        self.view.setBackgroundBrush(self.palette().color(QPalette.ColorRole.Window).darker(112))
        lay.addWidget(self.view, 1)
        self.resize(900, 680)
        run_job(self, lambda: _read(item), self._on_loaded)

    def _button(self, text: str, name: str, tip: str, bar: QHBoxLayout) -> QPushButton:
        button = QPushButton(text, self)
        button.setObjectName(name)
        button.setToolTip(tip)
        button.setAutoDefault(False)
        bar.addWidget(button)
        return button

    def _on_loaded(self, result: object, error: BaseException | None) -> None:
        if error is not None or not isinstance(result, tuple):
            self.status.setText(f"Cannot show {self.item.name}: {error}")
            return
        data, image = result
        self._data = data
        self.image_size = (image.width(), image.height())
        self._pixmap.setPixmap(QPixmap.fromImage(image))
        self._scene.setSceneRect(self._pixmap.boundingRect())
        self.save_button.setEnabled(True)
        self.fit()

    # -- zoom -----------------------------------------------------------------------------------

    @property
    def zoom(self) -> float:
        """The current scale (1.0: one image pixel per screen pixel)."""
        return self._zoom

    def zoom_by(self, factor: float, at: QPoint | None = None) -> None:
        """Scale by ``factor`` (kept between ``MIN_ZOOM`` and ``MAX_ZOOM``), keeping the image point
        under ``at`` (a viewport position; default its centre) where it is."""
        self._set_zoom(self._zoom * factor, at)
        self._fit = False

    def fit(self) -> None:
        """Show the whole image (never enlarged beyond its size), and keep fitting when resized."""
        self._fit = True
        if self.image_size is None:
            return
        width, height = self.image_size
        area = self.view.viewport().rect()
        scale = min(1.0, (area.width() - 4) / max(width, 1), (area.height() - 4) / max(height, 1))
        self._set_zoom(scale)

    def _set_zoom(self, zoom: float, at: QPoint | None = None) -> None:
        view = self.view
        anchor = at if at is not None else view.viewport().rect().center()
        point = view.mapToScene(anchor)
        self._zoom = min(MAX_ZOOM, max(MIN_ZOOM, zoom))
        view.resetTransform()
        view.scale(self._zoom, self._zoom)
        moved = view.mapFromScene(point) - anchor
        for bar, delta in ((view.horizontalScrollBar(), moved.x()), (view.verticalScrollBar(), moved.y())):
            bar.setValue(bar.value() + delta)
        if self.image_size is not None:
            width, height = self.image_size
            self.status.setText(f"{self.item.name} — {width}×{height} — {self._zoom * 100:.0f}%")

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt override
        """Keep fitting the window while in Fit mode."""
        super().resizeEvent(event)
        if self._fit:
            self.fit()

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 - Qt override
        """``+`` / ``=`` zoom in, ``-`` zooms out, ``0`` fits; Escape closes."""
        key = event.key()
        if key in (Qt.Key.Key_Plus, Qt.Key.Key_Equal):
            self.zoom_by(ZOOM_STEP)
        elif key in (Qt.Key.Key_Minus, Qt.Key.Key_Underscore):
            self.zoom_by(1 / ZOOM_STEP)
        elif key == Qt.Key.Key_0:
            self.fit()
        else:
            super().keyPressEvent(event)

    # -- saving ---------------------------------------------------------------------------------

    def save_as(self) -> Path | None:
        """Ask where to save the original file, then write it (atomically)."""
        if self._data is None:
            return None
        start = str(Path.home() / self.item.name)
        path, _filter = QFileDialog.getSaveFileName(self, "Save image as", start)
        if not path:
            return None
        target = Path(path)
        tmp = target.with_name(target.name + ".tmp")
        try:
            tmp.write_bytes(self._data)
            os.replace(tmp, target)  # never a half-written file under the chosen name
        except OSError as exc:
            with contextlib.suppress(OSError):
                tmp.unlink(missing_ok=True)
            self.status.setText(f"Could not save: {exc.strerror or exc}")
            return None
        self.status.setText(f"Saved to {os.fspath(target)}")
        return target


def show_viewer(item: ImageItem, anchor: QWidget) -> ImageViewer:
    """Open a viewer of ``item`` over ``anchor``'s window, and bring it to the front."""
    viewer = ImageViewer(item, anchor.window())
    viewer.show()
    viewer.raise_()
    viewer.activateWindow()
    return viewer
