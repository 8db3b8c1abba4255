"""What a chat node needs from the application, gathered in one object.

The main window builds one ``AppServices`` and hands it to every ``ChatNodeWidget``; tests
build one around a fake provider. Keeping the node's dependencies explicit keeps the node
testable without a main window.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from desktop.core.chat.runtime import ChatRuntime
    from desktop.core.chat.types import ChatMessage
    from desktop.core.settings import Settings
    from desktop.ui.bridge import RuntimeBridge

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
    """

    runtime: ChatRuntime
    bridge: RuntimeBridge
    settings: Callable[[], Settings]
    list_models: Callable[[str], Awaitable[list[str]]]
    archive: Callable[[str, Sequence[ChatMessage]], object] | None = None
    read_archive: Callable[[str], list[ChatMessage]] | None = None
