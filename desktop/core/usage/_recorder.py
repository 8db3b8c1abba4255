"""Feeds the usage ledger from the runtime's events: one line per model response with a usage report.

The runtime broadcasts ``(node_id, event)`` pairs. A response's usage may be reported several times
(the last report wins, DESIGN §2.1), so the recorder keeps the latest ``UsageReport`` of each message
and writes them when the node's run ends (``Done``): a tool loop of three model calls gives three
lines. Who ran the node (provider, project, title) is asked from the app through ``describe``.

A record the ledger could not write (a full disk: ``UsageLedger.append`` returns False, leaving no
partial line) is kept in memory, oldest first, and tried again before the next response's records, so
nothing is lost while the disk fills and frees up again. At most ``MAX_UNSAVED`` records wait (the
oldest is dropped and logged past that); records still waiting when the app quits are lost.
Every failed write calls ``on_error`` with a sentence for the status bar. The tally and the budgets
read the ledger file, so a record that is not saved is not counted.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from desktop.core.chat.cost import Price
from desktop.core.chat.types import ChatEvent, Done, Usage, UsageReport

from ._ledger import UsageLedger, UsageRecord, record_for

log = logging.getLogger(__name__)

__all__ = ["MAX_UNSAVED", "RunInfo", "UsageRecorder"]

MAX_UNSAVED = 1000
"""Records kept in memory for another try when the ledger cannot be written."""


@dataclass(frozen=True)
class RunInfo:
    """What the ledger line needs to know about the node that ran.

    Attributes:
        provider: The provider id the run used.
        project: The project folder.
        node_title: The node's title when the run ended.
        model: The requested model, used when the server reported none.
    """

    provider: str
    project: str
    node_title: str = ""
    model: str | None = None


class UsageRecorder:
    """Turns runtime events into ledger lines.

    Args:
        ledger: Where lines are appended (``UsageLedger.append`` never raises).
        describe: Returns the run's :class:`RunInfo` for a node id, or None to record nothing.
        overrides: Returns the user's price overrides at the time of writing.
        on_record: Called with every record written (e.g. to keep a running monthly total).
        on_error: Called with a sentence for the status bar each time records could not be written.
    """

    def __init__(
        self,
        ledger: UsageLedger,
        describe: Callable[[str], RunInfo | None],
        overrides: Callable[[], Mapping[str, Price]] | None = None,
        on_record: Callable[[UsageRecord], None] | None = None,
        on_error: Callable[[str], None] | None = None,
    ) -> None:
        self.ledger = ledger
        self._describe = describe
        self._overrides = overrides
        self._on_record = on_record
        self._on_error = on_error
        self._pending: dict[str, dict[str, tuple[Usage, str | None]]] = {}
        self._unsaved: deque[UsageRecord] = deque()

    @property
    def unsaved(self) -> int:
        """Records waiting in memory for the ledger to accept them."""
        return len(self._unsaved)

    def retry(self) -> bool:
        """Try the records waiting for the ledger again, oldest first; True when none is left waiting.

        Stops at the first one that still fails (the disk is still full), so a call costs at most one
        failed append (``APPEND_ATTEMPTS`` writes). Never raises.
        """
        while self._unsaved:
            record = self._unsaved[0]
            if not self.ledger.append(record):
                self._report()
                return False
            self._unsaved.popleft()
            if self._on_record is not None:
                self._on_record(record)
        return True

    def _keep(self, record: UsageRecord) -> None:
        if len(self._unsaved) >= MAX_UNSAVED:
            dropped = self._unsaved.popleft()
            log.error("usage ledger: %d records waiting; dropped the usage of node %s at %d",
                      MAX_UNSAVED, dropped.node, dropped.ts)
        self._unsaved.append(record)

    def _report(self) -> None:
        reason = self.ledger.last_error or f"Usage not saved to {self.ledger.path}"
        waiting = len(self._unsaved)
        plural = "" if waiting == 1 else "s"
        text = f"{reason} ({waiting} response{plural} waiting; tried again with the next)"
        if self._on_error is not None:
            self._on_error(text)

    def observe(self, node_id: str, event: ChatEvent) -> None:
        """Take one broadcast event; never raises (accounting must not break a run)."""
        try:
            if isinstance(event, UsageReport):
                self._pending.setdefault(node_id, {})[event.message_id] = (event.usage, event.model)
            elif isinstance(event, Done):
                self._flush(node_id)
        except Exception:  # noqa: BLE001 - logged; the chat goes on
            log.exception("recording usage for node %s failed", node_id)

    def _flush(self, node_id: str) -> None:
        reports = self._pending.pop(node_id, None)
        if not reports:
            return
        info = self._describe(node_id)
        if info is None:
            return
        overrides = self._overrides() if self._overrides is not None else None
        for usage, model in reports.values():
            self._keep(record_for(usage, model or info.model or "", provider=info.provider,
                                  project=info.project, node=node_id, node_title=info.node_title,
                                  overrides=overrides))
        self.retry()
