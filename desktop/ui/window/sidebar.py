"""The sidebar: the project's nodes (click to focus one), its recently closed nodes (Reopen, Delete…)
and its imported conversations not opened yet (click to open one).

:class:`Sidebar` is a dock on the window's left (object name ``sidebar``, toggled by View → Sidebar,
Ctrl+B). It only shows rows the window gives it (:class:`SidebarRow`, built by :func:`node_row` and
:func:`closed_row`) and reports what the user picked through signals; the window does the rest.
Titles and model names are untrusted text: rows draw them as plain text, invisible characters made
visible.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QSize, Qt, Signal
from PySide6.QtGui import QFont, QFontMetrics, QPainter, QPalette, QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QDockWidget,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QVBoxLayout,
    QWidget,
)

if TYPE_CHECKING:
    from desktop.core.store import NodeState
    from desktop.ui.node.chat_node import ChatNodeWidget

log = logging.getLogger(__name__)

__all__ = ["Sidebar", "SidebarRow", "ago", "closed_row", "imported_row", "node_row"]

_ID_ROLE = Qt.ItemDataRole.UserRole
_DETAIL_ROLE = Qt.ItemDataRole.UserRole + 1
_PAD = 4
_TITLE_CHARS = 80


@dataclass(frozen=True, slots=True)
class SidebarRow:
    """One row: a node's id, its title and a line of details (plain text; shown escaped)."""

    node_id: str
    title: str
    detail: str
    tooltip: str = ""


