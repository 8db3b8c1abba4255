"""The status bar's session chip: what every node of the window cost, and the monthly budget's state.

The chip (``sessionCostLabel``) shows ``Session $0.0420``; with a monthly budget set (app-wide in
Settings, or the project's own) it adds ``· 83% of budget`` and turns amber from 80 %, solid amber at
or over 100 %. Its tooltip gives the exact sum, what cache reads saved and the budget's figures.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from PySide6.QtWidgets import QLabel

from desktop.core.chat.cost import ConversationCost, format_cost
from desktop.core.chat.summary import cost_tooltip

if TYPE_CHECKING:
    from desktop.core.usage import BudgetCheck

__all__ = ["sum_costs", "show_session"]

_AMBER = "#b26a00"
_BUDGET_STYLES = {
    "ok": "",
    "warn": f"QLabel {{ color: {_AMBER}; font-weight: 600; }}",
    "over": f"QLabel {{ color: white; background: {_AMBER}; border-radius: 4px; padding: 0 6px; }}",
}


def sum_costs(costs: Iterable[ConversationCost]) -> ConversationCost:
    """The window's total of the nodes' conversation costs (``estimated`` only when all are)."""
    usd = saved = 0.0
    unpriced = 0
    estimated = True
    for cc in costs:
        usd += cc.usd
        saved += cc.cache_saved
        unpriced += cc.unpriced
        estimated = estimated and cc.estimated
    return ConversationCost(usd=usd, estimated=estimated, unpriced=unpriced, cache_saved=saved)


def show_session(label: QLabel, cost: ConversationCost | None, check: BudgetCheck | None) -> None:
    """Fill the chip: ``cost`` None means the window has no node."""
    if cost is None:
        label.setText("Session n/a")
        label.setToolTip("")
        return
    text, tip, state = f"Session {format_cost(cost)}", cost_tooltip(cost), "ok"
    if check is not None:
        state = check.status.state
        if state != "ok":
            text += f" · {check.status.percent}% of budget"
        tip += f"\n{check.describe()} this month"
    label.setText(text)
    label.setToolTip(tip)
    if label.property("budget") != state:
        label.setProperty("budget", state)
        label.setStyleSheet(_BUDGET_STYLES[state])
