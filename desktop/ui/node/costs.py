"""What a chat node's answers cost: the header's token and cost chips, the context meter, the meta lines.

The context meter reads the last reply's usage plus the estimated tokens of the attachments waiting
for the next message (``NodeAttachments.pending_tokens``), so a photo that would not fit shows before
the send.

The cost counts every response of every version (``desktop.core.chat.versions.cost_split``: this
path and the other versions), with the settings' price overrides. It is cached until the messages
(the node's ``revision``), the model or the price overrides change: the window asks every node for
its cost whenever any node's cost changes (O(nodes^2) on opening).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from desktop.core.chat.conversation import Conversation
from desktop.core.chat.export import token_totals
from desktop.core.chat.summary import message_meta
from desktop.core.chat.types import ChatMessage
from desktop.core.chat.versions import CostSplit, all_responses, cost_split, cost_split_text
from desktop.core.usage import ContextUse, context_use, context_window

if TYPE_CHECKING:
    from PySide6.QtCore import SignalInstance

    from desktop.ui.node.attach import NodeAttachments
    from desktop.ui.node.header import NodeHeader
    from desktop.ui.node.models import NodeModelChoice
    from desktop.ui.services import AppServices

__all__ = ["CostsHost", "NodeCosts", "with_pending"]


def with_pending(use: ContextUse | None, pending: int, model: str | None) -> ContextUse | None:
    """The meter's reading with ``pending`` more tokens (attachments not sent yet); before any reply,
    those tokens alone against the model's window (None when the window is unknown)."""
    if not pending:
        return use
    if use is not None:
        return ContextUse(use.used + pending, use.window, use.model)
    window = context_window(model) if model else None
    return ContextUse(pending, window, model) if model and window else None


class CostsHost(Protocol):
    """What :class:`NodeCosts` needs of its node (a ``ChatNodeWidget``; a Protocol, so this module
    does not import the node's module back)."""

    @property
    def conversation(self) -> Conversation: ...
    @property
    def revision(self) -> int: ...
    @property
    def model_choice(self) -> NodeModelChoice: ...
    @property
    def header(self) -> NodeHeader: ...
    @property
    def cost_changed(self) -> SignalInstance: ...
    @property
    def attach(self) -> NodeAttachments: ...


class NodeCosts:
    """The cost of one chat node and where it shows (see the module docstring).

    Args:
        node: The node.
        services: The app's services (the price overrides and their version).
    """

    def __init__(self, node: CostsHost, services: AppServices) -> None:
        self._node = node
        self._services = services
        self._key: object = None
        self._value: CostSplit | None = None

    def split(self) -> CostSplit:
        """The cost split into this path and the other versions (cached)."""
        node = self._node
        model = node.model_choice.pricing_model()
        overrides = self._services.price_overrides()
        key = (node.revision, model, self._services.overrides_version)
        if key != self._key or self._value is None:
            self._value = cost_split(node.conversation, model, overrides)
            self._key = key
        return self._value

    def meta_text(self, msg: ChatMessage, live: bool = False) -> str:
        """The meta line under an answer: model, tokens, cost (a running estimate while ``live``)."""
        return message_meta(msg, self._node.model_choice.pricing_model(), self._services.price_overrides(),
                            live=live)

    def show(self) -> None:
        """Show the node's tokens, cost and context use (and tell the window the cost changed)."""
        node = self._node
        conv = node.conversation
        split = self.split()
        node.header.show_totals(token_totals(all_responses(conv)), split.total)
        chip = node.header.cost_chip
        if text := cost_split_text(split):
            chip.setToolTip(f"{chip.toolTip()}\n{text}")
        choice = node.model_choice
        model = choice.pricing_model()
        pending = node.attach.pending_tokens()
        used = context_use(conv.messages, model, choice.context_lengths())
        node.header.show_context(with_pending(used, pending, model), pending)
        node.cost_changed.emit()
