"""The transcript of a chat node: incremental, lazily built message widgets.

Design (DESIGN §7 budgets):

* One widget per visible message, inside a ``QScrollArea`` (``transcript``). The widgets are built
  when the transcript is first shown: the newest ``EAGER_MESSAGES``, plus older batches while they
  do not fill the view; older ones are built in batches when the user scrolls to the top (or
  clicks "load earlier messages"), keeping the scroll position.
* The node applies every event to the ``Conversation`` right away but the transcript renders at
  most once per frame: ``note_event`` records what changed (dirty message ids, live messages,
  tool call ids) and asks the shared ``FrameScheduler`` (``desktop.ui.frames``) for a tick, which
  serves all transcripts within a time budget and paces itself under load.
* A message being streamed ("live") shows its complete lines as Markdown (re-rendered at most
  every ``LIVE_MARKDOWN_INTERVAL`` seconds while they fit in ``LIVE_MARKDOWN_LIMIT`` characters)
  and the rest as plain text in a ``TextFlowView``, whose appends cost O(new text) however long
  the paragraph. Once complete it is rendered as Markdown; a long paragraph without inline markup
  stays in a ``TextFlowView``. Nothing ever re-renders the whole transcript for a delta.
* Tool calls render as ``ToolCard`` s under the assistant message that made them, upserted by
  call id; ``tool`` messages are shown through their card (an orphan result gets its own card).
* Scrolling follows new output only while the user is at the bottom.

Every message widget answers ``toPlainText()`` (and ``text()``) with what it shows.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from PySide6.QtCore import QByteArray, QPoint, Qt, QTimer, QUrl, Signal
from PySide6.QtGui import (
    QContextMenuEvent,
    QDesktopServices,
    QGuiApplication,
    QPainter,
    QPaintEvent,
    QResizeEvent,
    QShowEvent,
    QTextCursor,
    QWheelEvent,
)
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QMenu,
    QScrollArea,
    QSizePolicy,
    QTextBrowser,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from desktop.core.chat.conversation import Conversation
from desktop.core.chat.types import (
    ChatEvent,
    ChatMessage,
    Delta,
    Done,
    Notice,
    Thinking,
    ToolCall,
    ToolCallFinished,
    ToolCallRequested,
    UsageReport,
)
from desktop.ui.cards import ErrorRow, ThinkingBlock, ToolCard
from desktop.ui.frames import frame_scheduler, settle
from desktop.ui.markdown import (
    MarkdownBlock,
    MarkdownTheme,
    document_css,
    render_markdown,
    render_markdown_blocks,
    safe_link,
)
from desktop.ui.textflow import TextFlowView

log = logging.getLogger(__name__)

__all__ = [
    "Transcript",
    "MarkdownView",
    "MessageBody",
    "MessageView",
    "UserMessageView",
    "AssistantMessageView",
    "NoteMessageView",
    "ToolMessageView",
    "format_tokens",
    "EAGER_MESSAGES",
    "BATCH_MESSAGES",
]

EAGER_MESSAGES = 16
"""Messages built when a node opens (more are built at once only if these do not fill the view)."""
BATCH_MESSAGES = 40
LIVE_MARKDOWN_LIMIT = 6000
LIVE_MARKDOWN_INTERVAL = 0.25
PLAIN_SEGMENT_CHARS = 2000
"""A paragraph without inline markup at least this long is shown by a ``TextFlowView``."""
BLOCK_GAP = 12
"""Space between two stacked body segments: Qt's collapsed margin between two paragraphs."""


def format_tokens(n: int) -> str:
    """Compact token count: ``950``, ``1.2k``, ``34k``, ``1.5M``."""
    if n < 1000:
        return str(n)
    if n < 10_000:
        return f"{n / 1000:.1f}k".replace(".0k", "k")
    if n < 1_000_000:
        return f"{round(n / 1000)}k"
    return f"{n / 1_000_000:.1f}M".replace(".0M", "M")


def _copy_to_clipboard(text: str) -> None:
    clipboard = QGuiApplication.clipboard()
    if clipboard is not None:
        clipboard.setText(text)


def open_link(url: QUrl) -> None:
    """Open a clicked link in the system browser, only for http(s)/mailto URLs."""
    text = url.toString()
    if safe_link(text) is None:
        log.info("refusing to open a link with scheme %r", url.scheme())
        return
    QDesktopServices.openUrl(url)


