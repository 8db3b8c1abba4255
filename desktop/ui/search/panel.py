"""The search panel (Ctrl+Shift+F, Edit → Find in all chats): type, filter, pick a hit.

A dock on the window's right (object name ``searchPanel``): the input (``searchInput``), a row of
filters (``searchScope``: this project / all projects, ``searchRole``, ``searchModel``,
``searchDate``, ``searchOrder``: newest first / best match), a status line (``searchStatus``: the
index being built, unavailable and why, the number of hits) and the results (``searchResults``, a
``QListView`` over ``results.ResultsModel`` painted by ``results.ResultDelegate``).

Typing asks again after ``DEBOUNCE_MS`` of quiet (``query_changed``: the owner runs it off the GUI
thread and answers ``show_results``). Enter or a double-click on a hit emits ``activated``; Enter in
the input activates the selected hit (the first when none is). The query text goes to the core as
typed: the core's parser treats everything but words, "phrases" and prefix* as text, so no input
raises.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QEvent, QModelIndex, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDockWidget,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListView,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from desktop.core.search import IndexStatus, SearchHit, SearchQuery, SearchResults
from desktop.ui.search.results import ResultDelegate, ResultsModel

__all__ = ["DEBOUNCE_MS", "SearchPanel", "DATE_RANGES"]

log = logging.getLogger(__name__)

DEBOUNCE_MS = 30
"""Quiet time after a keystroke before the query runs (a newer query interrupts a running one)."""
_DAY_MS = 86_400_000
DATE_RANGES: tuple[tuple[str, int | None], ...] = (
    ("Any time", None), ("Today", 1), ("Last 7 days", 7), ("Last 30 days", 30), ("Last year", 365))
"""The date filter's choices: label and days back (None: no limit)."""
_ROLES = (("Any role", ()), ("Your messages", ("user",)), ("Answers", ("assistant",)),
          ("Tools", ("tool",)), ("System", ("system",)))


def _combo(parent: QWidget, name: str, tip: str, items: list[str]) -> QComboBox:
    box = QComboBox(parent)
    box.setObjectName(name)
    box.setToolTip(tip)
    box.addItems(items)
    return box


