"""A 1,000-conversation ChatGPT export imported through the window (issue 29 follow-up), offscreen.

Ours is the real import flow of the app's main window (``ImportFlow``: the preview read in its
worker thread, the dialog, ``importButton`` clicked, ``ImportJob`` in its worker thread, the few most
recent conversations opened as nodes, the others parked in the project's closed list for the sidebar,
one save), from ``open`` until the dialog says it is done. A 5 ms heartbeat on the GUI thread records
the gaps meanwhile (the window must stay usable). The baseline, measured in the same run, is the import
core alone: ``import_into_project`` of the same export into a new project folder (stream, convert,
versions, save), the command line's path.

Before the follow-up every conversation became an open node: the same flow took ≈102 s for 1,000
(``python -m benchmarks.import_window --all-open`` measures that way once, by raising
``desktop.core.importers.OPEN_AT_MOST``, which the window's import flow reads).
"""

from __future__ import annotations

import asyncio
import logging
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks._harness import Row, Settings, median, paired, percentile, timed
from benchmarks._qt import Heartbeat, app_and_loop, dispose, run_on_loop
from benchmarks.importers import CONVERSATIONS, build_export
from desktop.core.importers import import_into_project
from desktop.core.store import ProjectStore

log = logging.getLogger(__name__)

__all__ = ["measure", "run", "window_import"]

_TIMEOUT_S = 600.0


async def _until(check: Any, what: str) -> None:
    deadline = time.monotonic() + _TIMEOUT_S
    while not check():
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out waiting for {what}")
        await asyncio.sleep(0.005)


def window_import(export: Path, project: Path, config: Path, conversations: int) -> dict[str, Any]:
    """Import ``export`` through a new main window on ``project``; ms, GUI gaps, nodes opened."""
    from PySide6.QtWidgets import QPushButton

    from desktop.app import create_main_window

    app_and_loop()
    out: dict[str, Any] = {}
    windows: list[Any] = []

    async def main() -> None:
        window = create_main_window(project_dir=project, config_dir=config)
        windows.append(window)
        window.show()
        await asyncio.sleep(0.05)
        beat = Heartbeat()
        beat.start()
        start = time.perf_counter()
        dialog = window.imports.open(export)
        if dialog is None:
            raise RuntimeError("the window refused the import")
        await _until(lambda: dialog.state != "reading", "the preview")
        button = dialog.findChild(QPushButton, "importButton")
        button.click()
        await _until(lambda: dialog.state == "done", "the import")
        out["ms"] = (time.perf_counter() - start) * 1000.0
        out["gaps"] = beat.stop()
        out["opened"] = len(window.nodes())
        out["parked"] = len(window.projects.closed)
        if out["opened"] + out["parked"] < conversations:
            raise RuntimeError(f"only {out['opened']} + {out['parked']} of {conversations} conversations")
        done = asyncio.get_running_loop().create_future()
        window.closed.connect(lambda: done.done() or done.set_result(None))
        window.close()
        async with asyncio.timeout(60.0):
            await done

    try:
        run_on_loop(main())
    finally:
        for window in windows:
            dispose(window)
    return out


def measure(conversations: int = CONVERSATIONS, runs: int = 3, *, warmup: int = 1) -> dict[str, Any]:
    """Time the window's import and the core's of the same export, alternately."""
    with tempfile.TemporaryDirectory(prefix="chatnodes-import-window-") as tmp:
        root = Path(tmp)
        export = root / "export.zip"
        build_export(export, conversations)
        counter = [0]
        gaps: list[float] = []
        facts: dict[str, int] = {}

        def ours() -> float:
            counter[0] += 1
            folder, config = root / f"w-{counter[0]}", root / f"c-{counter[0]}"
            result = window_import(export, folder, config, conversations)
            gaps.extend(result["gaps"])
            facts["opened"], facts["parked"] = result["opened"], result["parked"]
            shutil.rmtree(folder, ignore_errors=True)
            return float(result["ms"])

        def core() -> float:
            counter[0] += 1
            folder = root / f"p-{counter[0]}"

            def work() -> None:
                with ProjectStore(folder) as store:
                    import_into_project(store, export)
            ms = timed(work)
            shutil.rmtree(folder, ignore_errors=True)
            return ms

        ours_ms, base_ms = paired(ours, core, runs, warmup=warmup)
    return {"conversations": conversations, "ours_ms": ours_ms, "baseline_ms": base_ms,
            "ours_median_ms": median(ours_ms), "baseline_median_ms": median(base_ms),
            "ratio": median(ours_ms) / median(base_ms), "gaps": gaps,
            "gap_p99_ms": percentile(gaps, 99) if gaps else 0.0, "gap_max_ms": max(gaps, default=0.0),
            **facts}


def run(settings: Settings) -> list[Row]:
    """The suite's rows: the window's import time against the core's, and the GUI thread's gaps."""
    n = 20 if settings.smoke else CONVERSATIONS
    result = measure(n, max(settings.runs, 1 if settings.smoke else 3), warmup=settings.warmup)
    return [
        Row("import.window", f"import a {n:,}-conversation ChatGPT export through the window (dialog, "
            f"{result['opened']} nodes opened, {result['parked']:,} listed in the sidebar)", "ms",
            result["ours_ms"], "the import core alone (python -m desktop import)", result["baseline_ms"],
            note=f"before: every conversation an open node, ≈102 s for 1,000; GUI-thread gaps while "
                 f"importing: p99 {result['gap_p99_ms']:.0f} ms, max {result['gap_max_ms']:.0f} ms; "
                 "info row"),
    ]


def _all_open(conversations: int) -> None:  # pragma: no cover - manual run
    import desktop.core.importers as importers

    importers.OPEN_AT_MOST = 10**9  # the import flow reads it from the package when an import ends
    with tempfile.TemporaryDirectory(prefix="chatnodes-import-window-") as tmp:
        root = Path(tmp)
        build_export(root / "export.zip", conversations)
        result = window_import(root / "export.zip", root / "w", root / "c", conversations)
    gaps = result["gaps"]
    print({"conversations": conversations, "ms": round(result["ms"]), "opened": result["opened"],
           "gap_p99_ms": round(percentile(gaps, 99)), "gap_max_ms": round(max(gaps))})


if __name__ == "__main__":  # pragma: no cover - manual run
    count = int(sys.argv[2]) if len(sys.argv) > 2 else CONVERSATIONS
    if len(sys.argv) > 1 and sys.argv[1] == "--all-open":
        _all_open(count)
    else:
        out = measure(count)
        print({k: (round(v) if isinstance(v, float) else v) for k, v in out.items()
               if k not in ("gaps", "ours_ms", "baseline_ms")})
