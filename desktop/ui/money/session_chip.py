"""The status bar's cost chip: what every conversation of the open project cost, and the budget's state.

The chip (``sessionCostLabel``) shows ``Project $0.0420``: the sum of the project's nodes, every
version of every answer, priced locally; it survives restarts like the conversations do, so it says
"project", not "session". With a monthly budget set (app-wide in Settings, or the project's own) it
adds ``· 83% of budget`` and turns amber from 80 %, solid amber at or over 100 %. Its tooltip gives the
exact sum, what cache reads saved, the budget's figures, and how this differs from the usage
dashboard (the ledger: what was spent per day, across projects, without the offline demo).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QLabel

from desktop.core.chat.cost import ConversationCost, format_cost
from desktop.core.chat.summary import cost_tooltip
from desktop.ui.lifetime import Outcome, run_in_thread

if TYPE_CHECKING:
    from desktop.core.usage import BudgetCheck

log = logging.getLogger(__name__)

__all__ = ["count_ledger", "sum_costs", "show_session"]

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


_SCOPE = ("Every conversation of this project, all versions, priced per model (\u201c\u2265\u201d when "
          "some model has no known price). View \u2192 Usage\u2026 shows the usage ledger instead: what "
          "was spent per day across projects (offline demo answers are not recorded there).")


def show_session(label: QLabel, cost: ConversationCost | None, check: BudgetCheck | None) -> None:
    """Fill the chip: ``cost`` None means the window has no node."""
    if cost is None:
        label.setText("Project $0.00")
        label.setToolTip(_SCOPE)
        return
    text, tip, state = f"Project {format_cost(cost)}", f"{_SCOPE}\n\n{cost_tooltip(cost)}", "ok"
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


def count_ledger(receiver: QObject, config_dir: Path, done: Callable[[], object]) -> None:
    """Count this month of the usage ledger once on a worker thread, then call ``done()`` on the GUI
    thread (while ``receiver`` exists).

    The first count after an upgrade builds the ledger's block index (2–3.5 s on a 200 MB ledger) and
    writes it beside the ledger; the window's tally then reads that index and counts the month in
    milliseconds. Until ``done`` the chip shows no budget (a send that comes first counts on its own).
    """
    from desktop.core.usage import ledger_path, local_now, month_range, totals

    path = ledger_path(config_dir)

    def finished(outcome: Outcome[object]) -> None:
        if outcome.error is not None:
            log.warning("counting the usage ledger failed: %s", outcome.error)
        done()

    run_in_thread(receiver, lambda: totals(path, *month_range(local_now())), finished, name="usage-count")