def ago(ts_ms: int | None, now_ms: int | None = None) -> str:
    """``ts_ms`` (epoch ms) relative to now: "just now", "5 min ago", "3 h ago", "2 days ago", "never"."""
    if not ts_ms:
        return "no messages yet"
    now = int(time.time() * 1000) if now_ms is None else now_ms
    seconds = max(0, (now - ts_ms) // 1000)
    if seconds < 60:
        return "just now"
    if seconds < 3600:
        return f"{seconds // 60} min ago"
    if seconds < 86_400:
        return f"{seconds // 3600} h ago"
    days = seconds // 86_400
    return "yesterday" if days == 1 else f"{days} days ago"


def _visible(text: str) -> str:
    from desktop.core.visible import visible_prefix  # start-up: the core loads after the first paint

    shown, cut = visible_prefix(" ".join(text.split()), _TITLE_CHARS)
    return shown + ("…" if cut else "")


def node_row(node: ChatNodeWidget, now_ms: int | None = None) -> SidebarRow:
    """The row of an open node: title; model, last activity and cost."""
    from desktop.core.chat.cost import format_cost

    messages = node.conversation.messages
    last = messages[-1].ts if messages else None
    model = node.model or node.model_choice.default_model() or "no model"
    cost = format_cost(node.cost())
    detail = f"{_visible(model)} · {ago(last, now_ms)} · {cost}"
    return SidebarRow(node.node_id, _visible(node.title), detail,
                      f"{len(messages)} message{'s' if len(messages) != 1 else ''}; click to go to it")


def imported_row(state: NodeState, now_ms: int | None = None) -> SidebarRow:
    """The row of an imported conversation not opened yet: title; when it was last active, how many
    messages."""
    messages = state.conversation.messages
    count = len(messages)
    last = messages[-1].ts if messages else None
    detail = f"{ago(last, now_ms)} · {count} message{'s' if count != 1 else ''}"
    return SidebarRow(state.id, _visible(state.title), detail, "Click to open it")


def closed_row(state: NodeState, closed_at: int | None, now_ms: int | None = None,
               default_model: str | None = None) -> SidebarRow:
    """The row of a closed node: title; model, when it was closed, how many messages.

    ``default_model`` is the model the node's provider would use when it picked none (as an open
    node's row names it); "no model" when that is unknown too.
    """
    count = len(state.conversation.messages)
    model = _visible(state.model or default_model or "no model")
    detail = f"{model} · closed {ago(closed_at, now_ms)} · {count} message{'s' if count != 1 else ''}"
    return SidebarRow(state.id, _visible(state.title), detail, "Double-click or Reopen to bring it back")


class _RowDelegate(QStyledItemDelegate):
    """Paints a row as two lines: the title in bold, the details below it, smaller and muted."""

    def _fonts(self, option: QStyleOptionViewItem) -> tuple[QFont, QFont]:
        title = QFont(option.font)
        title.setBold(True)
        detail = QFont(option.font)
        detail.setPointSizeF(max(7.0, option.font.pointSizeF() * 0.9))
        return title, detail

    def sizeHint(self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> QSize:  # noqa: N802
        title, detail = self._fonts(option)
        return QSize(0, QFontMetrics(title).height() + QFontMetrics(detail).height() + 2 * _PAD + 2)

    def paint(self, painter: QPainter, option: QStyleOptionViewItem,
              index: QModelIndex | QPersistentModelIndex) -> None:
        self.initStyleOption(option, index)
        widget = option.widget
        style = widget.style() if widget is not None else QApplication.style()
        text, option.text = option.text, ""
        style.drawControl(QStyle.ControlElement.CE_ItemViewItem, option, painter, widget)
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        palette = option.palette
        title_font, detail_font = self._fonts(option)
        rect = option.rect.adjusted(_PAD + 2, _PAD, -_PAD - 2, -_PAD)
        painter.save()
        painter.setFont(title_font)
        role = QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text
        painter.setPen(palette.color(role))
        metrics = QFontMetrics(title_font)
        painter.drawText(rect.x(), rect.y() + metrics.ascent(),
                         metrics.elidedText(text, Qt.TextElideMode.ElideRight, rect.width()))
        detail = index.data(_DETAIL_ROLE)
        painter.setFont(detail_font)
        if not selected:
            painter.setPen(palette.color(QPalette.ColorRole.PlaceholderText))
        small = QFontMetrics(detail_font)
        painter.drawText(rect.x(), rect.y() + metrics.height() + 1 + small.ascent(),
                         small.elidedText(str(detail or ""), Qt.TextElideMode.ElideRight, rect.width()))
        painter.restore()


class _RowList(QListWidget):
    """A list of :class:`SidebarRow` (two lines each)."""

    def __init__(self, name: str, parent: QWidget) -> None:
        super().__init__(parent)
        self.setObjectName(name)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setItemDelegate(_RowDelegate(self))

    def show_rows(self, rows: Sequence[SidebarRow], current: str | None = None) -> None:
        selected = current if current is not None else self.current_id()
        self.blockSignals(True)
        try:
            self.clear()
            for row in rows:
                item = QListWidgetItem(row.title, self)
                item.setData(_ID_ROLE, row.node_id)
                item.setData(_DETAIL_ROLE, row.detail)
                item.setToolTip(f"{row.title}\n{row.detail}\n{row.tooltip}".strip())
                item.setData(Qt.ItemDataRole.AccessibleTextRole, f"{row.title}, {row.detail}")
                if row.node_id == selected:
                    self.setCurrentItem(item)
        finally:
            self.blockSignals(False)

    def current_id(self) -> str | None:
        item = self.currentItem()
        value = item.data(_ID_ROLE) if item is not None and item.isSelected() else None
        return value if isinstance(value, str) else None

    def item_of(self, node_id: str) -> QListWidgetItem | None:
        """The item of ``node_id`` (for tests and keyboard navigation)."""
        for i in range(self.count()):
            item = self.item(i)
            if item.data(_ID_ROLE) == node_id:
                return item
        return None


class Sidebar(QDockWidget):
    """The nodes and the recently closed nodes of the open project (see the module doc).

    Children (object names): ``sidebarNodes`` (the open nodes), ``sidebarClosed`` (the closed ones),
    ``sidebarReopenButton``, ``sidebarDeleteButton``, ``sidebarClosedEmpty`` (shown when none),
    ``sidebarImported`` (imported conversations not opened yet; one click opens one) under
    ``sidebarImportedHeading``.

    Signals:
        focus_requested(str): The user clicked an open node (its id).
        reopen_requested(str): Reopen the closed node with this id.
        delete_requested(str): Delete the closed node with this id (after the window asks).
        shown(): The sidebar became visible (its rows should be brought up to date).
    """

    focus_requested = Signal(str)
    reopen_requested = Signal(str)
    delete_requested = Signal(str)
    shown = Signal()

    def __init__(self, parent: QWidget) -> None:
        super().__init__("Nodes", parent)
        self.setObjectName("sidebar")
        self.setFeatures(QDockWidget.DockWidgetFeature.DockWidgetClosable)
        self.setAllowedAreas(Qt.DockWidgetArea.LeftDockWidgetArea | Qt.DockWidgetArea.RightDockWidgetArea)
        body = QWidget(self)
        layout = QVBoxLayout(body)
        layout.setContentsMargins(6, 4, 6, 6)
        layout.setSpacing(4)
        self.nodes = _RowList("sidebarNodes", body)
        self.nodes.itemClicked.connect(self._on_node_clicked)
        self.nodes.itemActivated.connect(self._on_node_clicked)
        layout.addWidget(self.nodes, 3)
        heading = QLabel("Recently closed", body)
        heading.setObjectName("sidebarClosedHeading")
        heading.setStyleSheet("font-weight: 600; padding-top: 6px;")
        layout.addWidget(heading)
        self.closed = _RowList("sidebarClosed", body)
        self.closed.itemSelectionChanged.connect(self._update_buttons)
        self.closed.itemDoubleClicked.connect(lambda _item: self._reopen())
        self.closed.itemActivated.connect(lambda _item: self._reopen())
        layout.addWidget(self.closed, 2)
        self.closed_empty = QLabel("Closed nodes wait here; reopen one with Ctrl+Shift+T.", body)
        self.closed_empty.setObjectName("sidebarClosedEmpty")
        self.closed_empty.setWordWrap(True)
        self.closed_empty.setEnabled(False)
        layout.addWidget(self.closed_empty)
        buttons = QHBoxLayout()
        self.reopen_button = QPushButton("Reopen", body)
        self.reopen_button.setObjectName("sidebarReopenButton")
        self.reopen_button.setToolTip("Open the selected node again, where it was")
        self.reopen_button.clicked.connect(self._reopen)
        self.delete_button = QPushButton("Delete…", body)
        self.delete_button.setObjectName("sidebarDeleteButton")
        self.delete_button.setToolTip("Delete the selected node and its history for good (asks first)")
        self.delete_button.clicked.connect(self._delete)
        buttons.addWidget(self.reopen_button)
        buttons.addWidget(self.delete_button)
        buttons.addStretch(1)
        layout.addLayout(buttons)
        self.imported_heading = QLabel("Imported", body)
        self.imported_heading.setObjectName("sidebarImportedHeading")
        self.imported_heading.setStyleSheet("font-weight: 600; padding-top: 6px;")
        layout.addWidget(self.imported_heading)
        self.imported = _RowList("sidebarImported", body)
        self.imported.itemClicked.connect(self._on_imported_clicked)
        self.imported.itemActivated.connect(self._on_imported_clicked)
        layout.addWidget(self.imported, 3)
        self.setWidget(body)
        self.setMinimumWidth(220)
        self._update_buttons()

    def show_rows(self, nodes: Sequence[SidebarRow], closed: Sequence[SidebarRow],
                  current: str | None = None, imported: Sequence[SidebarRow] = ()) -> None:
        """Show these rows (``current``: the active node, selected in the list; ``imported``: the
        imported conversations not opened yet)."""
        self.nodes.show_rows(nodes, current)
        self.closed.show_rows(closed)
        self.closed.setVisible(bool(closed))
        self.imported.show_rows(imported)
        self.imported.setVisible(bool(imported))
        self.imported_heading.setVisible(bool(imported))
        self.imported_heading.setText(f"Imported ({len(imported):,})")
        self.closed_empty.setVisible(not closed)
        self._update_buttons()

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 (Qt API)
        super().showEvent(event)
        self.shown.emit()

    def _on_node_clicked(self, item: QListWidgetItem) -> None:
        node_id = item.data(_ID_ROLE)
        if isinstance(node_id, str):
            self.focus_requested.emit(node_id)

    def _on_imported_clicked(self, item: QListWidgetItem) -> None:
        node_id = item.data(_ID_ROLE)
        if isinstance(node_id, str):
            self.reopen_requested.emit(node_id)

    def _update_buttons(self) -> None:
        selected = self.closed.current_id() is not None
        self.reopen_button.setEnabled(selected)
        self.delete_button.setEnabled(selected)
        self.reopen_button.setVisible(self.closed.count() > 0)
        self.delete_button.setVisible(self.closed.count() > 0)

    def _reopen(self) -> None:
        node_id = self.closed.current_id()
        if node_id is not None:
            self.reopen_requested.emit(node_id)

    def _delete(self) -> None:
        node_id = self.closed.current_id()
        if node_id is not None:
            self.delete_requested.emit(node_id)
