"""What the usage dashboard shows, computed from ledger records, and the CSV export.

``load_summary`` reads the ledger once (from the earliest of: this month's start, this week's start,
the first of the last ``days`` days) and ``summarize`` derives everything from those records: the
totals of this month / week / today, spend per local day stacked by model, provider or project, the
top nodes and models of the last ``days`` days, unpriced responses and cache savings. The read goes
through the ledger's block index, so only the blocks that can hold that window are parsed.

The CSV export (``write_csv``) streams the ledger block by block into a temporary file renamed over the
destination. Text cells cannot split a row or run as a formula in a spreadsheet (control characters and
line separators become spaces; a formula start gets a leading quote), and a timestamp the platform cannot
show as a date leaves only that row's ``time`` cell empty.
"""

from __future__ import annotations

import bisect
import contextlib
import csv
import datetime as _dt
import heapq
import io
import logging
import os
import re
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ._ledger import Totals, UsageLedger, UsageRecord
from ._periods import PERIODS, Period, day_starts, period_range

log = logging.getLogger(__name__)

__all__ = [
    "GroupBy",
    "GROUP_BYS",
    "Ranked",
    "DailySpend",
    "UsageSummary",
    "summarize",
    "load_summary",
    "summary_window",
    "CSV_COLUMNS",
    "CsvExport",
    "csv_text",
    "export_csv",
    "write_csv",
]

GroupBy = Literal["model", "provider", "project"]
GROUP_BYS: tuple[GroupBy, ...] = ("model", "provider", "project")
CSV_COLUMNS: tuple[str, ...] = (
    "time", "ts", "project", "node", "node_title", "provider", "model", "input", "output", "cache_read",
    "cache_write", "reasoning", "usd", "estimated", "saved_usd",
)
_FORMULA_START = ("=", "+", "-", "@", "\uff1d", "\uff0b", "\uff0d", "\uff20")
_UNSAFE = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


@dataclass(frozen=True, slots=True)
class Ranked:
    """One row of a "top" table.

    Attributes:
        key: What is ranked (``project\\x00node`` for nodes, the model id for models).
        label: How it reads (node title, or model id).
        detail: Second line (the project folder name for nodes, the provider for models).
        usd: Spent (priced responses).
        responses: Responses.
        unpriced: Responses without a price.
        tokens: Input + cache + output tokens.
    """

    key: str
    label: str
    detail: str
    usd: float
    responses: int
    unpriced: int
    tokens: int


@dataclass(frozen=True, slots=True)
class DailySpend:
    """Spend per local day, stacked.

    Attributes:
        dates: The days, oldest first (the last one is today).
        groups: The stack's groups, biggest spend first.
        usd: ``usd[i][group]`` is what ``group`` spent on ``dates[i]`` (absent: nothing).
    """

    dates: list[_dt.date]
    groups: list[str]
    usd: list[dict[str, float]]

    def day_total(self, index: int) -> float:
        """Everything spent on ``dates[index]``."""
        return sum(self.usd[index].values())


@dataclass(frozen=True, slots=True)
class UsageSummary:
    """Everything the dashboard shows.

    Attributes:
        totals: ``month``, ``week`` and ``today`` totals.
        daily: Spend per day over the last ``days`` days.
        group_by: What ``daily`` is stacked by.
        top_nodes: Nodes by spend over the last ``days`` days.
        top_models: Models by spend over the last ``days`` days.
        days: Length of the window.
        unpriced: Unpriced responses over the last ``days`` days.
        saved_usd: Cache savings over the last ``days`` days.
        corrupt: Corrupt ledger lines skipped.
        torn_tail: The ledger ended in an unfinished line.
    """

    totals: dict[Period, Totals]
    daily: DailySpend
    group_by: GroupBy
    top_nodes: list[Ranked]
    top_models: list[Ranked]
    days: int
    unpriced: int = 0
    saved_usd: float = 0.0
    corrupt: int = 0
    torn_tail: bool = False


class _Acc:
    """Running sums of one row (a period, a node, a model): plain slots, no per-record method call."""

    __slots__ = ("usd", "responses", "unpriced", "saved", "tokens", "label", "detail", "seen")

    def __init__(self, label: str = "", detail: str = "") -> None:
        self.usd = 0.0
        self.responses = 0
        self.unpriced = 0
        self.saved = 0.0
        self.tokens = 0
        self.label = label
        self.detail = detail
        self.seen = -1


