"""What a chat node needs from the application, gathered in one object.

The main window builds one ``AppServices`` and hands it to every ``ChatNodeWidget``; tests
build one around a fake provider. Keeping the node's dependencies explicit keeps the node
testable without a main window. :class:`LazyRuntime` lets a node be built (and typed into) before
the chat runtime, and the network stack behind it, are loaded; :class:`LazyUsage` does the same for
the usage ledger's recorder and this month's tally.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from pathlib import Path

    from desktop.core.attachments import AttachmentStore
    from desktop.core.chat.cost import Price
    from desktop.core.chat.loop import ApprovalDecision
    from desktop.core.chat.runtime import ChatRuntime, ChatSendRequest, ChatSendResult
    from desktop.core.chat.types import ChatMessage
    from desktop.core.config import Settings
    from desktop.core.usage import BudgetCheck, MonthlyTally, RunInfo, UsageRecorder
    from desktop.ui.bridge import RuntimeBridge

log = logging.getLogger(__name__)

__all__ = ["AppServices", "NodeRuntime", "LazyRuntime", "LazyUsage"]


class NodeRuntime(Protocol):
    """What a node uses of the chat runtime (a ``ChatRuntime`` or a :class:`LazyRuntime`)."""

    def is_busy(self, node_id: str) -> bool:
        """True while a run of ``node_id`` is in progress."""
        ...

    def stop(self, node_id: str) -> None:
        """Stop the run of ``node_id``."""
        ...

    def approve(self, node_id: str, call_id: str, decision: ApprovalDecision) -> None:
        """Answer the pending approval ``call_id`` of ``node_id``."""
        ...

    async def send(self, req: ChatSendRequest) -> ChatSendResult:
        """Run one send to its end."""
        ...


class LazyRuntime:
    """The chat runtime as the nodes see it, usable before the runtime itself is loaded.

    Queries (``is_busy``, ``stop``) answer from the loaded runtime, or "nothing runs" before it is
    loaded; ``send`` and ``approve`` load it first when needed, so a message sent before the app's
    deferred services are ready still goes out.

    Args:
        load: Returns the runtime, creating it (and importing what it needs) on the first call.
        loaded: Returns the runtime when it exists already, else None (never loads it).
    """

    def __init__(self, load: Callable[[], ChatRuntime], loaded: Callable[[], ChatRuntime | None]) -> None:
        self._load = load
        self._loaded = loaded

    def is_busy(self, node_id: str) -> bool:
        """True while a run of ``node_id`` is in progress (never before the runtime exists)."""
        runtime = self._loaded()
        return runtime is not None and runtime.is_busy(node_id)

    def stop(self, node_id: str) -> None:
        """Stop the run of ``node_id`` (nothing runs before the runtime exists)."""
        runtime = self._loaded()
        if runtime is not None:
            runtime.stop(node_id)

    def approve(self, node_id: str, call_id: str, decision: ApprovalDecision) -> None:
        """Answer the pending approval ``call_id`` of ``node_id``."""
        self._load().approve(node_id, call_id, decision)

    async def send(self, req: ChatSendRequest) -> ChatSendResult:
        """Run one send to its end, loading the runtime first when it is not loaded yet."""
        return await self._load().send(req)


class LazyUsage:
    """The usage recorder (every response's usage to the ledger) and this month's tally of one context,
    each created on first use (``desktop.core.usage`` loads then).

    Args:
        config_dir: The settings folder (the ledger is ``usage.jsonl`` there).
        describe: Returns the run's ``RunInfo`` for a node id (None: nothing recorded).
        overrides: Returns the user's price overrides.
        on_error: Gets a sentence for the status bar each time usage could not be saved.
    """

    def __init__(self, config_dir: Path, describe: Callable[[str], RunInfo | None],
                 overrides: Callable[[], dict[str, Price]], on_error: Callable[[str], None]) -> None:
        self._config_dir = config_dir
        self._describe = describe
        self._overrides = overrides
        self._on_error = on_error
        self._recorder: UsageRecorder | None = None
        self._tally: MonthlyTally | None = None

    @property
    def recorder(self) -> UsageRecorder:
        """Writes every response's usage to the ledger; a failed write is kept and tried again."""
        if self._recorder is None:
            from desktop.core.usage import UsageLedger, UsageRecorder, ledger_path

            self._recorder = UsageRecorder(UsageLedger(ledger_path(self._config_dir)), self._describe,
                                           self._overrides, on_error=self._on_error)
        return self._recorder

    @property
    def tally(self) -> MonthlyTally:
        """This month's spending (app-wide and per project), kept current from the ledger."""
        if self._tally is None:
            from desktop.core.usage import MonthlyTally, ledger_path

            self._tally = MonthlyTally(ledger_path(self._config_dir))
        return self._tally

    def retry(self) -> bool:
        """Try the records the ledger refused once more (on quit); True when none is left waiting."""
        return self._recorder is None or self._recorder.retry()


@dataclass
class AppServices:
    """Application services shared by every chat node.

    Attributes:
        runtime: The chat runtime (send / stop / approve / is_busy), or a :class:`LazyRuntime`.
        bridge: Delivers runtime events: ``event_received(node_id, event)`` for all nodes, and
            ``subscribe(node_id, callback)`` for one node's events only (what nodes use).
        settings: Returns the current settings (they change when the user saves the dialog).
        list_models: ``async (provider_id) -> [model ids]``; raises ``ChatError`` on failure.
        archive: Appends trimmed messages to the node's history archive ``(node_id, messages)``;
            None when there is no project folder.
        read_archive: Returns the archived messages of a node (oldest first), for export.
        budget_check: Returns the tightest monthly budget and its state (None: no budget); a node
            holds a send while it is spent.
        open_budget_settings: Shows where a budget of that scope (``app`` / ``project``) is set.
        open_settings: Opens the settings dialog (a node without a working provider offers it).
        keyed_providers: Returns the providers a key is found for (the provider picker marks them).
        load_services: Loads the app's deferred services (the window's context calls it right after
            the first paint; a send that comes first calls it itself). None: nothing is deferred.
        attachment_store: Returns the open project's attachment files (None: no project, nothing
            can be attached).
    """

    runtime: NodeRuntime
    bridge: RuntimeBridge
    settings: Callable[[], Settings]
    list_models: Callable[[str], Awaitable[list[str]]]
    archive: Callable[[str, Sequence[ChatMessage]], object] | None = None
    read_archive: Callable[[str], list[ChatMessage]] | None = None
    budget_check: Callable[[], BudgetCheck | None] | None = None
    open_budget_settings: Callable[[str], object] | None = None
    open_settings: Callable[[], object] | None = None
    keyed_providers: Callable[[], frozenset[str]] | None = None
    load_services: Callable[[], object] | None = None
    attachment_store: Callable[[], AttachmentStore | None] | None = None
    _overrides_key: object = field(default=None, init=False, repr=False)
    _overrides: dict[str, Price] = field(default_factory=dict, init=False, repr=False)
    overrides_version: int = field(default=0, init=False)
    """Bumped whenever ``price_overrides()`` computes a new table (cost caches key on it)."""

    def price_overrides(self) -> dict[str, Price]:
        """The settings' price overrides as ``Price`` objects (recomputed only when they change;
        invalid overrides are ignored with a warning, they must not break a node)."""
        from desktop.core.config import price_overrides_as_prices

        settings = self.settings()
        key = (id(settings), repr(settings.price_overrides))
        if key != self._overrides_key:
            self._overrides_key = key
            self.overrides_version += 1
            try:
                self._overrides = price_overrides_as_prices(settings)
            except Exception as exc:  # noqa: BLE001
                log.warning("ignoring price overrides: %s", exc)
                self._overrides = {}
        return self._overrides
