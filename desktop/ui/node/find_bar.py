"""Ctrl+F in a node: find in this conversation (``findBar``).

The bar (object names ``findBar``, ``findInput``, ``findCount``, ``findPrevious``, ``findNext``)
opens above the transcript with Ctrl+F; Escape closes it. It counts the matches in the shown
conversation's messages with the search index's own rules (``core.search.match_spans``: words,
"phrases", prefix*), Enter / F3 / the arrows go to the next or previous message holding one, which is
built, scrolled into view (``scroll_to_message``) and outlined briefly.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QObject, Qt, QTimer
from PySide6.QtGui import QKeyEvent, QKeySequence, QShortcut
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QLineEdit, QToolButton, QWidget

from desktop.core.chat.conversation import Conversation

if TYPE_CHECKING:  # start-up: the transcript room loads after the first paint
    from desktop.ui.transcript.transcript import Transcript

__all__ = ["FLASH_MS", "FindBar", "flash", "scroll_to_message"]

log = logging.getLogger(__name__)

FLASH_MS = 1600
"""How long a message found stays outlined."""


def scroll_to_message(transcript: Transcript, message_id: str) -> QWidget | None:
    """Build ``message_id``'s widget (older ones too), scroll it into view, outline it; its widget,
    or None when the transcript does not show it."""
    view = transcript.view_for(message_id)
    while view is None and transcript.unloaded_count() > 0:
        transcript.load_older(budget=None)
        view = transcript.view_for(message_id)
    if view is None:
        return None
    content = transcript.widget()
    if content is not None:
        content.adjustSize()
    transcript.ensureWidgetVisible(view, 0, max(0, (transcript.viewport().height() - view.height()) // 2))
    flash(view)
    return view


def flash(view: QWidget) -> None:
    """Outline ``view`` for ``FLASH_MS`` (object name ``foundHighlight``, transparent to the mouse)."""
    mark = QFrame(view)
    mark.setObjectName("foundHighlight")
    mark.setStyleSheet("#foundHighlight { border: 2px solid #f0b400; border-radius: 6px;"
                       " background: rgba(255, 214, 64, 40); }")
    mark.setGeometry(view.rect())
    mark.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents, True)
    mark.show()
    mark.raise_()
    QTimer.singleShot(FLASH_MS, mark, mark.deleteLater)


class FindBar(QFrame):
    """Find in one conversation.

    Args:
        node: The chat node (Ctrl+F is a shortcut on it and its children).
        conversation: Returns the node's conversation.
        transcript: Returns the node's transcript.
    """

    def __init__(self, node: QWidget, conversation: Callable[[], Conversation],
                 transcript: Callable[[], Transcript]) -> None:
        super().__init__(node)
        self.setObjectName("findBar")
        self._conversation = conversation
        self._transcript = transcript
        self._hits: list[tuple[str, int]] = []  # (message id, matches in it), oldest first
        self._at = -1
        row = QHBoxLayout(self)
        row.setContentsMargins(8, 3, 8, 3)
        self.input = QLineEdit(self)
        self.input.setObjectName("findInput")
        self.input.setPlaceholderText("Find in this conversation")
        self.input.setClearButtonEnabled(True)
        self.count = QLabel(self)
        self.count.setObjectName("findCount")
        row.addWidget(self.input, 1)
        row.addWidget(self.count)
        for name, text, tip, step in (("findPrevious", "↑", "Previous match (Shift+Enter)", -1),
                                      ("findNext", "↓", "Next match (Enter)", 1)):
            button = QToolButton(self)
            button.setObjectName(name)
            button.setText(text)
            button.setToolTip(tip)
            button.clicked.connect(lambda _c=False, s=step: self.go(s))
            row.addWidget(button)
        close = QToolButton(self)
        close.setObjectName("findClose")
        close.setText("×")
        close.setToolTip("Close (Escape)")
        close.clicked.connect(self.close_bar)
        row.addWidget(close)
        self.input.textChanged.connect(self._on_text)
        self.input.installEventFilter(self)
        shortcut = QShortcut(QKeySequence.StandardKey.Find, node)
        shortcut.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        shortcut.activated.connect(self.open_bar)
        self.hide()

    def open_bar(self) -> None:
        """Show the bar, the cursor in its input (its text selected)."""
        self.show()
        self.input.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.input.selectAll()
        self._on_text(self.input.text())

    def close_bar(self) -> None:
        """Hide the bar."""
        self.hide()

    def match_count(self) -> int:
        """How many matches the conversation holds."""
        return sum(n for _, n in self._hits)

    def _on_text(self, text: str) -> None:
        from desktop.core.search import match_spans  # start-up: the search core loads on first use

        self._hits = []
        if text.strip():
            for msg in self._conversation().messages:
                found = len(match_spans(msg.content, text))
                if found:
                    self._hits.append((msg.id, found))
        self._at = -1
        total = self.match_count()
        self.count.setText("" if not text.strip() else f"{total} match{'es' if total != 1 else ''}"
                           if total else "No matches")

    def go(self, step: int) -> None:
        """Go to the next (``step`` 1) or previous (-1) message holding a match."""
        if not self._hits:
            return
        self._at = (self._at + step) % len(self._hits)
        message_id = self._hits[self._at][0]
        scroll_to_message(self._transcript(), message_id)
        self.count.setText(f"{self._at + 1} of {len(self._hits)} messages · {self.match_count()} matches")

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt API
        if watched is self.input and event.type() == QEvent.Type.KeyPress and isinstance(event, QKeyEvent):
            if event.key() == Qt.Key.Key_Escape:
                self.close_bar()
                return True
            if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_F3):
                shift = event.modifiers() & Qt.KeyboardModifier.ShiftModifier
                self.go(-1 if shift else 1)
                return True
        return super().eventFilter(watched, event)
