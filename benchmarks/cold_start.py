"""Budget: cold start to first paint ≤ 1.5× a bare PySide6 window.

Both sides are fresh processes of the same interpreter: ``python -m desktop --smoke-test`` with a
fresh config folder and a fresh project folder each run, and ``benchmarks/bare_window.py``
(QApplication + QMainWindow shown, quit after the first paint). The figure is the wall time from
spawning the process to the moment it reports its first paint on stderr, so interpreter start-up
and every import count on both sides. The OS keyring is replaced by keyring's ``fail`` backend in
the child (the benchmark must never touch real keys; the app then runs session-only, as on a
desktop without a keyring).
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from benchmarks._harness import Budget, Row, Settings, paired

log = logging.getLogger(__name__)

__all__ = ["run", "first_paint_ms", "app_ms", "bare_ms", "REPO"]

REPO = Path(__file__).resolve().parent.parent
BARE_SCRIPT = Path(__file__).resolve().parent / "bare_window.py"
TIMEOUT_S = 60.0


def child_env() -> dict[str, str]:
    """The environment of a benchmark child process: offscreen Qt, no real keyring, no real config."""
    env = dict(os.environ)
    env.setdefault("QT_QPA_PLATFORM", "offscreen")
    env["PYTHON_KEYRING_BACKEND"] = "keyring.backends.fail.Keyring"
    env.pop("CHATNODES_CONFIG_DIR", None)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def first_paint_ms(argv: Sequence[str], marker: str) -> float:
    """Spawn ``argv``; milliseconds until a stderr line containing ``marker``; the process must exit 0.

    Raises:
        RuntimeError: The marker never came, or the process failed.
    """
    start = time.perf_counter()
    proc = subprocess.Popen(list(argv), cwd=REPO, env=child_env(), stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    seen: float | None = None
    tail: list[str] = []
    try:
        assert proc.stderr is not None
        for line in proc.stderr:
            if seen is None and marker in line:
                seen = (time.perf_counter() - start) * 1000.0
            else:
                tail = [*tail[-20:], line.rstrip()]
        code = proc.wait(TIMEOUT_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if proc.stderr is not None:
            proc.stderr.close()
    if seen is None or code != 0:
        raise RuntimeError(f"{argv[1:]} exited {code} (first paint seen: {seen is not None}):\n"
                           + "\n".join(tail))
    return seen


def app_ms() -> float:
    """One cold start of the app (fresh config and project folders) to its first paint."""
    with tempfile.TemporaryDirectory(prefix="chatnodes-bench-") as tmp:
        root = Path(tmp)
        argv = [sys.executable, "-m", "desktop", "--smoke-test", "--config-dir", str(root / "config"),
                str(root / "project")]
        return first_paint_ms(argv, "first paint")


def bare_ms() -> float:
    """One cold start of the bare PySide6 window to its first paint."""
    return first_paint_ms([sys.executable, str(BARE_SCRIPT)], "bare: first paint")


def run(settings: Settings) -> list[Row]:
    """App cold start vs the bare window, alternating."""
    ours, bare = paired(app_ms, bare_ms, settings.runs, warmup=settings.warmup)
    return [Row("start.cold", "cold start to first paint: python -m desktop --smoke-test", "ms", ours,
                "bare PySide6 window", bare, Budget.ratio(1.5))]
