"""Dashboard figures from a known ledger: period totals, days stacked three ways, top tables, CSV."""

from __future__ import annotations

import csv
import datetime as _dt
import io
from pathlib import Path

import pytest

from desktop.core.usage import (
    CSV_COLUMNS,
    UsageLedger,
    UsageRecord,
    append_record,
    csv_text,
    day_starts,
    export_csv,
    ledger_path,
    load_summary,
    summarize,
)

NOW = _dt.datetime(2026, 3, 18, 15, 0)  # a Wednesday


def ms(year: int, month: int, day: int, hour: int = 0) -> int:
    return int(_dt.datetime(year, month, day, hour).timestamp() * 1000)


def rec(when: tuple[int, int, int, int], model: str, provider: str, project: str, node: str, title: str,
        usd: float | None, saved: float | None = 0.0) -> UsageRecord:
    return UsageRecord(ts=ms(*when), project=project, node=node, node_title=title, provider=provider,
                       model=model, input=1000, output=100, cache_read=500, cache_write=0, reasoning=0,
                       usd=usd, estimated=usd is None, saved_usd=None if usd is None else saved)


KNOWN = [
    rec((2026, 1, 5, 12), "gpt-4o", "openai", "/p/beta", "n2", "Docs", 100.0),  # outside everything
    rec((2026, 2, 20, 11), "claude-haiku-4-5", "anthropic", "/p/alpha", "n4", "Old", 3.0),
    rec((2026, 3, 2, 9), "gpt-4o", "openai", "/p/beta", "n2", "Docs", 2.0),
    rec((2026, 3, 10, 16), "llama3:8b", "ollama", "/p/beta", "n3", "Local", None),
    rec((2026, 3, 16, 8), "claude-sonnet-4-5", "anthropic", "/p/alpha", "n1", "Parser", 0.25, 0.05),
    rec((2026, 3, 17, 9), "gpt-4o", "openai", "/p/beta", "n2", "Docs", 1.25),
    rec((2026, 3, 18, 10), "claude-sonnet-4-5", "anthropic", "/p/alpha", "n1", "Parser v2", 0.5, 0.1),
]


@pytest.fixture
def ledger(tmp_path: Path) -> UsageLedger:
    path = ledger_path(tmp_path)
    for r in reversed(KNOWN):  # file order does not matter
        append_record(path, r)
    return UsageLedger(path)


def test_period_totals(ledger: UsageLedger) -> None:
    s = load_summary(ledger, NOW)
    month, week, today = s.totals["month"], s.totals["week"], s.totals["today"]
    assert (round(month.usd, 9), month.responses, month.unpriced) == (4.0, 5, 1)
    assert (round(week.usd, 9), week.responses, week.unpriced) == (2.0, 3, 0)
    assert (round(today.usd, 9), today.responses, round(today.saved_usd, 9)) == (0.5, 1, 0.1)
    assert s.unpriced == 1 and s.saved_usd == pytest.approx(0.15) and s.days == 30


def test_spend_per_day_stacked_by_model(ledger: UsageLedger) -> None:
    s = load_summary(ledger, NOW)
    daily = s.daily
    assert daily.dates[0] == _dt.date(2026, 2, 17) and daily.dates[-1] == _dt.date(2026, 3, 18)
    assert len(daily.dates) == len(daily.usd) == 30
    assert daily.groups == ["gpt-4o", "claude-haiku-4-5", "claude-sonnet-4-5"]
    by_day = {d: stack for d, stack in zip(daily.dates, daily.usd, strict=True) if stack}
    assert by_day == {
        _dt.date(2026, 2, 20): {"claude-haiku-4-5": 3.0},
        _dt.date(2026, 3, 2): {"gpt-4o": 2.0},
        _dt.date(2026, 3, 16): {"claude-sonnet-4-5": 0.25},
        _dt.date(2026, 3, 17): {"gpt-4o": 1.25},
        _dt.date(2026, 3, 18): {"claude-sonnet-4-5": 0.5},
    }
    assert daily.day_total(len(daily.dates) - 1) == 0.5


