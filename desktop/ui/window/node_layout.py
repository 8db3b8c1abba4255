"""The node area's layouts: tiles and cascades that fill the area and follow it as it changes size.

:class:`NodeLayout` belongs to the ``NodeArea``. It remembers the layout (``mode``): ``tiled`` and
``cascaded`` are laid out again whenever the area changes size (a banner shown or dismissed, the
sidebar, the window resized) or loses a node; ``free`` is a layout the user arranged by hand: when the
area shrinks, a node that was wholly visible is moved and shrunk to stay so (``placement.fit_inside``),
and any other node only so far that its header can still be grabbed (``placement.reachable``): a node
the user let hang over an edge stays where it is.
A move or resize the user makes switches to ``free``; moves made here (inside :meth:`placing`) do not.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Protocol

from PySide6.QtCore import QPoint, QRect, QSize
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QMdiArea, QMdiSubWindow

from desktop.ui.window.placement import cascade_rects, fit_inside, reachable, tile_rects

log = logging.getLogger(__name__)

__all__ = ["LAYOUT_MODES", "LayoutHost", "NodeLayout"]

LAYOUT_MODES = ("tiled", "cascaded", "free")
"""What ``NodeLayout.mode`` can be ("free": arranged by hand)."""


class LayoutHost(Protocol):
    """What :class:`NodeLayout` needs of its node area (a Protocol: no import of the area's module)."""

    @property
    def mdi(self) -> QMdiArea: ...
    @property
    def closing(self) -> bool: ...
    def is_tabbed(self) -> bool: ...
    def ordered_subwindows(self) -> list[QMdiSubWindow]: ...
    def capture_geometry(self) -> None: ...


class NodeLayout:
    """The layout of one node area (see the module doc).

    Args:
        host: The node area.
    """

    def __init__(self, host: LayoutHost) -> None:
        self._host = host
        self.mode = "free"
        """``tiled``, ``cascaded`` or ``free`` (arranged by hand)."""
        self._placing = 0

    @property
    def placing_now(self) -> bool:
        """True while this layout (not the user) moves sub-windows."""
        return self._placing > 0

    @contextmanager
    def placing(self) -> Iterator[None]:
        """Moves and resizes inside this block are the app's, not the user's (the mode stays)."""
        self._placing += 1
        try:
            yield
        finally:
            self._placing -= 1

    def area(self) -> QSize:
        """The size nodes are placed in: the viewport's (without scroll bars).

        Before the window shows, the area has no size yet (and asking for its viewport costs
        PySide6 a wrapper type's set-up, ~8 ms, on the start-up path): the window's size decides then.
        """
        mdi = self._host.mdi
        area = mdi.maximumViewportSize() if mdi.isVisible() else QSize()
        if area.width() < 300 or area.height() < 300:
            window = mdi.window()
            area = QSize(max(area.width(), window.width() - 20), max(area.height(), window.height() - 120))
        return area

    def user_moved(self) -> None:
        """A node's geometry changed: unless this layout moved it, the user did (the mode is ``free``)."""
        if not self.placing_now:
            self.mode = "free"

    def set_mode(self, mode: object) -> None:
        """Use ``mode`` (as saved in a project; anything unknown is ``free``) without laying out."""
        self.mode = mode if isinstance(mode, str) and mode in LAYOUT_MODES else "free"

    def tile(self) -> None:
        """Tile the nodes to fill the area; they stay tiled as it changes."""
        self.mode = "tiled"
        self.lay_out()

    def cascade(self) -> None:
        """Cascade the nodes as large as the area allows; they stay cascaded as it changes."""
        self.mode = "cascaded"
        self.lay_out()

    def area_resized(self, event: QResizeEvent) -> None:
        """The MDI area changed size: refit, knowing the viewport's size before the change."""
        old = event.oldSize()
        if not old.isValid():
            self.refit()
            return
        frame = event.size() - self.area()  # the frame around the viewport
        self.refit(old - frame)

    def refit(self, previous: QSize | None = None) -> None:
        """The area changed size (or lost or gained a node): lay tiles and cascades out again; keep
        the nodes of a layout arranged by hand in view (see the module doc). Nothing while tabbed or
        hidden.

        Args:
            previous: The area's size before the change, when it is known.
        """
        host = self._host
        subs = host.ordered_subwindows()
        if host.closing or host.is_tabbed() or not host.mdi.isVisible() or not subs:
            return
        if self.mode != "free":
            self.lay_out()
            return
        area = self.area()
        before = QRect(QPoint(0, 0), previous) if previous is not None and previous.isValid() else None
        with self.placing():
            for sub in subs:
                if sub.isMaximized() or sub.isMinimized():
                    continue
                rect = sub.geometry()
                seen = before is not None and before.contains(rect)
                fitted = fit_inside(rect, area) if seen else reachable(rect, area)
                if fitted != rect:
                    sub.setGeometry(fitted)
        host.capture_geometry()

    def lay_out(self) -> None:
        """Place every node by the mode (tiles or a cascade) in the area as it is now."""
        host = self._host
        subs = host.ordered_subwindows()
        if host.is_tabbed() or not subs or self.mode == "free":
            return
        area = self.area()
        rects = tile_rects(len(subs), area) if self.mode == "tiled" else cascade_rects(len(subs), area)
        with self.placing():
            for sub, rect in zip(subs, rects, strict=True):
                if sub.isMaximized() or sub.isMinimized():
                    sub.showNormal()
                sub.setGeometry(rect)
            if self.mode == "cascaded":
                for sub in subs:
                    sub.raise_()
        host.capture_geometry()