EMPTY_STATE_TEXT = (
    "No messages yet.\n"
    "The model can read the files of this project; anything that would change one asks you first."
)


class MarkdownView(QTextBrowser):
    """A read-only rich-text view that fits its height to its content and loads no resources."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("messageBody")
        self.setOpenLinks(False)
        self.setOpenExternalLinks(False)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse
            | Qt.TextInteractionFlag.TextSelectableByKeyboard
            | Qt.TextInteractionFlag.LinksAccessibleByMouse
            | Qt.TextInteractionFlag.LinksAccessibleByKeyboard
        )
        self.document().setDocumentMargin(1)
        self.document().setUndoRedoEnabled(False)
        self.viewport().setAutoFillBackground(False)
        self.anchorClicked.connect(open_link)
        self.document().documentLayout().documentSizeChanged.connect(self._fit)
        self.copy_message: Callable[[], None] | None = None
        self._css = ""
        self._html: str | None = None
        self._top_gap = 0
        self.setFixedHeight(self._height_for(0.0))

    # Rendering loads nothing: no images, no style sheets, no remote or local files.
    def loadResource(self, type: int, name: QUrl) -> object:  # noqa: A002,N802 - Qt signature
        """Refuse every resource request.

        An empty (but valid) value: returning nothing would make ``QTextDocument`` fall back to
        reading local files itself.
        """
        return QByteArray()

    def set_markdown(self, text: str, theme: MarkdownTheme) -> None:
        """Render ``text`` as Markdown (replacing what is shown)."""
        self.set_html(render_markdown(text, theme), theme)

    def set_html(self, html: str, theme: MarkdownTheme) -> None:
        """Show rendered Markdown ``html`` (nothing is done when the same is already shown)."""
        css = document_css(theme)
        if css == self._css and html == self._html:
            return
        if css != self._css:
            self.document().setDefaultStyleSheet(css)
            self._css = css
        self._html = html
        self.setHtml(html)

    def set_top_gap(self, pixels: int) -> None:
        """Empty space above the text (separates it from the block before it)."""
        if pixels != self._top_gap:
            self._top_gap = pixels
            self.setViewportMargins(0, pixels, 0, 0)
            self._fit()

    def append_plain(self, text: str) -> None:
        """Append plain text at the end (re-lays out the last paragraph: O(its length))."""
        cursor = QTextCursor(self.document())
        cursor.movePosition(QTextCursor.MoveOperation.End)
        cursor.insertText(text)
        self._html = None

    def set_plain(self, text: str) -> None:
        """Show plain text."""
        self.setPlainText(text)
        self._html = None

    def _height_for(self, doc_height: float) -> int:
        return int(doc_height + 0.999) + 2 * self.frameWidth() + 2 + getattr(self, "_top_gap", 0)

    def _fit(self, size: object = None) -> None:
        h = self._height_for(self.document().size().height())
        if h != self.height():
            self.setFixedHeight(h)

    def wheelEvent(self, event: QWheelEvent) -> None:  # noqa: N802
        """Let the transcript scroll: this view never scrolls itself."""
        event.ignore()

    def contextMenuEvent(self, event: QContextMenuEvent) -> None:  # noqa: N802
        """The standard menu plus "Copy message (Markdown)"."""
        menu = self.createStandardContextMenu(event.pos())
        if self.copy_message is not None:
            menu.addSeparator()
            action = menu.addAction("Copy message (Markdown)")
            action.triggered.connect(self.copy_message)
        menu.exec(event.globalPos())
        menu.deleteLater()


Segment = tuple[str, str, int]
"""What one body segment shows: ``("html", html, top_gap)`` or ``("plain", text, top_gap)``."""


def body_segments(blocks: list[MarkdownBlock]) -> list[Segment]:
    """Group rendered blocks into body segments.

    Consecutive blocks share one rich-text segment, except paragraphs of at least
    ``PLAIN_SEGMENT_CHARS`` characters without inline markup: those get a plain segment, whose
    layout does not have to be redone as one huge paragraph (and is reused from the live view).
    """
    out: list[Segment] = []
    html: list[str] = []

    def flush() -> None:
        if html:
            out.append(("html", "".join(html), BLOCK_GAP if out else 0))
            html.clear()

    for block in blocks:
        if block.plain is not None and len(block.plain) >= PLAIN_SEGMENT_CHARS:
            flush()
            out.append(("plain", block.plain, BLOCK_GAP if out else 0))
        else:
            html.append(block.html)
    flush()
    return out


class MessageBody(QWidget):
    """The body of an assistant message: rich-text and plain-text segments, stacked (``messageBody``).

    Usually one ``MarkdownView``. A long paragraph without markup, and the line being streamed,
    are shown by a ``TextFlowView`` whose appends cost O(new text) instead of O(paragraph).
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("messageBodyStack")
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self._lay = QVBoxLayout(self)
        self._lay.setContentsMargins(0, 0, 0, 0)
        self._lay.setSpacing(0)
        self.segments: list[MarkdownView | TextFlowView] = []
        self.copy_message: Callable[[], None] | None = None
        self._accessible = ""

    def setAccessibleName(self, name: str) -> None:  # noqa: N802 - Qt naming
        """Name the body and each of its segments (screen readers)."""
        super().setAccessibleName(name)
        self._accessible = name
        for seg in self.segments:
            seg.setAccessibleName(name)

    def show_segments(self, specs: list[Segment], theme: MarkdownTheme) -> None:
        """Show ``specs``, reusing the segment widgets already there (same position and kind)."""
        for i, (kind, payload, gap) in enumerate(specs):
            seg = self.segments[i] if i < len(self.segments) else None
            want = MarkdownView if kind == "html" else TextFlowView
            if type(seg) is not want:
                new = want(self)
                new.copy_message = self.copy_message
                new.setAccessibleName(self._accessible)
                if seg is None:
                    self.segments.append(new)
                    self._lay.addWidget(new)
                else:
                    self._lay.replaceWidget(seg, new)
                    seg.hide()
                    seg.deleteLater()
                    self.segments[i] = new
                seg = new
            if isinstance(seg, MarkdownView):
                seg.set_html(payload, theme)
            else:
                seg.set_color(theme.text)
                seg.set_text(payload)
            seg.set_top_gap(gap)
        for seg in self.segments[len(specs) :]:
            self._lay.removeWidget(seg)
            seg.hide()
            seg.deleteLater()
        del self.segments[len(specs) :]

    def clear(self) -> None:
        """Show nothing."""
        self.show_segments([], MarkdownTheme())

    def toPlainText(self) -> str:  # noqa: N802 - Qt naming
        """The text of the segments, one segment per line."""
        return "\n".join(seg.toPlainText() for seg in self.segments)


