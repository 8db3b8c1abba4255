"""Smoke test of the performance suite: every benchmark runs once with tiny sizes and returns rows of
the right shape; the table, the budgets and the report file behave. The real numbers come from
``make bench``; nothing here is a performance assertion."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks import Budget, Row, Settings, format_table
from benchmarks._harness import median, paired, percentile
from benchmarks._suite import BEGIN_MARK, END_MARK, report, run_suite, write_report
from benchmarks.cap import json_size, naive_cap
from desktop.core.chat.conversation import split_for_cap

REPO = Path(__file__).resolve().parents[2]


def _check_rows(rows: list[Row], keys: list[str]) -> None:
    assert [r.key for r in rows] == keys
    for row in rows:
        assert row.ours and all(v > 0 for v in row.ours), row
        if row.baseline is not None:
            assert row.baseline and all(v > 0 for v in row.baseline), row
            assert row.ratio is not None and row.ratio > 0


def test_budget_and_ratio_logic() -> None:
    fast = Row("a", "fig", "ms", [1.0, 2.0, 3.0], "base", [4.0, 4.0, 5.0], Budget.ratio(1.0))
    slow = Row("b", "fig", "ms", [6.0], "base", [4.0], Budget.ratio(1.3))
    absolute = Row("c", "fig", "ms", [60.0, 40.0, 55.0], budget=Budget.at_most(50, "ms"))
    info = Row("d", "fig", "MB", [1.0])
    assert fast.ratio == pytest.approx(0.5) and fast.passed is True
    assert slow.ratio == pytest.approx(1.5) and slow.passed is False
    assert absolute.passed is False and absolute.ratio is None
    assert info.passed is None
    table = format_table([fast, slow, absolute, info]).splitlines()
    assert len(table) == 6
    assert "2.00 ms (1.00–3.00)" in table[2] and "0.50×" in table[2] and "PASS" in table[2]
    assert "**FAIL**" in table[3] and "**FAIL**" in table[4] and table[5].endswith("| info |")


def test_statistics_helpers() -> None:
    assert median([3.0, 1.0, 2.0]) == 2.0
    assert percentile(list(map(float, range(101))), 99) == pytest.approx(99.0)
    assert percentile([], 99) == 0.0
    calls: list[str] = []

    def ours() -> float:
        calls.append("a")
        return 1.0

    def base() -> float:
        calls.append("b")
        return 2.0

    a, b = paired(ours, base, 3, warmup=1)
    assert a == [1.0] * 3 and b == [2.0] * 3
    assert calls == ["a", "b", "a", "b", "b", "a", "a", "b"]  # warm-up, then alternating order


def test_naive_cap_agrees_with_split_for_cap() -> None:
    from benchmarks._data import make_messages

    messages = make_messages(300)
    for fraction in (0.0, 0.05, 0.5, 0.99):
        cap = int(json_size(messages) * (1 - fraction))
        kept, _ = split_for_cap(messages, cap)
        assert [m.id for m in naive_cap(messages, cap)] == [m.id for m in kept]


def test_drivers_cap_and_ledger_in_process() -> None:
    rows, errors = run_suite(Settings.tiny(), ["drivers", "cap", "ledger"])
    assert errors == []
    _check_rows(rows, ["drivers.openai", "drivers.anthropic", "cap.10k", "cap.linear", "ledger.month",
                       "ledger.tally"])


def test_the_rows_that_were_timed_unit_tests_in_process() -> None:
    """Issue 31 moved every wall-clock budget out of the unit tests: each is one of these rows."""
    rows, errors = run_suite(Settings.tiny(), ["hot_paths", "mcp_start"])
    assert errors == []
    _check_rows(rows, ["cpu.clear_upper_state", "apply.delta_history", "providers.blank_deltas",
                       "markdown.linear", "markdown.openers", "code.highlight", "mcp.ready"])


def test_import_benchmark_in_process() -> None:
    rows, errors = run_suite(Settings.tiny(), ["importers"])
    assert errors == []
    _check_rows(rows, ["import.chatgpt"])
    assert "20-conversation ChatGPT export" in rows[0].figure


def test_report_file_keeps_text_outside_the_markers(tmp_path: Path) -> None:
    rows = [Row("x", "fig", "ms", [1.0], "base", [2.0], Budget.ratio(1.0))]
    text = report(rows, settings=Settings.tiny(), machine={"CPU": "test"}, errors=["y: boom"])
    assert "| 1 | fig |" in text and "- CPU: test" in text and "y: boom" in text
    path = tmp_path / "PERF.md"
    write_report(path, text)
    body = path.read_text(encoding="utf-8")
    assert body.startswith(BEGIN_MARK) and END_MARK in body
    path.write_text(body + "\n## Findings\nhand-written\n", encoding="utf-8")
    write_report(path, text.replace("fig", "other"))
    body = path.read_text(encoding="utf-8")
    assert "| 1 | other |" in body and "hand-written" in body and "| 1 | fig |" not in body


@pytest.mark.slow
def test_ui_and_process_benchmarks_in_a_child(tmp_path: Path) -> None:
    """The Qt and subprocess benchmarks run in their own process (their own QApplication and loop)."""
    out = tmp_path / "smoke.json"
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--smoke", "--only",
         "node_stream,interactive,open_nodes,cold_start,textflow",
         "--json", str(out)],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=120, check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    payload = json.loads(out.read_text(encoding="utf-8"))
    assert payload["errors"] == []
    keys = [r["key"] for r in payload["rows"]]
    assert keys == ["node.stream", "node.render_once", "node.stream_plain", "node.driver_after_paint",
                    "stall.p99", "stall.max",
                    "stall.plain.p99", "stall.plain.max", "typing.p99", "scroll.p99", "scroll.forced_p99",
                    "open.node", "open.node_short", "open.project_load", "open.project_store",
                    "open.project_rss", "start.process", "start.first_paint", "start.long_node",
                    "textflow.append"]
    for row in payload["rows"]:
        assert row["ours"] and all(v > 0 for v in row["ours"])
    assert "| # | figure |" in proc.stdout
