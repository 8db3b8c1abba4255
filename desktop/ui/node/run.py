"""A chat node's run wiring: a send goes to the runtime, the runtime's events come back to the node.

:class:`NodeRun` belongs to one ``ChatNodeWidget``. Sending runs ``services.runtime.send`` in a task it
keeps; the runtime's events arrive through the bridge (``RuntimeBridge.subscribe``: only this node's
events), are applied to the node's conversation with ``apply_event`` at once, and handed to the
transcript, which renders at most once per frame. A permission card's answer goes back to the runtime
(``ChatRuntime.approve``); a call the user always allows in this node is approved without a card.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Protocol, TypeGuard

from desktop.core.chat.conversation import Conversation, apply_event
from desktop.core.chat.types import ChatEvent, Done, Notice, ToolCallFinished, ToolCallRequested, UsageReport
from desktop.ui.node.models import spawn

if TYPE_CHECKING:  # the runtime (asyncio), the cards and the transcript (Markdown) load after the first paint
    import asyncio

    from PySide6.QtCore import SignalInstance

    from desktop.core.chat.loop import ApprovalDecision
    from desktop.core.chat.runtime import ChatSendRequest, ChatSendResult
    from desktop.ui.node.models import NodeModelChoice
    from desktop.ui.node.tools import NodeTools
    from desktop.ui.services import AppServices
    from desktop.ui.transcript.permission_card import CardDecision
    from desktop.ui.transcript.transcript import Transcript

log = logging.getLogger(__name__)

__all__ = ["NO_PROVIDER_TEXT", "NodeRun", "RunHost"]

NO_PROVIDER_TEXT = ("No provider is set up for this node. Add an API key in Settings → Providers, or pick "
                    "a provider that has one above.")
"""What a node says when its send had no provider to go to (with an "Open Settings" button)."""

_APPROVALS: dict[CardDecision, ApprovalDecision] = {
    "approve": "approve",
    "always": "approve",
    "deny": "deny",
}


def _is_card_decision(value: str) -> TypeGuard[CardDecision]:
    return value in _APPROVALS


class RunHost(Protocol):
    """What :class:`NodeRun` needs of its node (a ``ChatNodeWidget``; a Protocol, so this module does
    not import the node's module back)."""

    @property
    def node_id(self) -> str: ...
    @property
    def conversation(self) -> Conversation: ...
    @property
    def model(self) -> str | None: ...
    @property
    def provider(self) -> str | None: ...
    @property
    def system(self) -> str | None: ...
    @property
    def always_allow(self) -> list[str]: ...
    @property
    def transcript(self) -> Transcript: ...
    @property
    def node_tools(self) -> NodeTools: ...
    @property
    def model_choice(self) -> NodeModelChoice: ...
    @property
    def changed(self) -> SignalInstance: ...
    @property
    def run_finished(self) -> SignalInstance: ...
    def is_closed(self) -> bool: ...
    def allow_always(self, name: str) -> None: ...
    def touch(self) -> None: ...
    def update_chips(self) -> None: ...
    def show_busy(self, busy: bool) -> None: ...
    def before_send(self) -> None: ...


class NodeRun:
    """The runs of one chat node (see the module docstring).

    Args:
        node: The node (its conversation, transcript, tools and chips).
        services: The app's services (runtime, bridge).
    """

    def __init__(self, node: RunHost, services: AppServices) -> None:
        self._node = node
        self._services = services
        self._busy = False
        self._run_done_seen = False
        self._send_task: asyncio.Task[None] | None = None
        self._usage_dirty = False
        self._bridge_connected = False

    def subscribe(self) -> None:
        """Start receiving the node's events (the node calls it once it is built)."""
        self._services.bridge.subscribe(self._node.node_id, self.on_event)
        self._bridge_connected = True

    def is_busy(self) -> bool:
        """True while a run of the node is in progress."""
        return self._busy or self._services.runtime.is_busy(self._node.node_id)

    def stop(self) -> None:
        """Stop the running response (partial text is kept and marked stopped)."""
        if self.is_busy():
            self._services.runtime.stop(self._node.node_id)

    def start(self) -> None:
        """Send the node's conversation as it is."""
        from desktop.core.chat.runtime import ChatSendRequest  # the runtime loads after the first paint

        node = self._node
        node.before_send()  # a send before the app's deferred services loaded loads them first
        req = ChatSendRequest(
            node_id=node.node_id,
            messages=list(node.conversation.messages),
            model=node.model,
            provider=node.provider,
            system=node.system,
        )
        self._run_done_seen = False
        self._set_busy(True)
        self._send_task = spawn(self._send(req))

    async def _send(self, req: ChatSendRequest) -> None:
        node = self._node
        error: str | None = None
        try:
            await node.node_tools.before_send()  # MCP: wait for starting servers (tools.py)
            result: ChatSendResult = await self._services.runtime.send(req)
            if not result.ok:
                error = result.error or "the request failed"
        except Exception as exc:  # noqa: BLE001 - nothing may escape into the Qt loop (a cancel does)
            log.exception("send failed for node %s", node.node_id)
            error = str(exc) or type(exc).__name__
        finally:
            if not node.is_closed():
                self._set_busy(False)
        if error is not None and not self._run_done_seen and not node.is_closed():
            # The early exits (busy, no provider) broadcast no Done: show them here.
            from desktop.core.chat.runtime import NO_PROVIDER_ERROR  # loaded by the send already

            if error == NO_PROVIDER_ERROR:
                node.transcript.show_error(NO_PROVIDER_TEXT, settings=True)
            else:
                node.transcript.show_error(error)
            node.run_finished.emit("error")

    def _set_busy(self, busy: bool) -> None:
        self._busy = busy
        self._node.show_busy(busy)

    def on_event(self, event: ChatEvent) -> None:
        """One of the node's runtime events (subscribed with ``RuntimeBridge.subscribe``)."""
        node = self._node
        if node.is_closed():
            return
        apply_event(node.conversation, event)
        node.touch()
        if isinstance(event, UsageReport):
            self._usage_dirty = True
        elif isinstance(event, ToolCallRequested):
            call = event.call
            if call.status == "awaiting_approval" and (
                node.node_tools.grant_name(call.name) in node.always_allow  # MCP: name#what it runs
                or node.node_tools.auto_approve(call)  # MCP server grant
            ):
                node.transcript.mark_decided(call.id, "approve")
                # The runtime parked the approval before broadcasting this event: answer now.
                self.approve(call.id, "approve")
        node.transcript.note_event(event)
        if isinstance(event, ToolCallFinished | Notice):
            node.changed.emit()
        elif isinstance(event, Done):
            node.model_choice.pin()  # a run went out: the node keeps that provider (saved below)
            self._run_done_seen = True
            self._busy = False
            self._set_busy(self._services.runtime.is_busy(node.node_id))
            if event.reason == "error":
                node.transcript.show_error(event.error or "the response failed")
            node.update_chips()
            node.changed.emit()
            node.run_finished.emit(event.reason)

    def on_rendered(self) -> None:
        """The transcript showed new output: the chips follow the usage it reported."""
        if self._usage_dirty:
            self._usage_dirty = False
            self._node.update_chips()

    def on_decision(self, call_id: str, decision: str) -> None:
        """A permission card was answered (``Transcript.decision``)."""
        node = self._node
        if not _is_card_decision(decision):
            log.warning("ignoring unknown card decision %r for %s", decision, call_id)
            return
        if decision == "always":
            card = node.transcript.card_for(call_id)
            name = node.node_tools.grant_name(card.call.name) if card is not None else None
            if name:
                node.allow_always(name)
        self.approve(call_id, _APPROVALS[decision])
        node.transcript.mark_decided(call_id, decision)

    def approve(self, call_id: str, decision: ApprovalDecision) -> None:
        """Answer the runtime's pending approval ``call_id`` (nothing once the node closed)."""
        if self._node.is_closed():
            return
        try:
            self._services.runtime.approve(self._node.node_id, call_id, decision)
        except Exception:  # noqa: BLE001
            log.exception("approve failed for %s", call_id)

    def cancel(self) -> None:
        """The node closes: stop its run, cancel the send task; the runtime's run ends on its own."""
        node_id = self._node.node_id
        try:
            if self._services.runtime.is_busy(node_id):
                self._services.runtime.stop(node_id)
        except Exception:  # noqa: BLE001 - shutting down must go on
            log.exception("stopping node %s failed", node_id)
        if self._send_task is not None and not self._send_task.done():
            self._send_task.cancel()
        self._busy = False  # the run is the runtime's now: is_busy() follows it until it ends

    def unsubscribe(self) -> None:
        """Stop receiving the node's events (once)."""
        if self._bridge_connected:
            self._services.bridge.unsubscribe(self._node.node_id, self.on_event)
            self._bridge_connected = False
