"""What a save trimmed, taken in by the nodes one per event-loop turn.

A save that moved exchanges of several long nodes to the history archive hands back one
``TrimInfo`` per node (``SaveResult.trimmed``); each node then drops the trimmed message views and
shows the archive's note (``ChatNodeWidget.apply_saved``: ~5 ms for a node of long answers). Eight
nodes whose answers ended together were all trimmed by one save, and taking the eight in at once
froze the window for ~40 ms while other answers still streamed (issue 28). :class:`TrimQueue` gives
the nodes their trims one per turn of the event loop instead (paints and stream deltas run between
them). Every save still sees the trims of the one before: the project controller puts the autosave
off while trims wait, and :meth:`TrimQueue.flush` applies what is left at once before a save written
on the GUI thread (the explicit save, closing).
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import QObject, QTimer

if TYPE_CHECKING:
    from desktop.core.store import TrimInfo

__all__ = ["TrimQueue", "TrimTaker"]

log = logging.getLogger(__name__)


class TrimTaker(Protocol):
    """A node that takes in what a save trimmed (``ChatNodeWidget``)."""

    def apply_saved(self, info: TrimInfo) -> None: ...


class TrimQueue(QObject):
    """Applies saved trims to their nodes, one node per event-loop turn (see the module doc).

    Args:
        parent: The owner (the project controller).
        find: The open node of an id, or None (closed or deleted meanwhile: its trim is dropped).
    """

    def __init__(self, parent: QObject, find: Callable[[str], TrimTaker | None]) -> None:
        super().__init__(parent)
        self._find = find
        self._waiting: OrderedDict[str, TrimInfo] = OrderedDict()
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(0)
        self._timer.timeout.connect(self._step)

    def __len__(self) -> int:
        return len(self._waiting)

    def put(self, trimmed: Mapping[str, TrimInfo], *, at_once: bool = False) -> None:
        """Queue the trims of one save (a node's earlier trim still waiting is applied first); with
        ``at_once`` (a save written on the GUI thread), apply every waiting trim now."""
        for node_id, info in trimmed.items():
            earlier = self._waiting.pop(node_id, None)
            if earlier is not None:
                self._apply(node_id, earlier)
            self._waiting[node_id] = info
        if at_once:
            self.flush()
        elif self._waiting:
            self._timer.start()

    def flush(self) -> None:
        """Apply every waiting trim now (before the project is taken for a save)."""
        self._timer.stop()
        while self._waiting:
            self._apply(*self._waiting.popitem(last=False))

    def clear(self) -> None:
        """Forget the waiting trims (the project was closed: its nodes are gone)."""
        self._timer.stop()
        self._waiting.clear()

    def _step(self) -> None:
        if self._waiting:
            self._apply(*self._waiting.popitem(last=False))
        if self._waiting:
            self._timer.start()

    def _apply(self, node_id: str, info: TrimInfo) -> None:
        node = self._find(node_id)
        if node is None:
            return
        try:
            node.apply_saved(info)
        except Exception:  # noqa: BLE001 - a slot: never into the Qt loop; the next save trims again
            log.exception("node %s could not take in what the save trimmed", node_id)