@pytest.mark.parametrize(("group_by", "groups"), [
    ("provider", ["anthropic", "openai"]),
    ("project", ["/p/alpha", "/p/beta"]),
])
def test_spend_per_day_stacked_by_provider_or_project(ledger: UsageLedger, group_by: str,
                                                      groups: list[str]) -> None:
    s = load_summary(ledger, NOW, group_by=group_by)  # type: ignore[arg-type]
    assert s.group_by == group_by and s.daily.groups == groups
    assert sum(sum(day.values()) for day in s.daily.usd) == pytest.approx(7.0)


def test_top_nodes_and_models(ledger: UsageLedger) -> None:
    s = load_summary(ledger, NOW)
    nodes = [(r.label, r.detail, r.responses, r.unpriced, round(r.usd, 4)) for r in s.top_nodes]
    assert nodes == [("Docs", "beta", 2, 0, 3.25), ("Old", "alpha", 1, 0, 3.0),
                     ("Parser v2", "alpha", 2, 0, 0.75), ("Local", "beta", 1, 1, 0.0)]
    models = [(r.label, r.detail, r.responses, round(r.usd, 4)) for r in s.top_models]
    assert models == [("gpt-4o", "openai", 2, 3.25), ("claude-haiku-4-5", "anthropic", 1, 3.0),
                      ("claude-sonnet-4-5", "anthropic", 2, 0.75), ("llama3:8b", "ollama", 1, 0.0)]
    assert s.top_nodes[0].tokens == 2 * 1600
    assert [r.label for r in summarize(KNOWN, NOW, top=2).top_models] == ["gpt-4o", "claude-haiku-4-5"]


def test_summarize_validates_its_arguments() -> None:
    with pytest.raises(ValueError):
        summarize([], NOW, days=0)
    with pytest.raises(ValueError):
        summarize([], NOW, group_by="colour")  # type: ignore[arg-type]


def test_day_starts_cover_the_window_up_to_tomorrow() -> None:
    dates, bounds = day_starts(NOW, 3)
    assert dates == [_dt.date(2026, 3, 16), _dt.date(2026, 3, 17), _dt.date(2026, 3, 18)]
    assert bounds == [ms(2026, 3, 16), ms(2026, 3, 17), ms(2026, 3, 18), ms(2026, 3, 19)]


def test_csv_export_has_every_record_and_neutralises_formulas(ledger: UsageLedger, tmp_path: Path) -> None:
    hostile = rec((2026, 3, 18, 11), "gpt-4o", "openai", "/p/beta", "n9", '=HYPERLINK("http://x","y")', 0.125)
    append_record(ledger.path, hostile)
    dest = tmp_path / "out" / "usage.csv"
    assert export_csv(ledger, dest) == len(KNOWN) + 1
    rows = list(csv.reader(io.StringIO(dest.read_text(encoding="utf-8"))))
    assert tuple(rows[0]) == CSV_COLUMNS
    body = {row[1]: dict(zip(CSV_COLUMNS, row, strict=True)) for row in rows[1:]}
    assert len(body) == len(KNOWN) + 1
    local = body[str(ms(2026, 3, 10, 16))]
    assert local["time"] == "2026-03-10T16:00:00" and local["model"] == "llama3:8b"
    assert local["usd"] == "" and local["saved_usd"] == "" and local["estimated"] == "true"
    today = body[str(ms(2026, 3, 18, 10))]
    assert (today["usd"], today["saved_usd"], today["node_title"]) == ("0.5", "0.1", "Parser v2")
    assert today["input"] == "1000"
    assert body[str(hostile.ts)]["node_title"] == "'" + hostile.node_title
    assert csv_text([]) == ",".join(CSV_COLUMNS) + "\n"


def test_the_ledger_benchmark_runs_at_tiny_size() -> None:
    from benchmarks._harness import Settings
    from benchmarks.ledger import measure, run

    rows = run(Settings.tiny())
    assert [r.key for r in rows] == ["ledger.month", "ledger.tally"]
    assert rows[0].ours and rows[0].baseline and rows[0].budget is not None
    result = measure(500, 3, warmup=0)
    assert result["lines"] == result["responses"] == 500 and len(result["ours_ms"]) == 3
    assert result["ours_median_ms"] > 0 and result["baseline_median_ms"] > 0
