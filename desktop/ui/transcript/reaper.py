"""Message widgets that left the transcript, deleted a slice per event-loop turn.

The view of a long Markdown answer holds some 400 widgets (segments, code blocks, tables, their
buttons). Deleting one costs ~5 ms on a quiet machine, and far more while another Python thread runs:
PySide takes the GIL for every widget destroyed. A save that trimmed eight such answers into the
history archive deleted them in one pass of deferred deletions: the window froze for ~290 ms in the
middle of the next answers' streams.

:func:`dispose` hides a widget at once (out of its layout's sums, as ``deleteLater`` would leave it
until the next turn) and queues the parts it hands over (``MessageView.take_parts``: an answer's
segment widgets), then the widget itself; each turn of the event loop deletes at most
``SLICE_PARTS`` of them and stops once ``SLICE_BUDGET_S`` is spent. Each is deleted whole, with its own
children: never a Qt widget's internals (a scroll area's viewport or scroll bars) apart from their
owner. A widget deleted meanwhile with its parent (a node closed) is skipped. The Python state of
what was deleted is emptied at once (``_unlink``), so the cycles between a view's parts free their
text and HTML without waiting for a full collection.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Iterable

import shiboken6
from PySide6.QtCore import QObject, QTimer
from PySide6.QtWidgets import QWidget

from desktop.ui.gc_guard import request_trim

log = logging.getLogger(__name__)

__all__ = ["SLICE_BUDGET_S", "SLICE_PARTS", "Reaper", "dispose", "reaper"]

SLICE_PARTS = 8
"""At most this many queued widgets (each with its children) are deleted per event-loop turn."""
SLICE_BUDGET_S = 0.003
"""A slice stops once it has spent this long (seconds), even with fewer widgets deleted."""


class Reaper(QObject):
    """Deletes queued widgets a slice per event-loop turn (see the module doc).

    Args:
        parent: The Qt parent (None: the application-wide reaper of :func:`reaper`).
    """

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._queue: deque[QWidget] = deque()
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(0)
        self._timer.timeout.connect(self.step)

    def dispose(self, widget: QWidget, parts: Iterable[QWidget] = ()) -> None:
        """Hide ``widget`` now; delete ``parts`` (each whole), then ``widget``, over the next turns."""
        widget.hide()
        widget.setObjectName("")
        self._queue.extend(parts)
        self._queue.append(widget)
        self._timer.start()

    def step(self) -> int:
        """Delete one slice; returns how many widgets it deleted."""
        deadline = time.perf_counter() + SLICE_BUDGET_S
        deleted = 0
        while self._queue and deleted < SLICE_PARTS:
            widget = self._queue.popleft()
            if not shiboken6.isValid(widget):
                continue  # deleted with its parent meanwhile
            wrappers = [widget, *widget.findChildren(QObject)]
            shiboken6.delete(widget)
            _unlink(wrappers)
            deleted += 1
            if time.perf_counter() >= deadline:
                break
        if self._queue:
            self._timer.start()
        elif deleted:
            request_trim()  # the last slice: their memory back to the system at an idle moment
        return deleted


def _unlink(wrappers: list[QObject]) -> None:
    """Empty the Python state of wrappers whose C++ objects were just deleted.

    A message view and its parts refer to one another (body, stack, segments, the answer's source
    and rendered HTML): reference cycles that refcounting never frees. Their widgets were promoted to
    the oldest generation long ago, and a full collection waits for an idle moment that never comes
    while answers stream back to back, so every trimmed answer held on to its ~1 MB of text and HTML
    (issue 28 #3: 10 MB more heap in use per round of 8 answers). The wrappers are dead (any call
    into them raises already), so their attributes go now and what they held is freed at once.
    """
    for wrapper in wrappers:
        state = getattr(wrapper, "__dict__", None)
        if state:
            state.clear()


_REAPER: list[Reaper] = []


def reaper() -> Reaper:
    """The application-wide reaper (made on first use, on the GUI thread)."""
    if not _REAPER or not shiboken6.isValid(_REAPER[0]):
        _REAPER[:] = [Reaper()]
    return _REAPER[0]


def dispose(widget: QWidget, parts: Iterable[QWidget] = ()) -> None:
    """Hide ``widget`` now and delete ``parts``, then it, over the next event-loop turns (:class:`Reaper`)."""
    reaper().dispose(widget, parts)
