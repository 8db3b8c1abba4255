"""The chat node widget: header (title, provider, model, token and cost chips), transcript, input.

The node owns its ``Conversation``. Sending appends the user message and runs
``services.runtime.send`` in a task the node keeps; the runtime's events arrive through the
bridge (``RuntimeBridge.subscribe``: only this node's events), are applied to the conversation
with ``apply_event`` at once, and rendered by the transcript at most once per frame.
Slash commands run locally.
"""

from __future__ import annotations

import asyncio
import html
import logging
from collections.abc import Coroutine, Sequence
from typing import Any

from PySide6.QtCore import QEvent, Qt, QTimer, Signal
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QComboBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from desktop.core.chat.conversation import (
    Conversation,
    append_message,
    append_note,
    apply_event,
    detect_slash_command,
)
from desktop.core.chat.cost import ConversationCost, Price, conversation_cost, format_cost, message_cost
from desktop.core.chat.runtime import ChatSendRequest, ChatSendResult
from desktop.core.chat.types import (
    ChatEvent,
    ChatMessage,
    Done,
    Notice,
    ToolCallFinished,
    ToolCallRequested,
    UsageReport,
)
from desktop.core.project import NodeState
from desktop.core.settings import Settings, choose_model, price_overrides_as_prices
from desktop.ui.chat_input import SLASH_COMPLETIONS, ChatInput
from desktop.ui.node_style import markdown_theme, node_colors, node_stylesheet
from desktop.ui.services import AppServices
from desktop.ui.transcript import Transcript, format_tokens

log = logging.getLogger(__name__)

__all__ = ["ChatNodeWidget", "conversation_markdown", "token_totals"]


def token_totals(messages: Sequence[ChatMessage]) -> dict[str, int]:
    """Sum the usage of the assistant messages: input (uncached), cache reads/writes, output, reasoning."""
    totals = {"input": 0, "cache_read": 0, "cache_write": 0, "output": 0, "reasoning": 0, "responses": 0}
    for m in messages:
        u = m.usage
        if u is None or m.role != "assistant":
            continue
        totals["input"] += u.input_tokens
        totals["cache_read"] += u.cache_read_tokens
        totals["cache_write"] += u.cache_write_tokens
        totals["output"] += u.output_tokens
        totals["reasoning"] += u.reasoning_tokens
        totals["responses"] += 1
    return totals


def _fence(text: str) -> str:
    longest = 2
    run = 0
    for ch in text:
        run = run + 1 if ch == "`" else 0
        longest = max(longest, run)
    return "`" * (longest + 1)


def conversation_markdown(title: str, messages: Sequence[ChatMessage], *, archived: int = 0) -> str:
    """Render ``messages`` as a Markdown document (the node's export).

    Args:
        title: The document heading.
        messages: The messages, oldest first (archived history first).
        archived: How many leading messages came from the history archive (a rule marks the end).
    """
    out = [f"# {title}", ""]
    for i, m in enumerate(messages):
        if archived and i == archived:
            out += ["---", "", "*(earlier messages above were moved to the history archive)*", ""]
        if m.role == "tool":
            continue  # results are exported with the call that produced them
        if m.role == "note":
            note_lines = m.content.split("\n")
            out += [f"> *Note:* {line}" if j == 0 else f"> {line}" for j, line in enumerate(note_lines)]
            out.append("")
            continue
        heading = {"user": "You", "assistant": "Assistant", "system": "System"}.get(m.role, m.role)
        if m.role == "assistant" and m.model:
            heading += f" ({m.model})"
        out += [f"## {heading}", ""]
        if m.thinking:
            out += ["<details><summary>Thinking</summary>", "", m.thinking, "", "</details>", ""]
        if m.content:
            out += [m.content, ""]
        for call in m.tool_calls or []:
            args = call.args_json or "{}"
            fence = _fence(args)
            out += [f"**Tool call** `{call.name}` — {call.status}", "", f"{fence}json", args, fence, ""]
            if call.result is not None:
                fence = _fence(call.result)
                out += ["Result:", "", fence, call.result, fence, ""]
        if m.stopped:
            out += ["*(stopped)*", ""]
    return "\n".join(out).rstrip() + "\n"


