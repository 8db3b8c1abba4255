"""What a chat node needs from the application, gathered in one object.

The main window builds one ``AppServices`` and hands it to every ``ChatNodeWidget``; tests
build one around a fake provider. Keeping the node's dependencies explicit keeps the node
testable without a main window.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from desktop.core.chat.cost import Price
    from desktop.core.chat.runtime import ChatRuntime
    from desktop.core.chat.types import ChatMessage
    from desktop.core.settings import Settings
    from desktop.core.usage import BudgetCheck
    from desktop.ui.bridge import RuntimeBridge

log = logging.getLogger(__name__)

__all__ = ["AppServices"]


@dataclass
class AppServices:
    """Application services shared by every chat node.

    Attributes:
        runtime: The chat runtime (send / stop / approve / is_busy).
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
    """

    runtime: ChatRuntime
    bridge: RuntimeBridge
    settings: Callable[[], Settings]
    list_models: Callable[[str], Awaitable[list[str]]]
    archive: Callable[[str, Sequence[ChatMessage]], object] | None = None
    read_archive: Callable[[str], list[ChatMessage]] | None = None
    budget_check: Callable[[], BudgetCheck | None] | None = None
    open_budget_settings: Callable[[str], object] | None = None
    _overrides_key: object = field(default=None, init=False, repr=False)
    _overrides: dict[str, Price] = field(default_factory=dict, init=False, repr=False)
    overrides_version: int = field(default=0, init=False)
    """Bumped whenever ``price_overrides()`` computes a new table (cost caches key on it)."""

    def price_overrides(self) -> dict[str, Price]:
        """The settings' price overrides as ``Price`` objects (recomputed only when they change;
        invalid overrides are ignored with a warning, they must not break a node)."""
        from desktop.core.settings import price_overrides_as_prices

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
