"""The widgets of one transcript message each: user bubble, note, assistant answer, orphan tool result.

A view shows one ``ChatMessage`` and is brought up to date with ``sync(msg, live=...)``. Views know
nothing of the transcript that holds them: what they need (the Markdown theme, the meta-line
formatter) is handed in, and what the transcript must learn (a tool card was created, a permission
was decided) is emitted as a signal.

The assistant message's view, with its Markdown body, is ``answer.AssistantMessageView``.

Every view answers ``toPlainText()`` (and ``text()``) with what it shows.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QPoint, Qt, Signal
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QMenu,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from desktop.core.chat.attachment_ref import attachments_of
from desktop.core.chat.types import TOOL_IMAGES_KEY, ChatMessage, ToolCall
from desktop.ui.attachments.items import tool_image_items
from desktop.ui.attachments.message_row import AttachmentRow
from desktop.ui.markdown.view import copy_to_clipboard
from desktop.ui.transcript.actions import InlineEditor, MessageActions
from desktop.ui.transcript.tool_card import ToolCard
from desktop.ui.transcript.wrap_label import WrapLabel

__all__ = ["MessageView", "NoteMessageView", "ToolMessageView", "UserMessageView"]


class MessageView(QFrame):
    """Base of the per-message widgets (object name ``message``, property ``role``).

    Signals:
        action_requested(str, str, str): ``(action, message_id, argument)`` forwarded from the
            view's action row (``desktop.ui.transcript.actions``).

    Attributes:
        message_id: the id of the message shown.
        role: its role.
        action_row: the action row (edit, regenerate, versions, fork), for user and assistant messages.
    """

    action_requested = Signal(str, str, str)

    def __init__(self, msg: ChatMessage, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("message")
        self.message_id = msg.id
        self.role = msg.role
        self.setProperty("role", msg.role)
        self._source = msg.content
        self.action_row: MessageActions | None = None

    def _make_actions(self, place_editor: Callable[[InlineEditor], None] | None = None) -> MessageActions:
        """Create the action row and forward its requests as ``action_requested``.

        Args:
            place_editor: puts the row's inline editor into the view (user rows build it lazily).
        """
        self.action_row = MessageActions(self.message_id, self.role, self, place_editor)
        self.action_row.requested.connect(self.action_requested)
        return self.action_row

    def sync(self, msg: ChatMessage, *, live: bool) -> None:
        """Show the latest state of ``msg`` (same id); ``live`` while it is being streamed."""
        raise NotImplementedError

    def toPlainText(self) -> str:  # noqa: N802 - Qt naming, read by tests and accessibility
        """What the widget shows, as text."""
        raise NotImplementedError

    def text(self) -> str:
        """Same as ``toPlainText()``."""
        return self.toPlainText()

    def release_body(self) -> None:
        """Drop what costs memory and layout while the view is far outside the viewport (hidden)."""

    def take_parts(self) -> list[QWidget]:
        """Hand over the widgets that may be deleted before the view itself, each whole (the view
        left the transcript and is deleted in slices: ``reaper.dispose``); none by default."""
        return []

    def restore_body(self) -> None:
        """Show again what ``release_body`` dropped (before the view is shown again)."""

    def body_chars(self) -> int:
        """The size of what ``restore_body`` lays out again (characters)."""
        return len(self._source)

    def copy_message(self) -> None:
        """Copy the message's raw text (Markdown for assistant messages) to the clipboard."""
        copy_to_clipboard(self._source)


class _CopyLabel(WrapLabel):
    """A selectable plain-text label whose context menu also copies the whole message."""

    def __init__(self, object_name: str, owner: MessageView, parent: QWidget | None = None) -> None:
        super().__init__("", parent)
        self.setObjectName(object_name)
        self.setTextFormat(Qt.TextFormat.PlainText)
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
            menu.addAction("Copy selection").triggered.connect(lambda: copy_to_clipboard(sel))
        menu.addAction("Copy message").triggered.connect(self._owner.copy_message)
        menu.exec(self.mapToGlobal(pos))
        menu.deleteLater()


class UserMessageView(MessageView):
    """A user message: plain text (``userText``) in a rounded bubble (``userBubble``) on the right,
    its attachments above it (``attachment_row``: ``desktop.ui.attachments.message_row``; the node
    binds it to the project's files when the view is created)."""

    def __init__(self, msg: ChatMessage, parent: QWidget | None = None) -> None:
        super().__init__(msg, parent)
        outer = QVBoxLayout(self)  # the attachments, the bubble's row, then the inline editor (actions.py)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.setSpacing(0)
        self.attachment_row: AttachmentRow | None = None
        refs = attachments_of(msg)
        if refs:
            self.attachment_row = AttachmentRow(refs, self)
            self.attachment_row.setContentsMargins(48, 2, 0, 2)
            outer.addWidget(self.attachment_row)
        row = QHBoxLayout()
        outer.addLayout(row)
        row.setContentsMargins(48, 2, 0, 2)
        row.addStretch(1)
        actions = self._make_actions(outer.addWidget)
        row.addWidget(actions, 0, Qt.AlignmentFlag.AlignBottom)
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
        actions.editing_changed.connect(lambda on: self.bubble.setVisible(not on and bool(self._source)))
        self.sync(msg, live=False)

    def sync(self, msg: ChatMessage, *, live: bool) -> None:
        """Show the latest text."""
        self._source = msg.content
        if self.label.text() != msg.content:
            self.label.setText(msg.content)
            self._natural = -1
            self._fit_width()
        if not msg.content:
            self.bubble.hide()  # a message of attachments only has no bubble

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
        room = self.width() - 56 - (self.action_row.sizeHint().width() if self.action_row is not None else 0)
        limit = max(120, min(int(self.width() * 0.8), room) - 26)
        width = min(self._natural, limit)
        if self.label.width() != width or self.label.minimumWidth() != width:
            self.label.setFixedWidth(width)


class NoteMessageView(MessageView):
    """A local note (or a system message): subtle, italic (``noteText``), never sent to the model."""

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


class ToolMessageView(MessageView):
    """A tool result whose call is not shown by any assistant message (orphan): its own card."""

    def __init__(self, msg: ChatMessage, parent: QWidget | None = None) -> None:
        super().__init__(msg, parent)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 2, 4, 2)
        call = (msg.tool_calls or [ToolCall(id=msg.id, name="tool", args_json="", status="done")])[0]
        self.card = ToolCard(call, self)
        self.card.show_images(tool_image_items(msg.extra.get(TOOL_IMAGES_KEY), msg.id))
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
