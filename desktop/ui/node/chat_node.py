"""The chat node widget: header (title, provider, model, token and cost chips), transcript, input.

The node owns its ``Conversation``. Sending appends the user message and runs
``services.runtime.send`` in a task the node keeps; the runtime's events arrive through the
bridge (``RuntimeBridge.subscribe``: only this node's events), are applied to the conversation
with ``apply_event`` at once, and rendered by the transcript at most once per frame.
Slash commands run locally: ``desktop.core.chat.commands.run_command`` decides their effect and
the node applies it. Export, token totals and the cost texts live in the Qt-free core too
(``desktop.core.chat.export`` and ``summary``).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, TypeGuard

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QFrame, QHBoxLayout, QPushButton, QVBoxLayout, QWidget

from desktop.core.chat.commands import (
    HELP_TEXT,
    CommandContext,
    CommandEffect,
    archive_failed_note,
    run_command,
)
from desktop.core.chat.conversation import (
    Conversation,
    append_message,
    append_note,
    apply_event,
    detect_slash_command,
)
from desktop.core.chat.cost import ConversationCost, Price
from desktop.core.chat.export import conversation_markdown, token_totals
from desktop.core.chat.summary import message_meta
from desktop.core.chat.types import (
    ChatEvent,
    ChatMessage,
    Done,
    Notice,
    ToolCallFinished,
    ToolCallRequested,
    UsageReport,
)
from desktop.core.chat.versions import CostSplit, all_responses, cost_split, cost_split_text
from desktop.core.project import NodeState, TrimInfo, apply_trim
from desktop.core.settings import Settings
from desktop.core.usage import context_use
from desktop.ui.money.budget_card import BudgetCard
from desktop.ui.node.header import NodeHeader
from desktop.ui.node.input import ChatInput
from desktop.ui.node.loading import NodeLoading
from desktop.ui.node.models import NodeModelChoice, spawn
from desktop.ui.node.style import node_colors, node_stylesheet
from desktop.ui.node.tools import attach_node_tools
from desktop.ui.node.versions import NodeVersions
from desktop.ui.services import AppServices

if TYPE_CHECKING:  # the runtime (asyncio), the cards and the transcript (Markdown) load after the first paint
    import asyncio

    from desktop.core.chat.loop import ApprovalDecision
    from desktop.core.chat.runtime import ChatSendRequest, ChatSendResult
    from desktop.ui.transcript.cards import CardDecision
    from desktop.ui.transcript.transcript import Transcript

log = logging.getLogger(__name__)

__all__ = ["HELP_TEXT", "ChatNodeWidget", "conversation_markdown", "token_totals"]

_APPROVALS: dict[CardDecision, ApprovalDecision] = {
    "approve": "approve",
    "always": "approve",
    "deny": "deny",
}


def _is_card_decision(value: str) -> TypeGuard[CardDecision]:
    return value in _APPROVALS


class ChatNodeWidget(QWidget):
    """One chat node (object name ``chatNode``).

    Signals:
        changed(): something persisted changed (conversation, model, provider, system, title,
            always_allow): the window autosaves.
        cost_changed(): tokens or cost changed: the window updates its status bar total.
        title_changed(str): the user renamed the node.
        run_finished(str): a run ended with this ``Done`` reason (the window saves the project).
        fork_requested(object): open this ``NodeState`` next to the node (a fork, see ``versions``).
    """

    changed = Signal()
    cost_changed = Signal()
    title_changed = Signal(str)
    run_finished = Signal(str)
    fork_requested = Signal(object)

    def __init__(self, state: NodeState, services: AppServices, parent: QWidget | None = None, *,
                 deferred: bool = False) -> None:
        super().__init__(parent)
        self.setObjectName("chatNode")
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        self._state = state
        self._services = services
        self._conv: Conversation = state.conversation
        self._system: str | None = state.system or None
        self._always_allow: list[str] = list(state.always_allow)
        self._title = state.title
        self._busy = False
        self._run_done_seen = False
        self._send_task: asyncio.Task[None] | None = None
        self._usage_dirty = False
        self._closed = False
        self._colors_key: object = None
        self._revision = 0  # bumped whenever the node's messages change (see _touch)
        self._cost_key: object = None
        self._cost_value: CostSplit | None = None
        # Edit, regenerate, versions and fork (desktop.ui.node.versions, desktop.core.chat.versions).
        self.versions = NodeVersions(self, send=self._start_send, replaced=self._on_replaced,
                                     approve=self._approve)
        self.versions.fork_requested.connect(self.fork_requested)
        self._build_ui(deferred)
        self.chat_input.edit_last_requested.connect(self.versions.edit_last)
        self.node_tools = attach_node_tools(self, services)  # MCP: Tools menu, grants (node_tools.py)
        self._apply_style()
        self.model_choice.reload()
        self._update_chips()
        services.bridge.subscribe(self.node_id, self._on_node_event)
        self._bridge_connected = True

    @property
    def transcript(self) -> Transcript:
        """The message list (built on first use when the node was built with ``deferred``)."""
        return self.loading.transcript()

    # ------------------------------------------------------------------------------------------
    # UI construction

    def _build_ui(self, deferred: bool) -> None:
        root = QVBoxLayout(self)
        root.setContentsMargins(0, 0, 0, 0)
        root.setSpacing(0)

        self.header = NodeHeader(self._title, self)
        self.header.title_entered.connect(lambda _text: self._on_title_edited())
        self.model_choice = NodeModelChoice(self.header, self._services, self._state.provider or None,
                                       self._state.model or None, self)
        self.model_choice.changed.connect(self._on_choice_changed)
        self.title_edit = self.header.title_edit
        self.token_chip = self.header.token_chip
        self.cost_chip = self.header.cost_chip
        self.provider_picker = self.header.provider_picker
        self.model_picker = self.header.model_picker
        root.addWidget(self.header)

        self.loading = NodeLoading(self, root, deferred=deferred)  # transcript, models: now or after paint

        self.budget_card = BudgetCard(self._services.budget_check, self)
        self.budget_card.send_anyway.connect(self._on_send_clicked)
        if self._services.open_budget_settings is not None:
            self.budget_card.open_settings.connect(self._services.open_budget_settings)
        root.addWidget(self.budget_card)
        bar = QFrame(self)
        bar.setObjectName("inputBar")
        bl = QHBoxLayout(bar)
        bl.setContentsMargins(10, 8, 10, 10)
        bl.setSpacing(8)
        self.chat_input = ChatInput(bar)
        self.chat_input.submitted.connect(self._on_input_submitted)
        bl.addWidget(self.chat_input, 1)
        self.send_button = QPushButton("Send", bar)
        self.send_button.setObjectName("sendButton")
        self.send_button.setAutoDefault(False)
        self.send_button.setCursor(Qt.CursorShape.PointingHandCursor)
        self.send_button.setProperty("busy", False)
        self.send_button.clicked.connect(self._on_send_clicked)
        bl.addWidget(self.send_button, 0, Qt.AlignmentFlag.AlignBottom)
        root.addWidget(bar)
        self.setFocusProxy(self.chat_input)

    def _apply_style(self) -> None:
        palette = QGuiApplication.palette()
        colors = node_colors(palette)
        if colors == self._colors_key:
            return
        self._colors_key = colors
        self.setStyleSheet(node_stylesheet(colors))
        self.loading.set_colors(colors)

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt override
        """Follow light/dark switches of the application palette.

        Only top-level windows get ``ApplicationPaletteChange``; a node inside a window (an MDI
        sub-window) gets ``PaletteChange`` when the application palette propagates to it. Setting
        the node's own style sheet also sends ``PaletteChange``: ``_apply_style`` then finds the
        colours unchanged and does nothing.
        """
        if event.type() in (
            QEvent.Type.ApplicationPaletteChange,
            QEvent.Type.PaletteChange,
            QEvent.Type.ThemeChange,
        ):
            self._apply_style()
        super().changeEvent(event)

    # ------------------------------------------------------------------------------------------
    # Public API (used by the main window)

    @property
    def node_id(self) -> str:
        """The node id."""
        return self._state.id

    @property
    def conversation(self) -> Conversation:
        """The node's conversation (shared with ``to_state``; see ``apply_saved``)."""
        return self._conv

    @property
    def model(self) -> str | None:
        """The model picked in the node (None: the provider's default)."""
        return self.model_choice.model

    @property
    def provider(self) -> str | None:
        """The provider picked in the node (None: the default provider)."""
        return self.model_choice.provider

    @property
    def system(self) -> str | None:
        """The node's system prompt."""
        return self._system

    @property
    def always_allow(self) -> list[str]:
        """Tools allowed without asking in this node."""
        return list(self._always_allow)

    @property
    def title(self) -> str:
        """The node title."""
        return self._title

    @property
    def revision(self) -> int:
        """A counter the node bumps whenever its messages change (the cost cache is keyed on it)."""
        return self._revision

    def to_state(self) -> NodeState:
        """The node as a ``NodeState`` (geometry as given at construction; the window fills it in).

        The conversation object is shared, not copied: the project store never changes it (a save
        returns what it trimmed and the window hands it to :meth:`apply_saved`).
        """
        s = self._state
        return NodeState(
            id=s.id,
            kind=s.kind,
            title=self._title,
            x=s.x,
            y=s.y,
            width=s.width,
            height=s.height,
            conversation=self._conv,
            model=self.model_choice.model,
            provider=self.model_choice.provider,
            system=self._system,
            always_allow=list(self._always_allow),
            extra=dict(s.extra),
            data_extra=dict(s.data_extra),
        )

    def apply_saved(self, info: TrimInfo) -> None:
        """Take in what a save trimmed (``SaveResult.trimmed``; the store never changes the live
        conversation): archived messages leave, the store's note takes their place, messages newer
        than the saved snapshot stay; a trim already applied changes nothing."""
        if self._closed or not apply_trim(self._conv, info):
            return
        self._touch()
        self.transcript.set_conversation(self._conv)
        self._update_chips()

    def cost(self) -> ConversationCost:
        """The cost of every response of every version, with the settings' price overrides.

        Cached until the messages (``revision``), the model or the price overrides change: the
        window asks every node for its cost whenever any node's cost changes (O(nodes^2) on opening).
        """
        return self.cost_split().total

    def cost_split(self) -> CostSplit:
        """The cost split into this path and the other versions (cached like ``cost``)."""
        model = self.model_choice.pricing_model()
        overrides = self._price_overrides()
        key = (self._revision, model, self._services.overrides_version)
        if key != self._cost_key or self._cost_value is None:
            self._cost_value = cost_split(self._conv, model, overrides)
            self._cost_key = key
        return self._cost_value

    def is_busy(self) -> bool:
        """True while a run of this node is in progress."""
        return self._busy or self._services.runtime.is_busy(self.node_id)

    def submit(self, text: str) -> None:
        """What Enter does: run a slash command or send ``text`` as a user message."""
        self._submit(text)

    def stop(self) -> None:
        """Stop the running response (partial text is kept and marked stopped)."""
        if self.is_busy():
            self._services.runtime.stop(self.node_id)

    def retry(self) -> None:
        """Send the conversation again as it is (after an error)."""
        if self.is_busy() or self._closed:
            return
        self.transcript.clear_error()
        self._start_send()

    def export_markdown(self, *, include_versions: bool = False) -> str:
        """The conversation, archived history first, as a Markdown document (the active path, and
        with ``include_versions`` the other versions after it)."""
        archived: list[ChatMessage] = []
        if self._services.read_archive is not None:
            try:
                archived = list(self._services.read_archive(self.node_id))
            except Exception as exc:  # noqa: BLE001 - an unreadable archive must not block export
                log.warning("could not read the history archive of %s: %s", self.node_id, exc)
        return conversation_markdown(self._title, [*archived, *self._conv.messages], archived=len(archived),
                                     include_versions=include_versions)

    def shutdown(self) -> None:
        """Stop the run, cancel the node's tasks and disconnect from the bridge."""
        if self._closed:
            return
        self._closed = True
        try:
            if self._services.runtime.is_busy(self.node_id):
                self._services.runtime.stop(self.node_id)
        except Exception:  # noqa: BLE001 - shutting down must go on
            log.exception("stopping node %s failed", self.node_id)
        if self._send_task is not None and not self._send_task.done():
            self._send_task.cancel()
        self._busy = False  # the run is the runtime's now: is_busy() follows it until it ends
        self.model_choice.shutdown()
        if self._bridge_connected:
            self._services.bridge.unsubscribe(self.node_id, self._on_node_event)
            self._bridge_connected = False
        self.loading.flush()

    def _touch(self) -> None:
        """The messages changed: bump ``revision`` so cached totals are recomputed."""
        self._revision += 1

    def _on_replaced(self) -> None:
        """An edit, regenerate or version switch replaced the messages: show the new path."""
        self._touch()
        self.transcript.clear_error()
        self.transcript.set_conversation(self._conv)
        self._update_chips()
        self.changed.emit()

    # ------------------------------------------------------------------------------------------
    # Sending

    def _on_input_submitted(self, text: str) -> None:
        if self._submit(text):
            self.chat_input.clear()

    def _on_send_clicked(self) -> None:
        if self.is_busy():
            self.stop()
            return
        if self._submit(self.chat_input.toPlainText()):
            self.chat_input.clear()
        self.chat_input.setFocus()

    def _submit(self, text: str) -> bool:
        """Run ``text``; True when it was accepted (the input box may be cleared)."""
        if self._closed or not text.strip():
            return False
        command = detect_slash_command(text)
        if command is not None:
            self._apply_command(run_command(command, self._command_context()))
            return True
        if self.is_busy() or not self.budget_card.allows_send():
            return False
        append_message(self._conv, "user", text)
        self._touch()
        self.transcript.clear_error()
        self.transcript.scroll_to_bottom()
        self.changed.emit()
        self._start_send()  # the request goes out first (it takes the runtime two loop passes)
        self.transcript.flush_soon()  # then the message shows, in one frame with the first text
        return True

    def _start_send(self) -> None:
        from desktop.core.chat.runtime import ChatSendRequest
        self.loading.before_send()  # a send before the app's deferred services loaded loads them first
        req = ChatSendRequest(
            node_id=self.node_id,
            messages=list(self._conv.messages),
            model=self.model_choice.model,
            provider=self.model_choice.provider,
            system=self._system,
        )
        self._run_done_seen = False
        self._set_busy(True)
        self._send_task = spawn(self._run_send(req))

    async def _run_send(self, req: ChatSendRequest) -> None:
        error: str | None = None
        try:
            await self.node_tools.before_send()  # MCP: wait for starting servers (node_tools.py)
            result: ChatSendResult = await self._services.runtime.send(req)
            if not result.ok:
                error = result.error or "the request failed"
        except Exception as exc:  # noqa: BLE001 - nothing may escape into the Qt loop (a cancel does)
            log.exception("send failed for node %s", self.node_id)
            error = str(exc) or type(exc).__name__
        finally:
            if not self._closed:
                self._set_busy(False)
        if error is not None and not self._run_done_seen and not self._closed:
            # The early exits (busy, no provider) broadcast no Done: show them here.
            self.transcript.show_error(error)
            self.run_finished.emit("error")

    def _set_busy(self, busy: bool) -> None:
        self._busy = busy
        if (button := self.send_button).property("busy") != busy:  # re-polished (~0.5 ms) only on a change
            button.setText("Stop" if busy else "Send")
            button.setToolTip("Stop the response" if busy else "Send (Enter)")
            button.setProperty("busy", busy)
            button.style().unpolish(button)
            button.style().polish(button)
        self.versions.refresh()

    # ------------------------------------------------------------------------------------------
    # Events

    def _on_node_event(self, event: ChatEvent) -> None:
        """One of this node's runtime events (subscribed with ``RuntimeBridge.subscribe``)."""
        if self._closed:
            return
        apply_event(self._conv, event)
        self._touch()
        if isinstance(event, UsageReport):
            self._usage_dirty = True
        elif isinstance(event, ToolCallRequested):
            call = event.call
            if call.status == "awaiting_approval" and (
                self.node_tools.grant_name(call.name) in self._always_allow  # MCP: name#what it runs
                or self.node_tools.auto_approve(call)  # MCP server grant
            ):
                self.transcript.mark_decided(call.id, "approve")
                # The runtime parked the approval before broadcasting this event: answer now.
                self._approve(call.id, "approve")
        self.transcript.note_event(event)
        if isinstance(event, ToolCallFinished | Notice):
            self.changed.emit()
        elif isinstance(event, Done):
            self._run_done_seen = True
            self._busy = False
            self._set_busy(self._services.runtime.is_busy(self.node_id))
            if event.reason == "error":
                self.transcript.show_error(event.error or "the response failed")
            self._update_chips()
            self.changed.emit()
            self.run_finished.emit(event.reason)

    def _on_rendered(self) -> None:
        if self._usage_dirty:
            self._usage_dirty = False
            self._update_chips()

    def _on_decision(self, call_id: str, decision: str) -> None:
        """A permission card was answered (``Transcript.decision``)."""
        if not _is_card_decision(decision):
            log.warning("ignoring unknown card decision %r for %s", decision, call_id)
            return
        if decision == "always":
            card = self.transcript.card_for(call_id)
            name = self.node_tools.grant_name(card.call.name) if card is not None else None
            if name and name not in self._always_allow:
                self._always_allow.append(name)
                self.changed.emit()
        self._approve(call_id, _APPROVALS[decision])
        self.transcript.mark_decided(call_id, decision)

    def _approve(self, call_id: str, decision: ApprovalDecision) -> None:
        if self._closed:
            return
        try:
            self._services.runtime.approve(self.node_id, call_id, decision)
        except Exception:  # noqa: BLE001
            log.exception("approve failed for %s", call_id)

    # ------------------------------------------------------------------------------------------
    # Chips and pricing

    def _settings(self) -> Settings:
        return self._services.settings()

    def _price_overrides(self) -> dict[str, Price]:
        return self._services.price_overrides()

    def _meta_text(self, msg: ChatMessage) -> str:
        return message_meta(msg, self.model_choice.pricing_model(), self._price_overrides())

    def _update_chips(self) -> None:
        split = self.cost_split()
        self.header.show_totals(token_totals(all_responses(self._conv)), split.total)
        if text := cost_split_text(split):
            self.cost_chip.setToolTip(f"{self.cost_chip.toolTip()}\n{text}")
        self.header.show_context(context_use(self._conv.messages, self.model_choice.pricing_model()))
        self.cost_changed.emit()

    # ------------------------------------------------------------------------------------------
    # Providers, models and title

    def reload_settings(self) -> None:
        """Settings changed (the dialog was saved): refresh providers, models and prices."""
        self.model_choice.reload()
        self.model_choice.request_models()
        self._update_chips()

    def _on_choice_changed(self) -> None:
        self._update_chips()
        self.changed.emit()

    def _on_title_edited(self) -> None:
        text = self.title_edit.text().strip() or "Chat"
        if text != self._title:
            self._title = text
            self.title_changed.emit(text)
            self.changed.emit()
        self.header.show_title(text)

    def set_title(self, title: str) -> None:
        """Rename the node."""
        self.title_edit.setText(title)
        self._on_title_edited()

    # ------------------------------------------------------------------------------------------
    # Slash commands

    def _command_context(self) -> CommandContext:
        return CommandContext(
            messages=all_responses(self._conv),  # /cost counts every version, like the chip
            model=self.model_choice.model,
            default_model=self.model_choice.default_model(),
            system=self._system,
            busy=self.is_busy(),
            overrides=self._price_overrides(),
            cost=self.cost(),
        )

    def _apply_command(self, effect: CommandEffect) -> None:
        """Apply what ``run_command`` decided, in the order ``CommandEffect`` documents."""
        if effect.new_model is not None:
            self.model_choice.set_model(effect.new_model)
        if effect.remove_system:
            self._system = None
        elif effect.new_system is not None:
            self._system = effect.new_system
        if effect.clear and not self._clear():
            return
        for text in effect.notes:
            self._note(text)

    def _note(self, text: str) -> None:
        append_note(self._conv, text)
        self._touch()
        self.transcript.scroll_to_bottom()
        self.transcript.flush()
        self.changed.emit()

    def _clear(self) -> bool:
        """Archive the messages, then empty the conversation; False (and a note) when archiving failed."""
        messages = list(self._conv.messages)
        if messages and self._services.archive is not None:
            try:
                self._services.archive(self.node_id, messages)
            except Exception as exc:  # noqa: BLE001 - losing history is worse than not clearing
                log.error("could not archive node %s before /clear: %s", self.node_id, exc)
                self._note(archive_failed_note(str(exc)))
                return False
        self._conv.messages.clear()
        self._touch()
        self.transcript.clear_error()
        self.transcript.set_conversation(self._conv)
        self._update_chips()
        self.changed.emit()
        return True
