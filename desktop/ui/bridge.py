"""The one place where core events become Qt signals (modelled on qutebrowser's message bridge)."""

from __future__ import annotations

import logging
from collections.abc import Callable

from PySide6.QtCore import QObject, Signal

from desktop.core.chat.types import ChatEvent

log = logging.getLogger(__name__)

__all__ = ["RuntimeBridge", "NodeEventCallback"]

NodeEventCallback = Callable[[ChatEvent], None]
"""What ``RuntimeBridge.subscribe`` calls: ``callback(event)`` for each event of one node."""


class RuntimeBridge(QObject):
    """Turns the runtime's ``broadcast(node_id, event)`` calls into Qt signals and per-node calls.

    The runtime runs on the qasync loop, i.e. on the GUI thread, so everything is delivered
    directly; queued delivery of the signal would also work if a broadcast ever came from another
    thread (per-node callbacks are always called on the broadcasting thread).

    Two ways to listen, both in event order:

    * ``event_received`` (the docs/DESIGN.md §5 contract): every event of every node. Fine for a listener
      that wants them all (logging, a session total); a chat node should not use it, because with
      N nodes each event would be delivered N times, filtered N - 1 times.
    * ``subscribe(node_id, callback)``: only that node's events, looked up in a dict, so the cost
      of one event does not depend on how many nodes are open. Chat nodes use this.

    For each event the signal is emitted first (only while something is connected to it), then the
    node's callbacks run in subscription order. A raising listener is logged and never reaches the
    runtime (or the other listeners).

    Signals:
        event_received(str, object): ``(node_id, event)`` for every event the runtime broadcasts,
            in order. ``event`` is a frozen dataclass from ``desktop.core.chat.types``.
        usage_unsaved(str): responses' usage could not be written to the ledger (a full disk); the
            sentence is for the status bar (the records are tried again with the next response).
    """

    event_received = Signal(str, object)
    usage_unsaved = Signal(str)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._subscribers: dict[str, list[NodeEventCallback]] = {}
        meta = self.metaObject()
        self._signal = meta.method(meta.indexOfSignal("event_received(QString,PyObject)"))

    def subscribe(self, node_id: str, callback: NodeEventCallback) -> None:
        """Call ``callback(event)`` for every event broadcast for ``node_id`` from now on.

        Subscribing the same callback twice for one node delivers each event once.
        """
        callbacks = self._subscribers.get(node_id, [])
        if callback not in callbacks:
            # Copy-on-write, so a broadcast iterating the old list is never affected.
            self._subscribers[node_id] = [*callbacks, callback]

    def unsubscribe(self, node_id: str, callback: NodeEventCallback) -> bool:
        """Stop calling ``callback`` for ``node_id``; False when it was not subscribed."""
        callbacks = self._subscribers.get(node_id)
        if not callbacks or callback not in callbacks:
            return False
        # Copy-on-write: a broadcast iterating the old list (a callback unsubscribing itself) is unaffected.
        remaining = [c for c in callbacks if c != callback]
        if remaining:
            self._subscribers[node_id] = remaining
        else:
            del self._subscribers[node_id]
        return True

    def subscriber_count(self, node_id: str) -> int:
        """How many callbacks are subscribed to ``node_id`` (0 when none)."""
        return len(self._subscribers.get(node_id, ()))

    def broadcast(self, node_id: str, event: ChatEvent) -> None:
        """``ChatRuntimeDeps.broadcast``: emit ``event_received``, then call the node's subscribers.

        Never raises into the core.
        """
        try:
            # Emitting costs ~25 us in a busy GUI (the call leaves Python), ~100 times per answer:
            # only when someone listens (nothing in the app does; logging or a session total might).
            if self.isSignalConnected(self._signal):
                self.event_received.emit(node_id, event)
        except Exception:  # a slot raised: log it, the runtime must keep going
            log.exception("a slot failed while handling %s for node %s", type(event).__name__, node_id)
        callbacks = self._subscribers.get(node_id)
        if not callbacks:
            return
        for callback in callbacks:
            try:
                callback(event)
            except Exception:  # noqa: BLE001 - one listener must not break the run or the others
                log.exception("a subscriber failed while handling %s for node %s",
                              type(event).__name__, node_id)
