"""Running the selected benchmarks and rendering the report (table, machine, date, notes)."""

from __future__ import annotations

import datetime as _dt
import importlib
import importlib.metadata
import json
import logging
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path

from benchmarks._harness import Budget, Row, Settings, format_table

log = logging.getLogger(__name__)

__all__ = ["BENCHMARKS", "run_suite", "machine_info", "report", "write_report", "BEGIN_MARK", "END_MARK"]

#: Benchmark name -> module (each has ``run(settings) -> list[Row]``), in table order.
BENCHMARKS: dict[str, str] = {
    "drivers": "benchmarks.drivers",
    "node_stream": "benchmarks.node_stream",
    "interactive": "benchmarks.interactive",
    "open_nodes": "benchmarks.open_nodes",
    "cold_start": "benchmarks.cold_start",
    "cap": "benchmarks.cap",
    # A month's totals from a 100,000-line usage ledger (DESIGN.md §7: ≤ 200 ms); the tally's check.
    "ledger": "benchmarks.ledger",
    # A 200 MB ledger of three years: the dashboard ≤ 1 s and ≤ 100 MB extra, the month ≤ 200 ms.
    "ledger_heavy": "benchmarks.ledger_heavy",
    # A 1,000-conversation ChatGPT export imported into a new project (issue 29; an info row).
    "importers": "benchmarks.importers",
    # The same export through the window's import flow (issue 29 follow-up): against the core alone.
    "import_window": "benchmarks.import_window",
    # The costs the unit tests used to time (issue 31): each against a baseline of the same run.
    "hot_paths": "benchmarks.hot_paths",
    "textflow": "benchmarks.textflow",
    "mcp_start": "benchmarks.mcp_start",
    # Full-text search over 100,000 messages: build, gaps, queries, size, one new message (issue 27).
    "search": "benchmarks.search",
    # The search panel: keystroke → first rows painted on that 100,000-message index (issue 27).
    "search_ui": "benchmarks.search_ui",
    # Issue 28: saves at the cap, closing unshown nodes, 8 paced streams, 1 node in a burst.
    "frames": "benchmarks.frames",
    # Issue 28: RSS of 20 × 500 Markdown nodes, what closing 19 gives back, growth while 8 nodes stream.
    "memory": "benchmarks.memory",
    # The canvas (issue 30): pan and zoom on 200 nodes, Desk ↔ Canvas on 30, streaming into 8 cards.
    "canvas": "benchmarks.canvas",
}


def run_suite(
    settings: Settings,
    only: Sequence[str] | None = None,
    *,
    progress: Callable[[str], None] | None = None,
    isolate: bool = False,
) -> tuple[list[Row], list[str]]:
    """Run the benchmarks named in ``only`` (default: all) and return (rows, errors).

    A benchmark that raises does not stop the others: its error is returned as text.

    Args:
        settings: sizes and runs.
        only: the benchmarks to run, in table order by default.
        progress: called with a line of progress text.
        isolate: run each benchmark in a process of its own (``python -m benchmarks``, as pyperf
            runs each benchmark in fresh worker processes): a row then measures the app as a user's
            process holds it, not beside what the benchmarks before it left (their caches, heap,
            and until 2288ea8 eight closed windows with 6,700 widgets).
    """
    names = list(only) if only else list(BENCHMARKS)
    unknown = [n for n in names if n not in BENCHMARKS]
    if unknown:
        raise ValueError(f"unknown benchmark(s): {', '.join(unknown)} (known: {', '.join(BENCHMARKS)})")
    rows: list[Row] = []
    errors: list[str] = []
    for name in names:
        start = time.perf_counter()
        if progress:
            progress(f"running {name} ...")
        if isolate:
            got, failed = _run_child(name, settings)
            rows.extend(got)
            errors.extend(failed)
        else:
            try:
                module = importlib.import_module(BENCHMARKS[name])
                with _own_user_folders():
                    rows.extend(module.run(settings))
            except Exception as exc:  # noqa: BLE001 - report it, keep measuring the rest
                log.exception("benchmark %s failed", name)
                errors.append(f"{name}: {type(exc).__name__}: {exc}")
        if progress:
            progress(f"  {name} took {time.perf_counter() - start:.1f} s")
    return rows, errors


CHILD_ROWS_ENV = "CHATNODES_BENCH_ROWS_OUT"
"""Set for a child run by ``run_suite(isolate=True)``: the file it writes its rows and errors to."""


_SETTINGS_ENV = "CHATNODES_BENCH_SETTINGS"
"""The parent's settings, as JSON, for a child run (so ``--runs`` and ``--smoke`` carry over)."""


def _run_child(name: str, settings: Settings) -> tuple[list[Row], list[str]]:
    """Run benchmark ``name`` in a new ``python -m benchmarks`` process; its rows and errors."""
    with tempfile.TemporaryDirectory(prefix="chatnodes-bench-child-") as tmp:
        out = Path(tmp) / "rows.json"
        env = dict(os.environ, **{CHILD_ROWS_ENV: str(out), _SETTINGS_ENV: json.dumps(asdict(settings))})
        argv = [sys.executable, "-m", "benchmarks", "--only", name]
        proc = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, check=False)
        if not out.exists():
            return [], [f"{name}: the benchmark's process exited with {proc.returncode} and wrote no rows"]
        payload = json.loads(out.read_text(encoding="utf-8"))
    rows = [Row(**{**r, "budget": None if r["budget"] is None else Budget(**r["budget"])})
            for r in payload["rows"]]
    return rows, list(payload["errors"])


