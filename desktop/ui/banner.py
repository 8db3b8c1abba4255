"""A dismissible, non-blocking message strip (welcome, corrupt project, errors, no keyring)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Literal

from PySide6.QtCore import QEvent, QObject, QTimer, Signal
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QMdiArea,
    QPushButton,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

log = logging.getLogger(__name__)

__all__ = ["Banner", "BannerKind", "BannerArea", "KeepNodesFilled"]

BannerKind = Literal["info", "warning", "error"]


class Banner(QFrame):
    """A rounded strip with a message, optional action buttons and a close button.

    Styled by the app style sheet through the dynamic property ``bannerKind``.

    Signals:
        dismissed(): The user closed the banner (it hides itself and is deleted later).
    """

    dismissed = Signal()

    def __init__(
        self,
        text: str,
        *,
        kind: BannerKind = "info",
        object_name: str = "banner",
        dismissible: bool = True,
        parent: QWidget | None = None,
    ) -> None:
        from PySide6.QtCore import Qt  # not at import time: Qt's enum namespace costs ~25 ms

        super().__init__(parent)
        self.setObjectName(object_name)
        self.setProperty("bannerKind", kind)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self._layout = QHBoxLayout(self)
        self._layout.setContentsMargins(12, 7, 6, 7)
        self._layout.setSpacing(8)
        self._label = QLabel(text, self)
        self._label.setObjectName("bannerText")
        self._label.setWordWrap(True)
        self._label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self._layout.addWidget(self._label, 1)
        self._close: QToolButton | None = None
        if dismissible:
            close = QToolButton(self)
            close.setObjectName("bannerCloseButton")
            close.setText("✕")
            close.setToolTip("Dismiss")
            close.setAccessibleName("Dismiss")
            close.clicked.connect(self.dismiss)
            self._layout.addWidget(close, 0, Qt.AlignmentFlag.AlignTop)
            self._close = close

    def text(self) -> str:
        """The message shown."""
        return self._label.text()

    def set_text(self, text: str) -> None:
        """Replace the message."""
        self._label.setText(text)

    def kind(self) -> str:
        """``info``, ``warning`` or ``error``."""
        return str(self.property("bannerKind"))

    def add_action(self, label: str, callback: Callable[[], object], *, object_name: str = "") -> QPushButton:
        """Add a button before the close button; clicking it calls ``callback``."""
        from PySide6.QtCore import Qt

        button = QPushButton(label, self)
        if object_name:
            button.setObjectName(object_name)
        button.clicked.connect(lambda _checked=False: callback())
        index = self._layout.count() - (1 if self._close is not None else 0)
        self._layout.insertWidget(index, button, 0, Qt.AlignmentFlag.AlignVCenter)
        return button

    def dismiss(self) -> None:
        """Hide and schedule deletion; emits ``dismissed``."""
        self.hide()
        self.dismissed.emit()
        self.deleteLater()


class BannerArea(QWidget):
    """A vertical stack of banners above the main content; empty and invisible when there is none."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("bannerArea")
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(8, 6, 8, 0)
        self._layout.setSpacing(6)
        self.setVisible(False)

    def show_banner(self, banner: Banner) -> Banner:
        """Add ``banner`` (replacing a visible banner with the same object name)."""
        for old in self.banners():
            if old.objectName() == banner.objectName():
                old.dismiss()
        banner.setParent(self)
        self._layout.addWidget(banner)
        banner.dismissed.connect(self._update_visibility)
        banner.destroyed.connect(self._update_visibility)
        banner.show()
        self.setVisible(True)
        return banner

    def banners(self) -> list[Banner]:
        """The banners currently shown, top to bottom."""
        out: list[Banner] = []
        for i in range(self._layout.count()):
            item = self._layout.itemAt(i)
            widget = item.widget() if item is not None else None
            if isinstance(widget, Banner) and not widget.isHidden():
                out.append(widget)
        return out

    def find(self, object_name: str) -> Banner | None:  # type: ignore[override]  # not QWidget.find(WId)
        """The visible banner with ``object_name``, if any."""
        for banner in self.banners():
            if banner.objectName() == object_name:
                return banner
        return None

    def _update_visibility(self, *_args: object) -> None:
        try:
            self.setVisible(bool(self.banners()))
        except RuntimeError:  # being destroyed
            pass


class KeepNodesFilled(QObject):
    """Sub-windows of an MDI area that reach its bottom edge keep reaching it when the area's height
    changes because banners above it appear or are dismissed.

    Without it a node whose geometry was saved with the welcome banner shown leaves an empty strip
    under it once the banner is dismissed, and one saved without it has its message input pushed
    below the window's edge while the banner shows. A sub-window that touched the old bottom edge
    follows the new one; one that sticks out below the edge by no more than the banners' height is
    shortened to fit. Tiled sub-windows are re-tiled by Qt itself (they already reach the new edge);
    maximized and minimized ones are left alone.
    """

    def __init__(self, mdi: QMdiArea, banners: BannerArea) -> None:
        super().__init__(mdi)
        self._mdi = mdi
        self._banners = banners
        height = mdi.viewport().height()
        self._pending: tuple[int, int] | None = (height, height)
        QTimer.singleShot(0, self, self._refit)  # a node already cut by the banner (laid out before this)
        mdi.viewport().installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt API
        if event.type() == QEvent.Type.Resize and isinstance(event, QResizeEvent):
            old, new = event.oldSize().height(), event.size().height()
            if old > 0 and new > 0 and old != new:
                first_old = self._pending[0] if self._pending is not None else old
                if self._pending is None:
                    QTimer.singleShot(0, self, self._refit)
                self._pending = (first_old, new)
        return False

    def _refit(self) -> None:
        if self._pending is None:
            return
        old, new = self._pending
        self._pending = None
        slack = max(self._banners.height(), self._banners.sizeHint().height()) + 8
        for sub in self._mdi.subWindowList():
            if sub.isMaximized() or sub.isMinimized() or sub.isHidden():
                continue
            geo = sub.geometry()
            bottom = geo.bottom() + 1
            touching = abs(bottom - old) <= 2
            cut = new < bottom <= new + slack
            if geo.top() >= new or not (touching or cut):
                continue  # placed there by the user
            height = max(new - geo.top(), sub.minimumSizeHint().height())
            if height != geo.height():
                sub.resize(geo.width(), height)
