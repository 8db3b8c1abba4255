"""The Prices tab: the user's price overrides (USD per million tokens, editable, validated on OK) above
the built-in prices (read-only, with a filter; double-click one to override it)."""

from __future__ import annotations

import math
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from desktop.core.chat.cost import DEFAULT_PRICES, Price, price_source
from desktop.core.config import Settings

__all__ = ["PRICE_COLUMNS", "PricesPage"]

PRICE_COLUMNS = ("Model or prefix", "Input", "Output", "Cache read", "Cache write")
_PRICE_KEYS = ("input", "output", "cache_read", "cache_write")


class PricesPage(QWidget):
    """A table of price overrides (``priceOverridesTable``): one row per model id or prefix
    (``docs/PRICES.md``); below it the built-in prices (``builtinPricesTable``, read-only) and their
    filter (``priceFilterEdit``, which filters both tables).

    Args:
        parent: The dialog.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 10, 0, 0)
        hint = QLabel("Your prices beat the built-in ones. USD per million tokens; a prefix ending in “-” "
                      "prices a whole family (e.g. “gpt-”). Empty cache prices fall back to the input price.",
                      self)
        hint.setWordWrap(True)
        hint.setForegroundRole(QPalette.ColorRole.PlaceholderText)
        layout.addWidget(hint)
        source, date = price_source()
        self.source_label = QLabel(f"Built-in prices: {len(DEFAULT_PRICES)} models and families, refreshed "
                                   f"from {source} on {date}.", self)
        self.source_label.setObjectName("priceSourceLabel")
        self.source_label.setWordWrap(True)
        self.source_label.setForegroundRole(QPalette.ColorRole.PlaceholderText)
        self.filter_edit = QLineEdit(self)
        self.filter_edit.setObjectName("priceFilterEdit")
        self.filter_edit.setPlaceholderText("Filter models…")
        self.filter_edit.setClearButtonEnabled(True)
        self.filter_edit.textChanged.connect(self.apply_filter)
        top = QHBoxLayout()
        top.addWidget(self.source_label, 1)
        top.addWidget(self.filter_edit)
        layout.addLayout(top)
        layout.addWidget(_heading("Your prices (they win over the built-in ones)", self))
        self.price_table = _price_table("priceOverridesTable", self)
        layout.addWidget(self.price_table, 2)
        row = QHBoxLayout()
        add = QPushButton("Add row", self)
        add.setObjectName("addPriceButton")
        add.clicked.connect(lambda: self.add_price_row())
        remove = QPushButton("Remove row", self)
        remove.setObjectName("removePriceButton")
        remove.clicked.connect(self._remove_price_row)
        row.addWidget(add)
        row.addWidget(remove)
        row.addStretch(1)
        layout.addLayout(row)
        layout.addWidget(_heading("Built-in prices (double-click one to override it)", self))
        self.builtin_table = _price_table("builtinPricesTable", self)
        self.builtin_table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.builtin_table.setShowGrid(False)  # read-only: a plain list, not cells to fill in
        self.builtin_table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 10)
        self._fill_builtin()
        self.builtin_table.cellDoubleClicked.connect(self._override_builtin)
        layout.addWidget(self.builtin_table, 3)

    def _fill_builtin(self) -> None:
        table = self.builtin_table
        prices = sorted(DEFAULT_PRICES.items())
        table.setRowCount(len(prices))
        for row, (name, price) in enumerate(prices):
            table.setItem(row, 0, QTableWidgetItem(name))
            for col, value in enumerate(_values(price), start=1):
                item = QTableWidgetItem("" if value is None else f"{value:g}")
                item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                table.setItem(row, col, item)

    def apply_filter(self, text: str) -> None:
        """Show only the rows of both tables whose model or prefix contains ``text`` (any case)."""
        needle = text.strip().lower()
        for table in (self.price_table, self.builtin_table):
            for row in range(table.rowCount()):
                item = table.item(row, 0)
                name = item.text().lower() if item is not None else ""
                table.setRowHidden(row, bool(needle) and needle not in name)

    def _override_builtin(self, row: int, _column: int) -> None:
        """Copy a built-in price into the overrides, to be edited there."""
        cells = [self.builtin_table.item(row, c) for c in range(len(PRICE_COLUMNS))]
        texts = [c.text() if c is not None else "" for c in cells]
        values = [float(t) if t else None for t in texts[1:]]
        new = self.add_price_row(texts[0], *values)
        self.price_table.setCurrentCell(new, 1)
        item = self.price_table.item(new, 1)
        if item is not None:
            self.price_table.editItem(item)
    def load(self, settings: Settings) -> None:
        """Show the price overrides of ``settings`` (one row each)."""
        self.price_table.setRowCount(0)
        for prefix, entry in settings.price_overrides.items():
            self.add_price_row(prefix, *[entry.get(k) for k in _PRICE_KEYS])

    def add_price_row(self, prefix: str = "", *values: float | None) -> int:
        """Append a row (prefix, input, output, cache read, cache write); returns its index."""
        row = self.price_table.rowCount()
        self.price_table.insertRow(row)
        self.price_table.setItem(row, 0, QTableWidgetItem(prefix))
        for col in range(1, len(PRICE_COLUMNS)):
            value = values[col - 1] if col - 1 < len(values) else None
            item = QTableWidgetItem("" if value is None else f"{value:g}")
            item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            self.price_table.setItem(row, col, item)
        return row

    def _remove_price_row(self) -> None:
        rows = sorted({i.row() for i in self.price_table.selectedIndexes()}, reverse=True)
        if not rows and self.price_table.rowCount():
            rows = [self.price_table.rowCount() - 1]
        for row in rows:
            self.price_table.removeRow(row)

    def read_prices(self, problems: list[str]) -> dict[str, dict[str, Any]]:
        """The overrides as entered (``settings.price_overrides`` form); bad cells are marked.

        Empty rows are skipped. Each problem found is appended to ``problems``, and a row with one is
        left out of the result.
        """
        out: dict[str, dict[str, Any]] = {}
        for row in range(self.price_table.rowCount()):
            cells = [self.price_table.item(row, c) for c in range(len(PRICE_COLUMNS))]
            texts = [(c.text().strip() if c is not None else "") for c in cells]
            for c in cells:
                if c is not None:
                    c.setData(Qt.ItemDataRole.BackgroundRole, None)
            if not any(texts):
                continue
            prefix = texts[0]
            if not prefix:
                problems.append(f"Prices, row {row + 1}: enter a model or prefix")
                _mark_bad(cells[0])
                continue
            if prefix in out:
                problems.append(f"Prices, row {row + 1}: “{prefix}” is listed twice")
                _mark_bad(cells[0])
                continue
            entry: dict[str, Any] = {}
            for col, key in enumerate(_PRICE_KEYS, start=1):
                text = texts[col].replace(",", ".").lstrip("$")
                if not text:
                    if key in ("input", "output"):
                        what = PRICE_COLUMNS[col].lower()
                        problems.append(f"Prices, “{prefix}”: the {what} price is required")
                        _mark_bad(cells[col])
                    continue
                try:
                    value = float(text)
                except ValueError:
                    value = math.nan
                if not math.isfinite(value) or value < 0:
                    problems.append(f"Prices, “{prefix}”: {PRICE_COLUMNS[col].lower()} must be a number ≥ 0 "
                                    f"(USD per million tokens), not “{texts[col]}”")
                    _mark_bad(cells[col])
                    continue
                entry[key] = value
            if len(entry) >= 2 and "input" in entry and "output" in entry:
                out[prefix] = entry
        return out


def _values(price: Price) -> tuple[float | None, ...]:
    return price.input, price.output, price.cache_read, price.cache_write


def _heading(text: str, parent: QWidget) -> QLabel:
    label = QLabel(text, parent)
    font = label.font()
    font.setBold(True)
    label.setFont(font)
    return label


def _price_table(name: str, parent: QWidget) -> QTableWidget:
    table = QTableWidget(0, len(PRICE_COLUMNS), parent)
    table.setObjectName(name)
    table.setHorizontalHeaderLabels(list(PRICE_COLUMNS))
    header = table.horizontalHeader()
    header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
    for col in range(1, len(PRICE_COLUMNS)):
        header.setSectionResizeMode(col, QHeaderView.ResizeMode.ResizeToContents)
    table.verticalHeader().setVisible(False)
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.setAlternatingRowColors(True)
    return table


def _mark_bad(item: QTableWidgetItem | None) -> None:
    if item is not None:
        item.setData(Qt.ItemDataRole.BackgroundRole, QColor(220, 70, 70, 70))
