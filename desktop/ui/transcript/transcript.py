"""The transcript of a chat node: incremental, lazily built message widgets.

Design (budgets: ``docs/DESIGN.md`` §7):

* One widget per message (``desktop.ui.transcript.views``), inside a ``QScrollArea`` (``transcript``).
  The widgets are built when the transcript is first shown: the newest ``EAGER_MESSAGES``, plus
  older ones while they do not fill the view. Once the user scrolls, ``desktop.ui.transcript.message_window``
  builds older messages ahead of need and keeps only the messages near the viewport laid out (the
  others are placeholders of their height), a time budget per scroll step, the content under the
  eye anchored. "load earlier messages" builds a batch at once (``load_older``).
* The node applies every event to the ``Conversation`` at once; the transcript renders at most once per
  frame: ``note_event`` records what changed (dirty message ids, live messages, tool call ids) and asks the
  shared ``FrameScheduler`` (``desktop.ui.frames``) for a tick (all transcripts, one budget, paced).
* A message being streamed ("live") is rendered block by block: each complete Markdown block once,
  only the open tail again, and at its end only the tail (``desktop.ui.transcript.body``). A burst
  of blocks is rendered a budget per frame; the transcript asks for frames (``soon``) until it
  caught up (``is_rendering``). Nothing ever re-renders the whole transcript for a delta.
* Tool calls render as ``ToolCard`` s under the assistant message that made them, upserted by
  call id; ``tool`` messages are shown through their card (an orphan result gets its own card).
  The views announce their cards and the permission decisions with signals; the transcript keeps
  the decisions of this node and re-applies them to a card built later.
* Scrolling follows new output only while the user is at the bottom; the scroll bar's gutter stays
  (``keep_gutter``). Every message widget answers ``toPlainText()`` (and ``text()``) with what it shows.

``MarkdownView`` and the message views used to live here and are re-exported under their old names.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QResizeEvent, QShowEvent
from PySide6.QtWidgets import QFrame, QLabel, QScrollArea, QVBoxLayout, QWidget

from desktop.core.chat.conversation import Conversation
from desktop.core.chat.summary import format_tokens, message_meta
from desktop.core.chat.types import (
    ChatEvent,
    ChatMessage,
    Delta,
    Done,
    Notice,
    Thinking,
    ToolCallFinished,
    ToolCallRequested,
    UsageReport,
)
from desktop.ui.frames import frame_scheduler, note_activity, settle
from desktop.ui.markdown.render import MarkdownTheme
from desktop.ui.markdown.view import MarkdownView, open_link
from desktop.ui.transcript.content import OLDER_BUDGET, OlderPages, OpaqueContent, build_older, keep_gutter
from desktop.ui.transcript.error_row import ErrorRow
from desktop.ui.transcript.message_window import MessageWindow, WindowHooks, may_release
from desktop.ui.transcript.permission_card import CardMark
from desktop.ui.transcript.tool_card import ToolCard
from desktop.ui.transcript.views import (
    BLOCK_GAP,
    LIVE_MARKDOWN_INTERVAL,
    LIVE_MARKDOWN_LIMIT,
    PLAIN_SEGMENT_CHARS,
    AssistantMessageView,
    MessageBody,
    MessageView,
    NoteMessageView,
    RenderedBody,
    Segment,
    ToolMessageView,
    UserMessageView,
    body_segments,
    render_body,
)

__all__ = [
    "Transcript", "format_tokens", "EAGER_MESSAGES", "BATCH_MESSAGES", "EMPTY_STATE_TEXT",
    # re-exported from desktop.ui.markdown.view and desktop.ui.transcript.views
    "MarkdownView", "open_link", "MessageBody", "MessageView", "UserMessageView", "AssistantMessageView",
    "NoteMessageView", "ToolMessageView", "Segment", "body_segments", "BLOCK_GAP", "LIVE_MARKDOWN_INTERVAL",
    "LIVE_MARKDOWN_LIMIT", "PLAIN_SEGMENT_CHARS",
]

EAGER_MESSAGES = 16
"""Messages built when a node opens (more are built at once only if these do not fill the view)."""
BATCH_MESSAGES = 40
"""Most older messages built per step when the user scrolls to the top (``OLDER_BUDGET`` bounds the time)."""

EMPTY_STATE_TEXT = (
    "No messages yet.\n"
    "The model can read the files of this project; anything that would change one asks you first."
)


class Transcript(QScrollArea):
    """The scrolling list of message widgets of one node (object name ``transcript``).

    Signals:
        decision(str, str): ``(call_id, decision)`` from a permission card, a ``CardDecision``
            (``desktop.ui.transcript.permission_card``: ``approve``, ``deny`` or ``always``); the
            owner answers ``mark_decided``.
        retry_requested(): the error row's Retry button was clicked.
        rendered(): a flush changed what is shown.
        message_action(str, str, str): ``(action, message_id, argument)`` from a message's action
            row (``desktop.ui.transcript.actions``); the node applies it.
        view_created(object): a message view was built (the node sets up its action row).

    Attributes:
        theme: the Markdown theme (change it with ``set_theme``).
        error_row: the error shown under the messages after a failed run.
    """

    decision = Signal(str, str)
    retry_requested = Signal()
    rendered = Signal()
    message_action = Signal(str, str, str)
    view_created = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("transcript")
        self.setAccessibleName("Transcript")
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.theme = MarkdownTheme()
        self._meta_text: Callable[[ChatMessage], str] = message_meta
        self._conv: Conversation | None = None
        self._views: dict[str, MessageView] = {}
        self._start = 0
        self._known = 0
        self._first_id: str | None = None
        self._dirty: set[str] = set()
        self._dirty_calls: set[str] = set()
        self._live: set[str] = set()
        self._ended: set[str] = set()  # ended streaming before their view was built
        self._cards: dict[str, tuple[ToolCard, AssistantMessageView]] = {}
        self._owned_calls: set[str] = set()
        self._decisions: dict[str, CardMark] = {}
        self._follow = True
        self._anchor_from_bottom: int | None = None
        self._unbuilt: tuple[int, int] | None = None

        self._content = OpaqueContent()
        self._content.setObjectName("transcriptContent")
        self._vbox = QVBoxLayout(self._content)
        self._vbox.setContentsMargins(12, 10, 12, 10)
        self._vbox.setSpacing(10)
        self._older = QLabel(self._content)
        self._older.setObjectName("loadOlder")
        self._older.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self._older.setTextFormat(Qt.TextFormat.RichText)
        self._older.linkActivated.connect(lambda _l: self.load_older())
        self._older.setVisible(False)
        self._vbox.addWidget(self._older)
        self.error_row = ErrorRow(self._content)
        self.error_row.setVisible(False)
        self.error_row.retry_clicked.connect(self.retry_requested)
        self._vbox.addWidget(self.error_row)
        # What a blank node says instead of nothing (disabled: the palette's quiet text colour).
        self._empty = QLabel(EMPTY_STATE_TEXT, self._content)
        self._empty.setObjectName("emptyState")
        self._empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self._empty.setWordWrap(True)
        self._empty.setContentsMargins(24, 48, 24, 0)
        self._empty.setEnabled(False)
        self._vbox.addWidget(self._empty)
        self._vbox.addStretch(1)
        self.setWidget(self._content)
        self._pages = OlderPages(self._vbox, self._content)
        self._window = MessageWindow(self, self._content, WindowHooks(
            releasable=lambda v: may_release(v, self._live | self._dirty), older=self._next_older,
            render=lambda m: render_body(m.content, self.theme) if m.role == "assistant" else None,
            make_older=lambda m, r, d: self._make_view(m, live=False, rendered=r, deadline=d),
            place_older=self._place_older, older_built=self._update_older_label,
            following=lambda: self._follow,
        ))

        frames = self._frames = frame_scheduler()
        key = self._frame_key = id(self)
        self.destroyed.connect(lambda *_a: frames.cancel(key))
        bar = self.verticalScrollBar()
        bar.rangeChanged.connect(self._on_range_changed)
        bar.valueChanged.connect(self._on_value_changed)
        keep_gutter(self, idle=True)

    # -- public API

    def set_conversation(self, conv: Conversation) -> None:
        """Show ``conv`` from scratch: the newest ``EAGER_MESSAGES`` widgets, older ones on demand."""
        self._frames.cancel(self._frame_key)
        self._clear_views()
        self._conv = conv
        self._dirty.clear()
        self._dirty_calls.clear()
        self._live.clear()
        self._ended.clear()
        msgs = conv.messages
        self._owned_calls = {
            c.id for m in msgs if m.role == "assistant" and m.tool_calls for c in m.tool_calls
        }
        for m in msgs:  # a persisted call still awaiting approval belongs to no running loop
            if m.role == "assistant" and m.tool_calls:
                for c in m.tool_calls:
                    if c.status == "awaiting_approval":
                        self._decisions.setdefault(c.id, "interrupted")
        self._start = max(0, len(msgs) - EAGER_MESSAGES)
        self._known = len(msgs)
        self._first_id = msgs[0].id if msgs else None
        # Built when first shown (or asked for): a hidden node costs no message widgets, and widgets
        # built inside their final window are style-polished once instead of again when re-parented.
        self._unbuilt = (self._start, len(msgs))
        if self.isVisible():
            self._build_pending()
        self._update_older_label()
        self._empty.setVisible(not msgs)
        self._follow = True
        self.scroll_to_bottom()
        if self._start > 0:
            QTimer.singleShot(0, self._fill_viewport)

    def _build_pending(self) -> None:
        """Build the message widgets ``set_conversation`` left for later."""
        pending = self._unbuilt
        conv = self._conv
        if pending is None or conv is None:
            return
        self._unbuilt = None
        start, end = pending
        msgs = conv.messages
        if len(msgs) < end or (msgs and msgs[0].id != self._first_id):
            self.set_conversation(conv)  # replaced meanwhile: start over
            return
        shown = self._content.isVisible()
        self.setUpdatesEnabled(False)
        try:
            for msg in msgs[start:end]:
                view = self._make_view(msg, live=False)
                if view is not None:
                    self._vbox.insertWidget(self._vbox.indexOf(self.error_row), view)
                    self._window.append(view)
                    if shown:  # else the layout shows it later, from a queued call
                        view.show()
        finally:
            self.setUpdatesEnabled(True)
        if self._follow:
            self.scroll_to_bottom()

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 - Qt override
        """Build the message widgets on first show."""
        self._build_pending()
        super().showEvent(event)

    def conversation(self) -> Conversation | None:
        """The conversation shown."""
        return self._conv

    def note_event(self, event: ChatEvent) -> None:
        """Record what ``event`` (already applied to the conversation) changed; render next frame."""
        if isinstance(event, Delta | Thinking):
            mid = event.message_id or self._last_id()
            if mid not in self._live:
                for other in self._live:
                    self._dirty.add(other)
                self._live = {mid}
            self._dirty.add(mid)
        elif isinstance(event, UsageReport):
            self._dirty.add(event.message_id or self._last_id())
        elif isinstance(event, ToolCallRequested):
            self._end_live()
            self._dirty.add(event.message_id or self._last_id())
            self._dirty_calls.add(event.call.id)
        elif isinstance(event, ToolCallFinished):
            self._end_live()
            self._dirty_calls.add(event.call.id)
        elif isinstance(event, Notice):
            self._end_live()
        elif isinstance(event, Done):
            self._end_live()
            if event.message_id:
                self._dirty.add(event.message_id)
            self.flush()
            return
        self.flush_soon()

    def flush_soon(self) -> None:
        """``flush()`` at the next frame tick, together with whatever streams in until then."""
        self._frames.request(self._frame_key, self._flush_in_tick)

    def _flush_in_tick(self) -> None:
        self.flush(settle_layout=False)  # the scheduler settles the layouts once per tick

    def flush(self, *, settle_layout: bool = True) -> None:
        """Bring the widgets up to date with the conversation now."""
        self._frames.cancel(self._frame_key)
        self._build_pending()
        conv = self._conv
        if conv is None:
            return
        msgs = conv.messages
        if len(msgs) < self._known or (msgs and self._first_id is not None and msgs[0].id != self._first_id):
            self.set_conversation(conv)  # the list was replaced or cleared: rebuild
            self.rendered.emit()
            return
        if not msgs:
            self._first_id = None
        elif self._first_id is None:
            self._first_id = msgs[0].id
        behind: set[str] = set()  # views with blocks of a burst still to render
        for msg in msgs[self._known :]:
            # A message that streamed and ended before its first frame is built as streamed, then
            # finished like any other (its blocks rendered a frame budget at a time).
            ended = msg.id in self._ended
            if not ended:
                self._dirty.discard(msg.id)
            if msg.role == "assistant" and msg.tool_calls:
                self._owned_calls.update(c.id for c in msg.tool_calls)
            view = self._make_view(msg, live=msg.id in self._live or ended)
            if view is not None:
                self._vbox.insertWidget(self._vbox.indexOf(self.error_row), view)
                self._window.append(view)
                if isinstance(view, AssistantMessageView) and view.rendering():
                    behind.add(msg.id)
        self._known = len(msgs)
        self._ended.clear()
        self._empty.setVisible(not msgs)
        if self._dirty:
            for mid in self._dirty:
                view = self._views.get(mid)
                if view is None:
                    continue
                found = self._find(mid)
                if found is not None:
                    if found.role == "assistant" and found.tool_calls:
                        self._owned_calls.update(c.id for c in found.tool_calls)
                    view.sync(found, live=mid in self._live)
                    if isinstance(view, AssistantMessageView) and view.rendering():
                        behind.add(mid)
            self._dirty.clear()
        if self._dirty_calls:
            for call_id in self._dirty_calls:
                entry = self._cards.get(call_id)
                if entry is None:
                    continue
                owner = entry[1]
                found = self._find(owner.message_id)
                if found is not None:
                    owner.sync(found, live=owner.message_id in self._live)
            self._dirty_calls.clear()
        if behind:  # a burst of blocks is rendered over the next frames, a budget at a time
            self._dirty.update(behind)
            self._frames.request(self._frame_key, self._flush_in_tick, soon=True)
        if settle_layout:
            # Resolve the size changes now (they cascade up through nested layouts, one posted event
            # per level otherwise), so the scroll position follows and the frame is painted once.
            settle()
        self.rendered.emit()

    def is_rendering(self) -> bool:
        """True while a render of this transcript waits for a frame (new text, or blocks of a burst)."""
        return self._frames.is_pending(self._frame_key)

    def views(self) -> list[MessageView]:
        """The message widgets currently built, oldest first."""
        self._build_pending()
        return self._window.views()

    def message_texts(self) -> list[str]:
        """``toPlainText()`` of every built message widget, oldest first."""
        return [v.toPlainText() for v in self.views()]

    def view_for(self, message_id: str) -> MessageView | None:
        """The widget of a message (built again if it was released), if it has one."""
        self._build_pending()
        view = self._views.get(message_id)
        if view is not None and not view.isVisibleTo(self._content):
            slot = self._window.find(message_id)
            if slot is not None:
                self._window.build(slot)
        return view

    def card_for(self, call_id: str) -> ToolCard | None:
        """The card of a tool call, if built."""
        self._build_pending()
        entry = self._cards.get(call_id)
        return entry[0] if entry else None

    def unloaded_count(self) -> int:
        """How many older messages are not built yet."""
        return self._start

    def load_older(self, count: int = BATCH_MESSAGES, *, budget: float | None = OLDER_BUDGET) -> int:
        """Build older messages at the top, keeping the scroll position.

        Args:
            count: build at most this many.
            budget: seconds to spend at most (at least one message is built): reaching the top
                builds what fits in a frame, the next step up builds more. None: all ``count``.

        Returns:
            How many older messages were built.
        """
        self._build_pending()
        self._window.finish_making()
        conv = self._conv
        if conv is None or self._start == 0:
            return 0
        bar = self.verticalScrollBar()
        self._anchor_from_bottom = bar.maximum() - bar.value()
        new_start = build_older(
            conv.messages, self._start, count, lambda m: self._make_view(m, live=False), self._place_on_top,
            budget=budget,
        )
        loaded = self._start - new_start
        self._start = new_start
        self._update_older_label()
        return loaded

    def _next_older(self) -> ChatMessage | None:
        conv = self._conv
        return conv.messages[self._start - 1] if conv is not None and self._start > 0 else None

    def _place_older(self, view: MessageView | None) -> None:
        """The next older message is built (``transcript_window``, ahead of need): its view on top."""
        self._start -= 1
        if view is not None:
            self._place_on_top(view)

    def _place_on_top(self, view: MessageView) -> None:
        self._pages.place(view, shown=self._content.isVisible())
        self._window.prepend(view)

    def show_error(self, text: str) -> None:
        """Show the error row with ``text``."""
        self.error_row.set_error(text)
        self.error_row.setVisible(True)
        if self._follow:
            self.scroll_to_bottom()

    def clear_error(self) -> None:
        """Hide the error row."""
        self.error_row.setVisible(False)

    def error_text(self) -> str | None:
        """The error shown, or None."""
        return self.error_row.text() if self.error_row.isVisible() else None

    def set_theme(self, theme: MarkdownTheme) -> None:
        """Use ``theme`` for Markdown and re-render finished messages."""
        if theme == self.theme:
            return
        self.theme = theme
        for view in self._views.values():
            if isinstance(view, AssistantMessageView):
                view.set_theme(theme)

    @property
    def meta_text(self) -> Callable[[ChatMessage], str]:
        """Formats the meta line under an assistant message (model, tokens, cost)."""
        return self._meta_text

    @meta_text.setter
    def meta_text(self, formatter: Callable[[ChatMessage], str]) -> None:
        self._meta_text = formatter
        for view in self._views.values():
            if isinstance(view, AssistantMessageView):
                view.meta_text = formatter

    def scroll_to_bottom(self) -> None:
        """Jump to the newest message and follow new output again."""
        self._follow = True
        bar = self.verticalScrollBar()
        bar.setValue(bar.maximum())

    # -- permission decisions

    def mark_decided(self, call_id: str, decision: CardMark) -> None:
        """Record a decision and turn the call's card into its normal state.

        The decision is kept for this node: a card of the same call built later (a rebuilt or
        older message) starts decided.
        """
        self._decisions[call_id] = decision
        card = self.card_for(call_id)
        if card is not None:
            card.mark_decided(decision)

    def pending_permission_cards(self) -> list[ToolCard]:
        """Cards currently showing a permission request."""
        self._build_pending()
        return [card for card, _ in self._cards.values() if card.permission is not None]

    # -- internals

    def _last_id(self) -> str:
        conv = self._conv
        return conv.messages[-1].id if conv and conv.messages else ""

    def _end_live(self) -> None:
        if self._live:
            self._dirty.update(self._live)
            self._ended.update(self._live)
            self._live = set()

    def _find(self, message_id: str) -> ChatMessage | None:
        msgs = self._conv.messages if self._conv is not None else []
        return next((m for m in reversed(msgs) if m.id == message_id), None)

    def _make_view(
        self, msg: ChatMessage, *, live: bool, rendered: RenderedBody | None = None,
        deadline: float | None = None,
    ) -> MessageView | None:
        view: MessageView
        if msg.role == "user":
            view = UserMessageView(msg, self._content)
        elif msg.role == "assistant":
            assistant = AssistantMessageView(
                msg, theme=self.theme, meta_text=self._meta_text, parent=self._content
            )
            margins = self._vbox.contentsMargins()
            width = self.viewport().width() - margins.left() - margins.right()
            if width > 0:  # the width the layout will give it: its text is laid out once, not twice
                assistant.resize(width, assistant.height())
            # Connected before the first sync, which announces the cards already in the message.
            assistant.card_created.connect(partial(self._on_card_created, assistant))
            assistant.card_decided.connect(self.decision)
            if rendered is not None:
                assistant.reuse(rendered)
            assistant.sync(msg, live=live, deadline=deadline)
            view = assistant
        elif msg.role == "tool":
            call_id = msg.tool_calls[0].id if msg.tool_calls else None
            if call_id is not None and call_id in self._owned_calls:
                entry = self._cards.get(call_id)
                if entry is not None:
                    self._dirty_calls.add(call_id)
                return None
            view = ToolMessageView(msg, self._content)
        else:
            view = NoteMessageView(msg, self._content)
        self._views[msg.id] = view
        view.action_requested.connect(self.message_action)  # versions: message_actions
        self.view_created.emit(view)
        return view

    def _on_card_created(self, owner: AssistantMessageView, call_id: str, card: ToolCard) -> None:
        """Track a new card (``owner.card_created``); a call decided here before starts decided."""
        self._cards[call_id] = (card, owner)
        decision = self._decisions.get(call_id)
        if decision is not None:
            card.mark_decided(decision)
            card.update_call(card.call)

    def _clear_views(self) -> None:
        for widget in self._window.widgets():
            widget.setObjectName("")  # a released view is out of the layout, its placeholder in it
            widget.hide()
            self._vbox.removeWidget(widget)
            widget.deleteLater()  # still parented: Qt deletes it once control is back in the loop
        self._pages.clear()
        self._window.clear()
        self._views.clear()
        self._cards.clear()

    def _update_older_label(self) -> None:
        if self._start > 0:
            link = "<a href='#load'>load more</a>"
            self._older.setText(f"↑ {self._start:,} earlier messages — scroll up or {link}")
        self._older.setVisible(self._start > 0)

    def _fill_viewport(self) -> None:
        """Build older messages while the built ones do not fill the view (nothing to scroll up to)."""
        if self._start == 0 or not self.isVisible():
            return
        settle()  # the scroll range is only right once the layouts have run
        if self.verticalScrollBar().maximum() == 0 and self._start > 0:
            self.load_older()  # a frame's budget of them; then look again
            QTimer.singleShot(0, self._fill_viewport)

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt override
        """A taller view may need older messages to be filled."""
        super().resizeEvent(event)
        if self._start > 0 and event.size().height() > event.oldSize().height():
            QTimer.singleShot(0, self._fill_viewport)

    def _on_range_changed(self, _lo: int, hi: int) -> None:
        keep_gutter(self, idle=hi == 0)
        if hi == 0 and self._start > 0:
            QTimer.singleShot(0, self._fill_viewport)
        bar = self.verticalScrollBar()
        if self._anchor_from_bottom is not None:
            bar.setValue(max(0, hi - self._anchor_from_bottom))
            self._anchor_from_bottom = None
        elif self._follow:
            bar.setValue(hi)

    def _on_value_changed(self, value: int) -> None:
        note_activity()  # a full garbage collection waits until scrolling stops
        bar = self.verticalScrollBar()
        self._follow = value >= bar.maximum() - 8
        if self._anchor_from_bottom is None:
            self._window.show_visible()  # what the step brings into view, before it is painted
            if not self._follow:
                self._window.request()  # build what comes near, release what went far, older ahead
