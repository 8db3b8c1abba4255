"""The chat node widget: header (title, provider, model, token and cost chips), transcript, input.

The node owns its ``Conversation`` and lays out its parts. Sending appends the user message and
hands the conversation to the node's run wiring (``run.NodeRun``: the runtime, the bridge, the
approvals); the transcript is built after the window's first paint (``loading.NodeLoading``). The
budget card, the input box and Send/Stop, and what Enter and Send do, are ``input_bar.NodeInputBar``'s.
Slash commands run locally: ``desktop.core.chat.commands.run_command`` decides their effect and
the node applies it. Export, token totals and the cost texts live in the Qt-free core too
(``desktop.core.chat.export`` and ``summary``).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import QColor, QGuiApplication, QPainter, QPaintEvent
from PySide6.QtWidgets import QVBoxLayout, QWidget

from desktop.core.chat.attachment_ref import AttachmentRef, set_attachments
from desktop.core.chat.conversation import Conversation, append_message
from desktop.core.chat.cost import ConversationCost
from desktop.core.chat.export import conversation_markdown
from desktop.core.chat.types import ChatMessage
from desktop.core.chat.versions import CostSplit
from desktop.core.store import NodeState, TrimInfo, apply_trim
from desktop.ui.node.archive_link import ArchiveLink
from desktop.ui.node.attach import NodeAttachments
from desktop.ui.node.branches import NodeBranches
from desktop.ui.node.commands import NodeCommands
from desktop.ui.node.costs import NodeCosts
from desktop.ui.node.find_bar import FindBar
from desktop.ui.node.header import NodeHeader
from desktop.ui.node.input_bar import NodeInputBar
from desktop.ui.node.loading import NodeLoading
from desktop.ui.node.models import NodeModelChoice
from desktop.ui.node.run import NodeRun
from desktop.ui.node.style import markdown_theme, node_colors, node_stylesheet
from desktop.ui.node.system_prompt import SystemPromptField
from desktop.ui.node.title import first_message_title
from desktop.ui.node.tools import attach_node_tools, hub_of
from desktop.ui.node.versions import NodeVersions
from desktop.ui.services import AppServices

if TYPE_CHECKING:  # the transcript (Markdown) loads after the first paint
    from desktop.ui.transcript.transcript import Transcript

log = logging.getLogger(__name__)

__all__ = ["ChatNodeWidget"]


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
        # The node paints its whole rectangle itself (paintEvent, in the style sheet's background
        # colour, which Qt would skip for it): Qt then never repaints what is beneath it first. On
        # the canvas that is the board (the scene, cards and edges), which a streaming transcript
        # otherwise repainted with every frame (issue 30: ~500 times per answer).
        self.setAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent, True)
        self._base = QColor("white")
        self._state = state
        self._services = services
        self._conv: Conversation = state.conversation
        self._system: str | None = state.system or None
        self._always_allow: list[str] = list(state.always_allow)
        self._title = state.title
        self._closed = False
        self._colors_key: object = None
        self._revision = 0  # bumped whenever the node's messages change (see touch)
        self.costs = NodeCosts(self, services)  # the chips, the meta lines (costs.py)
        self.runs = NodeRun(self, services)  # sends, the runtime's events, approvals (run.py)
        self.commands = NodeCommands(self, services)  # what /model, /system, /clear... do (commands.py)
        # Edit, regenerate, versions and fork (versions.py, desktop.core.chat.versions).
        self.versions = NodeVersions(self, send=self.runs.start, replaced=self._on_replaced,
                                     approve=self.runs.approve)
        self.versions.fork_requested.connect(self.fork_requested)
        self.attach = NodeAttachments(self, services)  # files: ways in, chips, send, rows (attach.py)
        self._build_ui(deferred)
        self.node_tools = attach_node_tools(self, services)  # MCP: Tools menu, grants (tools.py)
        self.branches = NodeBranches(self, services)  # the header's branch map (branches.py)
        self._apply_style()
        self.model_choice.reload()
        self.update_chips()
        self.runs.subscribe()

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
        self.system_field = SystemPromptField(self._system, self)  # /system's prompt, editable
        self.system_field.edited.connect(self._on_system_edited)
        root.addWidget(self.system_field)
        read = self._services.read_archive  # the archive link and Ctrl+F's find bar (above the transcript)
        self.archive = ArchiveLink(self, lambda: self._conv, lambda: self.transcript,
                                   (lambda: read(self.node_id)) if read is not None else None)
        self.find_bar = FindBar(self, lambda: self._conv, lambda: self.transcript)
        root.addWidget(self.archive)
        root.addWidget(self.find_bar)

        self.loading = NodeLoading(self, root, deferred=deferred)  # the transcript: now or after paint
        if not deferred:
            self.model_choice.request_models()

        self.input_bar = NodeInputBar(self, self._services, root)  # budget card, input, Send (input_bar.py)
        self.budget_card = self.input_bar.budget_card
        self.chat_input = self.input_bar.chat_input
        self.send_button = self.input_bar.send_button
        self.chat_input.edit_last_requested.connect(self.versions.edit_last)
        self.header.title_edit.done.connect(lambda: self.chat_input.setFocus())  # after a rename
        self.setFocusProxy(self.chat_input)

    def _apply_style(self) -> None:
        palette = QGuiApplication.palette()
        colors = node_colors(palette)
        if colors == self._colors_key:
            return
        self._colors_key = colors
        self.setStyleSheet(node_stylesheet(colors))
        self._base = QColor(colors.base)
        self.loading.set_colors(colors)

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 - Qt override
        """Fill the exposed part with the node's background (the style sheet's, which Qt skips for
        a widget that paints itself opaquely)."""
        painter = QPainter(self)
        painter.fillRect(event.rect(), self._base)

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

    def set_system(self, system: str | None) -> None:
        """Use ``system`` as the node's system prompt (None: none); its field shows it."""
        self._system = system
        self.system_field.show_prompt(system)

    def _on_system_edited(self, prompt: str | None) -> None:
        self._system = prompt
        self.changed.emit()

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
        before = list(self._conv.messages)
        if self._closed or not apply_trim(self._conv, info):
            return
        self.touch()
        transcript = self.loading.built()  # a transcript never built stays so (it shows the list when built)
        if transcript is not None:
            transcript.take_trim(before, info.removed_ids)
        self.update_chips()
        self.archive.refresh()

    def cost(self) -> ConversationCost:
        """The cost of every response of every version, with the settings' price overrides (cached
        until the messages, the model or the overrides change: ``costs.NodeCosts``)."""
        return self.costs.split().total

    def cost_split(self) -> CostSplit:
        """The cost split into this path and the other versions (cached like ``cost``)."""
        return self.costs.split()

    def is_busy(self) -> bool:
        """True while a run of this node is in progress."""
        return self.runs.is_busy()

    def submit(self, text: str) -> None:
        """What Enter does: run a slash command or send ``text`` as a user message."""
        self.input_bar.submit(text)

    def stop(self) -> None:
        """Stop the running response (partial text is kept and marked stopped)."""
        self.runs.stop()

    def retry(self) -> None:
        """Send the conversation again as it is (after an error)."""
        if self.is_busy() or self._closed:
            return
        self.transcript.clear_error()
        self.runs.start()

    def export_markdown(self, *, include_versions: bool = False, export_dir: Path | None = None) -> str:
        """The conversation, archived history first, as a Markdown document (the active path, and
        with ``include_versions`` the other versions after it; files linked relative to ``export_dir``)."""
        archived: list[ChatMessage] = []
        if self._services.read_archive is not None:
            try:
                archived = list(self._services.read_archive(self.node_id))
            except Exception as exc:  # noqa: BLE001 - an unreadable archive must not block export
                log.warning("could not read the history archive of %s: %s", self.node_id, exc)
        return conversation_markdown(self._title, [*archived, *self._conv.messages], archived=len(archived),
                                     include_versions=include_versions,
                                     attachment_link=self.attach.export_link(export_dir))

    def shutdown(self) -> None:
        """Stop the run, cancel the node's tasks and disconnect from the bridge."""
        if self._closed:
            return
        self._closed = True
        self.runs.cancel()
        self.model_choice.shutdown()
        self.runs.unsubscribe()
        self.loading.flush()

    def is_closed(self) -> bool:
        """True once :meth:`shutdown` ran."""
        return self._closed

    def touch(self) -> None:
        """The messages changed: bump ``revision`` so cached totals are recomputed."""
        self._revision += 1

    def _on_replaced(self) -> None:
        """An edit, regenerate or version switch replaced the messages: show the new path."""
        self.touch()
        self.transcript.clear_error()
        self.transcript.set_conversation(self._conv)
        self.update_chips()
        self.archive.refresh()
        self.changed.emit()

    # ------------------------------------------------------------------------------------------
    # Sending (input_bar.NodeInputBar submits; run.NodeRun does the rest)

    def send_message(self, text: str, attachments: Sequence[AttachmentRef] = ()) -> None:
        """Append a user message (with the references of attachments already stored) and send it."""
        set_attachments(append_message(self._conv, "user", text), attachments)
        if (title := first_message_title(self._title, self._conv.messages, text)) is not None:
            self.set_title(title)  # the first message names a node still called "Chat"
        self.touch()
        self.transcript.clear_error()
        self.transcript.scroll_to_bottom()
        self.changed.emit()
        self.runs.start()  # the request goes out first (it takes the runtime two loop passes)
        self.transcript.flush_soon()  # then the message shows, in one frame with the first text

    def show_busy(self, busy: bool) -> None:
        """Show whether a run is in progress: Send becomes Stop, the message actions wait."""
        self.input_bar.show_busy(busy)
        self.versions.refresh()

    def allow_always(self, name: str) -> None:
        """Run the tool (its grant name, ``NodeTools.grant_name``) without asking from now on."""
        if name not in self._always_allow:
            self._always_allow.append(name)
            self.changed.emit()

    def before_send(self) -> None:
        """A send: load the app's deferred services when they are not yet, then finish loading."""
        self.loading.before_send()

    # ------------------------------------------------------------------------------------------
    # Loading (loading.NodeLoading): what comes after the window's first paint

    def load_services(self) -> None:
        """Load the app's deferred services (nothing when they are loaded)."""
        load = self._services.load_services
        if load is not None:
            load()

    def wire_transcript(self, transcript: Transcript) -> None:
        """Connect the node's transcript, just built, to the node and show the conversation."""
        transcript.meta_text = self.costs.meta_text
        transcript.decision.connect(self.runs.on_decision)
        transcript.retry_requested.connect(self.retry)
        transcript.settings_requested.connect(self._open_settings)
        transcript.rendered.connect(self.runs.on_rendered)
        self.versions.connect_transcript(transcript)
        self.attach.connect_transcript(transcript)
        transcript.set_theme(markdown_theme(node_colors(QGuiApplication.palette())))
        transcript.set_conversation(self._conv)
        transcript.rendered.connect(self.archive.refresh)
        self.archive.refresh()

    def _open_settings(self) -> None:
        if self._services.open_settings is not None:
            self._services.open_settings()

    def after_loading(self) -> None:
        """The node finished loading: its tools get the MCP hub, its models are listed."""
        self.node_tools.bind_hub(hub_of(self._services))
        self.model_choice.request_models()

    # ------------------------------------------------------------------------------------------
    # Chips (costs.NodeCosts)

    def update_chips(self) -> None:
        """Show the node's tokens, cost and context use (and tell the window the cost changed)."""
        self.costs.show()

    # ------------------------------------------------------------------------------------------
    # Providers, models and title

    def reload_settings(self) -> None:
        """Settings changed (the dialog was saved): refresh providers, models and prices."""
        self.model_choice.reload()
        self.model_choice.request_models()
        self.update_chips()

    def _on_choice_changed(self) -> None:
        self.update_chips()
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
