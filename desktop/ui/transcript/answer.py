"""The widget of an assistant message: thinking block, Markdown body, tool cards and a meta line.

The view feeds its text to the Markdown pipe (``desktop.ui.markdown.stream``) and places the segments
that come back in its body (``desktop.ui.transcript.body``): while it streams, a ``StreamedBody``
renders each complete top-level block once and re-renders only the open tail; when it ends, only the
tail is rendered. A message shown complete is rendered once, whole (``message_segments``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QToolButton, QVBoxLayout, QWidget

from desktop.core.chat.types import ChatMessage, ToolCall
from desktop.ui.markdown.segments import Segment
from desktop.ui.markdown.stream import StreamedBody, message_segments
from desktop.ui.markdown.theme import MarkdownTheme
from desktop.ui.transcript.body import MessageBody
from desktop.ui.transcript.thinking import ThinkingBlock
from desktop.ui.transcript.tool_card import ToolCard
from desktop.ui.transcript.views import MessageView
from desktop.ui.transcript.wrap_label import WrapLabel

__all__ = ["AssistantMessageView", "RenderedBody", "render_body"]


class RenderedBody(NamedTuple):
    """What a finished assistant body shows, kept when its view is released (``message_window``).

    Attributes:
        content: the Markdown source.
        theme: the theme it was rendered with.
        segments: the rendered segments.
    """

    content: str
    theme: MarkdownTheme
    segments: list[Segment]


def render_body(content: str, theme: MarkdownTheme) -> RenderedBody:
    """Render a complete assistant message ahead of building its view (``AssistantMessageView.reuse``)."""
    return RenderedBody(content, theme, message_segments(content, theme))


class AssistantMessageView(MessageView):
    """An assistant message: thinking block, Markdown body, tool cards and a meta line.

    The view shows nothing until its first ``sync``: connect its signals before that, so the
    cards of the calls already in the message are announced too.

    Signals:
        card_created(str, object): ``(call_id, card)`` when the view creates the ``ToolCard`` of a
            call. Emitted before the card is laid out, so a receiver connected directly can still
            mark it decided (``ToolCard.mark_decided``).
        card_decided(str, str): ``(call_id, decision)`` forwarded from a card's permission buttons;
            the decision is a ``desktop.ui.transcript.permission_card.CardDecision``.

    Attributes:
        theme: the Markdown theme the body is rendered with (change it with ``set_theme``).
        meta_text: formats the meta line under the message (model, tokens, cost) from the message and
            whether it is still streaming (then the output is a running estimate).
        cards: the tool cards shown, by call id.
    """

    card_created = Signal(str, object)
    card_decided = Signal(str, str)

    def __init__(
        self,
        msg: ChatMessage,
        *,
        theme: MarkdownTheme,
        meta_text: Callable[[ChatMessage, bool], str],
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(msg, parent)
        self.theme = theme
        self.meta_text = meta_text
        self._source = ""
        self._shown = ""
        self._rendered_final = False
        self._streamed: StreamedBody | None = None  # while live (and until the end is rendered)
        self._meta_key: object = None
        self._final: RenderedBody | None = None  # the finished body's segments
        self._reuse: RenderedBody | None = None  # segments to show instead of rendering (``reuse``)
        self._released = False  # the body's segments were dropped (``release_body``)
        self.thinking: ThinkingBlock | None = None
        self.cards: dict[str, ToolCard] = {}
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 2, 4, 2)
        lay.setSpacing(4)
        self._lay = lay
        self.body = MessageBody(self)
        self.body.copy_message = self.copy_message
        self.body.setAccessibleName("Assistant")
        self.body.setVisible(False)
        lay.addWidget(self.body)
        self._cards_box = QVBoxLayout()
        self._cards_box.setSpacing(4)
        self._cards_box.setContentsMargins(0, 0, 0, 0)
        lay.addLayout(self._cards_box)
        meta = QHBoxLayout()
        meta.setSpacing(8)
        meta.setContentsMargins(0, 0, 0, 0)
        # Wraps instead of widening the row: a long line (model, tokens, cost, cache savings) must not
        # push the row's buttons past the transcript's right edge.
        self.meta_label = WrapLabel("", self)
        self.meta_label.setObjectName("messageMeta")
        self.stopped_label = QLabel("■ stopped", self)
        self.stopped_label.setObjectName("stoppedMark")
        self.stopped_label.setVisible(False)
        self.copy_button = QToolButton(self)
        self.copy_button.setObjectName("copyButton")
        self.copy_button.setText("Copy")
        self.copy_button.setToolTip("Copy this message as Markdown")
        self.copy_button.setAccessibleName("Copy message")
        self.copy_button.setCursor(Qt.CursorShape.PointingHandCursor)
        self.copy_button.clicked.connect(self.copy_message)
        meta.addWidget(self.stopped_label)
        meta.addWidget(self.meta_label, 1)  # all the room there is: it wraps only when the row is full
        meta.addWidget(self._make_actions())
        meta.addWidget(self.copy_button)
        lay.addLayout(meta)

    # -- rendering

    def sync(self, msg: ChatMessage, *, live: bool, deadline: float | None = None) -> None:
        """Show the latest state; while ``live`` only new text is appended.

        Args:
            msg: the message (same id).
            live: True while it is being streamed.
            deadline: for a finished message, ``time.perf_counter()`` after which no further
                segment of its body is filled (at least one is); ``body.pending`` then says that
                ``sync`` must be called again. Used for a view built ahead of need, not shown yet.
        """
        if msg.thinking:
            if self.thinking is None:
                self.thinking = ThinkingBlock(self)
                self._lay.insertWidget(0, self.thinking)
            self.thinking.set_text(msg.thinking, streaming=live and not msg.content and not msg.tool_calls)
        self._sync_body(msg.content, live, deadline)
        if msg.tool_calls:
            for call in msg.tool_calls:
                self.upsert_call(call)
        stopped = msg.stopped
        if stopped != self.stopped_label.isVisible():
            self.stopped_label.setVisible(stopped)
        # While streaming the line counts the output as it grows (about every 16 tokens).
        grown = (len(msg.content) + len(msg.thinking or "")) // 64 if live or stopped else 0
        meta_key = (msg.model, msg.usage, live, stopped, grown)
        if meta_key != self._meta_key:
            self._meta_key = meta_key
            self.meta_label.setText(self.meta_text(msg, live))
        self.copy_button.setVisible(bool(msg.content) and not live)

    def _sync_body(self, content: str, live: bool, deadline: float | None = None) -> None:
        theme = self.theme
        self._released = False
        self._source = content
        if not content:
            if self.body.isVisible() or self._shown:
                self.body.clear()
                self.body.setVisible(False)
                self._shown = ""
                self._streamed = None
            self._final = None
            return
        if not self.body.isVisible():
            self.body.setVisible(True)
        margins = self._lay.contentsMargins()
        body_width = self.width() - margins.left() - margins.right()
        sized = self.testAttribute(Qt.WidgetAttribute.WA_Resized)  # by the transcript, before the layout
        if sized and not self.isVisible() and body_width > 0 and self.body.width() != body_width:
            self.body.resize(body_width, self.body.height())  # not laid out yet: its segments get it
        streamed = self._streamed
        if streamed is not None and (not content.startswith(self._shown) or streamed.theme != theme):
            streamed = self._streamed = None  # replaced rather than extended (rare): start over
        if not live:
            if not self._rendered_final or self._shown != content:
                if streamed is not None:  # the end of a stream: only the open tail is rendered
                    closed, tail = streamed.finish(content)
                    shown = self._show_streamed(streamed, closed, tail)
                    self._shown = content
                    if streamed.busy or not shown:  # more to do: next frame (``rendering()``)
                        return
                    self._final = RenderedBody(content, theme, list(closed))
                else:
                    reuse, self._reuse = self._reuse, None
                    if reuse is not None and reuse.content == content and reuse.theme == theme:
                        segments = reuse.segments
                    else:
                        segments = message_segments(content, theme)
                    if not self.body.show_segments(segments, theme, deadline=deadline):
                        self._reuse = RenderedBody(content, theme, segments)  # the rest: next call
                        return
                    self._final = RenderedBody(content, theme, segments)
                    self._shown = content
                self._rendered_final = True
                self._streamed = None
            return
        self._rendered_final = False
        self._final = None
        if streamed is None:
            if self._shown:  # shown complete before, now live again: keep what is shown growing
                self.body.clear()
            streamed = self._streamed = StreamedBody(theme)
        closed, tail = streamed.live(content)
        self._show_streamed(streamed, closed, tail)
        self._shown = content

    def _show_streamed(self, streamed: StreamedBody, closed: list[Segment], tail: list[Segment]) -> bool:
        """Show a streamed update's segments in what is left of its budget.

        An update that parsed or rendered changes only the segments that still fit before its
        deadline; when none did, the next update shows them before working on (``show_first``).

        Returns:
            True when everything is shown.
        """
        shown = self.body.show_segments(
            closed, streamed.theme, tail, deadline=streamed.deadline, first_free=not streamed.worked
        )
        if not shown and streamed.worked:
            streamed.show_first()
        return shown

    def rendering(self) -> bool:
        """True while streamed blocks wait to be rendered or shown: ``sync`` again at the next frame."""
        return self._streamed is not None and (self._streamed.busy or self.body.pending)

    def set_theme(self, theme: MarkdownTheme) -> None:
        """Use ``theme`` from now on and re-render a finished body with it."""
        self.theme = theme
        if self._source and self._rendered_final:
            segments = message_segments(self._source, theme)
            self.body.show_segments(segments, theme)
            self._final = RenderedBody(self._source, theme, segments)

    def reuse(self, rendered: RenderedBody) -> None:
        """Show ``rendered`` at the next complete ``sync`` of the same content and theme (no render)."""
        self._reuse = rendered

    def rendered_body(self) -> RenderedBody | None:
        """The finished body's segments (None while streaming or empty)."""
        return self._final if self._rendered_final and self._final is not None else None

    def release_body(self) -> None:
        """Empty the body's segments: no text, no laid-out document (the rendered HTML is kept)."""
        if self._rendered_final and self._final is not None:
            self.body.release()
            self._rendered_final = False
            self._released = True

    def take_parts(self) -> list[QWidget]:
        """The body's segment widgets (most of an answer's widgets), taken out of the body."""
        return self.body.take_segments()

    def restore_body(self) -> None:
        """Show the body released by ``release_body`` again (rendered again only if its theme changed)."""
        if not self._released:
            return
        self._released = False
        final = self._final
        if final is None or final.content != self._source or final.theme != self.theme:
            final = self._final = render_body(self._source, self.theme)
        self.body.show_segments(final.segments, final.theme)
        self._rendered_final = True

    def upsert_call(self, call: ToolCall) -> ToolCard:
        """Create (and announce with ``card_created``) or update the card of ``call``."""
        card = self.cards.get(call.id)
        if card is None:
            card = ToolCard(call, self)
            self.cards[call.id] = card
            self.card_created.emit(call.id, card)
            card.decided.connect(self.card_decided)
            self._cards_box.addWidget(card)
        else:
            card.update_call(call)
        return card

    def toPlainText(self) -> str:  # noqa: N802
        """The rendered text of the body (plus tool cards, one per line)."""
        parts = []
        if self._source:
            parts.append(self.body.toPlainText())
        parts.extend(card.toPlainText() for card in self.cards.values())
        return "\n".join(parts)
