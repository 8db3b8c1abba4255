"""The small widgets attachments are drawn with: an image's thumbnail tile and a file's badge.

``AttachmentThumb`` (object name ``attachmentThumb``) is a fixed-size tile: its size never changes when
the thumbnail arrives, so a transcript's layout does not move. It loads its thumbnail in a worker
(``items.load_thumb``), cached by the image's key; a click opens the image viewer. An image that
cannot be read becomes a placeholder (object name ``attachmentPlaceholder``) saying why.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import PurePath

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QIcon, QImage, QPixmap
from PySide6.QtWidgets import QLabel, QToolButton, QWidget

from desktop.ui.attachments.items import ImageItem, Unreadable, cached_thumb, load_thumb, remember_thumb
from desktop.ui.attachments.jobs import run_job

log = logging.getLogger(__name__)

__all__ = ["AttachmentThumb", "badge_text", "make_badge", "restyle", "tile_size"]

_BADGES = {"application/pdf": "PDF", "text/plain": "TXT"}


def restyle(widget: QWidget) -> None:
    """Apply the style sheet again after an object name or a property changed."""
    style = widget.style()
    style.unpolish(widget)
    style.polish(widget)


def badge_text(name: str, media_type: str) -> str:
    """The few letters a file's badge shows: ``PDF``, ``TXT``, else its extension (``ZIP``), else ``FILE``."""
    if media_type in _BADGES:
        return _BADGES[media_type]
    ext = PurePath(name).suffix[1:5].upper()
    return ext if ext.isalnum() else "FILE"


def make_badge(text: str, side: int, parent: QWidget) -> QLabel:
    """A square label (object name ``attachmentBadge``) holding ``text``, for files without a picture."""
    badge = QLabel(text, parent)
    badge.setObjectName("attachmentBadge")
    badge.setAlignment(Qt.AlignmentFlag.AlignCenter)
    badge.setFixedSize(side, side)
    font = badge.font()
    font.setBold(True)
    font.setPointSizeF(max(6.5, font.pointSizeF() * (0.8 if side < 40 else 0.95)))
    badge.setFont(font)
    return badge


def tile_size(height: int, width_px: int | None, height_px: int | None) -> QSize:
    """A tile ``height`` pixels high, as wide as the image's aspect asks (between 0.6 and 2.2
    times its height; square when the pixel size is unknown), decided before the image loads."""
    if not width_px or not height_px:
        return QSize(height, height)
    width = round(height * min(2.2, max(0.6, width_px / height_px)))
    return QSize(width, height)


def fitted_pixmap(image: QImage, box: int | QSize, ratio: float) -> QPixmap:
    """``image`` scaled to fit ``box`` (a square's side, or a size) at the pixel ratio (never up)."""
    size = QSize(box, box) if isinstance(box, int) else box
    target = QSize(max(1, round(size.width() * ratio)), max(1, round(size.height() * ratio)))
    if image.width() > target.width() or image.height() > target.height():
        image = image.scaled(target, Qt.AspectRatioMode.KeepAspectRatio,
                             Qt.TransformationMode.SmoothTransformation)
    pixmap = QPixmap.fromImage(image)
    pixmap.setDevicePixelRatio(ratio)
    return pixmap


class AttachmentThumb(QToolButton):
    """One image as a clickable tile (see the module doc).

    Args:
        item: The image.
        size: The tile's size in pixels (``tile_size``).
        open_viewer: Called with the item when the tile is clicked.

    Signals:
        loaded(): the thumbnail (or the placeholder) is shown.
    """

    loaded = Signal()

    def __init__(self, item: ImageItem, size: QSize, open_viewer: Callable[[ImageItem], object] | None,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("attachmentThumb")
        self.item = item
        self.problem: str | None = None
        self._inner = QSize(size.width() - 6, size.height() - 6)
        self._open = open_viewer
        self._started = False
        self.setFixedSize(size)
        self.setIconSize(self._inner)
        self.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonIconOnly)
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.setToolTip(f"{item.name}\n{item.details}\nClick to view")
        self.setAccessibleName(f"Image {item.name}")
        self.clicked.connect(self._on_clicked)
        cached = cached_thumb(item.key)
        if cached is not None:
            self._show(cached)

    @property
    def is_loaded(self) -> bool:
        """True once the thumbnail or the placeholder is shown."""
        return not self.icon().isNull() or self.problem is not None

    def load(self) -> None:
        """Decode the thumbnail in a worker (once); a cached one is only checked (the file may be gone)."""
        if self._started:
            return
        self._started = True
        item = self.item
        if self.icon().isNull():
            run_job(self, lambda: load_thumb(item), self._on_thumb)
        elif item.check is not None:
            run_job(self, item.check, self._on_check)

    def _on_check(self, problem: object, _error: BaseException | None) -> None:
        if isinstance(problem, str):
            self.setIcon(QIcon())
            self.show_problem(problem)
        self.loaded.emit()

    def _on_thumb(self, image: object, error: BaseException | None) -> None:
        if isinstance(image, QImage) and not image.isNull():
            remember_thumb(self.item.key, image)
            self._show(image)
        else:
            self.show_problem(str(error) if isinstance(error, Unreadable) else "the image cannot be shown")
            if error is not None and not isinstance(error, Unreadable):
                log.warning("thumbnail of %s failed: %r", self.item.name, error)
        self.loaded.emit()

    def _show(self, image: QImage) -> None:
        self.setIcon(fitted_pixmap(image, self._inner, self.devicePixelRatioF()))

    def show_problem(self, problem: str) -> None:
        """Become the placeholder of an image that cannot be shown (``attachmentPlaceholder``)."""
        self.problem = problem
        self.setObjectName("attachmentPlaceholder")
        name = self.fontMetrics().elidedText(self.item.name, Qt.TextElideMode.ElideMiddle, self.width() - 12)
        self.setText(("⚠\nfile missing\n" if "missing" in problem else "⚠\ncannot show\n") + name)
        self.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        self.setCursor(Qt.CursorShape.ArrowCursor)
        self.setToolTip(f"{self.item.name}: {problem}")
        restyle(self)

    def _on_clicked(self) -> None:
        if self.problem is None and self._open is not None:
            self._open(self.item)
