"""Budgets 3: opening big nodes and projects.

* **One node with 2,000 Markdown-rich messages, to first paint:** ``ChatNodeWidget(state, services)``
  on an in-memory conversation of 1,000 questions and 1,000 corpus answers
  (``benchmarks.corpus.make_markdown_messages``: headings, lists, code, tables, CJK, emoji; ~1.4 KB
  each), shown, events processed until its newest message widget has been painted (the transcript
  opens scrolled to the bottom). Budget ≤ 300 ms. Extra row: the same with the short, lightly
  formatted messages of ``benchmarks._data`` (~300 bytes each).
* **A project of 20 nodes × 500 messages:** each run is a fresh process (so memory is that of one
  opening): ``create_main_window`` on the project folder (``ProjectStore.load`` and building every
  node), shown, until the window's first paint; then the RSS (psutil). Budget ≤ 400 MB. The baseline
  is the same app opening a new, empty project (one empty node), also in a fresh process.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from benchmarks._data import make_messages
from benchmarks._harness import Budget, Row, Settings, paired, timed
from benchmarks.cold_start import REPO, TIMEOUT_S, child_env
from benchmarks.corpus import make_markdown_messages
from desktop.core.chat.conversation import Conversation
from desktop.core.store import NodeState, Project, ProjectStore

log = logging.getLogger(__name__)

__all__ = ["run", "open_node_ms", "write_project", "open_project_child"]


def _state(n_messages: int, index: int = 0, *, markdown: bool = False) -> NodeState:
    messages = make_markdown_messages(n_messages) if markdown else make_messages(n_messages)
    conv = Conversation(f"c{index}", messages, 1_764_547_200_000)
    return NodeState(id=f"n{index}", title=f"Node {index + 1}", x=(index % 5) * 40, y=(index // 5) * 40,
                     conversation=conv)


def open_node_ms(n_messages: int, *, markdown: bool = True) -> float:
    """One run: build and show a node holding ``n_messages`` (Markdown-rich ones by default); ms until
    its newest message is painted."""
    from PySide6.QtWidgets import QApplication

    from benchmarks._qt import BenchServices, PaintWatch, dispose

    bench = BenchServices.start()
    try:
        state = _state(n_messages, markdown=markdown)
        QApplication.processEvents()
        start = time.perf_counter()
        node = bench.node(state)
        views = node.transcript.views()
        watch = PaintWatch(views[-1] if views else node)
        node.show()
        painted = watch.wait()
        ms = (painted - start) * 1000.0
        dispose(node)
        return ms
    finally:
        bench.close()


def write_project(folder: Path, nodes: int, messages: int) -> int:
    """Save a project of ``nodes`` nodes × ``messages`` messages with ``ProjectStore``; returns its bytes.

    Raises:
        RuntimeError: The history cap trimmed something (the benchmark would measure less than asked).
    """
    with ProjectStore(folder) as store:  # released: the window opened on it must be its writer
        result = store.save(Project(nodes=[_state(messages, i) for i in range(nodes)]))
        if result.archived:
            raise RuntimeError(f"the history cap trimmed messages ({result.archived}); use smaller messages")
        loaded = store.load()
    kept = [len(n.conversation.messages) for n in loaded.nodes]
    if kept != [messages] * nodes:
        raise RuntimeError(f"the saved project holds {kept} messages per node, expected {messages}")
    return (folder / "project.json").stat().st_size


def open_project_child(project: Path, config: Path) -> dict[str, float]:
    """In a fresh process: open ``project`` in the app's main window; ms to first paint and RSS (MB)."""
    import psutil  # type: ignore[import-untyped]
    from PySide6.QtCore import QEvent, QObject, QTimer
    from PySide6.QtWidgets import QApplication

    from desktop.app import create_main_window
    from desktop.ui.event_loop import new_event_loop
    from desktop.ui.theme import apply_theme

    app = QApplication(["chatnodes-bench"])
    apply_theme(app, "light")  # as desktop.app.main does
    app.setQuitOnLastWindowClosed(False)
    out: dict[str, float] = {}

    class Watch(QObject):
        def __init__(self) -> None:
            super().__init__()
            self.painted: float | None = None

        def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt API
            if self.painted is None and event.type() == QEvent.Type.Paint:
                self.painted = time.perf_counter()
            return False

    async def main() -> None:
        start = time.perf_counter()
        window = create_main_window(project_dir=project, config_dir=config)
        watch = Watch()
        window.installEventFilter(watch)
        window.show()
        deadline = time.perf_counter() + 30.0
        while watch.painted is None and time.perf_counter() < deadline:
            await asyncio.sleep(0)
        if watch.painted is None:
            raise RuntimeError("the window was not painted within 30 s")
        out["load_ms"] = (watch.painted - start) * 1000.0
        out["nodes"] = float(len(getattr(window, "nodes", lambda: [])()))
        await asyncio.sleep(0.05)
        out["rss_mb"] = psutil.Process().memory_info().rss / 2**20
        closed: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        def on_closed() -> None:
            if not closed.done():
                closed.set_result(None)

        signal = getattr(window, "closed", None)
        if signal is not None:
            signal.connect(on_closed)
        else:
            closed.set_result(None)
        QTimer.singleShot(0, window.close)
        async with asyncio.timeout(30.0):
            await closed

    with asyncio.Runner(loop_factory=lambda: new_event_loop(app)) as runner:
        runner.run(main())
    return out


