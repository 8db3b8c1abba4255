"""``TextFlowView``: word-wrapped plain text whose append cost does not depend on its length.

``QTextDocument`` (and so ``QTextBrowser``, ``QPlainTextEdit`` and ``QLabel``) lays out a whole
paragraph again on every change to it: appending to a streamed 80 KB paragraph costs ~12 ms per
append. This view keeps the text in *chunks* of laid-out lines instead (``text_chunks.py``): only the tail
chunk (the last few lines) is laid out again when text is appended.

The view paints only the lines inside the exposed rectangle, supports mouse and keyboard
selection (Ctrl+C, Ctrl+A, a context menu with "Copy message (Markdown)"), and answers
``toPlainText()`` / ``text()`` with exactly the text it was given. Line breaks (``\\n``) are shown
as line breaks.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable

from PySide6.QtCore import QPointF, QRectF, QSize, Qt
from PySide6.QtGui import (
    QColor,
    QContextMenuEvent,
    QFocusEvent,
    QFont,
    QGuiApplication,
    QKeyEvent,
    QKeySequence,
    QMouseEvent,
    QPainter,
    QPaintEvent,
    QPalette,
    QResizeEvent,
    QTextCharFormat,
    QTextLayout,
    QTextOption,
)
from PySide6.QtWidgets import QMenu, QSizePolicy, QWidget

from desktop.ui.markdown.shaping import layout_font, needs_shaping
from desktop.ui.markdown.text_chunks import Chunk, common_prefix, lay_out

__all__ = ["TextFlowView"]


class TextFlowView(QWidget):
    """Read-only, selectable, word-wrapped plain text; appending is O(appended text).

    The view's height follows its text (fixed height, expanding width), like the transcript's
    Markdown views.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("textFlow")
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setFocusPolicy(Qt.FocusPolicy.ClickFocus)
        self.setCursor(Qt.CursorShape.IBeamCursor)
        self.setAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent, False)
        self.copy_message: Callable[[], None] | None = None
        self._text = ""
        self._shaped = False  # the text holds a character that needs shaping (``shaping.py``)
        self._chunks: list[Chunk] = []  # frozen chunks, then the tail chunk (always last when text)
        self._tops: list[float] = []  # chunk tops, for bisect
        self._width = -1.0
        self._margin = 1.0
        self._top_gap = 0
        self._color: QColor | None = None
        self._anchor = -1  # selection anchor and position (text indices); -1: no selection
        self._pos = -1
        self._option = QTextOption()
        self._option.setWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
        self.setFixedHeight(self._height_for(0.0))

    # -- public API

    def toPlainText(self) -> str:  # noqa: N802 - Qt naming, read by tests and accessibility
        """The text shown, exactly as given."""
        return self._text

    def text(self) -> str:
        """Same as ``toPlainText()``."""
        return self._text

    def set_text(self, text: str) -> None:
        """Show ``text``. Only the lines after the longest common prefix with the old text are laid out."""
        old = self._text
        if text == old:
            return
        grown = text.startswith(old)
        shaped = (self._shaped or needs_shaping(text[len(old) :])) if grown else needs_shaping(text)
        self._text = text
        if self._anchor > len(text) or self._pos > len(text):
            self._anchor = self._pos = -1
        if self._width <= 0 or shaped != self._shaped:  # not laid out yet, or in another font
            self._shaped = shaped
            self._relayout_all()
            return
        self._relayout_from(len(text) if grown else common_prefix(old, text))

    def release(self) -> None:
        """Drop the text and its laid-out lines (the view is hidden far away)."""
        self.set_text("")

    def append(self, text: str) -> None:
        """Append ``text`` (only the tail lines are laid out again)."""
        if text:
            self.set_text(self._text + text)

    def set_color(self, color: QColor | str) -> None:
        """Paint the text in ``color`` (default: the palette's text colour); the same colour again
        (every streamed frame sets it) repaints nothing."""
        wanted = QColor(color)
        if wanted != self._color:
            self._color = wanted
            self.update()

    def set_top_gap(self, pixels: int) -> None:
        """Empty space above the text (separates it from the block before it)."""
        if pixels != self._top_gap:
            self._top_gap = pixels
            self._fit()
            self.update()

    def selected_text(self) -> str:
        """The selected text ("" when nothing is selected)."""
        lo, hi = self._selection()
        return self._text[lo:hi]

    def select_all(self) -> None:
        """Select the whole text."""
        self._anchor, self._pos = 0, len(self._text)
        self.update()

    def layout_font(self) -> QFont:
        """The font the text is laid out in: the widget's, with ``PreferNoShaping`` while every
        character of the text can do without shaping (``desktop.ui.markdown.shaping``: Latin text is laid out
        ~40 % faster without kerning and ligatures; Arabic, combining accents or emoji sequences are
        shaped, and then the whole text is, so its lines break as one layout of it would).
        """
        return layout_font(self.font(), shaped=self._shaped)

    def line_count(self) -> int:
        """How many lines the text is wrapped into at the current width."""
        return sum(c.lines for c in self._chunks)

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt override
        """Any width; the height of the text."""
        return QSize(200, self.height())

    # -- layout

    def _content_height(self) -> float:
        if not self._chunks:
            return 0.0
        last = self._chunks[-1]
        return last.top + last.height

    def _height_for(self, content: float) -> int:
        return int(content + 2 * self._margin + 0.999) + self._top_gap

    def _fit(self) -> None:
        h = self._height_for(self._content_height())
        if h != self.height():
            self.setFixedHeight(h)

    def _relayout_all(self) -> None:
        """Lay the whole text out again (new width or font); nothing while the view has no width."""
        self._chunks.clear()
        self._tops.clear()
        if self._text and self._width > 0:
            self._layout_tail(0, 0.0)
        self._fit()
        self.update()

    def _relayout_from(self, index: int) -> None:
        """Drop the chunks that end after ``index`` and lay the text out again from there."""
        chunks = self._chunks
        # Keep the frozen chunks that end before ``index`` (a chunk ending exactly there may re-wrap:
        # its last break depended on the character after it). The tail chunk is never kept. Scan from
        # the end: an append keeps all but the tail.
        keep = len(chunks) - 1
        while keep > 0 and chunks[keep - 1].start + chunks[keep - 1].chars >= index:
            keep -= 1
        keep = max(keep, 0)
        del chunks[keep:]
        del self._tops[keep:]
        start = chunks[-1].start + chunks[-1].chars if chunks else 0
        top = chunks[-1].top + chunks[-1].height if chunks else 0.0
        self._layout_tail(start, top)
        self._fit()
        # Repaint only what may have changed: from the first re-laid line down.
        y = int(top + self._margin + self._top_gap)
        self.update(0, y, self.width(), max(0, self.height() - y))

    def _layout_tail(self, start: int, top: float) -> None:
        """Lay out ``text[start:]`` in chunks (``text_chunks.lay_out``): frozen ones, then the tail."""
        width = max(1.0, self._width - 2 * self._margin)
        for chunk in lay_out(self._text, start, top, width, self.layout_font(), self._option):
            self._chunks.append(chunk)
            self._tops.append(chunk.top)

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt override
        """Re-wrap the text when the width changes."""
        super().resizeEvent(event)
        width = float(event.size().width())
        if width != self._width:
            self._width = width
            self._relayout_all()

    def changeEvent(self, event: object) -> None:  # noqa: N802 - Qt override
        """Re-lay out on font changes."""
        from PySide6.QtCore import QEvent

        super().changeEvent(event)  # type: ignore[arg-type]
        if getattr(event, "type", lambda: None)() == QEvent.Type.FontChange:
            self._relayout_all()

    # -- painting

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 - Qt override
        """Draw the lines inside the exposed rectangle (and the selection)."""
        if not self._chunks:
            return
        painter = QPainter(self)
        pal = self.palette()
        painter.setPen(self._color if self._color is not None else pal.color(QPalette.ColorRole.Text))
        origin_y = self._margin + self._top_gap
        rect = QRectF(event.rect())
        lo_y = rect.top() - origin_y
        hi_y = rect.bottom() - origin_y
        first = max(0, bisect.bisect_right(self._tops, lo_y) - 1)
        sel_lo, sel_hi = self._selection()
        fmt = None
        if sel_hi > sel_lo:
            fmt = QTextCharFormat()
            fmt.setBackground(pal.color(QPalette.ColorRole.Highlight))
            fmt.setForeground(pal.color(QPalette.ColorRole.HighlightedText))
        for chunk in self._chunks[first:]:
            if chunk.top > hi_y:
                break
            pos = QPointF(self._margin, origin_y + chunk.top)
            clip = QRectF(0.0, pos.y(), float(self.width()), chunk.height)
            painter.save()
            painter.setClipRect(clip.intersected(rect))
            selections = []
            if fmt is not None:
                end = chunk.start + chunk.chars
                a, b = max(sel_lo, chunk.start), min(sel_hi, end)
                if b > a:
                    r = QTextLayout.FormatRange()
                    r.start = chunk.to_u16(a - chunk.start)
                    r.length = chunk.to_u16(b - chunk.start) - r.start
                    r.format = fmt
                    selections.append(r)
            chunk.layout.draw(painter, pos, selections, clip.intersected(rect))
            painter.restore()
        painter.end()

    # -- selection

    def _selection(self) -> tuple[int, int]:
        if self._anchor < 0 or self._pos < 0:
            return 0, 0
        return min(self._anchor, self._pos), max(self._anchor, self._pos)

    def _index_at(self, point: QPointF) -> int:
        """The text index nearest to ``point`` (view coordinates)."""
        if not self._chunks:
            return 0
        y = point.y() - self._margin - self._top_gap
        x = point.x() - self._margin
        if y < 0:
            return 0
        i = max(0, bisect.bisect_right(self._tops, y) - 1)
        chunk = self._chunks[i]
        local = y - chunk.top
        layout = chunk.layout
        line = layout.lineAt(chunk.lines - 1)
        for n in range(chunk.lines):
            candidate = layout.lineAt(n)
            if candidate.y() + candidate.height() > local:
                line = candidate
                break
        else:
            if i == len(self._chunks) - 1:
                return len(self._text)
        return min(len(self._text), chunk.start + chunk.to_py(line.xToCursor(x)))

    def mousePressEvent(self, event: QMouseEvent) -> None:  # noqa: N802 - Qt override
        """Start a selection."""
        if event.button() == Qt.MouseButton.LeftButton:
            index = self._index_at(event.position())
            if event.modifiers() & Qt.KeyboardModifier.ShiftModifier and self._anchor >= 0:
                self._pos = index
            else:
                self._anchor = self._pos = index
            self.update()
        super().mousePressEvent(event)

    def mouseMoveEvent(self, event: QMouseEvent) -> None:  # noqa: N802 - Qt override
        """Extend the selection."""
        if event.buttons() & Qt.MouseButton.LeftButton and self._anchor >= 0:
            self._pos = self._index_at(event.position())
            self.update()

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:  # noqa: N802 - Qt override
        """Put the selection on the X11 selection clipboard."""
        text = self.selected_text()
        clipboard = QGuiApplication.clipboard()
        if text and clipboard is not None and clipboard.supportsSelection():
            clipboard.setText(text, clipboard.Mode.Selection)
        super().mouseReleaseEvent(event)

    def mouseDoubleClickEvent(self, event: QMouseEvent) -> None:  # noqa: N802 - Qt override
        """Select the word under the mouse."""
        index = self._index_at(event.position())
        text = self._text
        lo = hi = index
        while lo > 0 and (text[lo - 1].isalnum() or text[lo - 1] == "_"):
            lo -= 1
        while hi < len(text) and (text[hi].isalnum() or text[hi] == "_"):
            hi += 1
        self._anchor, self._pos = lo, hi
        self.update()

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 - Qt override
        """Ctrl+C copies the selection, Ctrl+A selects all."""
        if event.matches(QKeySequence.StandardKey.Copy):
            self._copy_selection()
        elif event.matches(QKeySequence.StandardKey.SelectAll):
            self.select_all()
        else:
            super().keyPressEvent(event)

    def focusOutEvent(self, event: QFocusEvent) -> None:  # noqa: N802 - Qt override
        """Keep the selection (like a read-only text view), just repaint."""
        super().focusOutEvent(event)
        self.update()

    def _copy_selection(self) -> None:
        text = self.selected_text()
        clipboard = QGuiApplication.clipboard()
        if text and clipboard is not None:
            clipboard.setText(text)

    def contextMenuEvent(self, event: QContextMenuEvent) -> None:  # noqa: N802 - Qt override
        """Copy, Select all, and "Copy message (Markdown)" when the owner provides it."""
        menu = QMenu(self)
        copy = menu.addAction("Copy")
        copy.setEnabled(bool(self.selected_text()))
        copy.triggered.connect(self._copy_selection)
        menu.addAction("Select All").triggered.connect(self.select_all)
        if self.copy_message is not None:
            menu.addSeparator()
            menu.addAction("Copy message (Markdown)").triggered.connect(self.copy_message)
        menu.exec(event.globalPos())
        menu.deleteLater()