def _add(acc: _Acc, usd: float | None, saved: float | None, tokens: int) -> None:
    acc.responses += 1
    if usd is None:
        acc.unpriced += 1
    else:
        acc.usd += usd
    if saved is not None:
        acc.saved += saved
    acc.tokens += tokens


def _group_key(rec: UsageRecord, group_by: GroupBy) -> str:
    if group_by == "model":
        return rec.model or "(unknown model)"
    if group_by == "provider":
        return rec.provider or "(unknown provider)"
    return rec.project or "(no project)"


def _folder_name(project: str) -> str:
    return os.path.basename(project.rstrip("/\\")) or project


def _ranked(accs: dict[str, _Acc], top: int, *, node_detail: bool = False) -> list[Ranked]:
    best = heapq.nsmallest(top, accs.items(), key=lambda kv: (-kv[1].usd, -kv[1].responses, kv[0]))
    rows = []
    for key, acc in best:
        detail = _folder_name(acc.detail) if node_detail else acc.detail
        rows.append(Ranked(key, acc.label, detail, acc.usd, acc.responses, acc.unpriced, acc.tokens))
    return rows


def summarize(
    records: Iterable[UsageRecord],
    now: _dt.datetime,
    *,
    days: int = 30,
    group_by: GroupBy = "model",
    top: int = 10,
    corrupt: int = 0,
    torn_tail: bool = False,
) -> UsageSummary:
    """Build the dashboard's figures from ``records`` (any order; records outside the windows are ignored).

    Raises:
        ValueError: ``days`` < 1 or unknown ``group_by``.
    """
    if days < 1:
        raise ValueError("days must be at least 1")
    if group_by not in GROUP_BYS:
        raise ValueError(f"unknown group_by: {group_by!r}")
    periods = [(_Acc(), *period_range(p, now)) for p in PERIODS]
    dates, bounds = day_starts(now, days)
    first, last = bounds[0], bounds[-1]
    per_day: list[dict[str, float]] = [{} for _ in dates]
    group_totals: dict[str, float] = {}
    nodes: dict[str, _Acc] = {}
    models: dict[str, _Acc] = {}
    window = _Acc()
    bisect_right = bisect.bisect_right
    for rec in records:
        ts = rec.ts
        usd = rec.usd
        saved = rec.saved_usd
        tokens = rec.input + rec.cache_read + rec.cache_write + rec.output
        for acc, start, end in periods:
            if start <= ts < end:
                _add(acc, usd, saved, tokens)
        if not first <= ts < last:
            continue
        _add(window, usd, saved, tokens)
        if usd is not None:
            group = _group_key(rec, group_by)
            stack = per_day[bisect_right(bounds, ts) - 1]
            stack[group] = stack.get(group, 0.0) + usd
            group_totals[group] = group_totals.get(group, 0.0) + usd
        node_key = rec.project + "\x00" + rec.node
        node = nodes.get(node_key)
        if node is None:
            node = nodes[node_key] = _Acc(detail=rec.project)
        _add(node, usd, saved, tokens)
        if ts >= node.seen:  # the newest title wins
            node.seen = ts
            node.label = rec.node_title or rec.node
        model_key = rec.model or "(unknown model)"
        model = models.get(model_key)
        if model is None:
            model = models[model_key] = _Acc(label=model_key, detail=rec.provider)
        _add(model, usd, saved, tokens)
    groups = [g for g, _ in sorted(group_totals.items(), key=lambda kv: (-kv[1], kv[0]))]
    totals = {
        p: Totals(acc.usd, acc.responses, acc.unpriced, acc.saved, corrupt, torn_tail)
        for p, (acc, _, _) in zip(PERIODS, periods, strict=True)
    }
    return UsageSummary(
        totals=totals,
        daily=DailySpend(dates, groups, per_day),
        group_by=group_by,
        top_nodes=_ranked(nodes, top, node_detail=True),
        top_models=_ranked(models, top),
        days=days,
        unpriced=window.unpriced,
        saved_usd=window.saved,
        corrupt=corrupt,
        torn_tail=torn_tail,
    )


def summary_window(now: _dt.datetime, days: int = 30) -> tuple[int, int]:
    """``[start, end)`` in ms of every record a summary can use: the last ``days`` days and the periods."""
    _, bounds = day_starts(now, days)
    start = min([bounds[0]] + [period_range(p, now)[0] for p in PERIODS])
    end = max([bounds[-1]] + [period_range(p, now)[1] for p in PERIODS])
    return start, end