def child_settings() -> Settings | None:
    """The settings a parent ``run_suite(isolate=True)`` handed this process, if it is such a child."""
    raw = os.environ.get(_SETTINGS_ENV)
    return None if raw is None else Settings(**json.loads(raw))


def write_child_rows(rows: Sequence[Row], errors: Sequence[str]) -> bool:
    """In a child run, hand ``rows`` and ``errors`` to the parent; False when this is no child."""
    path = os.environ.get(CHILD_ROWS_ENV)
    if path is None:
        return False
    payload = {"rows": [asdict(r) for r in rows], "errors": list(errors)}
    Path(path).write_text(json.dumps(payload), encoding="utf-8")
    return True


_USER_FOLDERS = ("CHATNODES_DATA_DIR", "CHATNODES_LOG_DIR")


@contextmanager
def _own_user_folders() -> Iterator[None]:
    """Give one benchmark (and the processes it starts) fresh data and log folders.

    The windows the benchmarks open keep a search index and write logs in the user's folders
    otherwise: every run added its projects to the user's index (165 MB after a few days), and each
    benchmark measured alongside whatever indexing the earlier ones had left to do.
    """
    saved = {key: os.environ.get(key) for key in _USER_FOLDERS}
    root = Path(tempfile.mkdtemp(prefix="chatnodes-bench-user-"))
    try:
        for key in _USER_FOLDERS:
            os.environ[key] = str(root / key.rsplit("_", 2)[1].lower())
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        shutil.rmtree(root, ignore_errors=True)


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _version(distribution: str) -> str:
    """The installed version of a distribution, read from its metadata (no import: the SDKs are slow
    to import)."""
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def machine_info() -> dict[str, str]:
    """CPU model, cores, load, OS, Python and the versions of Qt and the libraries measured."""
    info = {
        "CPU": _cpu_model(),
        "cores": str(os.cpu_count() or "?"),
        "OS": f"{platform.system()} {platform.release()}",
        "Python": f"{platform.python_implementation()} {platform.python_version()}",
    }
    try:
        from PySide6 import QtCore

        info["Qt"] = f"{QtCore.qVersion()} (PySide6-Essentials {_version('PySide6-Essentials')})"
    except ImportError:
        info["Qt"] = "not installed"
    for name in ("qasync", "httpx", "openai", "anthropic", "psutil"):
        info[name] = _version(name)
    if hasattr(os, "getloadavg"):
        info["load average at start (1/5/15 min)"] = " / ".join(f"{v:.2f}" for v in os.getloadavg())
    return info


def report(
    rows: Sequence[Row],
    *,
    settings: Settings,
    machine: dict[str, str],
    errors: Sequence[str] = (),
    started: _dt.datetime | None = None,
    seconds: float | None = None,
    notes: str = "",
) -> str:
    """The Markdown report: title, date, machine, the one results table, failures, notes."""
    when = (started or _dt.datetime.now(_dt.UTC)).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        "# Chat Nodes — performance",
        "",
        "Generated by `python -m benchmarks --write docs/PERFORMANCE.md` (`make bench` prints the same "
        "table). Every figure is the median of "
        f"{settings.runs} runs with min–max in brackets; every baseline is measured in the same run, "
        "interleaved with ours where it is cheap to do so. Budgets: [DESIGN.md](DESIGN.md) §7.",
        "",
        f"- date: {when}" + (f" (suite took {seconds:.0f} s)" if seconds is not None else ""),
    ]
    lines += [f"- {key}: {value}" for key, value in machine.items()]
    if settings.smoke:
        lines.append("- **smoke sizes** (not meaningful numbers)")
    lines += ["", format_table(rows), ""]
    failed = [r for r in rows if r.passed is False]
    lines.append(
        f"{sum(r.passed is True for r in rows)} budgets met, {len(failed)} missed"
        + (f" ({', '.join(r.key for r in failed)})" if failed else "")
        + (f", {len(errors)} benchmark(s) could not run" if errors else "")
        + "."
    )
    if errors:
        lines += ["", "Benchmarks that could not run:", ""]
        lines += [f"- {e}" for e in errors]
    row_notes = [(r.key, r.note) for r in rows if r.note]
    if row_notes:
        lines += ["", "Notes:", ""]
        lines += [f"- `{key}`: {note}" for key, note in row_notes]
    if notes.strip():
        lines += ["", notes.strip()]
    return "\n".join(lines) + "\n"



BEGIN_MARK = "<!-- benchmarks:begin (generated by python -m benchmarks --write; edit outside the markers) -->"
END_MARK = "<!-- benchmarks:end -->"


def write_report(path: Path, generated: str) -> None:
    """Write ``generated`` to ``path`` between the markers, keeping any text outside them.

    A new file (or one without the markers) gets the markers around the generated text; whatever a
    human wrote after the end marker (findings, profiles) survives the next run.
    """
    block = f"{BEGIN_MARK}\n{generated.rstrip()}\n{END_MARK}\n"
    old = path.read_text(encoding="utf-8") if path.exists() else ""
    if BEGIN_MARK in old and END_MARK in old:
        head, _, rest = old.partition(BEGIN_MARK)
        _, _, tail = rest.partition(END_MARK)
        tail = tail.lstrip("\n")
        text = head + block + ("\n" + tail if tail else "")
    else:
        text = block
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)
