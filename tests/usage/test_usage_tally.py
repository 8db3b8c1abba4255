"""MonthlyTally: this month's totals from the ledger, reading only what was appended since last time."""

from __future__ import annotations

import datetime as _dt
from pathlib import Path

import pytest

from desktop.core.usage import MonthlyTally, UsageRecord, append_record, totals
from desktop.core.usage._periods import month_range

NOW = _dt.datetime(2026, 11, 20, 12, 0)
IN_MONTH = month_range(NOW)[0] + 3_600_000
LAST_MONTH = month_range(NOW)[0] - 3_600_000


def rec(ts: int = IN_MONTH, usd: float | None = 0.5, project: str = "/p/one") -> UsageRecord:
    return UsageRecord(ts=ts, project=project, node="n1", node_title="T", provider="anthropic", model="m",
                       input=10, output=20, cache_read=0, cache_write=0, reasoning=0, usd=usd,
                       estimated=usd is None, saved_usd=None if usd is None else 0.0)


def test_counts_the_month_and_follows_appends_from_any_writer(tmp_path: Path) -> None:
    path = tmp_path / "usage.jsonl"
    clock = [NOW]
    tally = MonthlyTally(path, clock=lambda: clock[0])
    assert tally.totals().usd == 0 and tally.totals().responses == 0  # no ledger yet
    append_record(path, rec(usd=1.25))
    append_record(path, rec(ts=LAST_MONTH, usd=100.0))  # last month: not counted
    append_record(path, rec(usd=None))  # unpriced: counted apart
    t = tally.totals()
    assert (t.usd, t.responses, t.unpriced) == (pytest.approx(1.25), 2, 1)
    append_record(path, rec(usd=0.75, project="/p/two"))  # e.g. another instance
    assert tally.totals().usd == pytest.approx(2.0)
    assert tally.totals("/p/one").usd == pytest.approx(1.25)  # asked first now: counted from the file
    assert tally.totals("/p/two").usd == pytest.approx(0.75)
    append_record(path, rec(usd=0.5, project="/p/two"))
    assert tally.totals("/p/two").usd == pytest.approx(1.25) and tally.totals().usd == pytest.approx(2.5)
    for project in (None, "/p/one", "/p/two"):
        whole = totals(path, *month_range(NOW), project=project)
        assert tally.totals(project).usd == pytest.approx(whole.usd)
    clock[0] = NOW + _dt.timedelta(days=15)  # December: a new month counts from zero
    assert tally.totals().usd == 0 and tally.totals("/p/two").usd == 0


def test_a_torn_line_waits_for_its_end_and_a_replaced_ledger_is_recounted(tmp_path: Path) -> None:
    path = tmp_path / "usage.jsonl"
    tally = MonthlyTally(path, clock=lambda: NOW)
    append_record(path, rec(usd=1.0))
    line = rec(usd=2.0).to_line()
    with open(path, "ab") as fh:
        fh.write(line[:20])  # a writer caught mid-line
    assert tally.totals().usd == pytest.approx(1.0)
    with open(path, "ab") as fh:
        fh.write(line[20:])
    assert tally.totals().usd == pytest.approx(3.0)
    path.write_bytes(rec(usd=0.25).to_line())  # replaced by something shorter
    assert tally.totals().usd == pytest.approx(0.25)


def test_a_check_after_one_more_line_reads_only_that_line(tmp_path: Path) -> None:
    path = tmp_path / "usage.jsonl"
    line = rec(usd=0.001).to_line()
    path.write_bytes(line * 1_000)
    tally = MonthlyTally(path, clock=lambda: NOW)
    assert tally.totals().responses == 1_000
    # Rewrite what was already counted in place, same size (no writer does this; it makes a re-read
    # visible): a tally that read the whole file again would now count $9 a line.
    dear = rec(usd=9.009).to_line()
    assert len(dear) == len(line)
    path.write_bytes(dear * 1_000)
    for n in range(1, 21):
        append_record(path, rec(usd=0.001))
        t = tally.totals()
        assert t.responses == 1_000 + n
        assert t.usd == pytest.approx(0.001 * (1_000 + n))  # only the appended line was read
    # (How long a check takes on a 100,000-line ledger is benchmarks/ledger.py's ledger.tally row.)
