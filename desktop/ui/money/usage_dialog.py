"""The usage dashboard (View → Usage…): totals, spend per day, top nodes and models, CSV export.

Everything is computed by ``desktop.core.usage`` from the ledger file; this dialog only shows it.
The ledger is read when the dialog opens and on "Refresh", on a worker thread (the first read after an
upgrade builds the ledger's index: seconds on years of history), with "Loading…" meanwhile; the
stacking switch only restacks. Export CSV streams the ledger on a worker thread too. Answers of the
offline demo are not in the ledger, and the dialog says so.

Object names (tests and accessibility): the dialog ``usageDialog``; ``monthTotal``, ``weekTotal``,
``todayTotal`` (the amounts) and ``monthDetail``, ``weekDetail``, ``todayDetail`` (responses and
unpriced counts); ``unpricedLabel``; ``savingsLabel``; ``demoNote``; ``groupByCombo``; ``usageChart``;
``topNodesTable``; ``topModelsTable``; ``exportCsvButton``; ``refreshButton``; ``usageStatus``.
"""

from __future__ import annotations

import datetime as _dt
import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from desktop.core.chat.cost import ConversationCost, format_cost
from desktop.core.usage import (
    GROUP_BYS,
    PERIODS,
    CsvExport,
    GroupBy,
    LedgerScan,
    Ranked,
    Totals,
    UsageLedger,
    UsageSummary,
    local_now,
    summarize,
    summary_window,
    write_csv,
)
from desktop.ui.lifetime import Outcome, run_in_thread

from .usage_chart import UsageChart

log = logging.getLogger(__name__)

__all__ = ["UsageDialog", "format_usd", "format_total", "DAYS"]

DAYS = 30
DEMO_NOTE = "Offline demo answers are not recorded here (the demo costs nothing)."
_PERIOD_TITLES = {"month": "This month", "week": "This week", "today": "Today"}
_GROUP_TITLES = {"model": "Model", "provider": "Provider", "project": "Project"}


def format_usd(usd: float) -> str:
    """An amount: four decimals under $1 (like the cost chips: ``$0.0125``), else cents (``$12.34``)."""
    if abs(usd) < 1:
        return format_cost(ConversationCost(usd, False, 0))
    return f"${usd:,.2f}"


def format_total(totals: Totals) -> str:
    """A period's amount, ``≥ $x`` when some responses had no price."""
    text = format_usd(totals.usd)
    return f"≥ {text}" if totals.unpriced else text


_W = TypeVar("_W", bound=QWidget)


def _named(widget: _W, name: str) -> _W:
    widget.setObjectName(name)
    return widget


def _plural(count: int, word: str) -> str:
    return f"{count:,} {word}{'' if count == 1 else 's'}"


def _tokens(count: int) -> str:
    if count >= 1_000_000:
        return f"{count / 1_000_000:.1f}M"
    if count >= 1_000:
        return f"{count / 1_000:.1f}k"
    return str(count)