class SearchPanel(QDockWidget):
    """The window's search panel.

    Args:
        parent: The main window.
        project_folder: Returns the open project's folder (the "this project" filter), or None.

    Signals:
        query_changed(object): Run this ``SearchQuery`` (after the debounce; the empty text clears).
        activated(object): The user picked this ``SearchHit`` (Enter or double-click).
    """

    query_changed = Signal(object)
    activated = Signal(object)

    def __init__(self, parent: QWidget, project_folder: Callable[[], Path | None]) -> None:
        super().__init__("Find in all chats", parent)
        self.setObjectName("searchPanel")
        self.setAllowedAreas(Qt.DockWidgetArea.LeftDockWidgetArea | Qt.DockWidgetArea.RightDockWidgetArea)
        self._project_folder = project_folder
        body = QWidget(self)
        box = QVBoxLayout(body)
        box.setContentsMargins(8, 6, 8, 6)
        self.input = QLineEdit(body)
        self.input.setObjectName("searchInput")
        self.input.setPlaceholderText('Words, "a phrase", prefix*')
        self.input.setClearButtonEnabled(True)
        self.input.setAccessibleName("Search all chats")
        box.addWidget(self.input)
        filters = QHBoxLayout()
        filters.setSpacing(4)
        self.scope = _combo(body, "searchScope", "Where to search", ["All projects", "This project"])
        self.role = _combo(body, "searchRole", "Whose messages", [label for label, _ in _ROLES])
        self.model_box = _combo(body, "searchModel", "Written by this model", ["Any model"])
        self.date = _combo(body, "searchDate", "When", [label for label, _ in DATE_RANGES])
        self.order = QToolButton(body)
        self.order.setObjectName("searchOrder")
        self.order.setCheckable(True)
        self.order.setText("Newest first")
        self.order.setToolTip("Newest first, or best match first")
        self.order.toggled.connect(lambda best: self.order.setText("Best match" if best else "Newest first"))
        for w in (self.scope, self.role, self.model_box, self.date):
            filters.addWidget(w, 1)
            w.currentIndexChanged.connect(self._run_now)
        filters.addWidget(self.order)
        self.order.toggled.connect(self._run_now)
        box.addLayout(filters)
        self.status = QLabel(body)
        self.status.setObjectName("searchStatus")
        self.status.setWordWrap(True)
        box.addWidget(self.status)
        self.model = ResultsModel(self)
        self.results = QListView(body)
        self.results.setObjectName("searchResults")
        self.results.setModel(self.model)
        self.results.setItemDelegate(ResultDelegate(self.results))
        self.results.setUniformItemSizes(True)
        self.results.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.results.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.results.activated.connect(self._on_activated)  # Enter / double-click (per the style)
        self.results.doubleClicked.connect(self._on_double_click)
        box.addWidget(self.results, 1)
        self.setWidget(body)
        self._debounce = QTimer(self)
        self._debounce.setSingleShot(True)
        self._debounce.setInterval(DEBOUNCE_MS)
        self._debounce.timeout.connect(self._run_now)
        self.input.textEdited.connect(self._on_typed)
        self.input.installEventFilter(self)
        self.results.installEventFilter(self)
        self._index_status = IndexStatus("starting")
        self._last_activation = 0.0
        self._activate_first = False  # Enter came before the answer to the text typed: open its first hit

    # -- the owner's side

    def open_panel(self) -> None:
        """Show the panel and put the cursor in the input, its text selected."""
        self.show()
        self.raise_()
        self.input.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.input.selectAll()

    def set_models(self, models: list[str]) -> None:
        """Offer these models in the model filter (keeps the current choice when still offered)."""
        current = self.model_box.currentText()
        self.model_box.blockSignals(True)
        self.model_box.clear()
        self.model_box.addItems(["Any model", *sorted(models)])
        found = self.model_box.findText(current)
        self.model_box.setCurrentIndex(max(found, 0))
        self.model_box.blockSignals(False)

    def set_index_status(self, status: IndexStatus) -> None:
        """Show the index's state (building, unavailable and why)."""
        self._index_status = status
        self.status.setText(status.text)

    def show_results(self, results: SearchResults) -> None:
        """Show the hits of ``results`` (ignored unless it answers the current text)."""
        if results.query.text.strip() != self.input.text().strip():
            return
        self.model.set_hits(results.hits)
        if results.hits:
            self.results.setCurrentIndex(self.model.index(0, 0))
            if self._activate_first:
                self._activate_first = False
                self._on_activated(self.model.index(0, 0))
        self._index_status = results.status
        count = f"{len(results.hits)}{'+' if results.more else ''} found"
        note = results.status.text
        self.status.setText(f"{count}. {note}" if note else count)

    def current_query(self) -> SearchQuery:
        """The query the input and the filters describe now."""
        scope: tuple[Path, ...] = ()
        folder = self._project_folder()
        if self.scope.currentIndex() == 1 and folder is not None:
            scope = (folder,)
        roles = _ROLES[max(self.role.currentIndex(), 0)][1]
        models = (self.model_box.currentText(),) if self.model_box.currentIndex() > 0 else ()
        days = DATE_RANGES[max(self.date.currentIndex(), 0)][1]
        since = int(time.time() * 1000) - days * _DAY_MS if days is not None else None
        return SearchQuery(self.input.text(), projects=scope, roles=roles, models=models, since_ms=since,
                           order="best" if self.order.isChecked() else "newest", as_you_type=True)

    # -- internals

    def _on_typed(self, _text: str) -> None:
        self._activate_first = False
        self._debounce.start()

    def _run_now(self) -> None:
        self._debounce.stop()
        query = self.current_query()
        if not query.text.strip():
            self.model.set_hits(())
            self.status.setText(self._index_status.text)
            return
        self.query_changed.emit(query)

    def _on_double_click(self, index: QModelIndex) -> None:
        self._on_activated(index)

    def _on_activated(self, index: QModelIndex) -> None:
        now = time.monotonic()
        if now - self._last_activation < 0.3:  # activated and doubleClicked both fire on one double-click
            return
        self._last_activation = now
        hit = self.model.hit(index.row())
        if isinstance(hit, SearchHit):
            self.activated.emit(hit)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt API
        if event.type() == QEvent.Type.KeyPress and isinstance(event, QKeyEvent):
            key = event.key()
            if watched is self.input and key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
                if self._debounce.isActive():  # the rows shown answer an older text
                    self._activate_first = True
                    self._run_now()
                    return True
                index = self.results.currentIndex()
                if not index.isValid() and self.model.rowCount() > 0:
                    index = self.model.index(0, 0)
                if index.isValid():
                    self._on_activated(index)
                return True
            if watched is self.input and key in (Qt.Key.Key_Down, Qt.Key.Key_Up) and self.model.rowCount():
                self.results.setFocus()
                return False
            if key == Qt.Key.Key_Escape:
                self.hide()
                return True
        return super().eventFilter(watched, event)
