"""The import dialog (``importDialog``): an export's conversations to pick from, then the import's progress
and what it did.

It only shows and asks; ``import_flow.ImportFlow`` reads the export and imports in worker threads and
calls :meth:`ImportDialog.show_preview`, :meth:`show_progress` and :meth:`show_result`. What it holds:

* ``conversationList``: one row per conversation (title, date, messages, branches, status), each
  with a checkbox, all ticked at first; already imported ones say so (skipped unless
  ``replaceCheck`` is on). ``importFilter`` hides the rows whose title does not match;
  ``selectAllButton`` / ``selectNoneButton`` tick or clear the rows shown.
* ``importProgress`` and ``importStatus``: reading the export, importing, adding the nodes.
* ``importSummary``: what was imported, skipped and what failed, each naming the conversation.
* ``importButton`` starts the import; ``cancelImportButton`` cancels the work in progress (or closes).
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

if TYPE_CHECKING:
    from desktop.core.importers import ExportPreview, ImportReport, PreviewEntry

__all__ = ["ImportDialog", "summary_text"]

_ID_ROLE = Qt.ItemDataRole.UserRole
_SORT_ROLE = Qt.ItemDataRole.UserRole + 1
_FORMATS = {"chatgpt": "ChatGPT export", "claude": "Claude export", "chatnodes": "Chat Nodes export",
            "empty": "empty export"}
_COLUMNS = ("Conversation", "Date", "Messages", "Branches", "")
_SUMMARY_LIMIT = 200


def _plural(n: int, word: str, many: str | None = None) -> str:
    return f"{n:,} {word if n == 1 else (many or word + 's')}"


def _date(ms: int) -> str:
    if ms <= 0:
        return ""
    try:
        return _dt.datetime.fromtimestamp(ms / 1000).strftime("%Y-%m-%d")
    except (OverflowError, OSError, ValueError):
        return ""


class _Row(QTreeWidgetItem):
    """A conversation's row; sorts by the value behind each column (dates and counts as numbers)."""

    def __lt__(self, other: QTreeWidgetItem) -> bool:
        column = self.treeWidget().sortColumn() if self.treeWidget() is not None else 0
        mine, theirs = self.data(column, _SORT_ROLE), other.data(column, _SORT_ROLE)
        if isinstance(mine, (int, float)) and isinstance(theirs, (int, float)):
            return mine < theirs
        return self.text(column).casefold() < other.text(column).casefold()


def summary_text(report: ImportReport, notices: Iterable[str] = (), *, added: int | None = None) -> str:
    """What an import did, for the dialog: imported, replaced, skipped (by reason) and failed.

    Args:
        report: The import's report.
        notices: Things the import noted about the file.
        added: Nodes opened in the window, when fewer than imported (the opening was cancelled).
    """
    lines: list[str] = []
    total = sum(i.messages for i in report.imported)
    nodes = sum(len(i.node_ids) for i in report.imported)
    head = f"Imported {_plural(len(report.imported), 'conversation')} ({_plural(total, 'message')})"
    if nodes != len(report.imported):
        head += f" as {_plural(nodes, 'node')}"
    paid = " — no cost: they were paid for where they were written." if report.imported else "."
    lines.append(head + paid)
    for item in report.imported[:_SUMMARY_LIMIT]:
        branches = f", {item.branches} branches" if item.branches > 1 else ""
        lines.append(f"  + {item.title} ({_plural(item.messages, 'message')}{branches})")
    if len(report.imported) > _SUMMARY_LIMIT:
        lines.append(f"  … and {len(report.imported) - _SUMMARY_LIMIT:,} more")
    if added is not None and added < nodes:
        lines.append(f"Cancelled while adding them: {_plural(added, 'node')} of {nodes:,} "
                     "added to the window.")
    if report.replaced_node_ids:
        lines.append(f"Replaced {_plural(len(report.replaced_node_ids), 'node')} imported before.")
    unselected = sum(1 for s in report.skipped if s.reason == "not selected")
    skipped = [s for s in report.skipped if s.reason != "not selected"]
    if skipped:
        lines.append(f"Skipped {_plural(len(skipped), 'conversation')}:")
        lines.extend(f"  - {s.title} ({s.reason})" for s in skipped[:_SUMMARY_LIMIT])
    if unselected:
        lines.append(f"Left out {_plural(unselected, 'conversation')} not selected.")
    if report.problems:
        lines.append(f"Could not import {_plural(len(report.problems), 'conversation')} "
                     "(nothing of them was added):")
        lines.extend(f"  ! {p}" for p in report.problems[:_SUMMARY_LIMIT])
    lines.extend(f"Note: {n}" for n in notices)
    if report.cancelled:
        lines.append("Cancelled: the conversations listed above were imported whole; the rest were not read.")
    return "\n".join(lines)


