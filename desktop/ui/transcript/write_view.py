"""What the permission card of a ``write_file`` call shows: the content as text, and what it replaces.

The model's ``content`` is shown as the file will read (monospace, line breaks and tabs as they are),
never as an escaped JSON string; every other control, bidi or zero-width character shows as an escape
(``<U+202E>``), so the text cannot hide what it does. When the project folder is known, the file there
now is read by the project tools' rules (``desktop.core.tools.read_existing``: confined, regular files
only, capped; binary is never decoded), and the card says what the write does:

* a new file: "Creates a new file (N lines)";
* an existing text file: the warning "Overwrites an existing file" (``overwriteWarning``) and a unified
  diff (removed lines red, added green, ``@@`` hunk headers quiet) with a button that switches to the
  whole new content (``writeToggleButton``);
* an existing binary, too large, unreadable or special file: the warning, with what is known of it;
* a path the tool refuses (outside the project, a control file): why, before the user approves.

Long texts are cut at ``WRITE_SHOW_CHARS`` with "Show all" (``writeShowAllButton``).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QTextCharFormat, QTextCursor, QTextFormat
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QTextEdit, QVBoxLayout, QWidget

from desktop.core.visible import visible_text
from desktop.ui.transcript.card_parts import (
    FitPlainText,
    link_button,
    mono_font,
    show_all_button,
    visible_block,
)

if TYPE_CHECKING:
    from desktop.core.tools import ExistingFile, WriteDiff

__all__ = ["WRITE_SHOW_CHARS", "WriteFileView", "write_state_text"]

WRITE_SHOW_CHARS = 20_000
"""Characters of the content (or the diff) shown before "Show all"."""
_MAX_LINES = 20
_PATH_CHARS = 300
_ADDED = QColor(46, 160, 67, 70)
_REMOVED = QColor(218, 54, 51, 70)
_HUNK = QColor(56, 139, 253, 45)
WARNING_STYLE = "color: #c62828; font-weight: 600;"


def _lines(text: str) -> int:
    return text.count("\n") + (0 if not text or text.endswith("\n") else 1)


def _size(size: int | None) -> str:
    if size is None:
        return "size unknown"
    return f"{size:,} bytes" if size < 10 * 1024 else f"{size / 1024:,.0f} KB"


def write_state_text(existing: ExistingFile | None, content: str, diff: WriteDiff | None) -> tuple[str, bool]:
    """What the card says about the write, and whether it is a warning.

    Args:
        existing: What is at the path now (None: the project folder is unknown, nothing was read).
        content: The new content.
        diff: The diff from the existing text (None when not compared).
    """
    lines = _lines(content)
    new = f"{lines} line{'s' if lines != 1 else ''}"
    if existing is None:
        return f"Writes {new}.", False
    reason = visible_text(existing.reason or "")
    state = existing.state
    if state == "absent":
        return f"Creates a new file ({new}).", False
    if state == "refused":
        return f"The tool will refuse this write: {reason}", True
    if state == "text":
        if diff is None:
            return (f"Overwrites an existing file ({_lines(existing.text or '')} lines, too long to "
                    f"compare here) with {new}.", True)
        if not diff.lines:
            return "Overwrites an existing file with the same content (no change).", True
        return (f"Overwrites an existing file: {diff.added} line{'s' if diff.added != 1 else ''} added, "
                f"{diff.removed} removed ({new} in all).", True)
    if state == "binary":
        return f"Overwrites an existing file: binary file ({_size(existing.size)}), not shown.", True
    if state == "too_large":
        return f"Overwrites an existing file ({_size(existing.size)}, too large to compare here).", True
    if state == "not_regular":
        return f"At this path there is {reason}: the write will fail or replace it.", True
    return f"Overwrites an existing file that could not be read ({reason}).", True


class WriteFileView(QFrame):
    """A ``write_file`` call's path, what it does to the file there and its content (``writeFileView``).

    Children: ``writePath``, ``writeState`` (object name ``overwriteWarning`` when it warns),
    ``writeContent`` (the diff or the content), ``writeToggleButton`` (diff ↔ whole content, when there
    is a diff), ``writeShowAllButton`` (when the shown text was cut).

    Args:
        path: The ``path`` argument (model-given).
        content: The ``content`` argument.
        folder: The project folder (None: unknown; the file there is not read).
    """

    def __init__(self, path: str, content: str, folder: Path | None, parent: QWidget | None = None) -> None:
        # Start-up: the transcript loads right after the first paint; the tools (asyncio) only with a card.
        from desktop.core.tools import read_existing, write_diff

        super().__init__(parent)
        self.setObjectName("writeFileView")
        self._content = content
        self.existing = read_existing(folder, path) if folder is not None else None
        old = self.existing.text if self.existing is not None else None
        self.diff = write_diff(old, content) if old is not None else None
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(4)
        shown_path = self.existing.path if self.existing is not None else path
        where = visible_text(shown_path)
        if len(where) > _PATH_CHARS:
            where = where[: _PATH_CHARS - 1] + "…"
        self.path_label = self._label(f"File: {where}", "writePath")
        font = self.path_label.font()
        font.setBold(True)
        self.path_label.setFont(font)
        text, warns = write_state_text(self.existing, content, self.diff)
        self.state_label = self._label(text, "overwriteWarning" if warns else "writeState")
        if warns:
            self.state_label.setStyleSheet(WARNING_STYLE)
            self.state_label.setAccessibleName("Warning")
        self.content_view = FitPlainText("writeContent", _MAX_LINES, self)
        self.content_view.setFont(mono_font())
        lay.addWidget(self.content_view)
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        self.toggle_button: QPushButton | None = None
        if self.diff is not None and self.diff.lines:
            self.toggle_button = link_button(self, "Show the whole new file", "writeToggleButton")
            self.toggle_button.clicked.connect(self._toggle)
            row.addWidget(self.toggle_button)
        self.show_all: QPushButton = show_all_button(self, "writeShowAllButton", lambda: self._show(None))
        row.addWidget(self.show_all)
        row.addStretch(1)
        lay.addLayout(row)
        self.showing_diff = self.toggle_button is not None
        self._show(WRITE_SHOW_CHARS)

    def _label(self, text: str, name: str) -> QLabel:
        label = QLabel(text, self)
        label.setObjectName(name)
        label.setTextFormat(Qt.TextFormat.PlainText)  # model-controlled text
        label.setWordWrap(True)
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        box = self.layout()
        if box is not None:
            box.addWidget(label)
        return label

    def _toggle(self) -> None:
        self.showing_diff = not self.showing_diff
        if self.toggle_button is not None:
            self.toggle_button.setText("Show the whole new file" if self.showing_diff else "Show the changes")
        self._show(WRITE_SHOW_CHARS)

    def _show(self, limit: int | None) -> None:
        """Show the diff or the content, cut at ``limit`` characters (None: all of it)."""
        source = "\n".join(self.diff.lines) if self.showing_diff and self.diff is not None else self._content
        shown, cut = visible_block(source, limit)
        self.content_view.set_text(shown + ("\n…" if cut else ""))
        self.show_all.setVisible(cut)
        self._colour(self.showing_diff)

    def _colour(self, diff: bool) -> None:
        selections: list[QTextEdit.ExtraSelection] = []
        if diff:
            block = self.content_view.document().firstBlock()
            while block.isValid():
                colour = {"+": _ADDED, "-": _REMOVED, "@": _HUNK}.get(block.text()[:1])
                if colour is not None:
                    selection = QTextEdit.ExtraSelection()
                    fmt = QTextCharFormat()
                    fmt.setBackground(colour)
                    fmt.setProperty(QTextFormat.Property.FullWidthSelection, True)
                    selection.format = fmt
                    cursor = QTextCursor(block)
                    selection.cursor = cursor
                    selections.append(selection)
                block = block.next()
        self.content_view.setExtraSelections(selections)

    def toPlainText(self) -> str:  # noqa: N802 - Qt naming, read by tests and accessibility
        """Path, what the write does, and the text shown."""
        return "\n".join((self.path_label.text(), self.state_label.text(), self.content_view.toPlainText()))
