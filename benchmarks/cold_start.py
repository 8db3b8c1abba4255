"""Budget: the whole ``python -m desktop --smoke-test`` process ≤ 2.0× the whole bare-window process.

Both sides are fresh processes of the same interpreter: ``python -m desktop --smoke-test`` with a
fresh config folder and a fresh project folder each run (it exits once its first node accepts input),
and ``benchmarks/bare_window.py`` (QApplication + QMainWindow shown, quit after the first paint). The
figure is the wall time from spawning the process until it has exited (status 0), so interpreter
start-up, every import, building the window and node, and shutting down count on both sides. The same
spawn also gives the time until each process reports its first paint on stderr (an extra, budget-less
row). The OS keyring is replaced by keyring's ``fail`` backend in the child (the benchmark must never
touch real keys; the app then runs session-only, as on a desktop without a keyring).

Both sides start from bytecode, as installed software does: the site-packages both import (PySide6;
httpx and the rest once our window is up) were byte-compiled by pip at install time, and our own
``desktop`` package is byte-compiled here before the first spawn (untimed, ``compileall``), as the
first run of ``make run``'s editable install or the PyInstaller bundle leave it. Without that, a
machine with ``PYTHONDONTWRITEBYTECODE`` set (this one) would compile ~13k lines of ours from
source in every spawn, which no user's start does twice.

Issue 28's row: the same whole ``--smoke-test`` process on a project holding one node of 2,000
Markdown-rich messages (``make_markdown_messages``, saved without a cap; the app's default cap then
trims it when it saves on closing, as for a user's first start with such a chat) against the same
process on a new empty project, alternating. Budget ≤ 1.5×: opening a long chat costs the start-up
little (its transcript is built after the first paint, and closing never builds one).
"""

from __future__ import annotations

import compileall
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from benchmarks._harness import Budget, Row, Settings, paired

log = logging.getLogger(__name__)

__all__ = ["run", "spawn_ms", "first_paint_ms", "app_ms", "bare_ms", "compile_app", "REPO", "Spawn"]

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


@dataclass(frozen=True)
class Spawn:
    """One child process: ms from spawn to its first-paint line, and to its exit."""

    first_paint_ms: float
    exit_ms: float


def spawn_ms(argv: Sequence[str], marker: str) -> Spawn:
    """Spawn ``argv``; ms until a stderr line containing ``marker`` and until exit (status 0 required).

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
        exited = (time.perf_counter() - start) * 1000.0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if proc.stderr is not None:
            proc.stderr.close()
    if seen is None or code != 0:
        raise RuntimeError(f"{argv[1:]} exited {code} (first paint seen: {seen is not None}):\n"
                           + "\n".join(tail))
    return Spawn(seen, exited)


def first_paint_ms(argv: Sequence[str], marker: str) -> float:
    """Spawn ``argv``; milliseconds until a stderr line containing ``marker`` (see :func:`spawn_ms`)."""
    return spawn_ms(argv, marker).first_paint_ms


def app_ms() -> Spawn:
    """One whole ``--smoke-test`` process of the app (fresh config and project folders)."""
    with tempfile.TemporaryDirectory(prefix="chatnodes-bench-") as tmp:
        root = Path(tmp)
        argv = [sys.executable, "-m", "desktop", "--smoke-test", "--config-dir", str(root / "config"),
                str(root / "project")]
        return spawn_ms(argv, "first paint")


def long_node_project(folder: Path, messages: int) -> None:
    """Save a project of one node holding ``messages`` Markdown-rich messages (no cap) at ``folder``."""
    from benchmarks.corpus import make_markdown_messages
    from desktop.core.chat.conversation import Conversation
    from desktop.core.store import NodeState, Project, ProjectStore

    conv = Conversation("long", make_markdown_messages(messages), 1_764_547_200_000)
    with ProjectStore(folder, history_cap_bytes=1 << 40) as store:  # no cap: all of it is saved
        store.save(Project(nodes=[NodeState(id="long", title="A long chat", conversation=conv)]))


def project_ms(project: Path | None) -> float:
    """One whole ``--smoke-test`` process on a copy of ``project`` (None: a new empty project)."""
    with tempfile.TemporaryDirectory(prefix="chatnodes-bench-") as tmp:
        root = Path(tmp)
        folder = root / "project"
        if project is not None:
            shutil.copytree(project, folder)
        argv = [sys.executable, "-m", "desktop", "--smoke-test", "--config-dir", str(root / "config"),
                str(folder)]
        return spawn_ms(argv, "first paint").exit_ms


def bare_ms() -> Spawn:
    """One whole bare PySide6 window process."""
    return spawn_ms([sys.executable, str(BARE_SCRIPT)], "bare: first paint")


def compile_app() -> None:
    """Byte-compile the ``desktop`` package (what installing or a first run leaves behind)."""
    if not compileall.compile_dir(str(REPO / "desktop"), quiet=1):
        raise RuntimeError("byte-compiling the desktop package failed")


def run(settings: Settings) -> list[Row]:
    """The whole app process vs the whole bare-window process, alternating; first paints as extra row."""
    compile_app()
    apps: list[Spawn] = []
    bares: list[Spawn] = []

    def ours() -> float:
        apps.append(app_ms())
        return apps[-1].exit_ms

    def bare() -> float:
        bares.append(bare_ms())
        return bares[-1].exit_ms

    ours_ms, bare_exit = paired(ours, bare, settings.runs, warmup=settings.warmup)
    apps, bares = apps[-settings.runs:], bares[-settings.runs:]
    n_long = 100 if settings.smoke else 2000
    with tempfile.TemporaryDirectory(prefix="chatnodes-bench-long-") as tmp:
        long_project = Path(tmp) / "long"
        long_node_project(long_project, n_long)
        long_ms, empty_ms = paired(lambda: project_ms(long_project), lambda: project_ms(None), settings.runs,
                                   warmup=settings.warmup)
    return [
        Row("start.process", "start-up: whole python -m desktop --smoke-test process (spawn → exit, exits "
            "once a node accepts input)", "ms", ours_ms, "whole bare PySide6 window process", bare_exit,
            Budget.ratio(2.0)),
        Row("start.first_paint", "of which spawn → first paint (extra row)", "ms",
            [a.first_paint_ms for a in apps], "bare window: spawn → first paint",
            [b.first_paint_ms for b in bares]),
        Row("start.long_node", f"start-up: the same whole process on a project of one {n_long:,}-message "
            "Markdown node", "ms", long_ms, "the same on a new empty project", empty_ms, Budget.ratio(1.5)),
    ]