def load_summary(
    ledger: UsageLedger, now: _dt.datetime, *, days: int = 30, group_by: GroupBy = "model", top: int = 10
) -> UsageSummary:
    """Read what the dashboard needs from ``ledger`` (one pass) and ``summarize`` it."""
    scan = ledger.read(*summary_window(now, days))
    return summarize(scan.records, now, days=days, group_by=group_by, top=top,
                     corrupt=scan.corrupt, torn_tail=scan.torn_tail)


def _cell(value: str) -> str:
    """A text cell a spreadsheet shows as text, never runs as a formula, and never splits into rows.

    Control characters (``\\r``, ``\\n``, ``\\t`` …) and Unicode line separators become spaces, so no
    importer starts a new row or cell inside it; a value that, after leading spaces, starts like a
    formula (``= + - @``, also their full-width forms) gets a leading quote.
    """
    text = _UNSAFE.sub(" ", value)
    return "'" + text if text.lstrip(" ").startswith(_FORMULA_START) else text


def _local_time(ts: int) -> str:
    """``ts`` as local ISO time; "" when the platform cannot show that date (e.g. the year 318857)."""
    try:
        return _dt.datetime.fromtimestamp(ts / 1000).isoformat(timespec="seconds")
    except (OverflowError, OSError, ValueError):
        return ""


def _rows(records: Iterable[UsageRecord]) -> Iterator[list[object]]:
    for rec in records:
        yield [
            _local_time(rec.ts), rec.ts, _cell(rec.project), _cell(rec.node), _cell(rec.node_title),
            _cell(rec.provider), _cell(rec.model), rec.input, rec.output, rec.cache_read, rec.cache_write,
            rec.reasoning, "" if rec.usd is None else repr(rec.usd), "true" if rec.estimated else "false",
            "" if rec.saved_usd is None else repr(rec.saved_usd),
        ]


def csv_text(records: Sequence[UsageRecord]) -> str:
    """The records as CSV (header ``CSV_COLUMNS``; ``time`` is local ISO time, empty when it cannot be
    shown; unpriced ``usd`` is empty)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    writer.writerows(_rows(records))
    return out.getvalue()


@dataclass(frozen=True, slots=True)
class CsvExport:
    """What an export wrote.

    Attributes:
        rows: Records written (one row each).
        undated: Rows whose ``time`` cell is empty: the timestamp is no date this platform can show.
        corrupt: Damaged ledger lines skipped.
    """

    rows: int
    undated: int
    corrupt: int


def write_csv(
    ledger: UsageLedger, dest: Path, start_ms: int | None = None, end_ms: int | None = None
) -> CsvExport:
    """Write the ledger's records (optionally of ``[start_ms, end_ms)``) to ``dest`` as CSV, atomically.

    The ledger is read one block at a time and the CSV streamed to a temporary file beside ``dest``
    (renamed over it at the end), so memory stays small whatever the ledger's size.

    Raises:
        OSError: ``dest`` cannot be written, or the ledger cannot be read; ``dest`` is unchanged.
    """
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".tmp", dir=dest.parent)
    rows = undated = corrupt = 0
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as out:
            writer = csv.writer(out, lineterminator="\n")
            writer.writerow(CSV_COLUMNS)
            for piece in ledger.scans(start_ms, end_ms):
                cells = list(_rows(piece.records))
                writer.writerows(cells)
                rows += len(cells)
                undated += sum(1 for row in cells if row[0] == "")
                corrupt += piece.corrupt
            out.flush()
            os.fsync(out.fileno())
        os.chmod(name, _new_file_mode())
        os.replace(name, dest)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(name)
        raise
    if undated:
        log.warning("usage export to %s: %d rows with a date that cannot be shown (time left empty)",
                    dest, undated)
    return CsvExport(rows, undated, corrupt)


def export_csv(
    ledger: UsageLedger, dest: Path, start_ms: int | None = None, end_ms: int | None = None
) -> int:
    """``write_csv``, returning only the number of records written.

    Raises:
        OSError: ``dest`` cannot be written, or the ledger cannot be read; ``dest`` is unchanged.
    """
    return write_csv(ledger, dest, start_ms, end_ms).rows


def _new_file_mode() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask
