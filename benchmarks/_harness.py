"""The shared harness of the benchmarks: timing, result rows with budgets, the one results table.

Every figure is a :class:`Row`: the samples of what we measure (``ours``), optionally the samples
of a baseline measured in the same run, and a :class:`Budget`. The table shows, per row, the
median and min–max of each, the ratio of the medians and whether the budget holds.
"""

from __future__ import annotations

import gc
import logging
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

log = logging.getLogger(__name__)

__all__ = ["Budget", "Row", "median", "percentile", "timed", "repeat", "paired", "format_table", "Settings"]


@dataclass(frozen=True)
class Settings:
    """Sizes and repetition counts of one suite run.

    Attributes:
        runs: Measured runs per figure (after one untimed warm-up where it matters).
        events: Deltas per streamed response (driver and node benchmarks).
        stall_nodes: Nodes streaming at once in the UI-stall and typing benchmarks.
        stall_events: Deltas per node in the UI-stall and typing benchmarks.
        open_messages: Messages of the single node opened to first paint (and scrolled through).
        project_nodes: Nodes of the project opened for the memory figure.
        project_messages: Messages per node of that project.
        cap_messages: Messages capped by the cap benchmark (the linearity row doubles it).
        smoke: Tiny sizes for the test suite: numbers of the right shape, not meaningful ones.
    """

    runs: int = 5
    events: int = 20_000
    stall_nodes: int = 8
    stall_events: int = 20_000
    open_messages: int = 2_000
    project_nodes: int = 20
    project_messages: int = 500
    cap_messages: int = 10_000
    smoke: bool = False

    @property
    def warmup(self) -> int:
        """Untimed warm-up runs before the measured ones (none in the smoke test)."""
        return 0 if self.smoke else 1

    @classmethod
    def tiny(cls) -> Settings:
        """The sizes of the smoke test (every code path once, in well under a second each)."""
        return cls(runs=1, events=200, stall_nodes=2, stall_events=200, open_messages=60, project_nodes=2,
                   project_messages=20, cap_messages=200, smoke=True)


@dataclass(frozen=True)
class Budget:
    """A limit on a row.

    Attributes:
        kind: ``ratio``: median(ours) / median(baseline) ≤ limit; ``max``: median(ours) ≤ limit.
        limit: The limit.
        text: How the budget reads in the table (e.g. ``≤ 1.0×``).
    """

    kind: Literal["ratio", "max"]
    limit: float
    text: str

    @classmethod
    def ratio(cls, limit: float) -> Budget:
        """median(ours) / median(baseline) must not exceed ``limit``."""
        return cls("ratio", limit, f"≤ {limit:.1f}×")

    @classmethod
    def at_most(cls, limit: float, unit: str) -> Budget:
        """median(ours) must not exceed ``limit`` (in the row's unit)."""
        return cls("max", limit, f"≤ {limit:g} {unit}")


def median(values: Sequence[float]) -> float:
    """The median of a non-empty sequence."""
    return float(statistics.median(values))


def percentile(values: Sequence[float], pct: float) -> float:
    """The ``pct`` percentile (0–100) with linear interpolation; 0.0 for an empty sequence."""
    if not values:
        return 0.0
    ordered = sorted(values)
    if len(ordered) == 1:
        return float(ordered[0])
    pos = (len(ordered) - 1) * pct / 100.0
    lo = int(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return float(ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo))


@dataclass
class Row:
    """One figure of the results table.

    Attributes:
        key: Stable identifier (``drivers.openai``...), used by ``--only`` and the tests.
        figure: What is measured, as the table shows it.
        unit: Unit of the samples (``ms``, ``MB``).
        ours: Samples of what we measure.
        baseline_name: What the baseline is.
        baseline: Samples of the baseline (same unit), or None.
        budget: The limit, or None for an informational row.
        note: A short remark shown under the table.
    """

    key: str
    figure: str
    unit: str
    ours: list[float]
    baseline_name: str = ""
    baseline: list[float] | None = None
    budget: Budget | None = None
    note: str = ""

    @property
    def ratio(self) -> float | None:
        """median(ours) / median(baseline), or None without a baseline."""
        if not self.baseline or not self.ours:
            return None
        base = median(self.baseline)
        return median(self.ours) / base if base > 0 else float("inf")

    @property
    def passed(self) -> bool | None:
        """Whether the budget holds; None for an informational row."""
        if self.budget is None or not self.ours:
            return None
        if self.budget.kind == "ratio":
            ratio = self.ratio
            return ratio is not None and ratio <= self.budget.limit
        return median(self.ours) <= self.budget.limit


def timed(fn: Callable[[], object]) -> float:
    """Wall time of one call in milliseconds (garbage collected before, not during)."""
    gc.collect()
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1000.0


def repeat(fn: Callable[[], float], runs: int, *, warmup: int = 1) -> list[float]:
    """Call ``fn`` (which returns one sample) ``warmup`` times untimed, then ``runs`` times."""
    for _ in range(warmup):
        fn()
    return [fn() for _ in range(runs)]


def paired(
    ours: Callable[[], float], baseline: Callable[[], float], runs: int, *, warmup: int = 1
) -> tuple[list[float], list[float]]:
    """Alternate ``ours`` and ``baseline`` (after ``warmup`` untimed calls of each), so a burst of load
    from elsewhere on the machine hits both sides alike. Returns (ours samples, baseline samples)."""
    for _ in range(warmup):
        ours()
        baseline()
    a: list[float] = []
    b: list[float] = []
    for i in range(runs):
        if i % 2:
            b.append(baseline())
            a.append(ours())
        else:
            a.append(ours())
            b.append(baseline())
    return a, b


def _num(value: float) -> str:
    if value >= 100:
        return f"{value:,.0f}"
    if value >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


def _spread(values: Sequence[float] | None, unit: str) -> str:
    if not values:
        return "–"
    med = median(values)
    if len(values) == 1:
        return f"{_num(med)} {unit}"
    return f"{_num(med)} {unit} ({_num(min(values))}–{_num(max(values))})"


def format_table(rows: Sequence[Row]) -> str:
    """The Markdown results table: median (min–max) of ours and the baseline, ratio, budget, result."""
    head = ["#", "figure", "ours: median (min–max)", "baseline", "baseline: median (min–max)", "ratio",
            "budget", "result"]
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    for n, row in enumerate(rows, 1):
        ratio = row.ratio
        passed = row.passed
        result = "info" if passed is None else ("PASS" if passed else "**FAIL**")
        cells = [
            str(n),
            row.figure,
            _spread(row.ours, row.unit),
            row.baseline_name or "–",
            _spread(row.baseline, row.unit),
            "–" if ratio is None else f"{ratio:.2f}×",
            row.budget.text if row.budget else "–",
            result,
        ]
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines)