def _spawn_child(project: Path) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="chatnodes-bench-config-") as config:
        argv = [sys.executable, "-m", "benchmarks.open_nodes", "--child", str(project), str(config)]
        proc = subprocess.run(argv, cwd=REPO, env=child_env(), capture_output=True, text=True,
                              timeout=TIMEOUT_S, check=False)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(f"open-project child exited {proc.returncode}: {proc.stderr[-2000:]}")
    result: dict[str, float] = json.loads(lines[-1])
    return result


def run(settings: Settings) -> list[Row]:
    """The 2,000-message node to first paint; the 20 × 500 project's load time and RSS vs an empty one."""
    n = settings.open_messages
    make_markdown_messages(n)  # generated (and cached) before any timing
    for _ in range(settings.warmup):
        open_node_ms(n)  # imports, first style polish
    node_ms = [open_node_ms(n) for _ in range(settings.runs)]
    short_ms = [open_node_ms(n, markdown=False) for _ in range(settings.runs)]
    rows = [Row("open.node", f"open a node with {n:,} Markdown-rich messages, to first paint", "ms", node_ms,
                budget=Budget.at_most(300, "ms")),
            Row("open.node_short", f"open a node with {n:,} short messages (extra row), to first paint", "ms",
                short_ms, budget=Budget.at_most(300, "ms"))]

    k, m = settings.project_nodes, settings.project_messages
    with tempfile.TemporaryDirectory(prefix="chatnodes-bench-") as tmp:
        full = Path(tmp) / "full"
        empty = Path(tmp) / "empty"
        size = write_project(full, k, m)
        empty.mkdir()
        results: dict[str, list[dict[str, float]]] = {"full": [], "empty": []}

        def sample(kind: str, folder: Path) -> float:
            res = _spawn_child(folder)
            results[kind].append(res)
            return res["rss_mb"]

        paired(lambda: sample("full", full), lambda: sample("empty", empty), settings.runs, warmup=0)
        store_ms = [timed(lambda: ProjectStore(full).load()) for _ in range(settings.runs)]
    full_runs, empty_runs = results["full"], results["empty"]
    note = (f"project.json {size / 1e6:.1f} MB; the app builds the newest messages of each node eagerly "
            f"and older ones on scroll.")
    rows += [
        Row("open.project_load", f"open a project of {k} nodes × {m} messages (load + build + first paint)",
            "ms", [r["load_ms"] for r in full_runs], "new empty project", [r["load_ms"] for r in empty_runs],
            None, note),
        Row("open.project_store", f"of which ProjectStore.load ({k} × {m} messages, in-process)", "ms",
            store_ms),
        Row("open.project_rss", f"RSS with {k} nodes × {m} messages open", "MB",
            [r["rss_mb"] for r in full_runs], "new empty project", [r["rss_mb"] for r in empty_runs],
            Budget.at_most(400, "MB")),
    ]
    return rows


def _child_main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.open_nodes")
    parser.add_argument("--child", nargs=2, metavar=("PROJECT", "CONFIG"), required=True)
    args = parser.parse_args(argv)
    result = open_project_child(Path(args.child[0]), Path(args.child[1]))
    print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(_child_main(sys.argv[1:]))
