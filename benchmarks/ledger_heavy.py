"""Budget: with a 200 MB usage ledger (713,000 lines, three years of heavy use) the dashboard's figures take
≤ 1 s and ≤ 100 MB of extra memory, and this month's totals ≤ 200 ms.

The ledger is written in a temp folder in time order (as the app appends it), shaped like
``benchmarks.ledger``'s (eight models, one unpriced; cache reads; titles with quotes and non-ASCII text;
a dozen projects), and pinned to a ``now`` on the 28th of the current month at noon so the dashboard's
window (about 31 days) does not depend on the day the suite runs. Rows:

* ``ledger.heavy_index``: the first query after an upgrade (or after the index file is deleted), which
  builds the block index by reading the whole ledger once. Informational.
* ``ledger.heavy_dashboard``: ``load_summary`` through a new ``UsageLedger`` each run, as each
  dashboard opens (the index is read from its file).
* ``ledger.heavy_month``: this month's totals through a new ``UsageLedger``, the budget path.
* ``ledger.heavy_dashboard_rss`` / ``ledger.heavy_month_rss``: the peak RSS those add, each measured
  in a child process (the peak after the call minus the RSS before it, modules already imported).

The time baseline, measured in the same run, is reading the raw ledger file once; the memory baseline
is the same read in a child process (about the file's size).

``measure()`` returns a plain result dict; ``run(settings)`` gives the suite's rows.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import logging
import random
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks._harness import Budget, Row, Settings, median, paired, timed
from benchmarks.ledger import _MODELS, _TITLES
from desktop.core.usage import UsageLedger, UsageRecord, ledger_path, load_summary, month_range

log = logging.getLogger(__name__)

__all__ = ["LINES", "DAYS", "build_history", "pinned_now", "measure", "run"]

LINES = 713_000
DAYS = 3 * 365
DASHBOARD_MS = 1000.0
MONTH_MS = 200.0
EXTRA_MB = 100.0
REPO = Path(__file__).resolve().parents[1]
TIMEOUT_S = 300


def pinned_now() -> _dt.datetime:
    """Noon on the 28th of the current month (every month has one)."""
    today = _dt.date.today()
    return _dt.datetime(today.year, today.month, 28, 12, 0)


def build_history(path: Path, lines: int, now: _dt.datetime, days: int = DAYS, seed: int = 7) -> None:
    """Write ``lines`` records spread evenly over the ``days`` days before ``now``, oldest first."""
    rng = random.Random(seed)
    end = int(now.timestamp() * 1000)
    start = end - days * 86_400_000
    step = (end - start) / max(1, lines)
    nodes = [f"node-{rng.getrandbits(40):010x}" for _ in range(max(1, lines // 140))]
    with open(path, "wb") as fh:
        chunk: list[bytes] = []
        for i in range(lines):
            provider, model, p_in, p_out, p_read = _MODELS[rng.randrange(len(_MODELS))]
            n_in = rng.randint(200, 30_000)
            n_out = rng.randint(20, 4_000)
            n_read = rng.choice((0, 0, rng.randint(1_000, 120_000)))
            priced = p_in >= 0
            usd = (n_in * p_in + n_out * p_out + n_read * p_read) / 1e6 if priced else None
            saved = n_read * (p_in - p_read) / 1e6 if priced else None
            node = (i // 40 + rng.randrange(3)) % len(nodes)  # a node answers a few dozen times, then rests
            chunk.append(UsageRecord(
                ts=start + int(i * step), project=f"/home/ada/projects/project-{(i // 2_000) % 12}",
                node=nodes[node], node_title=_TITLES[node % len(_TITLES)], provider=provider, model=model,
                input=n_in, output=n_out, cache_read=n_read, cache_write=0,
                reasoning=rng.choice((0, n_out // 3)), usd=usd, estimated=not priced, saved_usd=saved,
            ).to_line())
            if len(chunk) >= 10_000:
                fh.write(b"".join(chunk))
                chunk = []
        fh.write(b"".join(chunk))


def _raw(path: Path) -> int:
    with open(path, "rb") as fh:
        return len(fh.read())


def _index_file(path: Path) -> Path:
    return path.with_name(path.name + ".index")


def _cold(path: Path, now: _dt.datetime) -> float:
    _index_file(path).unlink(missing_ok=True)
    return timed(lambda: UsageLedger(path).totals(*month_range(now)))


def _child(what: str, path: Path, now: _dt.datetime) -> float:
    """Peak extra MB of ``what`` (dashboard, month, raw) in a fresh process."""
    argv = [sys.executable, "-m", "benchmarks.ledger_heavy", "--child", what, str(path), now.isoformat()]
    proc = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=TIMEOUT_S, check=False)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(f"ledger child exited {proc.returncode}: {proc.stderr[-2000:]}")
    result: dict[str, float] = json.loads(lines[-1])
    return result["extra_mb"]


def measure(lines: int = LINES, runs: int = 5, *, warmup: int = 1) -> dict[str, Any]:
    """Build a ``lines``-line history in a temp folder and measure every row (see the module docstring).

    Returns:
        ``{"lines", "bytes", "runs", "index_ms", "dashboard_ms", "month_ms", "raw_ms" (paired with the
        dashboard), "raw_ms_month", "raw_ms_index", "dashboard_mb", "month_mb", "raw_mb", "responses",
        "window_responses"}`` (lists of samples where plural).
    """
    now = pinned_now()
    start, end = month_range(now)
    with tempfile.TemporaryDirectory(prefix="chatnodes-ledger-heavy-") as tmp:
        path = ledger_path(Path(tmp))
        build_history(path, lines, now)
        size = path.stat().st_size
        index_ms, raw_index = paired(lambda: _cold(path, now), lambda: timed(lambda: _raw(path)), runs,
                                     warmup=0)
        month = UsageLedger(path).totals(start, end)
        summary = load_summary(UsageLedger(path), now)
        if month.corrupt or summary.corrupt or month.responses == 0:
            raise RuntimeError(f"heavy ledger read {month.responses} responses this month, "
                               f"{month.corrupt} corrupt lines")
        dashboard_ms, raw_ms = paired(lambda: timed(lambda: load_summary(UsageLedger(path), now)),
                                      lambda: timed(lambda: _raw(path)), runs, warmup=warmup)
        month_ms, raw_month = paired(lambda: timed(lambda: UsageLedger(path).totals(start, end)),
                                     lambda: timed(lambda: _raw(path)), runs, warmup=warmup)
        mem_runs = max(1, min(runs, 3))
        dashboard_mb = [_child("dashboard", path, now) for _ in range(mem_runs)]
        month_mb = [_child("month", path, now) for _ in range(mem_runs)]
        raw_mb = [_child("raw", path, now) for _ in range(mem_runs)]
    return {
        "lines": lines, "bytes": size, "runs": runs, "index_ms": index_ms, "raw_ms_index": raw_index,
        "dashboard_ms": dashboard_ms, "raw_ms": raw_ms, "month_ms": month_ms, "raw_ms_month": raw_month,
        "dashboard_mb": dashboard_mb, "month_mb": month_mb, "raw_mb": raw_mb,
        "responses": month.responses, "window_responses": summary.totals["month"].responses,
    }


def run(settings: Settings) -> list[Row]:
    """The rows of a 713,000-line history (2,000 lines in the smoke run)."""
    lines = 2_000 if settings.smoke else LINES
    r = measure(lines, max(settings.runs, 1 if settings.smoke else 5), warmup=settings.warmup)
    what = f"{lines:,} lines ({r['bytes'] / 2**20:.0f} MiB, three years)"
    raw = "read the raw ledger once"
    note = (f"dashboard {median(r['dashboard_ms']):.0f} ms vs reading the file {median(r['raw_ms']):.0f} ms; "
            f"the index is built once (first query after an upgrade), then kept beside the ledger")
    return [
        Row("ledger.heavy_index", f"usage ledger: first query, builds the block index, {what}", "ms",
            r["index_ms"], raw, r["raw_ms_index"]),
        Row("ledger.heavy_dashboard", f"usage dashboard figures (load_summary), {what}", "ms",
            r["dashboard_ms"], raw, r["raw_ms"], Budget.at_most(DASHBOARD_MS, "ms"), note),
        Row("ledger.heavy_month", f"usage ledger: this month's totals, {what}", "ms", r["month_ms"], raw,
            r["raw_ms_month"], Budget.at_most(MONTH_MS, "ms")),
        Row("ledger.heavy_dashboard_rss", f"usage dashboard figures: extra peak RSS, {what}", "MB",
            r["dashboard_mb"], "raw read, extra peak RSS", r["raw_mb"], Budget.at_most(EXTRA_MB, "MB")),
        Row("ledger.heavy_month_rss", f"usage ledger: this month's totals, extra peak RSS, {what}", "MB",
            r["month_mb"], "raw read, extra peak RSS", r["raw_mb"], Budget.at_most(EXTRA_MB, "MB")),
    ]


def _child_main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.ledger_heavy")
    parser.add_argument("--child", choices=("dashboard", "month", "raw"), required=True)
    parser.add_argument("path", type=Path)
    parser.add_argument("now")
    args = parser.parse_args(argv)
    import psutil  # type: ignore[import-untyped]

    from desktop.core.usage import _index, _lines, _report  # noqa: F401 - imported before measuring

    now = _dt.datetime.fromisoformat(args.now)
    _reset_peak()
    before = psutil.Process().memory_info().rss
    if args.child == "dashboard":
        load_summary(UsageLedger(args.path), now)
    elif args.child == "month":
        UsageLedger(args.path).totals(*month_range(now))
    else:
        _raw(args.path)
    print(json.dumps({"extra_mb": max(0, _peak() - before) / 2**20}))
    return 0


def _reset_peak() -> None:
    """Start the peak RSS afresh (Linux: ``5`` into ``clear_refs``; elsewhere the peak since start)."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        pass


def _peak() -> int:
    """The process's peak RSS in bytes: ``VmHWM`` on Linux (``ru_maxrss`` keeps the parent's peak across
    fork and exec, so it cannot be used in a child), else ``ru_maxrss``."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    import resource  # Unix

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * (1 if sys.platform == "darwin" else 1024)


if __name__ == "__main__":  # pragma: no cover - a child process, or a manual run
    if "--child" in sys.argv:
        raise SystemExit(_child_main(sys.argv[1:]))
    out = measure()
    print({k: (median(v) if isinstance(v, list) else v) for k, v in out.items()})
