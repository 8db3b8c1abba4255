"""Monthly budgets: the settings/project block, ok / warn / over, month spend from the ledger."""

from __future__ import annotations

import datetime as _dt
import math
from pathlib import Path
from typing import Any

import pytest

from desktop.core.usage import (
    UsageLedger,
    UsageRecord,
    app_budget_status,
    append_record,
    budget_block,
    budget_status,
    ledger_path,
    monthly_spend,
    parse_budget,
    period_range,
    project_budget_status,
)

NOW = _dt.datetime(2026, 3, 18, 15, 0)


def ms(year: int, month: int, day: int, hour: int = 0, minute: int = 0) -> int:
    return int(_dt.datetime(year, month, day, hour, minute).timestamp() * 1000)


def rec(ts: int, usd: float | None, project: str) -> UsageRecord:
    return UsageRecord(ts=ts, project=project, node="n", node_title="", provider="p", model="m", input=1,
                       output=1, cache_read=0, cache_write=0, reasoning=0, usd=usd, estimated=usd is None,
                       saved_usd=None)


@pytest.mark.parametrize(("data", "expected"), [
    ({}, None),
    ({"budget": None}, None),
    ({"budget": {}}, None),
    ({"budget": {"monthly_usd": None}}, None),
    ({"budget": {"monthly_usd": 25}}, 25.0),
    ({"budget": {"monthly_usd": 0.5, "other": 1}}, 0.5),
])
def test_parse_budget_accepts_a_positive_number_or_nothing(data: dict[str, Any],
                                                           expected: float | None) -> None:
    assert parse_budget(data) == expected


@pytest.mark.parametrize("value", [0, -5, math.nan, math.inf, -math.inf, True, "20", [20], {"usd": 1}])
def test_parse_budget_rejects_anything_else(value: object) -> None:
    with pytest.raises(ValueError, match="monthly_usd"):
        parse_budget({"budget": {"monthly_usd": value}})


@pytest.mark.parametrize("block", [5, "x", [1]])
def test_parse_budget_rejects_a_block_that_is_not_an_object(block: object) -> None:
    with pytest.raises(ValueError, match="budget must be an object"):
        parse_budget({"budget": block})


def test_budget_block_round_trips_and_validates() -> None:
    assert budget_block(None) is None
    assert budget_block(12) == {"monthly_usd": 12.0}
    assert parse_budget({"budget": budget_block(12.5)}) == 12.5
    with pytest.raises(ValueError):
        budget_block(0)


@pytest.mark.parametrize(("spent", "state", "percent"), [
    (0.0, "ok", 0), (7.99, "ok", 79), (8.0, "warn", 80), (9.99, "warn", 99), (10.0, "over", 100),
    (25.0, "over", 250), (-1.0, "ok", 0),
])
def test_budget_status_thresholds(spent: float, state: str, percent: int) -> None:
    status = budget_status(spent, 10.0)
    assert (status.state, status.percent, status.limit, status.spent) == (state, percent, 10.0, spent)
    assert status.fraction == pytest.approx(max(0.0, spent) / 10.0)


def test_budget_status_needs_a_valid_limit() -> None:
    with pytest.raises(ValueError):
        budget_status(1.0, 0.0)


def test_budgets_count_this_calendar_month_from_the_ledger(tmp_path: Path) -> None:
    path = ledger_path(tmp_path)
    rows = [
        rec(ms(2026, 2, 28, 23, 59), 100.0, "/p/a"),  # last month: not counted
        rec(ms(2026, 3, 1, 0, 0), 3.0, "/p/a"),
        rec(ms(2026, 3, 10, 12, 0), 4.0, "/p/b"),
        rec(ms(2026, 3, 18, 14, 0), 1.0, "/p/a"),
        rec(ms(2026, 3, 18, 14, 5), None, "/p/a"),  # unpriced: counted apart
        rec(ms(2026, 4, 1, 0, 0), 50.0, "/p/a"),  # next month (clock skew): not counted
    ]
    for r in rows:
        append_record(path, r)
    ledger = UsageLedger(path)
    assert monthly_spend(ledger, NOW) == (8.0, 1)
    assert monthly_spend(ledger, NOW, "/p/a") == (4.0, 1)

    app = app_budget_status(path, 10.0, NOW)
    assert (app.spent, app.state, app.percent, app.unpriced) == (8.0, "warn", 80, 1)
    proj = project_budget_status(ledger, "/p/a", 4.0, NOW)
    assert (proj.spent, proj.state) == (4.0, "over")
    assert project_budget_status(ledger, "/p/b", 10.0, NOW).state == "ok"
    # A new month starts from zero; nothing in the app resets the ledger.
    assert app_budget_status(path, 10.0, _dt.datetime(2026, 4, 2)).spent == 50.0


def test_period_ranges_are_local_calendar_periods() -> None:
    assert period_range("month", NOW) == (ms(2026, 3, 1), ms(2026, 4, 1))
    assert period_range("week", NOW) == (ms(2026, 3, 16), ms(2026, 3, 23))  # Monday to Monday
    assert period_range("today", NOW) == (ms(2026, 3, 18), ms(2026, 3, 19))
    assert period_range("month", _dt.datetime(2026, 12, 31, 23)) == (ms(2026, 12, 1), ms(2027, 1, 1))
    aware = NOW.astimezone()
    assert period_range("today", aware) == period_range("today", NOW)
    with pytest.raises(ValueError):
        period_range("year", NOW)  # type: ignore[arg-type]
