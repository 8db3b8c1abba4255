"""What the transcript's cards share: a plain-text box that grows with its text, the monospace font, the
disclosure arrows and the pretty-printed arguments of a tool call."""

from __future__ import annotations

import json

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont, QFontDatabase, QResizeEvent, QTextCursor
from PySide6.QtWidgets import QFrame, QPlainTextEdit, QSizePolicy, QWidget

__all__ = ["ARROW_DOWN", "ARROW_RIGHT", "FitPlainText", "mono_font", "pretty_args"]

ARROW_RIGHT = "▸"
ARROW_DOWN = "▾"


def pretty_args(args_json: str) -> str:
    """The arguments pretty-printed in full (raw text when they are not valid JSON)."""
    text = args_json.strip()
    if not text:
        return "{}"
    try:
        return json.dumps(json.loads(text), indent=2, ensure_ascii=False)
    except ValueError:
        return args_json


def mono_font() -> QFont:
    """The system's fixed-width font (arguments, results)."""
    return QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)


class FitPlainText(QPlainTextEdit):
    """A read-only plain text box that grows with its text up to ``max_lines`` lines, then scrolls."""

    def __init__(self, object_name: str, max_lines: int, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName(object_name)
        self.setReadOnly(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse | Qt.TextInteractionFlag.TextSelectableByKeyboard
        )
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self._max_lines = max_lines
        self._shown = ""
        self.document().documentLayout().documentSizeChanged.connect(lambda _s: self._fit())

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 (Qt API)
        super().resizeEvent(event)
        # A new width re-wraps the text, but the plain-text layout does not always report it.
        if event.size().width() != event.oldSize().width():
            self._fit()

    def _fit(self) -> None:
        lines = max(1, self.document().documentLayout().documentSize().height())
        shown = min(lines, self._max_lines)
        line_h = self.fontMetrics().lineSpacing()
        margins = self.contentsMargins()
        doc_margin = self.document().documentMargin()
        h = int(shown * line_h + 2 * doc_margin + margins.top() + margins.bottom() + 4)
        if h != self.height():
            self.setFixedHeight(h)

    def set_text(self, text: str) -> None:
        """Show ``text``, appending only the new tail when it extends what is shown."""
        # Compare with what was set, not toPlainText(): Qt normalises CRLF and no-break spaces, so
        # the prefix test would fail on every update and re-set the whole text (quadratic).
        current = self._shown
        if text == current:
            return
        if current and text.startswith(current):
            cursor = QTextCursor(self.document())
            cursor.movePosition(QTextCursor.MoveOperation.End)
            cursor.insertText(text[len(current) :])
        else:
            self.setPlainText(text)
        self._shown = text
        self._fit()
