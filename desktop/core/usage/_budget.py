"""Monthly budgets: the app-wide one (``settings.json``) and one per project (``project.json``).

Both files hold the same block, ``"budget": {"monthly_usd": X}`` with ``X`` a positive finite number;
no block (or no ``monthly_usd``) means no budget. Spending is read from the usage ledger for the
calendar month in local time, so restarting the app resets nothing.
"""

from __future__ import annotations

import datetime as _dt
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ._periods import month_range

if TYPE_CHECKING:
    from ._ledger import UsageLedger
    from ._tally import MonthlyTally

__all__ = [
    "BudgetCheck",
    "BudgetScope",
    "tightest_budget",
    "BudgetState",
    "BudgetStatus",
    "WARN_FRACTION",
    "parse_budget",
    "budget_block",
    "budget_status",
    "monthly_spend",
    "app_budget_status",
    "project_budget_status",
]

BudgetState = Literal["ok", "warn", "over"]
WARN_FRACTION = 0.8
"""From this fraction of the budget on, the state is ``warn``."""


@dataclass(frozen=True, slots=True)
class BudgetStatus:
    """Where a budget stands.

    Attributes:
        spent: USD spent this month (priced responses).
        limit: The monthly budget in USD.
        fraction: ``spent / limit``.
        state: ``ok`` below 80 %, ``warn`` from 80 %, ``over`` at or above 100 %.
        unpriced: Responses this month without a price (not in ``spent``).
    """

    spent: float
    limit: float
    fraction: float
    state: BudgetState
    unpriced: int = 0

    @property
    def percent(self) -> int:
        """``fraction`` as a whole percentage, rounded down (``"83% of budget"``)."""
        return int(math.floor(self.fraction * 100 + 1e-9))


def _valid_limit(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"budget: monthly_usd must be a number, not {value!r}")
    limit = float(value)
    if not math.isfinite(limit) or limit <= 0:
        raise ValueError(f"budget: monthly_usd must be a positive finite number, not {value!r}")
    return limit


def parse_budget(data: Mapping[str, Any]) -> float | None:
    """The monthly budget in USD from a settings or project object, None when it has none.

    Args:
        data: The decoded ``settings.json`` or ``project.json`` object.

    Raises:
        ValueError: ``budget`` is not an object, or ``monthly_usd`` is not a positive finite number.
    """
    block = data.get("budget")
    if block is None:
        return None
    if not isinstance(block, Mapping):
        raise ValueError(f"budget must be an object, not {type(block).__name__}")
    value = block.get("monthly_usd")
    if value is None:
        return None
    return _valid_limit(value)


def budget_block(limit: float | None) -> dict[str, Any] | None:
    """The JSON block for ``limit`` (None: no block, remove the key).

    Raises:
        ValueError: ``limit`` is not a positive finite number.
    """
    if limit is None:
        return None
    return {"monthly_usd": _valid_limit(limit)}


def budget_status(spent: float, limit: float, unpriced: int = 0) -> BudgetStatus:
    """Classify ``spent`` against ``limit``.

    Raises:
        ValueError: ``limit`` is not a positive finite number.
    """
    limit = _valid_limit(limit)
    fraction = max(0.0, spent) / limit
    state: BudgetState = "over" if fraction >= 1.0 else "warn" if fraction >= WARN_FRACTION else "ok"
    return BudgetStatus(spent, limit, fraction, state, unpriced)


def monthly_spend(
    ledger: UsageLedger, now: _dt.datetime, project: str | os.PathLike[str] | None = None
) -> tuple[float, int]:
    """(USD spent, unpriced responses) in the calendar month of ``now``, optionally for one project."""
    start, end = month_range(now)
    result = ledger.totals(start, end, project)
    return result.usd, result.unpriced


def app_budget_status(ledger: UsageLedger | Path, limit: float, now: _dt.datetime) -> BudgetStatus:
    """The app-wide budget against every project's spending this month."""
    from ._ledger import UsageLedger  # not at import: the settings read budgets at start-up, the ledger later

    book = ledger if isinstance(ledger, UsageLedger) else UsageLedger(ledger)
    spent, unpriced = monthly_spend(book, now)
    return budget_status(spent, limit, unpriced)


def project_budget_status(
    ledger: UsageLedger | Path, project: str | os.PathLike[str], limit: float, now: _dt.datetime
) -> BudgetStatus:
    """A project's budget against that project's spending this month."""
    from ._ledger import UsageLedger  # not at import: the settings read budgets at start-up, the ledger later

    book = ledger if isinstance(ledger, UsageLedger) else UsageLedger(ledger)
    spent, unpriced = monthly_spend(book, now, project)
    return budget_status(spent, limit, unpriced)


BudgetScope = Literal["app", "project"]


@dataclass(frozen=True, slots=True)
class BudgetCheck:
    """One budget and where it stands.

    Attributes:
        scope: ``app`` (Settings → General) or ``project`` (this project's own budget).
        status: Spending against the limit this month.
    """

    scope: BudgetScope
    status: BudgetStatus

    def describe(self) -> str:
        """E.g. ``"$41.20 of the $40.00 monthly budget of this project"``."""
        where = "app-wide monthly budget" if self.scope == "app" else "monthly budget of this project"
        return f"${self.status.spent:.2f} of the ${self.status.limit:.2f} {where}"


def tightest_budget(
    tally: MonthlyTally,
    app_limit: float | None,
    project: str | os.PathLike[str] | None,
    project_limit: float | None,
) -> BudgetCheck | None:
    """The budget closest to (or furthest past) its limit, from the running monthly tally.

    Returns:
        None when neither budget is set.
    """
    checks: list[BudgetCheck] = []
    if app_limit is not None:
        t = tally.totals()
        checks.append(BudgetCheck("app", budget_status(t.usd, app_limit, t.unpriced)))
    if project_limit is not None and project is not None:
        t = tally.totals(project)
        checks.append(BudgetCheck("project", budget_status(t.usd, project_limit, t.unpriced)))
    return max(checks, key=lambda c: c.status.fraction, default=None)
