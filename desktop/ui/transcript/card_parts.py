"""What the transcript's cards share: a plain-text box that grows with its text, the monospace font, the
disclosure arrows, the "Show all" link of a cut value and the one-line summary of a call's arguments.

Everything a card shows that a model or a server chose (names, descriptions, argument keys and
values) goes through ``desktop.core.visible`` first: control, bidi and zero-width characters show as
escapes (``\\n``, ``<U+202E>``), so no text can add a line, reorder one or hide a difference.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont, QFontDatabase, QPalette, QResizeEvent, QTextCursor
from PySide6.QtWidgets import QFrame, QPlainTextEdit, QPushButton, QSizePolicy, QWidget

from desktop.core.visible import visible_prefix, visible_text

__all__ = ["ARROW_DOWN", "ARROW_RIGHT", "FitPlainText", "link_button", "mono_font", "show_all_button",
           "summarize_args", "visible_block"]

ARROW_RIGHT = "▸"
ARROW_DOWN = "▾"
_SUMMARY_VALUE_CHARS = 40
_PARTIAL_ESCAPE = re.compile(r"(<(U(\+[0-9A-F]{0,6})?)?|\\)$")


def summarize_args(args_json: str, limit: int = 90) -> str:
    """A one-line summary of the arguments, keys and values made visible: ``path="a.txt", content="hel…"``.

    String values are shown between quotes as they read (``—``, not ``\\u2014``); a newline in one
    shows as ``\\n``. Arguments that are not a JSON object are shown as their text on one line.
    """
    text = args_json.strip()
    try:
        value = json.loads(text) if text else {}
    except (ValueError, RecursionError):
        value = None
    if isinstance(value, dict):
        parts = []
        for key, val in value.items():
            raw = f'"{val}"' if isinstance(val, str) else json.dumps(val, ensure_ascii=False)
            shown, cut = visible_prefix(raw, _SUMMARY_VALUE_CHARS - 1)
            parts.append(f"{visible_text(str(key))}={shown}{'…' if cut else ''}")
        summary = ", ".join(parts)
    else:
        summary = " ".join(visible_text(text).split())
    if len(summary) <= limit:
        return summary
    # The parts are visible already: cut as text, but never leave half an escape at the end.
    return _PARTIAL_ESCAPE.sub("", summary[: limit - 1]) + "…"


def link_button(parent: QWidget, text: str, object_name: str) -> QPushButton:
    """A small flat button drawn as a link (underlined, in the palette's link colour)."""
    button = QPushButton(text, parent)
    button.setObjectName(object_name)
    button.setFlat(True)
    button.setAutoDefault(False)
    button.setCursor(Qt.CursorShape.PointingHandCursor)
    link = parent.palette().color(QPalette.ColorRole.Link).name()
    button.setStyleSheet(f"QPushButton {{ border: none; padding: 0 2px; text-decoration: underline;"
                         f" color: {link}; background: transparent; }}")
    font = button.font()
    if font.pointSizeF() > 0:
        font.setPointSizeF(font.pointSizeF() * 0.9)
    button.setFont(font)
    return button


def show_all_button(parent: QWidget, object_name: str, on_click: Callable[[], None]) -> QPushButton:
    """A "Show all" link under a cut value; it hides itself once clicked."""
    button = link_button(parent, "Show all", object_name)

    def clicked(_checked: bool = False) -> None:
        button.hide()
        on_click()

    button.clicked.connect(clicked)
    return button


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


def visible_block(text: str, limit: int | None = None) -> tuple[str, bool]:
    """Multi-line text (a file's content, a diff) made visible with its line breaks and tabs kept.

    Every other control, bidi and zero-width character shows as an escape (``visible_text``); with
    ``limit``, at most that many characters are shown, never cutting an escape.

    Returns:
        ``(shown, cut)``: ``cut`` is True when something was left out.
    """
    out: list[str] = []
    room = limit
    for i, part in enumerate(text.split("\t")):
        if i:
            if room is not None:
                if room < 1:
                    return "".join(out), True
                room -= 1
            out.append("\t")
        if room is None:
            out.append(visible_text(part, keep_newlines=True))
            continue
        shown, cut = visible_prefix(part, room, keep_newlines=True)
        out.append(shown)
        room -= len(shown)
        if cut:
            return "".join(out), True
    return "".join(out), False
