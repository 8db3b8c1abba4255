"""Smoke run of the search benchmark (issue 27) at tiny sizes: rows of the right shape. The real
numbers come from ``make bench``; nothing here is a performance assertion."""

from __future__ import annotations

from benchmarks import Settings, run_suite
from benchmarks._suite import BENCHMARKS


def test_search_rows() -> None:
    assert "search" in BENCHMARKS
    rows, errors = run_suite(Settings.tiny(), ["search"])
    assert errors == []
    assert [r.key for r in rows] == ["search.build", "search.build_gap_p99", "search.query_word",
                                     "search.query_phrase", "search.query_prefix", "search.query_best",
                                     "search.size", "search.update_one"]
    for row in rows:
        assert row.ours and all(v > 0 for v in row.ours), row


def test_search_ui_rows() -> None:
    assert "search_ui" in BENCHMARKS
    rows, errors = run_suite(Settings.tiny(), ["search_ui"])
    assert errors == []
    assert [r.key for r in rows] == ["search_ui.first_results", "search_ui.first_results_p95"]
    for row in rows:
        assert row.ours and all(v > 0 for v in row.ours), row
