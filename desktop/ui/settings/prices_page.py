"""The Prices tab: the user's price overrides (USD per million tokens), validated on OK."""

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
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from desktop.core.chat.cost import DEFAULT_PRICES, price_source
from desktop.core.settings import Settings

__all__ = ["PRICE_COLUMNS", "PricesPage"]

PRICE_COLUMNS = ("Model or prefix", "Input", "Output", "Cache read", "Cache write")
_PRICE_KEYS = ("input", "output", "cache_read", "cache_write")


class PricesPage(QWidget):
    """A table of price overrides: one row per model id or prefix (``docs/PRICES.md``).

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
        layout.addWidget(self.source_label)
        self.price_table = QTableWidget(0, len(PRICE_COLUMNS), self)
        self.price_table.setObjectName("priceOverridesTable")
        self.price_table.setHorizontalHeaderLabels(list(PRICE_COLUMNS))
        header = self.price_table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for col in range(1, len(PRICE_COLUMNS)):
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.ResizeToContents)
        self.price_table.verticalHeader().setVisible(False)
        self.price_table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.price_table.setAlternatingRowColors(True)
        layout.addWidget(self.price_table, 1)
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


def _mark_bad(item: QTableWidgetItem | None) -> None:
    if item is not None:
        item.setData(Qt.ItemDataRole.BackgroundRole, QColor(220, 70, 70, 70))
