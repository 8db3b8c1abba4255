"""Budget: a month's totals from a 100,000-line usage ledger take ≤ 200 ms.

The ledger is built in a temp folder with ``append_record`` shaped like real use: every line in the
current month (the worst case: nothing can be skipped), several models and providers (one in eight
unpriced), prompt-cache reads, node titles with quotes and non-ASCII text, five projects. Ours is
``desktop.core.usage.totals`` over the calendar month, with the ledger's block index present (the
warm-up run builds it, as the app's first query does once; ``benchmarks/ledger_heavy.py`` times that
build): blocks wholly inside the month are summed from the index, the rest is parsed. The baseline,
measured in the same run, is the least any reader must do: read the file's bytes and split them into
lines.

``measure()`` returns a plain result dict; ``run(settings)`` gives the suite's rows.

Second row, ``ledger.tally``: the session chip's ``MonthlyTally`` after one more line was appended to
that ledger (what every answer costs the window), against a fresh tally's first count of the whole
ledger. It reads only the new line, so the ratio is tiny; budget ≤ 0.05× (the unit test proves the
"only the new line" part by rewriting what was already counted: tests/usage/test_usage_tally.py).
"""

from __future__ import annotations

import datetime as _dt
import logging
import random
import tempfile
from pathlib import Path
from typing import Any

from benchmarks._harness import Budget, Row, Settings, median, paired, timed
from desktop.core.usage import MonthlyTally, UsageRecord, append_record, ledger_path, month_range, totals

log = logging.getLogger(__name__)

__all__ = ["LINES", "build_ledger", "measure", "measure_tally", "run"]

LINES = 100_000
BUDGET_MS = 200.0

_MODELS = (
    ("anthropic", "claude-sonnet-4-5", 3.0, 15.0, 0.3),
    ("anthropic", "claude-haiku-4-5", 1.0, 5.0, 0.1),
    ("openai", "gpt-4.1", 2.0, 8.0, 0.5),
    ("openai", "gpt-4o-mini", 0.15, 0.6, 0.075),
    ("gemini", "gemini-2.5-pro", 1.25, 10.0, 0.125),
    ("deepseek", "deepseek-chat", 0.28, 0.42, 0.028),
    ("openrouter", "mistralai/mistral-large-latest", 0.5, 1.5, 0.05),
    ("ollama", "llama3.3:70b", -1.0, -1.0, -1.0),  # unpriced
)
_TITLES = ("Refactor the \"parser\" module", "Résumé du rapport — Q3", "调试内存泄漏", "Plan the release 🚀",
           "Why is CI red?", "SQL: top customers by revenue")


