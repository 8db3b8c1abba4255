"""What the node area hears from Qt: the area's resizes and each node sub-window's moves, resizes and closes.

:class:`SubWindowWatcher` is the event filter the node area installs on its ``QMdiArea`` and on every
node sub-window; it passes each event on to the area's handlers and never consumes one.
"""

from __future__ import annotations

from typing import Protocol

from PySide6.QtCore import QEvent, QObject
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QMdiArea, QMdiSubWindow

__all__ = ["SubWindowWatcher", "WatchedArea"]


class _Layout(Protocol):
    def area_resized(self, event: QResizeEvent) -> None: ...


class WatchedArea(Protocol):
    """What the watcher reports to (the node area)."""

    @property
    def mdi(self) -> QMdiArea: ...

    @property
    def layout(self) -> _Layout: ...

    def on_subwindow_geometry(self, sub: QMdiSubWindow) -> None: ...

    def on_subwindow_close(self, sub: QMdiSubWindow) -> None: ...


class SubWindowWatcher(QObject):
    """Reports moves, resizes and closes of the node sub-windows, and the area's resizes, to the node area.

    Args:
        area: The node area the events are reported to.
        parent: The watcher's Qt parent (the node area).
    """

    def __init__(self, area: WatchedArea, parent: QObject) -> None:
        super().__init__(parent)
        self._area = area

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt API)
        kind = event.type()
        if watched is self._area.mdi:
            if kind == QEvent.Type.Resize and isinstance(event, QResizeEvent):
                self._area.layout.area_resized(event)
        elif isinstance(watched, QMdiSubWindow):
            if kind in (QEvent.Type.Move, QEvent.Type.Resize):
                self._area.on_subwindow_geometry(watched)
            elif kind == QEvent.Type.Close:
                self._area.on_subwindow_close(watched)
        return False
