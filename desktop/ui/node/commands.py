"""What a slash command does to a chat node: ``/model``, ``/system``, ``/clear``, ``/cost``, ``/help``.

The Qt-free core decides a command's effect (``desktop.core.chat.commands.run_command`` returns a
``CommandEffect``); :class:`NodeCommands` gives it what the node knows and applies the effect to the
node, in the order ``CommandEffect`` documents. ``/clear`` archives the messages first, and clears
nothing when the archive cannot be written (losing history is worse than not clearing).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Protocol

from desktop.core.chat.commands import CommandContext, CommandEffect, archive_failed_note, run_command
from desktop.core.chat.conversation import Conversation, SlashCommand, append_note
from desktop.core.chat.cost import ConversationCost
from desktop.core.chat.versions import all_responses

if TYPE_CHECKING:
    from PySide6.QtCore import SignalInstance

    from desktop.ui.node.models import NodeModelChoice
    from desktop.ui.services import AppServices
    from desktop.ui.transcript.transcript import Transcript

log = logging.getLogger(__name__)

__all__ = ["CommandsHost", "NodeCommands"]


class CommandsHost(Protocol):
    """What :class:`NodeCommands` needs of its node (a ``ChatNodeWidget``; a Protocol, so this module
    does not import the node's module back)."""

    @property
    def node_id(self) -> str: ...
    @property
    def conversation(self) -> Conversation: ...
    @property
    def model_choice(self) -> NodeModelChoice: ...
    @property
    def system(self) -> str | None: ...
    @property
    def transcript(self) -> Transcript: ...
    @property
    def changed(self) -> SignalInstance: ...
    def set_system(self, system: str | None) -> None: ...
    def is_busy(self) -> bool: ...
    def cost(self) -> ConversationCost: ...
    def touch(self) -> None: ...
    def update_chips(self) -> None: ...


class NodeCommands:
    """The slash commands of one chat node.

    Args:
        node: The node.
        services: The app's services (price overrides, the history archive).
    """

    def __init__(self, node: CommandsHost, services: AppServices) -> None:
        self._node = node
        self._services = services

    def run(self, command: SlashCommand) -> None:
        """Run ``command`` on the node."""
        self._apply(run_command(command, self._context()))

    def _context(self) -> CommandContext:
        node = self._node
        return CommandContext(
            messages=all_responses(node.conversation),  # /cost counts every version, like the chip
            model=node.model_choice.model,
            default_model=node.model_choice.default_model(),
            system=node.system,
            busy=node.is_busy(),
            overrides=self._services.price_overrides(),
            cost=node.cost(),
        )

    def _apply(self, effect: CommandEffect) -> None:
        """Apply what ``run_command`` decided, in the order ``CommandEffect`` documents."""
        node = self._node
        if effect.new_model is not None:
            node.model_choice.set_model(effect.new_model)
        if effect.remove_system:
            node.set_system(None)
        elif effect.new_system is not None:
            node.set_system(effect.new_system)
        if effect.clear and not self._clear():
            return
        for text in effect.notes:
            self.note(text)

    def note(self, text: str) -> None:
        """Add a note (never sent to the model) under the messages."""
        node = self._node
        append_note(node.conversation, text)
        node.touch()
        node.transcript.scroll_to_bottom()
        node.transcript.flush()
        node.changed.emit()

    def _clear(self) -> bool:
        """Archive the messages, then empty the conversation; False (and a note) when archiving failed."""
        node = self._node
        conv = node.conversation
        messages = list(conv.messages)
        if messages and self._services.archive is not None:
            try:
                self._services.archive(node.node_id, messages)
            except Exception as exc:  # noqa: BLE001 - losing history is worse than not clearing
                log.error("could not archive node %s before /clear: %s", node.node_id, exc)
                self.note(archive_failed_note(str(exc)))
                return False
        conv.messages.clear()
        node.touch()
        node.transcript.clear_error()
        node.transcript.set_conversation(conv)
        node.update_chips()
        node.changed.emit()
        return True
