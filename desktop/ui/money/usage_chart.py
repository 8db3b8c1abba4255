"""A small stacked bar chart of spend per day, drawn with QPainter (no plotting library).

One bar per day, stacked by group (model, provider or project), biggest group at the bottom. The
``MAX_SERIES - 1`` biggest groups get their own colour, the rest are summed as "other". Axis text,
grid and bars take their colours from the widget's palette, so the chart follows the light and dark
themes; the series colours are mid-tones readable on both. Hovering a bar shows the day's breakdown.
"""

from __future__ import annotations

import datetime as _dt
import logging
import math
from collections.abc import Callable

from PySide6.QtCore import QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFontMetrics, QMouseEvent, QPainter, QPaintEvent, QPalette, QPen
from PySide6.QtWidgets import QSizePolicy, QToolTip, QWidget

from desktop.core.usage import DailySpend

log = logging.getLogger(__name__)

__all__ = ["UsageChart", "SERIES_COLORS", "MAX_SERIES", "OTHER_LABEL", "nice_ceiling", "axis_ticks",
           "axis_labels"]

SERIES_COLORS: tuple[str, ...] = (
    "#5b6ee1", "#e0823d", "#3aa57a", "#d0546b", "#9b6cd6", "#2f9fc4", "#c9a227", "#8a8f9c",
)
MAX_SERIES = len(SERIES_COLORS)
OTHER_LABEL = "other"


def nice_ceiling(value: float) -> float:
    """The smallest 1, 2, 2.5 or 5 × 10ⁿ at or above ``value`` (an axis maximum); 1.0 for nothing."""
    if value <= 0 or not math.isfinite(value):
        return 1.0
    exponent = math.floor(math.log10(value))
    for step in (1.0, 2.0, 2.5, 5.0, 10.0):
        candidate = step * 10.0**exponent
        if candidate >= value * (1 - 1e-12):
            return candidate
    return 10.0 ** (exponent + 1)  # pragma: no cover - the loop always returns


def axis_ticks(peak: float, max_ticks: int = 4) -> list[float]:
    """Round gridline values from 0 up to ``peak`` or above: ≤ ``max_ticks`` steps of 1, 2, 2.5 or 5 × 10ⁿ."""
    if peak <= 0 or not math.isfinite(peak):
        return [0.25 * i for i in range(5)]
    step = nice_ceiling(peak / max_ticks)
    count = max(1, math.ceil(peak / step - 1e-9))
    return [step * i for i in range(count + 1)]


def axis_labels(ticks: list[float]) -> list[str]:
    """Tick labels with as few decimals as the step needs (``$0``, ``$0.25``, ``$0.50``, ``$1.00``)."""
    step = ticks[1] - ticks[0] if len(ticks) > 1 else 1.0
    decimals = 0
    while decimals < 8 and abs(round(step, decimals) - step) > step * 1e-9:
        decimals += 1
    if decimals == 1:
        decimals = 2  # money reads in cents
    return ["$0" if value == 0 else f"${value:,.{decimals}f}" for value in ticks]


