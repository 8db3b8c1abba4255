"""The plain text a selection of rendered Markdown is copied as: what the reader sees, markers included.

Qt's own plain text of a rich-text selection drops what the layout draws rather than the text holds:
list bullets and numbers vanish, and a table becomes one cell per line. ``selection_text`` keeps them:
each list item starts with its marker (``•``, ``◦``, ``▪`` or its number, ``1.`` / ``a.`` / ``i.``),
indented two spaces per nesting level, and a table row's cells are joined by tabs (so a pasted table
lands in a spreadsheet's columns).
"""

from __future__ import annotations

from PySide6.QtGui import QTextCursor, QTextDocument, QTextListFormat

__all__ = ["selection_text"]

_BULLETS = {
    QTextListFormat.Style.ListDisc: "•",
    QTextListFormat.Style.ListCircle: "◦",
    QTextListFormat.Style.ListSquare: "▪",
}


def selection_text(doc: QTextDocument, start: int, end: int) -> str:
    """The plain text of ``doc`` between the cursor positions ``start`` and ``end``.

    Args:
        doc: the rendered document.
        start: the selection's first position.
        end: the position after its last character.

    Returns:
        The text, one line per paragraph, list markers and table tabs included; a list item whose
        beginning is not selected gets no marker.
    """
    cursor = QTextCursor(doc)
    parts: list[str] = []
    block = doc.findBlock(start)
    while block.isValid() and (not parts or block.position() < end):
        b_start = block.position()
        lo, hi = max(start, b_start), min(end, b_start + block.length() - 1)
        cursor.setPosition(lo)
        cursor.setPosition(max(lo, hi), QTextCursor.MoveMode.KeepAnchor)
        text = cursor.selectedText().replace("\u2028", "\n").replace("\u00a0", " ")
        items = block.textList()
        if items is not None and lo == b_start:
            fmt = items.format()
            marker = _BULLETS.get(fmt.style()) or items.itemText(block)
            text = "  " * max(0, fmt.indent() - 1) + marker + " " + text
        if parts:
            table = cursor.currentTable()
            cell = table.cellAt(b_start) if table is not None else None
            new_column = cell is not None and cell.column() > 0 and cell.firstPosition() == b_start
            parts.append("\t" if new_column else "\n")
        parts.append(text)
        block = block.next()
    return "".join(parts)
