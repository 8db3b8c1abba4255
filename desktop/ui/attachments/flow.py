"""``FlowLayout``: widgets left to right, wrapping onto new lines (chips and thumbnails)."""

from __future__ import annotations

from PySide6.QtCore import QMargins, QPoint, QRect, QSize, Qt
from PySide6.QtWidgets import QLayout, QLayoutItem, QWidget

__all__ = ["FlowLayout"]


class FlowLayout(QLayout):
    """Lays its items out in rows that wrap at the available width (height for width).

    Args:
        parent: The widget it lays out.
        spacing: Pixels between items, across and down.
        align_right: Rows end at the right edge and items sit on the row's bottom line (a user
            message's attachments, right above its bubble).
    """

    def __init__(self, parent: QWidget | None = None, spacing: int = 6, *, align_right: bool = False) -> None:
        super().__init__(parent)
        self._items: list[QLayoutItem] = []
        self._gap = spacing
        self._right = align_right
        self.setContentsMargins(0, 0, 0, 0)

    def addItem(self, item: QLayoutItem) -> None:  # noqa: N802 - Qt override
        """Append ``item``."""
        self._items.append(item)

    def count(self) -> int:
        """How many items."""
        return len(self._items)

    def itemAt(self, index: int) -> QLayoutItem | None:  # noqa: N802 - Qt override
        """The item at ``index``, or None."""
        return self._items[index] if 0 <= index < len(self._items) else None

    def takeAt(self, index: int) -> QLayoutItem | None:  # noqa: N802 - Qt override
        """Remove and return the item at ``index`` (None when out of range)."""
        return self._items.pop(index) if 0 <= index < len(self._items) else None

    def expandingDirections(self) -> Qt.Orientation:  # noqa: N802 - Qt override
        """Neither: the rows take what their items need."""
        return Qt.Orientation(0)

    def hasHeightForWidth(self) -> bool:  # noqa: N802 - Qt override
        """True: the height depends on where the rows wrap."""
        return True

    def heightForWidth(self, width: int) -> int:  # noqa: N802 - Qt override
        """The height the items need at ``width``."""
        return self._place(QRect(0, 0, width, 0), apply=False)

    def setGeometry(self, rect: QRect) -> None:  # noqa: N802 - Qt override
        """Place the items inside ``rect``."""
        super().setGeometry(rect)
        self._place(rect, apply=True)

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt override
        """Every item on one row."""
        width = sum(i.sizeHint().width() for i in self._items) + self._gap * max(0, len(self._items) - 1)
        height = max((i.sizeHint().height() for i in self._items), default=0)
        m = self.contentsMargins()
        return QSize(width + m.left() + m.right(), height + m.top() + m.bottom())

    def minimumSize(self) -> QSize:  # noqa: N802 - Qt override
        """The widest item."""
        size = QSize()
        for item in self._items:
            size = size.expandedTo(item.minimumSize())
        m: QMargins = self.contentsMargins()
        return size + QSize(m.left() + m.right(), m.top() + m.bottom())

    def _place(self, rect: QRect, *, apply: bool) -> int:
        m = self.contentsMargins()
        area = rect.adjusted(m.left(), m.top(), -m.right(), -m.bottom())
        rows: list[list[tuple[QLayoutItem, QSize]]] = [[]]
        used = 0
        for item in self._items:
            widget = item.widget()
            if widget is not None and widget.isHidden():
                continue
            hint = item.sizeHint()
            need = hint.width() if not rows[-1] else used + self._gap + hint.width()
            if rows[-1] and need > area.width():
                rows.append([])
                need = hint.width()
            rows[-1].append((item, hint))
            used = need
        y = area.y()
        for row in rows:
            if not row:
                continue
            line = max(h.height() for _, h in row)
            width = sum(h.width() for _, h in row) + self._gap * (len(row) - 1)
            x = area.x() + (max(0, area.width() - width) if self._right else 0)
            for item, hint in row:
                if apply:
                    top = y + (line - hint.height() if self._right else 0)
                    item.setGeometry(QRect(QPoint(x, top), hint))
                x += hint.width() + self._gap
            y += line + self._gap
        return max(0, y - self._gap - area.y()) + m.top() + m.bottom() if any(rows) else m.top() + m.bottom()
