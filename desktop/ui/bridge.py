"""The one place where core events become Qt signals (modelled on qutebrowser's message bridge)."""

from __future__ import annotations

import logging

from PySide6.QtCore import QObject, Signal

from desktop.core.chat.types import ChatEvent

log = logging.getLogger(__name__)

__all__ = ["RuntimeBridge"]


class RuntimeBridge(QObject):
    """Turns the runtime's ``broadcast(node_id, event)`` calls into Qt signals.

    The runtime runs on the qasync loop, i.e. on the GUI thread, so the signal is
    delivered directly; queued delivery would also work if a broadcast ever came
    from another thread.

    Signals:
        event_received(str, object): ``(node_id, event)`` for every event the runtime broadcasts,
            in order. ``event`` is a frozen dataclass from ``desktop.core.chat.types``.
    """

    event_received = Signal(str, object)

    def broadcast(self, node_id: str, event: ChatEvent) -> None:
        """``ChatRuntimeDeps.broadcast``: emit ``event_received``; never raises into the core."""
        try:
            self.event_received.emit(node_id, event)
        except Exception:  # a slot raised: log it, the runtime must keep going
            log.exception("a slot failed while handling %s for node %s", type(event).__name__, node_id)
