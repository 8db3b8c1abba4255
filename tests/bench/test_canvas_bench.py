"""Smoke test of the canvas benchmark (issue 30): it runs at tiny sizes in its own process and returns
its rows. Nothing here is a performance assertion (``make bench`` reports the budgets)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_canvas_benchmark_runs_in_a_child(tmp_path: Path) -> None:
    out = tmp_path / "canvas.json"
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    argv = [sys.executable, "-m", "benchmarks", "--smoke", "--only", "canvas", "--json", str(out)]
    proc = subprocess.run(argv, cwd=REPO, env=env, capture_output=True, text=True, timeout=180, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    payload = json.loads(out.read_text(encoding="utf-8"))
    assert payload["errors"] == []
    assert [r["key"] for r in payload["rows"]] == ["canvas.pan_p99", "canvas.zoom_p99", "canvas.switch",
                                                   "canvas.stall_p99", "canvas.stall_max"]
    for row in payload["rows"]:
        assert row["ours"] and all(v > 0 for v in row["ours"])