class UsageDialog(QDialog):
    """The dashboard over one ledger file.

    Args:
        ledger_path: The ledger (``<config dir>/usage.jsonl``); a missing file shows zeros.
        clock: Returns "now" (local time); tests pass a fixed one.
        parent: Parent widget.

    Signals:
        loaded(): the ledger was read (on the worker thread) and the figures are shown.
        exported(): an export finished (the status line says how it went).
    """

    loaded = Signal()
    exported = Signal()

    def __init__(
        self,
        ledger_path: Path,
        *,
        clock: Callable[[], _dt.datetime] = local_now,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("usageDialog")
        self.setWindowTitle("Usage")
        self.resize(900, 720)
        self._ledger = UsageLedger(Path(ledger_path))
        self._clock = clock
        self._summary: UsageSummary | None = None
        self._scan = LedgerScan([])
        self._now = clock()
        self._busy = False  # the worker is reading or exporting the ledger (it is not shared meanwhile)
        self._again = False  # a refresh asked for while busy
        self.amount_labels: dict[str, QLabel] = {}
        self.detail_labels: dict[str, QLabel] = {}

        layout = QVBoxLayout(self)
        layout.setSpacing(10)
        layout.addLayout(self._build_totals())

        self.unpriced_label = _named(QLabel(), "unpricedLabel")
        self.savings_label = _named(QLabel(), "savingsLabel")
        for label in (self.unpriced_label, self.savings_label):
            label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        notes = QHBoxLayout()
        notes.addWidget(self.savings_label)
        notes.addStretch(1)
        notes.addWidget(self.unpriced_label)
        layout.addLayout(notes)
        self.demo_note = _named(QLabel(DEMO_NOTE), "demoNote")
        self.demo_note.setEnabled(False)  # muted text
        layout.addWidget(self.demo_note)

        chart_head = QHBoxLayout()
        self.chart_title = QLabel(f"Spend per day, last {DAYS} days, by")
        chart_head.addWidget(self.chart_title)
        self.group_combo = _named(QComboBox(), "groupByCombo")
        for group in GROUP_BYS:
            self.group_combo.addItem(_GROUP_TITLES[group], group)
        self.group_combo.setAccessibleName("Stack the bars by")
        self.group_combo.currentIndexChanged.connect(self._on_group_changed)
        chart_head.addWidget(self.group_combo)
        chart_head.addStretch(1)
        layout.addLayout(chart_head)
        self.chart = UsageChart(format_usd)
        layout.addWidget(self.chart, 5)

        tables = QHBoxLayout()
        self.nodes_table = self._table("topNodesTable", ["Node", "Project", "Responses", "Cost"])
        self.models_table = self._table("topModelsTable", ["Model", "Provider", "Responses", "Cost"])
        for title, table in ((f"Top nodes, last {DAYS} days", self.nodes_table),
                             (f"Top models, last {DAYS} days", self.models_table)):
            column = QVBoxLayout()
            heading = QLabel(title)
            heading.setBuddy(table)
            column.addWidget(heading)
            column.addWidget(table)
            tables.addLayout(column)
        layout.addLayout(tables, 4)

        self.status_label = _named(QLabel(), "usageStatus")
        self.status_label.setWordWrap(True)
        layout.addWidget(self.status_label)

        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.export_button = _named(QPushButton("Export CSV…"), "exportCsvButton")
        self.export_button.setAutoDefault(False)
        self.refresh_button = _named(QPushButton("Refresh"), "refreshButton")
        self.refresh_button.setAutoDefault(False)
        buttons.addButton(self.export_button, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.addButton(self.refresh_button, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.rejected.connect(self.reject)
        self.export_button.clicked.connect(self._on_export)
        self.refresh_button.clicked.connect(self.refresh)
        layout.addWidget(buttons)
        self.refresh()

    # --- building ----------------------------------------------------------------------------------

    def _build_totals(self) -> QGridLayout:
        grid = QGridLayout()
        grid.setHorizontalSpacing(12)
        big = QFont(self.font())
        big.setPointSizeF(big.pointSizeF() * 1.7)
        big.setWeight(QFont.Weight.DemiBold)
        for column, period in enumerate(PERIODS):
            card = QFrame()
            card.setFrameShape(QFrame.Shape.StyledPanel)
            card.setObjectName(f"{period}Card")
            box = QVBoxLayout(card)
            caption = QLabel(_PERIOD_TITLES[period])
            amount = _named(QLabel(), f"{period}Total")
            amount.setFont(big)
            amount.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            detail = _named(QLabel(), f"{period}Detail")
            detail.setEnabled(False)  # muted text
            caption.setBuddy(amount)
            amount.setAccessibleName(_PERIOD_TITLES[period])
            for widget in (caption, amount, detail):
                box.addWidget(widget)
            self.amount_labels[period] = amount
            self.detail_labels[period] = detail
            grid.addWidget(card, 0, column)
        return grid

    def _table(self, name: str, headers: Sequence[str]) -> QTableWidget:
        table = _named(QTableWidget(0, len(headers)), name)
        table.setHorizontalHeaderLabels(list(headers))
        table.verticalHeader().setVisible(False)
        table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        table.setAlternatingRowColors(True)
        table.setShowGrid(False)
        header = table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for col in range(1, len(headers)):
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.ResizeToContents)
        return table

    # --- data --------------------------------------------------------------------------------------

    @property
    def summary(self) -> UsageSummary | None:
        """The figures shown now."""
        return self._summary

    def group_by(self) -> GroupBy:
        """What the bars are stacked by."""
        value = self.group_combo.currentData()
        return value if value in GROUP_BYS else "model"

    def is_loading(self) -> bool:
        """True while the worker reads or exports the ledger."""
        return self._busy

    def refresh(self) -> None:
        """Read the ledger again on a worker thread ("Loading…" meanwhile), then show it (``loaded``)."""
        if self._busy:
            self._again = True
            return
        self._now = self._clock()
        ledger, window = self._ledger, summary_window(self._now, DAYS)
        self._set_busy("Loading the usage ledger…")
        if self._summary is None:
            for period in PERIODS:
                self.amount_labels[period].setText("…")
                self.detail_labels[period].setText("Loading…")
        run_in_thread(self, lambda: ledger.read(*window), self._on_read, name="usage-dashboard")

    def _set_busy(self, text: str) -> None:
        self._busy = True
        self.refresh_button.setEnabled(False)
        self.export_button.setEnabled(False)
        self.status_label.setText(text)
        self.status_label.setVisible(True)

    def _done(self) -> None:
        self._busy = False
        self.refresh_button.setEnabled(True)
        self.export_button.setEnabled(True)

    def _on_read(self, outcome: Outcome[LedgerScan]) -> None:
        self._done()
        if outcome.value is not None:
            self._scan = outcome.value
            self._show()
        else:  # ``read`` reports an unreadable file as empty: this is a bug, shown rather than raised
            log.error("reading the usage ledger failed", exc_info=outcome.error)
            self.status_label.setText(f"Could not read {self._ledger.path}: {outcome.error}")
        self.loaded.emit()
        if self._again:
            self._again = False
            self.refresh()

    def _show(self) -> None:
        """Show the figures of the records read last, stacked as the switch says."""
        scan = self._scan
        summary = summarize(scan.records, self._now, days=DAYS, group_by=self.group_by(),
                            corrupt=scan.corrupt, torn_tail=scan.torn_tail)
        self._summary = summary
        for period in PERIODS:
            totals = summary.totals[period]
            self.amount_labels[period].setText(format_total(totals))
            detail = _plural(totals.responses, "response")
            if totals.unpriced:
                detail += f", {totals.unpriced:,} unpriced"
            self.detail_labels[period].setText(detail)
        if summary.unpriced:
            self.unpriced_label.setText(
                f"{_plural(summary.unpriced, 'response')} without a price in the last {DAYS} days "
                "(not in the amounts)")
        else:
            self.unpriced_label.setText(f"Every response of the last {DAYS} days had a price")
        saved = format_usd(summary.saved_usd)
        self.savings_label.setText(f"Prompt caching saved {saved} in the last {DAYS} days")
        self.chart.set_data(summary.daily)
        self._fill(self.nodes_table, summary.top_nodes)
        self._fill(self.models_table, summary.top_models)
        notes = []
        if summary.corrupt:
            notes.append(f"{_plural(summary.corrupt, 'damaged line')} in {self._ledger.path} skipped")
        if summary.torn_tail:
            notes.append("the last line of the ledger is unfinished and was skipped")
        self.status_label.setText("; ".join(notes).capitalize() if notes else "")
        self.status_label.setVisible(bool(notes))

    def _fill(self, table: QTableWidget, rows: Sequence[Ranked]) -> None:
        table.setRowCount(len(rows))
        for r, row in enumerate(rows):
            cost = format_usd(row.usd)
            if row.unpriced:
                cost = f"≥ {cost}" if row.unpriced < row.responses else "n/a"
            cells = [row.label, row.detail, f"{row.responses:,}", cost]
            for c, text in enumerate(cells):
                item = QTableWidgetItem(text)
                if c >= 2:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                if c == 0:
                    item.setToolTip(f"{row.label}\n{_tokens(row.tokens)} tokens")
                table.setItem(r, c, item)

    def _on_group_changed(self, _index: int) -> None:
        self._show()  # the records are already read: only restack

    # --- export ------------------------------------------------------------------------------------

    def export_to(self, dest: Path) -> None:
        """Write the whole ledger as CSV to ``dest`` on a worker thread; the status line says what was
        written (rows, rows without a date, damaged lines skipped) or why not; then ``exported``."""
        if self._busy:
            return
        ledger = self._ledger
        self._set_busy(f"Exporting to {dest}…")
        run_in_thread(self, lambda: write_csv(ledger, dest), lambda outcome: self._on_exported(dest, outcome),
                      name="usage-export")

    def _on_exported(self, dest: Path, outcome: Outcome[CsvExport]) -> None:
        self._done()
        result, error = outcome.value, outcome.error
        if result is not None:
            parts = [f"Exported {_plural(result.rows, 'row')} to {dest}"]
            if result.undated:
                parts.append(f"{result.undated:,} without a date")
            if result.corrupt:
                parts.append(f"{_plural(result.corrupt, 'damaged line')} skipped")
            self.status_label.setText(", ".join(parts))
        else:
            why = error.strerror or str(error) if isinstance(error, OSError) else str(error)
            if isinstance(error, OSError):
                log.warning("usage export to %s failed: %s", dest, why)
            else:
                log.error("usage export to %s failed", dest, exc_info=error)
            self.status_label.setText(f"Could not export to {dest}: {why}")
        self.status_label.setVisible(True)
        self.exported.emit()

    def _on_export(self) -> None:
        suggested = str(Path.home() / f"chatnodes-usage-{self._clock().date().isoformat()}.csv")
        name, _ = QFileDialog.getSaveFileName(self, "Export usage as CSV", suggested, "CSV files (*.csv)")
        if name:
            self.export_to(Path(name))
