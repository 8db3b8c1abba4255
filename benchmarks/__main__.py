"""``python -m benchmarks [--runs N] [--only a,b] [--smoke] [--write FILE] [--json FILE] [--in-process]``:
run the suite (each benchmark in a fresh process of its own unless ``--in-process``), print the one
results table, optionally write it (with the machine and date) into a Markdown file."""

from __future__ import annotations

import argparse
import dataclasses
import datetime as _dt
import json
import logging
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from benchmarks._harness import Settings, format_table, median
from benchmarks._suite import (
    BENCHMARKS,
    child_settings,
    machine_info,
    report,
    run_suite,
    write_child_rows,
    write_report,
)

log = logging.getLogger(__name__)


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument("--runs", type=int, default=None, help=f"measured runs per figure (default "
                        f"{Settings.runs}; 1 with --smoke)")
    parser.add_argument("--only", default="", help=f"comma-separated subset of: {', '.join(BENCHMARKS)}")
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, one run: checks the suite works")
    parser.add_argument("--write", type=Path, metavar="FILE", help="write the report into this Markdown file "
                        "(between its benchmark markers; text outside them is kept)")
    parser.add_argument("--json", type=Path, metavar="FILE", help="also dump the raw samples as JSON")
    parser.add_argument("--in-process", action="store_true", help="run every benchmark in this process "
                        "(by default each runs in a fresh process of its own)")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    args = parser.parse_args(argv)
    if args.runs is not None and args.runs < 1:
        parser.error("--runs must be at least 1")
    return args


def _progress(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the suite; exit status 0 when every benchmark ran (missed budgets are reported, not fatal)."""
    args = parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    settings = Settings.tiny() if args.smoke else Settings()
    if args.runs is not None:
        settings = dataclasses.replace(settings, runs=args.runs)
    child = child_settings()
    if child is not None:  # one benchmark, for a parent's run_suite(isolate=True)
        settings = child
    only = [n.strip() for n in args.only.split(",") if n.strip()] or None
    machine = machine_info()
    started = _dt.datetime.now(_dt.UTC)
    t0 = time.perf_counter()
    try:
        rows, errors = run_suite(settings, only, progress=_progress if child is None else None,
                                 isolate=child is None and not args.in_process)
    except ValueError as exc:
        print(f"python -m benchmarks: {exc}", file=sys.stderr)
        return 2
    if write_child_rows(rows, errors):
        return 1 if errors else 0
    seconds = time.perf_counter() - t0
    print()
    print(format_table(rows))
    failed = [r.key for r in rows if r.passed is False]
    missed = f": {', '.join(failed)}" if failed else ""
    print(f"\n{len(rows) - len(failed)} rows ok, {len(failed)} budgets missed{missed}; "
          f"suite took {seconds:.0f} s")
    for err in errors:
        print(f"ERROR {err}", file=sys.stderr)
    if args.write is not None:
        text = report(rows, settings=settings, machine=machine, errors=errors, started=started,
                      seconds=seconds)
        write_report(args.write, text)
        print(f"wrote {args.write}", file=sys.stderr)
    if args.json is not None:
        payload = {
            "settings": dataclasses.asdict(settings),
            "machine": machine,
            "errors": errors,
            "rows": [
                {"key": r.key, "figure": r.figure, "unit": r.unit, "ours": r.ours, "baseline": r.baseline,
                 "baseline_name": r.baseline_name, "median": median(r.ours) if r.ours else None,
                 "ratio": r.ratio, "budget": None if r.budget is None else dataclasses.asdict(r.budget),
                 "passed": r.passed}
                for r in rows
            ],
        }
        args.json.write_text(json.dumps(payload, indent=2), encoding="utf-8")
    return 1 if errors else 0


if __name__ == "__main__":
    raise SystemExit(main())
