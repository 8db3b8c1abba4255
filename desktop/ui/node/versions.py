"""What a chat node does with its message actions: edit and resend, regenerate, switch versions, fork.

``NodeVersions`` belongs to one ``ChatNodeWidget``. It sets up each message view's action row as
the transcript builds it (``Transcript.view_created``), applies the rows' requests
(``Transcript.message_action``) through ``desktop.core.chat.versions`` and hands the node back
what to do next: re-render, send, or open a fork. Editing, regenerating and switching are refused
while the node is busy (the rows are disabled then, with a tooltip that says why); a call still
awaiting approval in a replaced part of the conversation is denied first.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import QObject, Signal

from desktop.core.chat.attachment_ref import attachments_of, edit_keeping_attachments
from desktop.core.chat.conversation import Conversation, new_id, now_ms
from desktop.core.chat.locate import activate_message
from desktop.core.chat.types import ChatMessage
from desktop.core.chat.versions import (
    VersionControl,
    fork_prefix,
    regenerate,
    switch_fork,
    version_controls,
)
from desktop.core.store import NodeState, new_node_state

if TYPE_CHECKING:
    from desktop.core.chat.locate import VersionStep
    from desktop.core.chat.loop import ApprovalDecision
    from desktop.ui.transcript.transcript import Transcript
    from desktop.ui.transcript.views import MessageView


class VersionsHost(Protocol):
    """What :class:`NodeVersions` needs of its node (a ``ChatNodeWidget``; a Protocol, so this
    module does not import the node's module back)."""

    @property
    def title(self) -> str: ...
    @property
    def conversation(self) -> Conversation: ...
    @property
    def provider(self) -> str | None: ...
    @property
    def model(self) -> str | None: ...
    @property
    def system(self) -> str | None: ...
    @property
    def revision(self) -> int: ...
    @property
    def transcript(self) -> Transcript: ...
    def is_busy(self) -> bool: ...

log = logging.getLogger(__name__)

__all__ = ["NodeVersions", "fork_state"]


def fork_state(node: VersionsHost, message_id: str) -> NodeState:
    """A new node's state: the history up to and including ``message_id``, the node's settings.

    Same provider, model and system prompt; titled ``"<title> (fork)"``. The always-allowed tools
    are not copied: grants are the user's, per node.
    """
    state = new_node_state(f"{node.title} (fork)")
    state.conversation = Conversation(
        id=new_id("c"), messages=fork_prefix(node.conversation, message_id), created_at=now_ms()
    )
    state.provider = node.provider
    state.model = node.model
    state.system = node.system
    return state


class NodeVersions(QObject):
    """The message actions of one chat node.

    Args:
        node: The node.
        send: Starts a run with the node's conversation as it is.
        replaced: The node's messages were replaced: re-render, recount, autosave.
        approve: Answers a pending approval of the node's run.

    Signals:
        fork_requested(object): a ``NodeState`` to open next to the node.
    """

    fork_requested = Signal(object)

    def __init__(
        self,
        node: VersionsHost,
        *,
        send: Callable[[], None],
        replaced: Callable[[], None],
        approve: Callable[[str, ApprovalDecision], None],
    ) -> None:
        super().__init__(node if isinstance(node, QObject) else None)
        self._node = node
        self._send = send
        self._replaced = replaced
        self._approve = approve
        self._controls_key: object = None
        self._controls: dict[str, VersionControl] = {}

    def connect_transcript(self, transcript: Transcript) -> None:
        """Follow ``transcript`` (the node's, once built): set up its rows and apply their actions."""
        transcript.view_created.connect(self.setup_view)
        transcript.message_action.connect(self.apply)

    # -- the rows

    def controls(self) -> dict[str, VersionControl]:
        """The version switchers of the active path (cached per node revision)."""
        key = (self._node.revision, len(self._node.conversation.messages))
        if key != self._controls_key:
            self._controls = version_controls(self._node.conversation)
            self._controls_key = key
        return self._controls

    def setup_view(self, view: MessageView) -> None:
        """Show a new view's switcher and busy state (``Transcript.view_created``)."""
        actions = view.action_row
        if actions is None:
            return
        control = self.controls().get(view.message_id)
        actions.set_versions(*((control.k, control.n) if control else (1, 1)))
        actions.set_busy(self._node.is_busy())

    def refresh(self) -> None:
        """Bring every built row up to date (after a run, or when busy changes)."""
        for view in self._node.transcript.views():
            self.setup_view(view)

    # -- the actions

    def apply(self, action: str, message_id: str, argument: str) -> None:
        """Apply a row's request (``Transcript.message_action``); see ``desktop.ui.transcript.actions``."""
        if action == "fork":
            self.fork(message_id)
            return
        if self._node.is_busy():
            log.info("ignoring %r on %s: the node is busy", action, message_id)
            return
        try:
            if action == "edit":
                self.open_editor(message_id)
            elif action == "edit_send":
                self.edit(message_id, argument)
            elif action == "regenerate":
                self.regenerate(message_id)
            elif action == "version":
                self.switch(message_id, int(argument))
            else:
                log.warning("unknown message action %r", action)
        except (KeyError, ValueError) as exc:
            log.warning("message action %r on %s failed: %s", action, message_id, exc)

    def open_editor(self, message_id: str) -> bool:
        """Open the inline editor of a user message, prefilled with its text."""
        msg = self._message(message_id)
        view = self._node.transcript.view_for(message_id)
        if msg is None or msg.role != "user" or view is None or view.action_row is None:
            return False
        view.action_row.open_editor(msg.content)
        return True

    def edit_last(self) -> bool:
        """Edit the last user message (the Up key in an empty input)."""
        if self._node.is_busy():
            return False
        for msg in reversed(self._node.conversation.messages):
            if msg.role == "user":
                self._node.transcript.scroll_to_bottom()
                return self.open_editor(msg.id)
        return False

    def edit(self, message_id: str, text: str) -> None:
        """Replace a user message (and what follows, kept as a version) and send it; its
        attachments stay on the new message (``edit_keeping_attachments``)."""
        msg = self._message(message_id)
        if not text.strip() and (msg is None or not attachments_of(msg)):
            return
        self._deny_pending_from(message_id)
        edit_keeping_attachments(self._node.conversation, message_id, text)
        self._replaced()
        self._send()

    def regenerate(self, message_id: str) -> None:
        """Keep an answer as a version and ask for a new one."""
        self._deny_pending_from(message_id, answer=True)
        regenerate(self._node.conversation, message_id)
        self._replaced()
        self._send()

    def switch(self, message_id: str, k: int) -> None:
        """Show version ``k`` of the switcher on ``message_id``."""
        control = self.controls().get(message_id)
        if control is None:
            raise KeyError(f"no versions at {message_id!r}")
        self._deny_pending_from(control.carrier_id, answer=control.kind == "answer")
        switch_fork(self._node.conversation, control.carrier_id, control.kind, k)
        self._replaced()

    def switch_steps(self, steps: Sequence[VersionStep]) -> bool:
        """Show the version ``steps`` lead to (the branch map): each one ``switch_fork``, as the
        ``‹ k/n ›`` rows switch; False (and the steps before it kept) when one cannot be applied."""
        if self._node.is_busy() or not steps:
            return False
        self._deny_pending_from(steps[0].carrier_id, answer=steps[0].kind == "answer")
        ok = True
        for step in steps:
            try:
                switch_fork(self._node.conversation, step.carrier_id, step.kind, step.k)
            except (KeyError, ValueError) as exc:
                log.warning("could not switch to version %d at %s: %s", step.k, step.carrier_id, exc)
                ok = False
                break
        self._replaced()
        return ok

    def show_message(self, message_id: str) -> bool:
        """Switch to the version holding ``message_id`` (a search hit); False when no version does.
        Nothing changes when it is already shown; a busy node is left as it is."""
        if self._message(message_id) is not None:
            return True
        if self._node.is_busy():
            return False
        if not activate_message(self._node.conversation, message_id):
            return False
        self._replaced()
        return True

    def fork(self, message_id: str) -> None:
        """Ask for a new node with the history up to and including ``message_id``."""
        if self._message(message_id) is None:
            return
        self.fork_requested.emit(fork_state(self._node, message_id))

    # -- internals

    def _message(self, message_id: str) -> ChatMessage | None:
        for msg in self._node.conversation.messages:
            if msg.id == message_id:
                return msg
        return None

    def _deny_pending_from(self, message_id: str, *, answer: bool = False) -> None:
        """Deny every call awaiting approval in the part of the path about to be replaced."""
        msgs = self._node.conversation.messages
        start = next((i for i, m in enumerate(msgs) if m.id == message_id), len(msgs))
        if answer:
            while start > 0 and msgs[start].role != "user":
                start -= 1
        for msg in msgs[start:]:
            for call in msg.tool_calls or []:
                if msg.role == "assistant" and call.status == "awaiting_approval":
                    self._approve(call.id, "deny")
                    self._node.transcript.mark_decided(call.id, "deny")
