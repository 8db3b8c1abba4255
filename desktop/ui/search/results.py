"""The search results: a list model of ``SearchHit`` s and the delegate that paints one row.

A row shows the node title, the project, the date, the role and the model on one line, and the
snippet under it with the matched words highlighted. The snippet is plain text with spans (model text
is untrusted: never rendered as markup); the delegate draws it with a ``QTextLayout`` and format
ranges, so no HTML is ever built from it.
"""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any

from PySide6.QtCore import QAbstractListModel, QModelIndex, QPersistentModelIndex, QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFont, QFontMetrics, QPainter, QPalette, QTextCharFormat, QTextLayout
from PySide6.QtWidgets import QStyle, QStyledItemDelegate, QStyleOptionViewItem, QWidget

from desktop.core.search import SearchHit

__all__ = ["HIT_ROLE", "ResultsModel", "ResultDelegate", "header_text"]

log = logging.getLogger(__name__)

HIT_ROLE = Qt.ItemDataRole.UserRole + 1
"""The model's role answering the row's ``SearchHit``."""
_PAD = 6
_SNIPPET_LINES = 2
_Index = QModelIndex | QPersistentModelIndex


def header_text(hit: SearchHit) -> str:
    """The row's first line: title · project · date · role · model (· where it is)."""
    when = datetime.fromtimestamp(hit.ts / 1000).strftime("%Y-%m-%d %H:%M") if hit.ts else ""
    parts = [hit.node_title or "Untitled", hit.project_name, when, hit.role]
    if hit.model:
        parts.append(hit.model)
    if hit.archived:
        parts.append("history archive")
    elif hit.version_path:
        parts.append("another version")
    return " · ".join(p for p in parts if p)


class ResultsModel(QAbstractListModel):
    """The hits of the latest query, in its order (display role: header and snippet as text)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._hits: tuple[SearchHit, ...] = ()

    def set_hits(self, hits: tuple[SearchHit, ...]) -> None:
        """Show ``hits`` instead of the current rows."""
        self.beginResetModel()
        self._hits = hits
        self.endResetModel()

    def hit(self, row: int) -> SearchHit | None:
        """The hit of ``row``, or None."""
        return self._hits[row] if 0 <= row < len(self._hits) else None

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: N802, B008 - Qt API
        return 0 if parent.isValid() else len(self._hits)

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        hit = self.hit(index.row()) if index.isValid() else None
        if hit is None:
            return None
        if role == HIT_ROLE:
            return hit
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.AccessibleTextRole):
            return f"{header_text(hit)}\n{hit.snippet.text}"
        if role == Qt.ItemDataRole.ToolTipRole:
            return str(hit.project)
        return None


class ResultDelegate(QStyledItemDelegate):
    """Paints a hit: a bold header line, then up to two lines of snippet with the matches marked."""

    def sizeHint(self, option: QStyleOptionViewItem, index: _Index) -> QSize:  # noqa: N802 - Qt API
        metrics = QFontMetrics(option.font)
        return QSize(200, metrics.height() * (1 + _SNIPPET_LINES) + 3 * _PAD)

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: _Index) -> None:
        hit = index.data(HIT_ROLE)
        if not isinstance(hit, SearchHit):
            return
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        opt.text = ""
        widget = opt.widget
        style = widget.style() if widget is not None else None
        if style is not None:
            style.drawControl(QStyle.ControlElement.CE_ItemViewItem, opt, painter, widget)
        rect = opt.rect
        palette: QPalette = opt.palette
        selected = bool(opt.state & QStyle.StateFlag.State_Selected)
        text_role = QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text
        painter.save()
        font = QFont(opt.font)
        bold = QFont(font)
        bold.setBold(True)
        metrics = QFontMetrics(bold)
        painter.setFont(bold)
        painter.setPen(palette.color(text_role))
        head = metrics.elidedText(header_text(hit), Qt.TextElideMode.ElideRight, rect.width() - 2 * _PAD)
        painter.drawText(rect.left() + _PAD, rect.top() + _PAD + metrics.ascent(), head)
        box = QRectF(rect.left() + _PAD, rect.top() + 2 * _PAD + metrics.height(),
                     rect.width() - 2 * _PAD, metrics.height() * _SNIPPET_LINES)
        self._paint_snippet(painter, hit, font, box, palette, selected)
        painter.restore()

    @staticmethod
    def _paint_snippet(painter: QPainter, hit: SearchHit, font: QFont, box: QRectF, palette: QPalette,
                       selected: bool) -> None:
        layout = QTextLayout(hit.snippet.text, font)
        marks = []
        for start, end in hit.snippet.spans:
            fmt = QTextCharFormat()
            fmt.setBackground(QColor(255, 214, 64, 200))
            fmt.setForeground(QColor(20, 20, 20))
            fmt.setFontWeight(QFont.Weight.DemiBold)
            rng = QTextLayout.FormatRange()
            rng.start, rng.length, rng.format = start, end - start, fmt
            marks.append(rng)
        layout.setFormats(marks)
        layout.beginLayout()
        y = 0.0
        lines = 0
        while lines < _SNIPPET_LINES:
            line = layout.createLine()
            if not line.isValid():
                break
            line.setLineWidth(box.width())
            line.setPosition(QPointF(0, y))
            y += line.height()
            lines += 1
        layout.endLayout()
        role = QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.PlaceholderText
        painter.setPen(palette.color(role))
        painter.setClipRect(box)
        layout.draw(painter, box.topLeft())
