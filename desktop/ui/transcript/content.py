"""The transcript's content widget and how older messages are built on scroll (a budget per step).

``content_rows`` lays out the rows the content always holds around the message widgets (the link
to earlier messages, the error row, the empty state). ``OpaqueContent`` paints its own background so
scrolling moves pixels instead of repainting the node behind it. ``build_older`` builds the message
widgets just above the ones shown, newest first, for at most ``OLDER_BUDGET`` seconds per call (at
least one message): reaching the top of a long node then costs a frame, not the dozens of
milliseconds per message a whole batch would. ``OlderPages`` holds those widgets in pages, so adding
one at the top moves a page's widgets, not every widget of the node. ``keep_gutter`` gives the
transcript a stable scroll-bar gutter.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Sequence
from typing import NamedTuple, TypeVar

from PySide6.QtCore import Qt
from PySide6.QtGui import QPainter, QPaintEvent
from PySide6.QtWidgets import QAbstractScrollArea, QLabel, QVBoxLayout, QWidget

from desktop.core.chat.types import ChatMessage
from desktop.ui.transcript.error_row import ErrorRow

__all__ = [
    "ContentRows", "OpaqueContent", "OlderPages", "build_older", "content_rows", "keep_gutter",
    "EMPTY_STATE_TEXT", "OLDER_BUDGET", "PAGE_MESSAGES",
]

EMPTY_STATE_TEXT = (
    "No messages yet.\n"
    "The model can read the files of this project; anything that would change one asks you first."
)

OLDER_BUDGET = 0.006
"""Seconds one scroll step may spend building older message widgets (at least one is built)."""
PAGE_MESSAGES = 24
"""Older message widgets held by one page (see ``OlderPages``)."""

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


class ContentRows(NamedTuple):
    """The rows of a transcript's content around its message widgets (see :func:`content_rows`)."""

    layout: QVBoxLayout
    older: QLabel
    error_row: ErrorRow
    empty: QLabel


def content_rows(content: QWidget) -> ContentRows:
    """Lay out ``content``: the link to earlier messages (``loadOlder``, hidden), the error row
    (hidden), the empty state (``emptyState``), then a stretch; the message widgets go between the
    link and the error row."""
    vbox = QVBoxLayout(content)
    vbox.setContentsMargins(12, 10, 12, 10)
    vbox.setSpacing(10)
    older = QLabel(content)
    older.setObjectName("loadOlder")
    older.setAlignment(Qt.AlignmentFlag.AlignCenter)
    older.setTextFormat(Qt.TextFormat.RichText)
    older.setVisible(False)
    vbox.addWidget(older)
    error_row = ErrorRow(content)
    error_row.setVisible(False)
    vbox.addWidget(error_row)
    # What a blank node says instead of nothing (disabled: the palette's quiet text colour).
    empty = QLabel(EMPTY_STATE_TEXT, content)
    empty.setObjectName("emptyState")
    empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
    empty.setWordWrap(True)
    empty.setContentsMargins(24, 48, 24, 0)
    empty.setEnabled(False)
    vbox.addWidget(empty)
    vbox.addStretch(1)
    return ContentRows(vbox, older, error_row, empty)


def keep_gutter(area: QAbstractScrollArea, *, idle: bool) -> None:
    """Show ``area``'s vertical bar always, its handle only when there is something to scroll.

    A bar shown only when needed narrows the content when a growing answer first overflows, and
    every message is then wrapped again (a streamed answer's text whole, ~2 ms for 20 KB) and
    visibly shifts. With a stable gutter the content keeps its width; an ``idle`` bar draws no
    handle (the app's style sheet: ``QScrollBar[idle="true"]``).
    """
    if area.verticalScrollBarPolicy() != Qt.ScrollBarPolicy.ScrollBarAlwaysOn:  # setting it lays out again
        area.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOn)
    bar = area.verticalScrollBar()
    if bar.property("idle") != idle:
        bar.setProperty("idle", idle)
        style = bar.style()
        style.unpolish(bar)
        style.polish(bar)
        bar.update()


class OlderPages:
    """Older message widgets, held in pages of ``PAGE_MESSAGES`` at the top of the transcript.

    A widget inserted at the top of one long layout moves every widget below it, and moving a
    thousand widgets costs far more than building the new one. Inserted at the top of the top
    page instead, it moves at most the page's widgets, and the transcript's layout moves the pages
    (their widgets move with them).

    Attributes:
        pages: the page widgets, top first.
    """

    def __init__(self, vbox: QVBoxLayout, content: QWidget) -> None:
        self._vbox = vbox
        self._content = content
        self.pages: list[QWidget] = []
        self._counts: list[int] = []

    def place(self, view: QWidget, *, shown: bool) -> None:
        """Put ``view`` above every widget placed before (on top of the top page)."""
        if not self.pages or self._counts[0] >= PAGE_MESSAGES:
            page = QWidget(self._content)
            page.setObjectName("transcriptPage")
            box = QVBoxLayout(page)
            box.setContentsMargins(0, 0, 0, 0)
            box.setSpacing(self._vbox.spacing())
            self._vbox.insertWidget(1, page)  # under the "earlier messages" line
            self.pages.insert(0, page)
            self._counts.insert(0, 0)
            if shown:
                page.show()
        layout = self.pages[0].layout()
        assert isinstance(layout, QVBoxLayout)
        layout.insertWidget(0, view)
        self._counts[0] += 1
        if shown:  # polished and shown now, inside the budget, not later in the same frame
            view.show()

    def clear(self) -> None:
        """Delete the pages (their message widgets go with them)."""
        for page in self.pages:
            self._vbox.removeWidget(page)
            page.hide()
            page.deleteLater()
        self.pages.clear()
        self._counts.clear()


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


def trim_shift(before: Sequence[ChatMessage], removed: Collection[str], start: int,
               known: int) -> tuple[int, int, int]:
    """What a trim of ``before`` (messages ``removed``, a note put after the system messages) does
    to a transcript that built ``before[start:known]``: ``(lead, gone_before, gone)``, the note's
    index, how many removed messages were before ``start`` and before ``known``."""
    lead = next((i for i, m in enumerate(before) if m.role != "system"), len(before))
    gone_before = sum(1 for m in before[:start] if m.id in removed)
    return lead, gone_before, gone_before + sum(1 for m in before[start:known] if m.id in removed)