def build_ledger(path: Path, lines: int, now: _dt.datetime, seed: int = 7) -> None:
    """Write ``lines`` records, all inside the calendar month of ``now``, in one buffered write."""
    rng = random.Random(seed)
    start, _ = month_range(now)
    span = max(1, int(now.timestamp() * 1000) - start)
    chunks: list[bytes] = []
    for i in range(lines):
        provider, model, p_in, p_out, p_read = _MODELS[rng.randrange(len(_MODELS))]
        n_in = rng.randint(200, 30_000)
        n_out = rng.randint(20, 4_000)
        n_read = rng.choice((0, 0, rng.randint(1_000, 120_000)))
        priced = p_in >= 0
        usd = (n_in * p_in + n_out * p_out + n_read * p_read) / 1e6 if priced else None
        saved = n_read * (p_in - p_read) / 1e6 if priced else None
        record = UsageRecord(
            ts=start + rng.randrange(span), project=f"/home/ada/projects/project-{i % 5}",
            node=f"node-{rng.getrandbits(40):010x}", node_title=_TITLES[i % len(_TITLES)],
            provider=provider, model=model, input=n_in, output=n_out, cache_read=n_read, cache_write=0,
            reasoning=rng.choice((0, n_out // 3)), usd=usd, estimated=not priced, saved_usd=saved,
        )
        chunks.append(record.to_line())
    path.write_bytes(b"".join(chunks))


def _baseline(path: Path) -> float:
    def work() -> None:
        with open(path, "rb") as fh:
            fh.read().split(b"\n")
    return timed(work)


def measure(lines: int = LINES, runs: int = 5, *, warmup: int = 1) -> dict[str, Any]:
    """Build a ``lines``-line ledger in a temp folder and time this month's totals against the baseline.

    Returns:
        ``{"lines", "bytes", "runs", "ours_ms": [...], "baseline_ms": [...], "ours_median_ms",
        "baseline_median_ms", "ratio", "budget_ms", "within_budget", "responses", "usd"}``.
    """
    now = _dt.datetime.now()
    with tempfile.TemporaryDirectory(prefix="chatnodes-ledger-bench-") as tmp:
        path = ledger_path(Path(tmp))
        build_ledger(path, lines, now)
        start, end = month_range(now)
        result = totals(path, start, end)
        if result.responses != lines or result.corrupt:
            raise RuntimeError(f"ledger totals read {result.responses} of {lines} lines "
                               f"({result.corrupt} corrupt)")
        ours, base = paired(lambda: timed(lambda: totals(path, start, end)), lambda: _baseline(path),
                            runs, warmup=warmup)
        size = path.stat().st_size
    ours_med = median(ours)
    base_med = median(base)
    return {
        "lines": lines, "bytes": size, "runs": runs, "ours_ms": ours, "baseline_ms": base,
        "ours_median_ms": ours_med, "baseline_median_ms": base_med,
        "ratio": ours_med / base_med if base_med > 0 else float("inf"),
        "budget_ms": BUDGET_MS, "within_budget": ours_med <= BUDGET_MS,
        "responses": result.responses, "usd": result.usd,
    }


def measure_tally(lines: int = LINES, runs: int = 5, *, warmup: int = 1) -> tuple[list[float], list[float]]:
    """A ``lines``-line ledger: (ms of a ``MonthlyTally`` check after one appended line, ms of a fresh
    tally's first count), ``runs`` of each, alternated."""
    now = _dt.datetime.now()
    with tempfile.TemporaryDirectory(prefix="chatnodes-tally-bench-") as tmp:
        path = ledger_path(Path(tmp))
        build_ledger(path, lines, now)
        tally = MonthlyTally(path, clock=lambda: now)
        tally.totals()
        record = UsageRecord(
            ts=int(now.timestamp() * 1000), project="/home/ada/projects/project-0", node="node-bench",
            node_title="Bench", provider="anthropic", model="claude-haiku-4-5", input=100, output=10,
            cache_read=0, cache_write=0, reasoning=0, usd=0.0002, estimated=False, saved_usd=0.0,
        )
        counted = [lines]

        def check() -> float:
            append_record(path, record)
            counted[0] += 1
            ms = timed(tally.totals)
            if tally.totals().responses != counted[0]:
                raise RuntimeError("the tally missed the appended line")
            return ms

        def first_count() -> float:
            return timed(lambda: MonthlyTally(path, clock=lambda: now).totals())

        return paired(check, first_count, runs, warmup=warmup)


def run(settings: Settings) -> list[Row]:
    """The suite's rows: a month's totals of a 100,000-line ledger (1,000 lines in the smoke run), and
    the tally's check after one more line."""
    lines = 1_000 if settings.smoke else LINES
    runs = max(settings.runs, 1 if settings.smoke else 5)
    result = measure(lines, runs, warmup=settings.warmup)
    mib = result["bytes"] / 2**20
    check, first = measure_tally(lines, runs, warmup=settings.warmup)
    return [
        Row("ledger.month", f"usage ledger: a month's totals from {lines:,} lines ({mib:.1f} MiB)", "ms",
            result["ours_ms"], "read the bytes and split lines", result["baseline_ms"],
            Budget.at_most(BUDGET_MS, "ms"), "block index present (built once, by the warm-up run)"),
        Row("ledger.tally", f"MonthlyTally after one more line on {lines:,}", "ms", check,
            "a fresh tally's first count", first, Budget("ratio", 0.05, "≤ 0.05×")),
    ]


if __name__ == "__main__":  # pragma: no cover - manual run
    out = measure()
    print({k: v for k, v in out.items() if not k.endswith("_ms") or "median" in k})