class ImportDialog(QDialog):
    """Pick the conversations of an export to import, and follow the import (see the module docstring).

    Args:
        path: The export being read.
        parent: The main window.

    Signals:
        import_requested(list, bool): The ticked conversations' original ids and whether to replace
            those already imported.
        cancel_requested(): Stop the work in progress (reading, importing or adding nodes).
    """

    import_requested = Signal(list, bool)
    cancel_requested = Signal()

    def __init__(self, path: Path, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("importDialog")
        self.setWindowTitle("Import conversations")
        self.resize(820, 600)
        self._state = "reading"  # → picking → importing → adding → done (or done from any of them)
        self._already: set[str] = set()
        root = QVBoxLayout(self)
        root.setSpacing(8)
        self.heading = QLabel(f"Reading {path.name}…", self)
        self.heading.setObjectName("importHeading")
        self.heading.setWordWrap(True)
        self.heading.setTextFormat(Qt.TextFormat.PlainText)
        root.addWidget(self.heading)

        tools = QHBoxLayout()
        self.filter_edit = QLineEdit(self)
        self.filter_edit.setObjectName("importFilter")
        self.filter_edit.setPlaceholderText("Filter by title")
        self.filter_edit.setClearButtonEnabled(True)
        self.filter_edit.textChanged.connect(self._apply_filter)
        tools.addWidget(self.filter_edit, 1)
        self.select_all_button = QPushButton("Select all", self)
        self.select_all_button.setObjectName("selectAllButton")
        self.select_all_button.setToolTip("Tick every conversation shown")
        self.select_all_button.clicked.connect(lambda: self._tick_shown(True))
        tools.addWidget(self.select_all_button)
        self.select_none_button = QPushButton("Select none", self)
        self.select_none_button.setObjectName("selectNoneButton")
        self.select_none_button.setToolTip("Clear every conversation shown")
        self.select_none_button.clicked.connect(lambda: self._tick_shown(False))
        tools.addWidget(self.select_none_button)
        root.addLayout(tools)

        self.list = QTreeWidget(self)
        self.list.setObjectName("conversationList")
        self.list.setColumnCount(len(_COLUMNS))
        self.list.setHeaderLabels(list(_COLUMNS))
        self.list.setRootIsDecorated(False)
        self.list.setUniformRowHeights(True)
        self.list.setAlternatingRowColors(True)
        self.list.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.list.setStyleSheet("QTreeView::item { padding: 3px 0px; }")
        for column in (2, 3):
            self.list.headerItem().setTextAlignment(
                column, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        header = self.list.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for column in range(1, len(_COLUMNS)):  # sized to every row once filled, not to the filtered ones
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.Interactive)
        self.list.itemChanged.connect(self._update_count)
        root.addWidget(self.list, 1)

        self.problems = QLabel("", self)
        self.problems.setObjectName("previewProblems")
        self.problems.setWordWrap(True)
        self.problems.setTextFormat(Qt.TextFormat.PlainText)
        self.problems.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.problems.hide()
        root.addWidget(self.problems)

        self.replace_check = QCheckBox("Replace conversations already imported (their nodes are removed)",
                                       self)
        self.replace_check.setObjectName("replaceCheck")
        self.replace_check.toggled.connect(self._update_count)
        self.replace_check.hide()  # shown when the export holds conversations imported before
        root.addWidget(self.replace_check)

        self.progress = QProgressBar(self)
        self.progress.setObjectName("importProgress")
        self.progress.setRange(0, 0)  # busy until a fraction is known
        self.progress.setTextVisible(False)
        root.addWidget(self.progress)
        self.status = QLabel("", self)
        self.status.setObjectName("importStatus")
        self.status.setWordWrap(True)
        self.status.setTextFormat(Qt.TextFormat.PlainText)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        root.addWidget(self.status)
        self.summary = QPlainTextEdit(self)
        self.summary.setObjectName("importSummary")
        self.summary.setReadOnly(True)
        self.summary.hide()
        root.addWidget(self.summary, 1)

        buttons = QHBoxLayout()
        buttons.addStretch(1)
        self.cancel_button = QPushButton("Cancel", self)
        self.cancel_button.setObjectName("cancelImportButton")
        self.cancel_button.setAutoDefault(False)
        self.cancel_button.clicked.connect(self._on_cancel)
        buttons.addWidget(self.cancel_button)
        self.import_button = QPushButton("Import", self)
        self.import_button.setObjectName("importButton")
        self.import_button.setDefault(True)
        self.import_button.clicked.connect(self._on_import)
        buttons.addWidget(self.import_button)
        root.addLayout(buttons)
        self._set_picking(False)

    # -- what the flow shows ---------------------------------------------------------------------
    def show_progress(self, text: str, fraction: float | None = None) -> None:
        """Show work in progress: ``text`` and a bar (busy when ``fraction`` is None)."""
        self.progress.show()
        if fraction is None:
            self.progress.setRange(0, 0)
        else:
            self.progress.setRange(0, 1000)
            self.progress.setValue(round(1000 * max(0.0, min(1.0, fraction))))
        self.status.setText(text)

    def show_preview(self, path: Path, preview: ExportPreview) -> None:
        """List the export's conversations, all ticked; the user picks and presses Import."""
        self._already = set(preview.already_imported)
        kind = _FORMATS.get(preview.format or "", "export")
        count = len(preview.entries)
        text = f"{_plural(count, 'conversation')} in {path.name} ({kind})"
        if self._already:
            text += f"; {len(self._already):,} already imported into this project"
        self.heading.setText(text + ".")
        self.list.setUpdatesEnabled(False)
        self.list.blockSignals(True)
        try:
            self.list.setSortingEnabled(False)
            self.list.clear()
            self.list.addTopLevelItems([self._row(e) for e in preview.entries])
            self.list.header().setSortIndicator(-1, Qt.SortOrder.AscendingOrder)  # file order until a
            self.list.setSortingEnabled(True)  # header is clicked
            for column in range(1, len(_COLUMNS)):
                self.list.resizeColumnToContents(column)
        finally:
            self.list.blockSignals(False)
            self.list.setUpdatesEnabled(True)
        lines = [str(p) for p in preview.problems[:_SUMMARY_LIMIT]] + list(preview.notices)
        if preview.problems:
            lines.insert(0, f"{_plural(len(preview.problems), 'part')} of the file cannot be imported:")
        self.problems.setText("\n".join(lines))
        self.problems.setVisible(bool(lines))
        self.replace_check.setVisible(bool(self._already))
        self.progress.hide()
        if not count:
            self.status.setText("Nothing was imported: there is no conversation to import in this file.")
            self._set_picking(False)
            self._finish()
            return
        self._set_picking(True)
        self._apply_filter(self.filter_edit.text())

    def show_failure(self, text: str) -> None:
        """The export cannot be read (or the import failed as a whole): say why; nothing was imported."""
        self.progress.hide()
        self.status.setText(text)
        self.status.setProperty("failed", True)
        self._set_picking(False)
        self._finish()

    def show_result(self, text: str) -> None:
        """Show what the import did; the dialog stays open until closed."""
        self.progress.hide()
        self.status.setText("")
        self.summary.setPlainText(text)
        self.summary.show()
        for widget in (self.list, self.problems, self.filter_edit, self.select_all_button,
                       self.select_none_button, self.replace_check):
            widget.hide()
        self._finish()

    def begin_import(self) -> None:
        """The import started: the picks are frozen."""
        self._set_picking(False)
        self._state = "importing"
        self.show_progress("Importing…", 0.0)

    def begin_adding(self) -> None:
        """The conversations are imported; their nodes are being added to the window."""
        self._state = "adding"

    # -- the picks ----------------------------------------------------------------------------------
    def rows(self) -> list[QTreeWidgetItem]:
        """Every conversation's row, in the order shown."""
        items = (self.list.topLevelItem(i) for i in range(self.list.topLevelItemCount()))
        return [item for item in items if item is not None]

    def selected_ids(self) -> list[str]:
        """The original ids of the ticked conversations (hidden rows included)."""
        return [str(r.data(0, _ID_ROLE)) for r in self.rows() if r.checkState(0) == Qt.CheckState.Checked]

    def importable_count(self) -> int:
        """Ticked conversations that will be imported (already imported ones only when replacing)."""
        replace = self.replace_check.isChecked()
        return sum(1 for i in self.selected_ids() if replace or i not in self._already)

    def _row(self, entry: PreviewEntry) -> QTreeWidgetItem:
        date = _date(entry.created_at)
        row = _Row([entry.title, date, f"{entry.messages:,}", f"{entry.branches:,}", ""])
        row.setFlags(Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsUserCheckable)
        row.setCheckState(0, Qt.CheckState.Checked)
        row.setData(0, _ID_ROLE, entry.original_id)
        for column, value in ((1, entry.created_at), (2, entry.messages), (3, entry.branches)):
            row.setData(column, _SORT_ROLE, value)
        for column in (2, 3):
            row.setTextAlignment(column, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        row.setToolTip(0, f"{entry.title}\nid {entry.original_id}")
        if entry.original_id in self._already:
            row.setText(4, "already imported")
            row.setForeground(4, self.palette().brush(QPalette.ColorRole.PlaceholderText))
            row.setToolTip(4, "Already in this project: skipped unless “Replace conversations already "
                              "imported” is ticked")
        return row

    def _apply_filter(self, text: str) -> None:
        needle = text.strip().casefold()
        for row in self.rows():
            row.setHidden(bool(needle) and needle not in row.text(0).casefold())
        self._update_count()

    def _tick_shown(self, ticked: bool) -> None:
        state = Qt.CheckState.Checked if ticked else Qt.CheckState.Unchecked
        self.list.blockSignals(True)
        try:
            for row in self.rows():
                if not row.isHidden():
                    row.setCheckState(0, state)
        finally:
            self.list.blockSignals(False)
        self._update_count()

    def _update_count(self, *_args: object) -> None:
        if self._state != "picking":
            return
        n = self.importable_count()
        self.import_button.setText(f"Import {_plural(n, 'conversation')}" if n else "Import")
        self.import_button.setEnabled(n > 0)
        shown = sum(1 for r in self.rows() if not r.isHidden())
        total = self.list.topLevelItemCount()
        ticked = len(self.selected_ids())
        parts = [f"{ticked:,} of {total:,} selected"]
        if shown != total:
            parts.append(f"{shown:,} shown")
        skipped = ticked - n
        if skipped:
            parts.append(f"{skipped:,} already imported will be skipped")
        self.status.setText(" · ".join(parts))

    # -- states ---------------------------------------------------------------------------------------
    def _set_picking(self, on: bool) -> None:
        if on:
            self._state = "picking"
        for widget in (self.filter_edit, self.select_all_button, self.select_none_button, self.list,
                       self.replace_check):
            widget.setEnabled(on)
        self.import_button.setEnabled(on)

    def _finish(self) -> None:
        self._state = "done"
        self.import_button.hide()
        self.cancel_button.setText("Close")
        self.cancel_button.setEnabled(True)
        self.cancel_button.setDefault(True)

    @property
    def state(self) -> str:
        """``reading``, ``picking``, ``importing``, ``adding`` or ``done``."""
        return self._state

    def _on_import(self) -> None:
        if self._state != "picking" or not self.importable_count():
            return
        self.import_requested.emit(self.selected_ids(), self.replace_check.isChecked())

    def _on_cancel(self) -> None:
        if self._state not in ("importing", "adding"):
            self.reject()
            return
        self.cancel_button.setEnabled(False)
        self.status.setText("Cancelling…")
        self.cancel_requested.emit()

    def reject(self) -> None:
        """Esc or the title bar: while importing, cancel (what was imported so far is kept and shown);
        otherwise close (a preview still being read is cancelled)."""
        if self._state in ("importing", "adding"):
            self._on_cancel()
            return
        if self._state == "reading":
            self.cancel_requested.emit()
        super().reject()
