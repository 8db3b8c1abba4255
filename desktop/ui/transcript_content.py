"""The transcript's content widget and how older messages are built on scroll (a budget per step).

``OpaqueContent`` paints its own background so scrolling moves pixels instead of repainting the
node behind it. ``build_older`` builds the message widgets just above the ones shown, newest first,
for at most ``OLDER_BUDGET`` seconds per call (at least one message): reaching the top of a long
node then costs a frame, not the dozens of milliseconds per message a whole batch would.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import TypeVar

from PySide6.QtCore import Qt
from PySide6.QtGui import QPainter, QPaintEvent
from PySide6.QtWidgets import QWidget

__all__ = ["OpaqueContent", "build_older", "OLDER_BUDGET"]

OLDER_BUDGET = 0.006
"""Seconds one scroll step may spend building older message widgets (at least one is built)."""

T = TypeVar("T")
V = TypeVar("V")


class OpaqueContent(QWidget):
    """The transcript's content widget, painted opaque with its palette's background brush.

    The node's style sheet sets that brush (``QWidget#transcriptContent { background: ... }``)
    but a style-sheet background does not make a widget opaque for Qt, and then every scroll step
    repaints the node, the scroll area and the viewport behind it. Opaque, scrolling moves the
    painted pixels and only the newly exposed strip is painted.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent, True)

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 - Qt override
        """Fill the exposed area with the background brush."""
        painter = QPainter(self)
        painter.fillRect(event.rect(), self.palette().brush(self.backgroundRole()))
        painter.end()


def build_older(
    msgs: Sequence[T],
    start: int,
    count: int,
    make: Callable[[T], V | None],
    place: Callable[[V], None],
    *,
    budget: float | None = None,
    clock: Callable[[], float] | None = None,
) -> int:
    """Build the messages before ``msgs[start]``, newest first, and place each one on top.

    Args:
        msgs: the conversation's messages.
        start: index of the oldest message built so far.
        count: build at most this many.
        make: builds the widget of a message (None: the message has no widget of its own).
        place: puts a built widget above the ones built before it.
        budget: seconds to spend at most (at least one message is built); None: no limit.
        clock: the time source (``time.perf_counter`` when None).

    Returns:
        The new ``start`` (how many older messages are still not built).
    """
    clock = clock or time.perf_counter
    deadline = None if budget is None else clock() + budget
    index = start
    while index > 0 and start - index < count:
        index -= 1
        view = make(msgs[index])
        if view is not None:
            place(view)
        if deadline is not None and clock() >= deadline:
            break
    return index