HELP_TEXT = "Commands:\n" + "\n".join(f"{name} — {text}" for name, text in SLASH_COMPLETIONS) + (
    "\n/system clear — remove the system prompt"
)


class ChatNodeWidget(QWidget):
    """One chat node (object name ``chatNode``).

    Signals:
        changed(): something persisted changed (conversation, model, provider, system, title,
            always_allow): the window autosaves.
        cost_changed(): tokens or cost changed: the window updates its status bar total.
        title_changed(str): the user renamed the node.
        run_finished(str): a run ended with this ``Done`` reason (the window saves the project).
    """

    changed = Signal()
    cost_changed = Signal()
    title_changed = Signal(str)
    run_finished = Signal(str)

    def __init__(self, state: NodeState, services: AppServices, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("chatNode")
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        self._state = state
        self._services = services
        self._conv: Conversation = state.conversation
        self._model: str | None = state.model or None
        self._provider: str | None = state.provider or None
        self._system: str | None = state.system or None
        self._always_allow: list[str] = list(state.always_allow)
        self._title = state.title
        self._busy = False
        self._run_done_seen = False
        self._send_task: asyncio.Task[None] | None = None
        self._models_task: asyncio.Task[None] | None = None
        self._listed_models: dict[str, list[str]] = {}
        self._usage_dirty = False
        self._closed = False
        self._overrides_key: object = None
        self._overrides: dict[str, Price] = {}
        self._colors_key: object = None
        self._usage_epoch = 0  # bumped whenever a message's usage may have changed
        self._cost_key: object = None
        self._cost_value: ConversationCost | None = None

        self._build_ui()
        self._apply_style()
        self._reload_providers()
        self.transcript.set_conversation(self._conv)
        self._update_chips()
        services.bridge.subscribe(self.node_id, self._on_node_event)
        self._bridge_connected = True
        self._request_models()

    # ------------------------------------------------------------------------------------------
    # UI construction

    def _build_ui(self) -> None:
        root = QVBoxLayout(self)
        root.setContentsMargins(0, 0, 0, 0)
        root.setSpacing(0)

        header = QFrame(self)
        header.setObjectName("nodeHeader")
        hl = QVBoxLayout(header)
        hl.setContentsMargins(10, 8, 10, 8)
        hl.setSpacing(6)
        row1 = QHBoxLayout()
        row1.setSpacing(6)
        self.title_edit = QLineEdit(self._title, header)
        self.title_edit.setObjectName("nodeTitle")
        self.title_edit.setAccessibleName("Node title")
        self.title_edit.setToolTip("Node title (click to rename)")
        self.title_edit.editingFinished.connect(self._on_title_edited)
        row1.addWidget(self.title_edit, 1)
        self.token_chip = QLabel(header)
        self.token_chip.setObjectName("tokenChip")
        self.token_chip.setAccessibleName("Tokens")
        row1.addWidget(self.token_chip)
        self.cost_chip = QLabel(header)
        self.cost_chip.setObjectName("costChip")
        self.cost_chip.setAccessibleName("Cost")
        row1.addWidget(self.cost_chip)
        hl.addLayout(row1)
        row2 = QHBoxLayout()
        row2.setSpacing(6)
        self.provider_picker = QComboBox(header)
        self.provider_picker.setObjectName("providerPicker")
        self.provider_picker.setAccessibleName("Provider")
        self.provider_picker.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.provider_picker.currentIndexChanged.connect(self._on_provider_changed)
        row2.addWidget(self.provider_picker)
        self.model_picker = QComboBox(header)
        self.model_picker.setObjectName("modelPicker")
        self.model_picker.setAccessibleName("Model")
        self.model_picker.setEditable(True)
        self.model_picker.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        self.model_picker.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.model_picker.setMinimumContentsLength(12)
        self.model_picker.activated.connect(lambda _i: self._on_model_edited())
        line = self.model_picker.lineEdit()
        if line is not None:
            line.editingFinished.connect(self._on_model_edited)
        row2.addWidget(self.model_picker, 1)
        hl.addLayout(row2)
        root.addWidget(header)

        self.transcript = Transcript(self)
        self.transcript.meta_text = self._meta_text
        self.transcript.decision.connect(self._on_decision)
        self.transcript.retry_requested.connect(self.retry)
        self.transcript.rendered.connect(self._on_rendered)
        root.addWidget(self.transcript, 1)

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
        self.transcript.set_theme(markdown_theme(colors))

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
        """The node's conversation (shared: the project store may trim it in place on save)."""
        return self._conv

    @property
    def model(self) -> str | None:
        """The model picked in the node (None: the provider's default)."""
        return self._model

    @property
    def provider(self) -> str | None:
        """The provider picked in the node (None: the default provider)."""
        return self._provider

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

    def to_state(self) -> NodeState:
        """The node as a ``NodeState`` (geometry as given at construction; the window fills it in).

        The conversation object is shared, not copied: when the project store trims it on save,
        the node sees the trimmed list and re-renders on the next frame.
        """
        s = self._state
        QTimer.singleShot(0, self._check_external_change)
        return NodeState(
            id=s.id,
            kind=s.kind,
            title=self._title,
            x=s.x,
            y=s.y,
            width=s.width,
            height=s.height,
            conversation=self._conv,
            model=self._model,
            provider=self._provider,
            system=self._system,
            always_allow=list(self._always_allow),
            extra=dict(s.extra),
            data_extra=dict(s.data_extra),
        )

    def cost(self) -> ConversationCost:
        """The conversation's cost with the settings' price overrides.

        Cached until the messages, their usage, the model or the price overrides change: the window
        asks every node for its cost whenever any node's cost changes (O(nodes^2) on opening).
        """
        msgs = self._conv.messages
        model = self._pricing_model()
        overrides = self._price_overrides()
        key = (
            len(msgs),
            id(msgs[0]) if msgs else 0,
            id(msgs[-1]) if msgs else 0,
            self._usage_epoch,
            model,
            self._overrides_key,
        )
        if key != self._cost_key or self._cost_value is None:
            self._cost_value = conversation_cost(msgs, model, overrides)
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

    def export_markdown(self) -> str:
        """The conversation, archived history first, as a Markdown document."""
        archived: list[ChatMessage] = []
        if self._services.read_archive is not None:
            try:
                archived = list(self._services.read_archive(self.node_id))
            except Exception as exc:  # noqa: BLE001 - an unreadable archive must not block export
                log.warning("could not read the history archive of %s: %s", self.node_id, exc)
        return conversation_markdown(self._title, [*archived, *self._conv.messages], archived=len(archived))

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
        for task in (self._send_task, self._models_task):
            if task is not None and not task.done():
                task.cancel()
        if self._bridge_connected:
            self._services.bridge.unsubscribe(self.node_id, self._on_node_event)
            self._bridge_connected = False
        self.transcript.flush()

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
            self._run_command(command.name, command.arg)
            return True
        if self.is_busy():
            return False
        append_message(self._conv, "user", text)
        self.transcript.clear_error()
        self.transcript.scroll_to_bottom()
        self.transcript.flush()
        self.changed.emit()
        self._start_send()
        return True

    def _start_send(self) -> None:
        req = ChatSendRequest(
            node_id=self.node_id,
            messages=list(self._conv.messages),
            model=self._model,
            provider=self._provider,
            system=self._system,
        )
        self._run_done_seen = False
        self._set_busy(True)
        self._send_task = self._spawn(self._run_send(req))

    async def _run_send(self, req: ChatSendRequest) -> None:
        error: str | None = None
        try:
            result: ChatSendResult = await self._services.runtime.send(req)
            if not result.ok:
                error = result.error or "the request failed"
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - nothing may escape into the Qt loop
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
        self.send_button.setText("Stop" if busy else "Send")
        self.send_button.setToolTip("Stop the response" if busy else "Send (Enter)")
        self.send_button.setProperty("busy", busy)
        style = self.send_button.style()
        style.unpolish(self.send_button)
        style.polish(self.send_button)

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            loop = asyncio.get_event_loop_policy().get_event_loop()
        return loop.create_task(coro)

    # ------------------------------------------------------------------------------------------
    # Events

    def _on_node_event(self, event: ChatEvent) -> None:
        """One of this node's runtime events (subscribed with ``RuntimeBridge.subscribe``)."""
        if self._closed:
            return
        apply_event(self._conv, event)
        if isinstance(event, UsageReport):
            self._usage_dirty = True
            self._usage_epoch += 1
        elif isinstance(event, ToolCallRequested):
            call = event.call
            if call.status == "awaiting_approval" and call.name in self._always_allow:
                self.transcript.mark_decided(call.id, "approve")
                # Deferred: the runtime parks the approval right after this broadcast returns.
                QTimer.singleShot(0, lambda cid=call.id: self._approve(cid, "approve"))
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
        if decision == "always":
            card = self.transcript.card_for(call_id)
            name = card.call.name if card is not None else None
            if name and name not in self._always_allow:
                self._always_allow.append(name)
                self.changed.emit()
            self._approve(call_id, "approve")
            self.transcript.mark_decided(call_id, "always")
        else:
            self._approve(call_id, "approve" if decision == "approve" else "deny")
            self.transcript.mark_decided(call_id, decision)

    def _approve(self, call_id: str, decision: str) -> None:
        if self._closed:
            return
        try:
            self._services.runtime.approve(self.node_id, call_id, decision)  # type: ignore[arg-type]
        except Exception:  # noqa: BLE001
            log.exception("approve failed for %s", call_id)

    def _check_external_change(self) -> None:
        if not self._closed:
            self._usage_epoch += 1  # the store may have trimmed the list in place
            self.transcript.flush()
            self._update_chips()

    # ------------------------------------------------------------------------------------------
    # Chips and pricing

    def _settings(self) -> Settings:
        return self._services.settings()

    def _price_overrides(self) -> dict[str, Price]:
        settings = self._settings()
        key = (id(settings), repr(settings.price_overrides))
        if key != self._overrides_key:
            self._overrides_key = key
            try:
                self._overrides = price_overrides_as_prices(settings)
            except Exception as exc:  # noqa: BLE001 - bad overrides must not break the node
                log.warning("ignoring price overrides: %s", exc)
                self._overrides = {}
        return self._overrides

    def _pricing_model(self) -> str | None:
        return self._model or self._effective_model()

    def _effective_model(self) -> str | None:
        return choose_model(self._settings(), self._provider)

    def _meta_text(self, msg: ChatMessage) -> str:
        parts: list[str] = []
        if msg.model:
            parts.append(msg.model)
        u = msg.usage
        if u is not None:
            tokens = f"{format_tokens(u.total_input_tokens)} in · {format_tokens(u.output_tokens)} out"
            parts.append(tokens)
            cost = message_cost(msg, self._pricing_model(), self._price_overrides())
            if cost is not None and not cost.estimated:
                parts.append(f"${cost.usd:.4f}")
        return " · ".join(parts)

    def _update_chips(self) -> None:
        t = token_totals(self._conv.messages)
        total_in = t["input"] + t["cache_read"] + t["cache_write"]
        self.token_chip.setText(f"{format_tokens(total_in)} in · {format_tokens(t['output'])} out")
        self.token_chip.setToolTip(
            f"Input: {t['input']:,} uncached + {t['cache_read']:,} cache reads + "
            f"{t['cache_write']:,} cache writes\nOutput: {t['output']:,} "
            f"(reasoning {t['reasoning']:,})\nResponses: {t['responses']:,}"
        )
        cc = self.cost()
        self.cost_chip.setText(format_cost(cc))
        if cc.estimated:
            self.cost_chip.setToolTip("No price known for this model (Settings → price overrides)")
        elif cc.unpriced:
            self.cost_chip.setToolTip(f"{cc.unpriced} response(s) without a known price are not counted")
        else:
            self.cost_chip.setToolTip(f"${cc.usd:.6f}")
        self.cost_changed.emit()

    # ------------------------------------------------------------------------------------------
    # Providers and models

    def _reload_providers(self) -> None:
        settings = self._settings()
        current = self._provider or settings.default_provider
        self.provider_picker.blockSignals(True)
        try:
            self.provider_picker.clear()
            for p in settings.providers:
                self.provider_picker.addItem(p.name or p.id, p.id)
            if current and self.provider_picker.findData(current) < 0:
                self.provider_picker.addItem(f"{current} (missing)", current)
            index = self.provider_picker.findData(current) if current else -1
            self.provider_picker.setCurrentIndex(index)
            if not settings.providers and not current:
                self.provider_picker.addItem("no provider — open Settings", None)
                self.provider_picker.setCurrentIndex(0)
        finally:
            self.provider_picker.blockSignals(False)
        self._fill_models()

    def reload_settings(self) -> None:
        """Settings changed (the dialog was saved): refresh providers, models and prices."""
        self._reload_providers()
        self._request_models()
        self._update_chips()

    def _current_provider_id(self) -> str | None:
        return self._provider or self._settings().default_provider

    def _fill_models(self) -> None:
        settings = self._settings()
        provider_id = self._current_provider_id()
        provider = settings.provider(provider_id) if provider_id else None
        models: list[str] = []
        for m in [*(provider.models if provider else []), *self._listed_models.get(provider_id or "", [])]:
            if m and m not in models:
                models.append(m)
        self.model_picker.blockSignals(True)
        try:
            self.model_picker.clear()
            self.model_picker.addItems(models)
            self.model_picker.setEditText(self._model or "")
            line = self.model_picker.lineEdit()
            if line is not None:
                default = self._effective_model()
                line.setPlaceholderText(f"{default} (default)" if default else "model id")
        finally:
            self.model_picker.blockSignals(False)

    def _request_models(self) -> None:
        provider_id = self._current_provider_id()
        if self._models_task is not None and not self._models_task.done():
            self._models_task.cancel()
        self._models_task = None
        if not provider_id or self._closed:
            return
        self._models_task = self._spawn(self._load_models(provider_id))

    async def _load_models(self, provider_id: str) -> None:
        try:
            models = await self._services.list_models(provider_id)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - listing is a convenience; typing a model still works
            log.info("could not list the models of %s: %s", provider_id, exc)
            if not self._closed:
                self.model_picker.setToolTip(f"<p>Could not list models: {html.escape(str(exc))}</p>")
            return
        if self._closed:
            return
        self._listed_models[provider_id] = list(models)
        self.model_picker.setToolTip(f"{len(models)} models listed by the provider; any id can be typed")
        if provider_id == self._current_provider_id():
            self._fill_models()

    def _on_provider_changed(self, index: int) -> None:
        provider_id = self.provider_picker.itemData(index)
        if provider_id == self._current_provider_id() and self._provider is not None:
            return
        self._provider = provider_id
        self._model = None
        self._fill_models()
        self._request_models()
        self._update_chips()
        self.changed.emit()

    def _on_model_edited(self) -> None:
        text = self.model_picker.currentText().strip()
        model = text or None
        if model != self._model:
            self._model = model
            self._update_chips()
            self.changed.emit()

    def _set_model(self, model: str | None) -> None:
        self._model = model
        self.model_picker.blockSignals(True)
        self.model_picker.setEditText(model or "")
        self.model_picker.blockSignals(False)
        self._update_chips()
        self.changed.emit()

    def _on_title_edited(self) -> None:
        text = self.title_edit.text().strip() or "Chat"
        if text != self._title:
            self._title = text
            self.title_changed.emit(text)
            self.changed.emit()
        if self.title_edit.text() != text:
            self.title_edit.setText(text)

    def set_title(self, title: str) -> None:
        """Rename the node."""
        self.title_edit.setText(title)
        self._on_title_edited()

    # ------------------------------------------------------------------------------------------
    # Slash commands

    def _note(self, text: str) -> None:
        append_note(self._conv, text)
        self.transcript.scroll_to_bottom()
        self.transcript.flush()
        self.changed.emit()

    def _run_command(self, name: str, arg: str) -> None:
        if name == "clear":
            self._cmd_clear()
        elif name == "model":
            if arg:
                self._set_model(arg)
                self._note(f"Model set to {arg}.")
            else:
                current = self._model or self._effective_model() or "(none)"
                suffix = "" if self._model else " (provider default)"
                self._note(f"Usage: /model <id> — current model: {current}{suffix}")
        elif name == "system":
            if not arg:
                if self._system:
                    self._note(
                        f"System prompt:\n{self._system}\n(/system <text> to change, /system clear to remove)"
                    )
                else:
                    self._note("No system prompt. Usage: /system <text>")
            elif arg.lower() == "clear":
                self._system = None
                self._note("System prompt removed.")
            else:
                self._system = arg
                self._note(f"System prompt set ({len(arg):,} characters); it is sent with every request.")
        elif name == "cost":
            self._note(self._cost_breakdown())
        elif name == "help":
            self._note(HELP_TEXT)

    def _cmd_clear(self) -> None:
        if self.is_busy():
            self._note("Stop the running response before /clear.")
            return
        messages = list(self._conv.messages)
        if messages and self._services.archive is not None:
            try:
                self._services.archive(self.node_id, messages)
            except Exception as exc:  # noqa: BLE001 - losing history is worse than not clearing
                log.error("could not archive node %s before /clear: %s", self.node_id, exc)
                self._note(f"Not cleared: the history archive could not be written ({exc}).")
                return
        self._conv.messages.clear()
        self.transcript.clear_error()
        self.transcript.set_conversation(self._conv)
        self._update_chips()
        self.changed.emit()

    def _cost_breakdown(self) -> str:
        t = token_totals(self._conv.messages)
        cc = self.cost()
        lines = [
            f"Cost: {format_cost(cc)} over {t['responses']} response(s)",
            f"Input: {t['input']:,} uncached · {t['cache_read']:,} cache reads · "
            f"{t['cache_write']:,} cache writes",
            f"Output: {t['output']:,} (reasoning {t['reasoning']:,})",
        ]
        per_model: dict[str, list[float]] = {}
        overrides = self._price_overrides()
        fallback = self._pricing_model()
        for m in self._conv.messages:
            if m.role != "assistant" or m.usage is None:
                continue
            name = m.model or fallback or "unknown model"
            c = message_cost(m, fallback, overrides)
            entry = per_model.setdefault(name, [0, 0.0, 0])
            entry[0] += 1
            if c is not None and not c.estimated:
                entry[1] += c.usd
            else:
                entry[2] += 1
        for name, (count, usd, unpriced) in per_model.items():
            price = "no price known" if unpriced == count else f"${usd:.4f}"
            lines.append(f"  {name}: {int(count)} response(s), {price}")
        if cc.unpriced:
            lines.append(f"{cc.unpriced} response(s) have no known price (add an override in Settings).")
        return "\n".join(lines)
