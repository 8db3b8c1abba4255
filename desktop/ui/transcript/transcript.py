"""The transcript of a chat node: incremental, lazily built message widgets.

Design (budgets: ``docs/DESIGN.md`` §7):

* One widget per message (``messages.MessageViews``), inside a ``QScrollArea`` (``transcript``).
  The widgets are built when the transcript is first shown: the newest ``EAGER_MESSAGES``, plus
  older ones while they do not fill the view. Once the user scrolls, ``desktop.ui.transcript.message_window``
  builds older messages ahead of need and keeps only the messages near the viewport laid out (the
  others are placeholders of their height), a time budget per scroll step, the content under the
  eye anchored. "load earlier messages" builds a batch at once (``load_older``); what is built
  above the others, and how many are left, is ``desktop.ui.transcript.older``.
* The node applies every event to the ``Conversation`` at once; the transcript renders at most once per
  frame: ``note_event`` records what changed (``live.LiveRender``) and asks the shared
  ``FrameScheduler`` (``desktop.ui.frames``) for a tick (all transcripts, one budget, paced). A burst
  of blocks is rendered a budget per frame; the transcript asks for frames (``soon``) until it caught
  up (``is_rendering``). Nothing ever re-renders the whole transcript for a delta.
* Tool calls render as ``ToolCard`` s under the assistant message that made them (``messages.py``);
  the transcript keeps the decisions of this node and re-applies them to a card built later.
* Scrolling follows new output only while the user is at the bottom; the scroll bar's gutter stays
  (``keep_gutter``). Every message widget answers ``toPlainText()`` (and ``text()``) with what it shows.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QResizeEvent, QShowEvent
from PySide6.QtWidgets import QFrame, QScrollArea, QWidget

from desktop.core.chat.conversation import Conversation
from desktop.core.chat.types import ChatEvent, ChatMessage
from desktop.ui.frames import frame_scheduler, note_activity, settle
from desktop.ui.markdown.theme import MarkdownTheme
from desktop.ui.transcript.answer import AssistantMessageView, render_body
from desktop.ui.transcript.content import OLDER_BUDGET, OpaqueContent, content_rows, keep_gutter, trim_shift
from desktop.ui.transcript.live import LiveRender
from desktop.ui.transcript.message_window import MessageWindow, WindowHooks
from desktop.ui.transcript.messages import MessageViews
from desktop.ui.transcript.older import BATCH_MESSAGES, OlderHooks, OlderMessages
from desktop.ui.transcript.permission_card import CardMark
from desktop.ui.transcript.slots import may_release
from desktop.ui.transcript.tool_card import ToolCard
from desktop.ui.transcript.views import MessageView

__all__ = ["Transcript", "EAGER_MESSAGES", "BATCH_MESSAGES"]

EAGER_MESSAGES = 16
"""Messages built when a node opens (more are built at once only if these do not fill the view)."""

class Transcript(QScrollArea):
    """The scrolling list of message widgets of one node (object name ``transcript``).

    Signals:
        decision(str, str): ``(call_id, decision)`` from a permission card, a ``CardDecision``
            (``desktop.ui.transcript.permission_card``: ``approve``, ``deny`` or ``always``); the
            owner answers ``mark_decided``.
        retry_requested(): the error row's Retry button was clicked.
        settings_requested(): the error row's "Open Settings" button was clicked.
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
    settings_requested = Signal()
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
        self._conv: Conversation | None = None
        self._known = 0
        self._first_id: str | None = None
        self._changes = LiveRender()  # what changed since the last render (live.py)
        self._follow = True
        self._anchor_from_bottom: int | None = None
        self._anchor_value = 0  # the scroll value when the anchor was taken
        self._unbuilt: tuple[int, int] | None = None

        self._content = OpaqueContent()
        self._content.setObjectName("transcriptContent")
        self._vbox, older_label, self.error_row, self._empty = content_rows(self._content)
        self.error_row.retry_clicked.connect(self.retry_requested)
        self.error_row.settings_clicked.connect(self.settings_requested)
        self.setWidget(self._content)
        self._messages = MessageViews(  # the message widgets, their cards, the decisions (messages.py)
            self._content, self._view_width, decision=self.decision, action=self.message_action,
            created=self.view_created, call_changed=self._changes.calls.add)
        changes = self._changes
        self._window = MessageWindow(self, self._content, WindowHooks(
            releasable=lambda v: may_release(v, changes.live | changes.dirty),
            older=lambda: self._older.next_older(),
            render=lambda m: render_body(m.content, self.theme) if m.role == "assistant" else None,
            make_older=lambda m, r, d: self._messages.make(m, live=False, rendered=r, deadline=d),
            place_older=lambda v: self._older.place_older(v), older_built=lambda: self._older.update_label(),
            following=lambda: self._follow,
        ))
        self._older = OlderMessages(self, self._content, self._vbox, older_label, self._window, OlderHooks(
            messages=lambda: self._conv.messages if self._conv is not None else [],
            ready=self._build_pending, make=lambda m: self._messages.make(m, live=False),
            anchor=self._hold_anchor,
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
        self._changes.clear()
        msgs = conv.messages
        self._messages.start(msgs)
        older = self._older
        older.start = max(0, len(msgs) - EAGER_MESSAGES)
        self._known = len(msgs)
        self._first_id = msgs[0].id if msgs else None
        # Built when first shown (or asked for): a hidden node costs no message widgets, and widgets
        # built inside their final window are style-polished once instead of again when re-parented.
        self._unbuilt = (older.start, len(msgs))
        if self.isVisible():
            self._build_pending()
        older.update_label()
        self._empty.setVisible(not msgs)
        self._follow = True
        self.scroll_to_bottom()
        older.fill_soon()

    def take_trim(self, before: Sequence[ChatMessage], removed: Collection[str]) -> None:
        """A save moved ``removed`` to the archive and put its note after the system messages (the
        conversation, ``before`` a moment ago, changed): their views go, nothing else is rebuilt."""
        conv = self._conv
        if conv is None or not removed:
            return
        older = self._older
        lead, gone_before, gone = trim_shift(before, removed, older.start, self._known)
        if older.start < lead:
            return self.set_conversation(conv)  # shown from the top: the note goes between views
        self._messages.drop(self._window.drop(removed))
        older.start -= gone_before
        self._known = max(self._known - gone + 1, 0)
        msgs = conv.messages
        built = self._unbuilt is None and older.start == lead  # the note is the first message built
        view = self._messages.make(msgs[lead], live=False) if built else None
        if view is not None:
            older.place_on_top(view)
        else:
            older.start += 1  # the note is an earlier message, built when scrolled to
        self._unbuilt = None if self._unbuilt is None else (older.start, self._known)
        self._first_id = msgs[0].id if msgs else None
        older.update_label()

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
                view = self._messages.make(msg, live=False)
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
        if self._changes.note(event, self._last_id):
            self.flush()  # Done: at once
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
        changes = self._changes
        for msg in msgs[self._known :]:
            # A message that streamed and ended before its first frame is built as streamed, then
            # finished like any other (its blocks rendered a frame budget at a time).
            ended = msg.id in changes.ended
            if not ended:
                changes.dirty.discard(msg.id)
            if msg.role == "assistant" and msg.tool_calls:
                self._messages.owned_calls.update(c.id for c in msg.tool_calls)
            view = self._messages.make(msg, live=msg.id in changes.live or ended)
            if view is not None:
                self._vbox.insertWidget(self._vbox.indexOf(self.error_row), view)
                self._window.append(view)
                if isinstance(view, AssistantMessageView) and view.rendering():
                    behind.add(msg.id)
        self._known = len(msgs)
        changes.ended.clear()
        self._empty.setVisible(not msgs)
        changes.sync(self._messages, self._find, behind)
        if behind:  # a burst of blocks is rendered over the next frames, a budget at a time
            changes.dirty.update(behind)
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
        view = self._messages.views.get(message_id)
        if view is not None and not view.isVisibleTo(self._content):
            slot = self._window.find(message_id)
            if slot is not None:
                self._window.build(slot)
        return view

    def card_for(self, call_id: str) -> ToolCard | None:
        """The card of a tool call, if built."""
        self._build_pending()
        return self._messages.card_for(call_id)

    def unloaded_count(self) -> int:
        """How many older messages are not built yet."""
        return self._older.start

    def load_older(self, count: int = BATCH_MESSAGES, *, budget: float | None = OLDER_BUDGET) -> int:
        """Build older messages at the top, keeping the scroll position.

        Args:
            count: build at most this many.
            budget: seconds to spend at most (at least one message is built); None: all ``count``
                (``OlderMessages.load``).

        Returns:
            How many older messages were built.
        """
        return self._older.load(count, budget=budget)

    def prepend_archived(self, msgs: Sequence[ChatMessage]) -> None:
        """Build archived messages (oldest first, read-only) on top, what is under the eye anchored."""
        self._older.prepend_archived(msgs)

    def show_error(self, text: str, *, settings: bool = False) -> None:
        """Show the error row with ``text`` (and "Open Settings" when ``settings``)."""
        self.error_row.set_error(text, settings=settings)
        self.error_row.setVisible(True)
        if self._follow:
            self.scroll_to_bottom()

    def clear_error(self) -> None:
        """Hide the error row."""
        self.error_row.setVisible(False)

    def error_text(self) -> str | None:
        """The error shown, or None."""
        return self.error_row.text() if self.error_row.isVisible() else None

    @property
    def theme(self) -> MarkdownTheme:
        """The Markdown theme (change it with ``set_theme``)."""
        return self._messages.theme

    def set_theme(self, theme: MarkdownTheme) -> None:
        """Use ``theme`` for Markdown and re-render finished messages."""
        if theme != self._messages.theme:
            self._messages.set_theme(theme)

    @property
    def meta_text(self) -> Callable[[ChatMessage, bool], str]:
        """Formats the meta line under an assistant message (model, tokens, cost)."""
        return self._messages.meta_text

    @meta_text.setter
    def meta_text(self, formatter: Callable[[ChatMessage, bool], str]) -> None:
        self._messages.meta_text = formatter

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
        self._messages.decisions[call_id] = decision
        card = self.card_for(call_id)
        if card is not None:
            card.mark_decided(decision)

    def pending_permission_cards(self) -> list[ToolCard]:
        """Cards currently showing a permission request."""
        self._build_pending()
        return [card for card, _ in self._messages.cards.values() if card.permission is not None]

    # -- internals

    def _last_id(self) -> str:
        conv = self._conv
        return conv.messages[-1].id if conv and conv.messages else ""

    def _find(self, message_id: str) -> ChatMessage | None:
        msgs = self._conv.messages if self._conv is not None else []
        return next((m for m in reversed(msgs) if m.id == message_id), None)

    def _view_width(self) -> int:
        """The width the layout will give a message view (0 or less before the viewport is laid out)."""
        margins = self._vbox.contentsMargins()
        return int(self.viewport().width() - margins.left() - margins.right())

    def _clear_views(self) -> None:
        for widget in self._window.widgets():
            widget.setObjectName("")  # a released view is out of the layout, its placeholder in it
            widget.hide()
            self._vbox.removeWidget(widget)
            widget.deleteLater()  # still parented: Qt deletes it once control is back in the loop
        self._older.clear()
        self._window.clear()
        self._messages.forget()

    def _hold_anchor(self) -> None:
        """Keep what is under the eye in place through the next change of the scroll range."""
        bar = self.verticalScrollBar()
        self._anchor_from_bottom = bar.maximum() - bar.value()
        self._anchor_value = bar.value()

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt override
        """A taller view may need older messages to be filled."""
        super().resizeEvent(event)
        if event.size().height() > event.oldSize().height():
            self._older.fill_soon()

    def _on_range_changed(self, _lo: int, hi: int) -> None:
        keep_gutter(self, idle=hi == 0)
        if hi == 0:
            self._older.fill_soon()
        bar = self.verticalScrollBar()
        if self._anchor_from_bottom is not None:
            bar.setValue(max(0, hi - self._anchor_from_bottom))
            self._anchor_from_bottom = None
        elif self._follow:
            bar.setValue(hi)

    def _on_value_changed(self, value: int) -> None:
        note_activity()  # a full garbage collection waits until scrolling stops
        bar = self.verticalScrollBar()
        if self._anchor_from_bottom is not None and value != self._anchor_value:
            self._anchor_from_bottom = None  # scrolled before the range changed: the anchor is stale
        self._follow = value >= bar.maximum() - 8
        if self._anchor_from_bottom is None:
            self._window.show_visible()  # what the step brings into view, before it is painted
            if not self._follow:
                self._window.request()  # build what comes near, release what went far, older ahead
