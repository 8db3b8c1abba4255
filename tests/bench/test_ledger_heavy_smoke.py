"""Smoke run of the heavy-ledger benchmark at tiny size: its rows have the right shape (the real numbers come
from ``make bench``; nothing here is a performance assertion)."""

from __future__ import annotations

import datetime as _dt
from pathlib import Path

from benchmarks import Settings
from benchmarks._suite import run_suite
from benchmarks.ledger_heavy import build_history, pinned_now
from desktop.core.usage import ledger_path, month_range, read_records


def test_the_heavy_ledger_rows_run_at_tiny_size() -> None:
    rows, errors = run_suite(Settings.tiny(), ["ledger_heavy"])
    assert errors == []
    assert [r.key for r in rows] == ["ledger.heavy_index", "ledger.heavy_dashboard", "ledger.heavy_month",
                                     "ledger.heavy_dashboard_rss", "ledger.heavy_month_rss"]
    for row in rows:
        assert row.ours and row.baseline and all(v > 0 for v in row.baseline)
        assert all(v >= 0 for v in row.ours)  # a tiny ledger may add no measurable memory
        assert (row.budget is None) == (row.key == "ledger.heavy_index")


def test_the_history_is_in_time_order_and_ends_at_now(tmp_path: Path) -> None:
    now = pinned_now()
    path = ledger_path(tmp_path)
    build_history(path, 500, now, days=90)
    scan = read_records(path)
    ts = [r.ts for r in scan.records]
    assert len(ts) == 500 and scan.corrupt == 0 and ts == sorted(ts)
    assert now.day == 28 and ts[-1] < int(now.timestamp() * 1000)
    assert ts[0] >= int((now - _dt.timedelta(days=90)).timestamp() * 1000)
    assert any(month_range(now)[0] <= t for t in ts)