class MessageView(QFrame):
    """Base of the per-message widgets: knows its message id and role."""

    def __init__(self, msg: ChatMessage, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("message")
        self.message_id = msg.id
        self.role = msg.role
        self.setProperty("role", msg.role)
        self._source = msg.content

    def sync(self, msg: ChatMessage, *, live: bool) -> None:
        """Show the latest state of ``msg`` (same id)."""
        raise NotImplementedError

    def toPlainText(self) -> str:  # noqa: N802 - Qt naming, read by tests and accessibility
        """What the widget shows, as text."""
        raise NotImplementedError

    def text(self) -> str:
        """Same as ``toPlainText()``."""
        return self.toPlainText()

    def source_text(self) -> str:
        """The message's raw text (Markdown for assistant messages)."""
        return self._source

    def copy_message(self) -> None:
        """Copy the message's raw text to the clipboard."""
        _copy_to_clipboard(self._source)


class _CopyLabel(QLabel):
    """A selectable plain-text label whose context menu also copies the whole message."""

    def __init__(self, object_name: str, owner: MessageView, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName(object_name)
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setWordWrap(True)
        self.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse | Qt.TextInteractionFlag.TextSelectableByKeyboard
        )
        self._owner = owner
        self.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.customContextMenuRequested.connect(self._menu)

    def _menu(self, pos: QPoint) -> None:
        menu = QMenu(self)
        if self.hasSelectedText():
            sel = self.selectedText()
            menu.addAction("Copy selection").triggered.connect(lambda: _copy_to_clipboard(sel))
        menu.addAction("Copy message").triggered.connect(self._owner.copy_message)
        menu.exec(self.mapToGlobal(pos))
        menu.deleteLater()


class UserMessageView(MessageView):
    """A user message: plain text in a rounded bubble on the right."""

    def __init__(self, msg: ChatMessage, parent: QWidget | None = None) -> None:
        super().__init__(msg, parent)
        row = QHBoxLayout(self)
        row.setContentsMargins(48, 2, 0, 2)
        row.addStretch(1)
        self.bubble = QFrame(self)
        self.bubble.setObjectName("userBubble")
        self.bubble.setSizePolicy(QSizePolicy.Policy.Maximum, QSizePolicy.Policy.Preferred)
        inner = QVBoxLayout(self.bubble)
        inner.setContentsMargins(12, 8, 12, 8)
        self._natural = -1
        self.label = _CopyLabel("userText", self, self.bubble)
        self.label.setAccessibleName("You")
        inner.addWidget(self.label)
        row.addWidget(self.bubble)
        self.sync(msg, live=False)

    def sync(self, msg: ChatMessage, *, live: bool) -> None:
        """Show the latest text."""
        self._source = msg.content
        if self.label.text() != msg.content:
            self.label.setText(msg.content)
            self._natural = -1
            self._fit_width()

    def toPlainText(self) -> str:  # noqa: N802
        """The user's text."""
        return self.label.text()

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802
        """Keep the bubble as wide as its text, at most 80 % of the row."""
        super().resizeEvent(event)
        self._fit_width()

    def _fit_width(self) -> None:
        if getattr(self, "_natural", -1) < 0:
            fm = self.label.fontMetrics()
            lines = self.label.text().split("\n")[:200]
            self._natural = max((fm.horizontalAdvance(line) for line in lines), default=0) + 6
        limit = max(120, int(self.width() * 0.8) - 26)
        width = min(self._natural, limit)
        if self.label.width() != width or self.label.minimumWidth() != width:
            self.label.setFixedWidth(width)


class NoteMessageView(MessageView):
    """A local note (or a system message): subtle, italic, never sent to the model."""

    def __init__(self, msg: ChatMessage, parent: QWidget | None = None) -> None:
        super().__init__(msg, parent)
        row = QHBoxLayout(self)
        row.setContentsMargins(4, 0, 4, 0)
        row.setSpacing(6)
        self.label = _CopyLabel("noteText", self, self)
        self.label.setAccessibleName("Note" if msg.role == "note" else "System prompt")
        row.addWidget(self.label, 1)
        self.sync(msg, live=False)

    def sync(self, msg: ChatMessage, *, live: bool) -> None:
        """Show the latest text."""
        self._source = msg.content
        text = msg.content if msg.role == "note" else f"System: {msg.content}"
        if self.label.text() != text:
            self.label.setText(text)

    def toPlainText(self) -> str:  # noqa: N802
        """The note's text."""
        return self.label.text()


class AssistantMessageView(MessageView):
    """An assistant message: thinking block, Markdown body, tool cards and a meta line."""

    def __init__(
        self,
        msg: ChatMessage,
        transcript: Transcript,
        *,
        live: bool,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(msg, parent)
        self._t = transcript
        self._source = ""
        self._shown = ""
        self._rendered_final = False
        self._last_md = 0.0
        self._md_cut = -1  # while live: content[:cut] is shown as Markdown, content[cut + 1:] as plain text
        self._prefix: list[Segment] = []
        self._meta_key: object = None
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
        self.meta_label = QLabel(self)
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
        meta.addWidget(self.meta_label)
        meta.addStretch(1)
        meta.addWidget(self.copy_button)
        lay.addLayout(meta)
        self.sync(msg, live=live)

    # -- rendering

    def sync(self, msg: ChatMessage, *, live: bool) -> None:
        """Show the latest state; while ``live`` only new text is appended."""
        if msg.thinking:
            if self.thinking is None:
                self.thinking = ThinkingBlock(self)
                self._lay.insertWidget(0, self.thinking)
            self.thinking.set_text(msg.thinking, streaming=live and not msg.content and not msg.tool_calls)
        self._sync_body(msg.content, live)
        if msg.tool_calls:
            for call in msg.tool_calls:
                self.upsert_call(call)
        stopped = msg.stopped
        if stopped != self.stopped_label.isVisible():
            self.stopped_label.setVisible(stopped)
        meta_key = (msg.model, msg.usage, live)
        if meta_key != self._meta_key:
            self._meta_key = meta_key
            self.meta_label.setText(self._t.meta_text(msg) if not live or msg.usage else "")
        self.copy_button.setVisible(bool(msg.content) and not live)

    def _sync_body(self, content: str, live: bool) -> None:
        theme = self._t.theme
        self._source = content
        if not content:
            if self.body.isVisible() or self._shown:
                self.body.clear()
                self.body.setVisible(False)
                self._shown = ""
                self._md_cut = -1
                self._prefix = []
            return
        if not self.body.isVisible():
            self.body.setVisible(True)
        if not live:
            if not self._rendered_final or self._shown != content:
                self.body.show_segments(body_segments(render_markdown_blocks(content, theme)), theme)
                self._shown = content
                self._rendered_final = True
                self._md_cut = -1
                self._prefix = []
            return
        self._rendered_final = False
        # Live: the complete lines as Markdown (re-rendered at most every LIVE_MARKDOWN_INTERVAL, and
        # only while they fit in LIVE_MARKDOWN_LIMIT), the rest as plain text in a TextFlowView.
        if not content.startswith(self._shown):  # replaced rather than extended (rare): start over
            self._md_cut = -1
            self._prefix = []
        cut = self._md_cut
        now = time.monotonic()
        if now - self._last_md >= LIVE_MARKDOWN_INTERVAL:
            new_cut = content.rfind("\n", 0, LIVE_MARKDOWN_LIMIT + 1)
            if new_cut > cut:
                cut = new_cut
                self._prefix = body_segments(render_markdown_blocks(content[:cut], theme))
                self._last_md = now
        self._md_cut = cut
        gap = BLOCK_GAP if self._prefix and content[:cut].endswith("\n") else 0
        self.body.show_segments([*self._prefix, ("plain", content[cut + 1 :], gap)], theme)
        self._shown = content

    def restyle(self) -> None:
        """Re-render the body with the transcript's current theme."""
        if self._source and self._rendered_final:
            theme = self._t.theme
            self.body.show_segments(body_segments(render_markdown_blocks(self._source, theme)), theme)

    def upsert_call(self, call: ToolCall) -> ToolCard:
        """Create or update the card of ``call``."""
        card = self.cards.get(call.id)
        if card is None:
            card = ToolCard(call, self)
            decision = self._t.decision_for(call.id)
            if decision is not None:
                card.mark_decided(decision)
                card.update_call(call)
            card.decided.connect(self._t.on_card_decided)
            self.cards[call.id] = card
            self._cards_box.addWidget(card)
            self._t.register_card(call.id, card, self)
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


class ToolMessageView(MessageView):
    """A tool result whose call is not shown by any assistant message (orphan): its own card."""

    def __init__(self, msg: ChatMessage, transcript: Transcript, parent: QWidget | None = None) -> None:
        super().__init__(msg, parent)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 2, 4, 2)
        call = (msg.tool_calls or [ToolCall(id=msg.id, name="tool", args_json="", status="done")])[0]
        self.card = ToolCard(call, self)
        lay.addWidget(self.card)
        self.sync(msg, live=False)

    def sync(self, msg: ChatMessage, *, live: bool) -> None:
        """Show the latest result."""
        self._source = msg.content
        if msg.tool_calls:
            call = msg.tool_calls[0].copy()
            call.result = msg.content
            self.card.update_call(call)

    def toPlainText(self) -> str:  # noqa: N802
        """The card's text."""
        return self.card.toPlainText()


class _OpaqueContent(QWidget):
    """The transcript's content widget, painted opaque with its palette's background brush.

    The node's style sheet sets that brush (``QWidget#transcriptContent { background: ... }``)
    but a style-sheet background does not make a widget opaque for Qt, and then every scroll step
    repaints the node, the scroll area and the viewport behind it. Opaque, scrolling moves the
    painted pixels and only the newly exposed strip is painted.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent, True)

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 - Qt override
        """Fill the exposed area with the background brush."""
        painter = QPainter(self)
        painter.fillRect(event.rect(), self.palette().brush(self.backgroundRole()))
        painter.end()


class Transcript(QScrollArea):
    """The scrolling list of message widgets of one node (object name ``transcript``).

    Signals:
        decision(str, str): ``(call_id, decision)`` from a permission card (``approve``, ``deny``,
            ``always``).
        retry_requested(): the error row's Retry button was clicked.
        rendered(): a flush changed what is shown.
    """

    decision = Signal(str, str)
    retry_requested = Signal()
    rendered = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("transcript")
        self.setAccessibleName("Transcript")
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.theme = MarkdownTheme()
        self.meta_text: Callable[[ChatMessage], str] = _default_meta
        self._conv: Conversation | None = None
        self._views: dict[str, MessageView] = {}
        self._order: list[MessageView] = []
        self._start = 0
        self._known = 0
        self._first_id: str | None = None
        self._dirty: set[str] = set()
        self._dirty_calls: set[str] = set()
        self._live: set[str] = set()
        self._cards: dict[str, tuple[ToolCard, AssistantMessageView]] = {}
        self._owned_calls: set[str] = set()
        self._decisions: dict[str, str] = {}
        self._follow = True
        self._anchor_from_bottom: int | None = None
        self._unbuilt: tuple[int, int] | None = None

        self._content = _OpaqueContent()
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

        self._frames = frame_scheduler()
        key = self._frame_key = id(self)
        frames = self._frames
        self.destroyed.connect(lambda *_a: frames.cancel(key))
        bar = self.verticalScrollBar()
        bar.rangeChanged.connect(self._on_range_changed)
        bar.valueChanged.connect(self._on_value_changed)

    # -- public API

    def set_conversation(self, conv: Conversation) -> None:
        """Show ``conv`` from scratch: the newest ``EAGER_MESSAGES`` widgets, older ones on demand."""
        self._frames.cancel(self._frame_key)
        self._clear_views()
        self._conv = conv
        self._dirty.clear()
        self._dirty_calls.clear()
        self._live.clear()
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
                    self._vbox.insertWidget(1 + len(self._order), view)
                    self._order.append(view)
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
        self._frames.request(self._frame_key, self._flush_in_tick)

    def schedule(self) -> None:
        """Render pending changes (e.g. a locally appended message) on the next frame."""
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
        for msg in msgs[self._known :]:
            self._dirty.discard(msg.id)
            if msg.role == "assistant" and msg.tool_calls:
                self._owned_calls.update(c.id for c in msg.tool_calls)
            view = self._make_view(msg, live=msg.id in self._live)
            if view is not None:
                self._vbox.insertWidget(1 + len(self._order), view)
                self._order.append(view)
        self._known = len(msgs)
        self._empty.setVisible(not msgs)
        if self._dirty:
            for mid in self._dirty:
                view = self._views.get(mid)
                if view is None:
                    continue
                msg = self._find(mid)
                if msg is not None:
                    if msg.role == "assistant" and msg.tool_calls:
                        self._owned_calls.update(c.id for c in msg.tool_calls)
                    view.sync(msg, live=mid in self._live)
            self._dirty.clear()
        if self._dirty_calls:
            for call_id in self._dirty_calls:
                entry = self._cards.get(call_id)
                if entry is None:
                    continue
                owner = entry[1]
                msg = self._find(owner.message_id)
                if msg is not None:
                    owner.sync(msg, live=owner.message_id in self._live)
            self._dirty_calls.clear()
        if settle_layout:
            # Resolve the size changes now (they cascade up through nested layouts, one posted event
            # per level otherwise), so the scroll position follows and the frame is painted once.
            settle()
        self.rendered.emit()

    def views(self) -> list[MessageView]:
        """The message widgets currently built, oldest first."""
        self._build_pending()
        return list(self._order)

    def message_texts(self) -> list[str]:
        """``toPlainText()`` of every built message widget, oldest first."""
        self._build_pending()
        return [v.toPlainText() for v in self._order]

    def view_for(self, message_id: str) -> MessageView | None:
        """The widget of a message, if built."""
        self._build_pending()
        return self._views.get(message_id)

    def card_for(self, call_id: str) -> ToolCard | None:
        """The card of a tool call, if built."""
        self._build_pending()
        entry = self._cards.get(call_id)
        return entry[0] if entry else None

    def unloaded_count(self) -> int:
        """How many older messages are not built yet."""
        return self._start

    def load_older(self, count: int = BATCH_MESSAGES) -> int:
        """Build up to ``count`` older messages at the top, keeping the scroll position."""
        self._build_pending()
        conv = self._conv
        if conv is None or self._start == 0:
            return 0
        new_start = max(0, self._start - count)
        bar = self.verticalScrollBar()
        self._anchor_from_bottom = bar.maximum() - bar.value()
        batch = conv.messages[new_start : self._start]
        built: list[MessageView] = []
        for msg in batch:
            view = self._make_view(msg, live=False)
            if view is not None:
                built.append(view)
        for k, view in enumerate(built):
            self._vbox.insertWidget(1 + k, view)
        self._order[:0] = built
        loaded = self._start - new_start
        self._start = new_start
        self._update_older_label()
        return loaded

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
        for view in self._order:
            if isinstance(view, AssistantMessageView):
                view.restyle()

    def is_following(self) -> bool:
        """True while new output scrolls the view (the user is at the bottom)."""
        return self._follow

    def scroll_to_bottom(self) -> None:
        """Jump to the newest message and follow new output again."""
        self._follow = True
        bar = self.verticalScrollBar()
        bar.setValue(bar.maximum())

    # -- permission decisions

    def decision_for(self, call_id: str) -> str | None:
        """The decision already made for ``call_id`` in this node, if any."""
        return self._decisions.get(call_id)

    def mark_decided(self, call_id: str, decision: str) -> None:
        """Record a decision and turn the call's card into its normal state."""
        self._decisions[call_id] = decision
        card = self.card_for(call_id)
        if card is not None:
            card.mark_decided(decision)

    def on_card_decided(self, call_id: str, decision: str) -> None:
        """Slot for the cards' ``decided`` signal."""
        self.decision.emit(call_id, decision)

    def register_card(self, call_id: str, card: ToolCard, owner: AssistantMessageView) -> None:
        """Called by an assistant view when it creates a card."""
        self._cards[call_id] = (card, owner)

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
            self._live = set()

    def _find(self, message_id: str) -> ChatMessage | None:
        conv = self._conv
        if conv is None:
            return None
        msgs = conv.messages
        for i in range(len(msgs) - 1, -1, -1):
            if msgs[i].id == message_id:
                return msgs[i]
        return None

    def _make_view(self, msg: ChatMessage, *, live: bool) -> MessageView | None:
        view: MessageView
        if msg.role == "user":
            view = UserMessageView(msg, self._content)
        elif msg.role == "assistant":
            view = AssistantMessageView(msg, self, live=live, parent=self._content)
        elif msg.role == "tool":
            call_id = msg.tool_calls[0].id if msg.tool_calls else None
            if call_id is not None and call_id in self._owned_calls:
                entry = self._cards.get(call_id)
                if entry is not None:
                    self._dirty_calls.add(call_id)
                return None
            view = ToolMessageView(msg, self, self._content)
        else:
            view = NoteMessageView(msg, self._content)
        self._views[msg.id] = view
        return view

    def _clear_views(self) -> None:
        for view in self._order:
            view.setObjectName("")
            view.hide()
            self._vbox.removeWidget(view)
            view.deleteLater()  # still parented: Qt deletes it once control is back in the loop
        self._order.clear()
        self._views.clear()
        self._cards.clear()

    def _update_older_label(self) -> None:
        if self._start > 0:
            self._older.setText(
                f"↑ {self._start:,} earlier messages — scroll up or <a href='#load'>load more</a>"
            )
            self._older.setVisible(True)
        else:
            self._older.setVisible(False)

    def _fill_viewport(self) -> None:
        """Build older messages while the built ones do not fill the view (nothing to scroll up to)."""
        if self._start == 0 or not self.isVisible():
            return
        settle()  # the scroll range is only right once the layouts have run
        if self.verticalScrollBar().maximum() == 0 and self._start > 0:
            self.load_older()

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt override
        """A taller view may need older messages to be filled."""
        super().resizeEvent(event)
        if self._start > 0 and event.size().height() > event.oldSize().height():
            QTimer.singleShot(0, self._fill_viewport)

    def _on_range_changed(self, _lo: int, hi: int) -> None:
        if hi == 0 and self._start > 0:
            QTimer.singleShot(0, self._fill_viewport)
        bar = self.verticalScrollBar()
        if self._anchor_from_bottom is not None:
            bar.setValue(max(0, hi - self._anchor_from_bottom))
            self._anchor_from_bottom = None
        elif self._follow:
            bar.setValue(hi)

    def _on_value_changed(self, value: int) -> None:
        bar = self.verticalScrollBar()
        self._follow = value >= bar.maximum() - 8
        if value <= 0 and self._start > 0 and bar.maximum() > 0 and self._anchor_from_bottom is None:
            QTimer.singleShot(0, self.load_older)


def _default_meta(msg: ChatMessage) -> str:
    parts = []
    if msg.model:
        parts.append(msg.model)
    if msg.usage is not None:
        u = msg.usage
        parts.append(f"{format_tokens(u.total_input_tokens)} in · {format_tokens(u.output_tokens)} out")
    return " · ".join(parts)
