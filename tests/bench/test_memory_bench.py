"""Smoke test of the memory benchmark (issue 28, item 3): it runs at tiny sizes, its children in fresh
processes, and returns its rows. Nothing here is a performance assertion (``make bench`` reports the
budgets)."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

from benchmarks.memory import slope

REPO = Path(__file__).resolve().parents[2]


def test_slope_is_least_squares() -> None:
    assert slope([]) == 0.0 and slope([5.0]) == 0.0
    assert slope([1.0, 2.0, 3.0]) == 1.0
    assert slope([10.0, 10.0, 10.0, 10.0]) == 0.0
    assert math.isclose(slope([0.0, 2.0, 1.0, 3.0]), 0.8)


def test_memory_benchmark_runs_in_a_child(tmp_path: Path) -> None:
    out = tmp_path / "memory.json"
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    argv = [sys.executable, "-m", "benchmarks", "--smoke", "--only", "memory", "--json", str(out)]
    proc = subprocess.run(argv, cwd=REPO, env=env, capture_output=True, text=True, timeout=180, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    payload = json.loads(out.read_text(encoding="utf-8"))
    assert payload["errors"] == []
    rows = {r["key"]: r for r in payload["rows"]}
    assert list(rows) == ["memory.open_rss", "memory.close_held", "memory.stream_slope"]
    opened = rows["memory.open_rss"]
    assert opened["ours"] and all(v > 0 for v in opened["ours"]) and all(v > 0 for v in opened["baseline"])
    closed = rows["memory.close_held"]  # what is still held may be ≤ 0 (more came back than was taken)
    assert closed["ours"] and all(math.isfinite(v) for v in closed["ours"])
    assert closed["baseline"] and all(v > 0 for v in closed["baseline"])
    stream = rows["memory.stream_slope"]  # a slope: any finite number
    assert len(stream["ours"]) == 1 and math.isfinite(stream["ours"][0])