class UsageChart(QWidget):
    """Spend per day as stacked bars.

    Args:
        format_amount: Formats a USD amount for the axis and the tooltips.
        parent: Parent widget.
    """

    def __init__(self, format_amount: Callable[[float], str], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("usageChart")
        self.setMouseTracking(True)
        self.setMinimumSize(QSize(480, 220))
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self._format = format_amount
        self._dates: list[_dt.date] = []
        self._series: list[str] = []
        self._stacks: list[list[float]] = []
        self._bars: list[QRectF] = []
        self.setAccessibleName("Spend per day")

    # --- data --------------------------------------------------------------------------------------

    def set_data(self, daily: DailySpend) -> None:
        """Show ``daily``; groups past the colour count are summed as "other"."""
        own = daily.groups[: MAX_SERIES - 1] if len(daily.groups) > MAX_SERIES else daily.groups
        rest = [g for g in daily.groups if g not in set(own)]
        self._series = list(own) + ([OTHER_LABEL] if rest else [])
        self._dates = list(daily.dates)
        self._stacks = []
        for day in daily.usd:
            stack = [day.get(group, 0.0) for group in own]
            if rest:
                stack.append(sum(day.get(group, 0.0) for group in rest))
            self._stacks.append(stack)
        total = sum(sum(s) for s in self._stacks)
        names = ", ".join(self._series) or "nothing"
        self.setAccessibleDescription(f"{len(self._dates)} days, {self._format(total)} in total, by {names}")
        self.update()

    def series(self) -> list[str]:
        """The legend's entries, bottom of the stack first."""
        return list(self._series)

    def stacks(self) -> list[list[float]]:
        """Per day, the amount of each entry of ``series()``."""
        return [list(s) for s in self._stacks]

    def day_totals(self) -> list[float]:
        """Per day, the bar's height in USD."""
        return [sum(s) for s in self._stacks]

    def series_color(self, index: int) -> QColor:
        """The colour of ``series()[index]``."""
        if self._series and self._series[index] == OTHER_LABEL:
            return QColor(SERIES_COLORS[-1])
        return QColor(SERIES_COLORS[index % (MAX_SERIES - 1)])

    # --- painting ----------------------------------------------------------------------------------

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt API
        """Wide and fairly short."""
        return QSize(760, 280)

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 - Qt API
        """Axis, grid, bars and legend."""
        painter = QPainter(self)
        try:
            painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
            self._paint(painter)
        finally:
            painter.end()

    def _paint(self, painter: QPainter) -> None:
        pal = self.palette()
        text = pal.color(QPalette.ColorRole.WindowText)
        muted = pal.color(QPalette.ColorRole.PlaceholderText)
        grid = pal.color(QPalette.ColorRole.Mid)
        metrics = QFontMetrics(self.font())
        line = metrics.height()
        peak = max(self.day_totals(), default=0.0)
        ticks = axis_ticks(peak)
        top_value = ticks[-1]
        labels = axis_labels(ticks)
        label_width = max(metrics.horizontalAdvance(text) for text in labels) + 8
        legend_height = self._legend_height(metrics)
        plot = QRectF(label_width, line / 2 + 2, self.width() - label_width - 6,
                      self.height() - line * 2 - legend_height - 8)
        if plot.width() <= 10 or plot.height() <= 10:
            return
        painter.setFont(self.font())
        for value, label in zip(ticks, labels, strict=True):
            y = plot.bottom() - plot.height() * value / top_value
            painter.setPen(QPen(grid, 1, Qt.PenStyle.DotLine if value else Qt.PenStyle.SolidLine))
            painter.drawLine(QPointF(plot.left(), y), QPointF(plot.right(), y))
            painter.setPen(muted)
            painter.drawText(QRectF(0, y - line / 2, label_width - 6, line),
                             int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter), label)
        self._bars = []
        count = max(1, len(self._dates))
        slot = plot.width() / count
        bar_width = max(2.0, slot * 0.7)
        for i, stack in enumerate(self._stacks):
            x = plot.left() + slot * i + (slot - bar_width) / 2
            y = plot.bottom()
            for j, amount in enumerate(stack):
                if amount <= 0:
                    continue
                h = plot.height() * amount / top_value
                painter.fillRect(QRectF(x, y - h, bar_width, h), self.series_color(j))
                y -= h
            self._bars.append(QRectF(plot.left() + slot * i, plot.top(), slot, plot.height()))
        painter.setPen(muted)
        fit = max(1, int(plot.width() // (metrics.horizontalAdvance("00 Mmm") + 12)))
        step = max(1, math.ceil(count / fit))
        for i, day in enumerate(self._dates):
            if (len(self._dates) - 1 - i) % step:
                continue  # label today and every step-th day before it
            center = plot.left() + slot * (i + 0.5)
            label = f"{day.day} {day.strftime('%b')}"
            width = metrics.horizontalAdvance(label) + 4
            painter.drawText(QRectF(center - width / 2, plot.bottom() + 3, width, line),
                             int(Qt.AlignmentFlag.AlignCenter), label)
        self._paint_legend(painter, metrics, plot.bottom() + line + 8, text)
        if not self._series:
            painter.setPen(muted)
            painter.drawText(plot, int(Qt.AlignmentFlag.AlignCenter), "No priced usage in the last 30 days")

    def _legend_rows(self, metrics: QFontMetrics) -> list[list[tuple[int, str]]]:
        rows: list[list[tuple[int, str]]] = [[]]
        x = 0
        for i, name in enumerate(self._series):
            width = 14 + metrics.horizontalAdvance(name) + 18
            if rows[-1] and x + width > self.width() - 8:
                rows.append([])
                x = 0
            rows[-1].append((i, name))
            x += width
        return rows if self._series else []

    def _legend_height(self, metrics: QFontMetrics) -> int:
        return len(self._legend_rows(metrics)) * (metrics.height() + 4)

    def _paint_legend(self, painter: QPainter, metrics: QFontMetrics, top: float, text: QColor) -> None:
        line = metrics.height()
        for r, row in enumerate(self._legend_rows(metrics)):
            x = 8.0
            y = top + r * (line + 4)
            for index, name in row:
                painter.fillRect(QRectF(x, y + line / 2 - 5, 10, 10), self.series_color(index))
                painter.setPen(text)
                painter.drawText(QRectF(x + 14, y, metrics.horizontalAdvance(name) + 4, line),
                                 int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter), name)
                x += 14 + metrics.horizontalAdvance(name) + 18

    # --- interaction -------------------------------------------------------------------------------

    def day_at(self, x: float) -> int | None:
        """Index of the day whose bar column holds ``x`` (after a paint), or None."""
        for i, rect in enumerate(self._bars):
            if rect.left() <= x < rect.right():
                return i
        return None

    def tooltip_for(self, index: int) -> str:
        """The hover text of day ``index``: the date, its total and each group's part."""
        day = self._dates[index]
        stack = self._stacks[index]
        lines = [f"{day.strftime('%a')} {day.isoformat()}: {self._format(sum(stack))}"]
        lines += [f"{name}: {self._format(amount)}" for name, amount in zip(self._series, stack, strict=True)
                  if amount > 0]
        return "\n".join(lines)

    def mouseMoveEvent(self, event: QMouseEvent) -> None:  # noqa: N802 - Qt API
        """Show the hovered day's breakdown."""
        index = self.day_at(event.position().x())
        if index is None or index >= len(self._stacks):
            QToolTip.hideText()
        else:
            QToolTip.showText(event.globalPosition().toPoint(), self.tooltip_for(index), self)
        super().mouseMoveEvent(event)
