"""Budgets of the canvas (issue 30): panning and zooming a 200-node board, switching views, streaming.

Every figure runs the app's real main window (``create_main_window``, offscreen, qasync loop) on a
project written by ``benchmarks.canvas_board``.

* **Pan / zoom at 50 %:** a board of 200 nodes (4 short messages each, a fork every fifth node) on a
  20-column grid, the view at 50 % zoom. One step pans 40 px (or zooms by 2 % about the centre,
  between 45 % and 55 %) and repaints the view's viewport synchronously (``repaint()``: what a frame
  costs); each step is timed, in rounds of 200 steps (the row: the median of the rounds' p99s, so
  one stray slow step does not decide it). Budget: p99 ≤ 16 ms. Baseline: the same steps over an
  empty part of the board (background only), same window.
* **Desk ↔ Canvas:** a 30-node project, the canvas at reading zoom over its first cards (their live
  nodes move between the views); one switch is ``set_mode`` plus a synchronous repaint of the
  window. Budget ≤ 200 ms. Baseline: the desk's own view switch (Tabbed on / off) in the same window.
* **Streaming into 8 cards:** 8 nodes at reading zoom (their live widgets on the canvas) stream the
  Markdown corpus answer at full speed; a 5 ms heartbeat records the UI's gaps (the desk's stall
  harness, ``benchmarks.node_stream``). Budget: p99 ≤ 16 ms (as the desk). Baseline: the same window
  in the desk (tiled), same stream.
"""

from __future__ import annotations

import asyncio
import json
import logging
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks._harness import Budget, Row, Settings, median, percentile
from benchmarks._qt import (
    HEARTBEAT_MS,
    MODEL,
    BenchServices,
    Heartbeat,
    Stream,
    dispose,
    markdown_stream,
    run_on_loop,
    wait_finished,
    wait_shown,
)
from benchmarks.canvas_board import write_grid

log = logging.getLogger(__name__)

__all__ = ["run"]

_SIZE = (1600, 1000)


def _open(project: Path, config: Path) -> Any:
    """The app's main window on ``project``, shown at 1600×1000 and settled."""
    from PySide6.QtWidgets import QApplication

    from desktop.app import create_main_window

    app = QApplication.instance()
    if isinstance(app, QApplication):
        app.setQuitOnLastWindowClosed(False)  # the loop goes on between the windows
    window = create_main_window(project_dir=project, config_dir=config)
    window.resize(*_SIZE)
    window.show()
    _settle(0.3)
    # A project opened the first time is indexed for search in the background (the search rows
    # measure that): the canvas rows measure the board once that is done, as on every later open.
    deadline = time.monotonic() + 10.0
    while window.search.service is None and time.monotonic() < deadline:
        _settle(0.05)
    if window.search.service is not None and not window.search.service.wait_idle(60.0):
        log.warning("the search index was still busy after 60 s")
    _settle(0.1)
    return window


def _settle(seconds: float) -> None:
    run_on_loop(asyncio.sleep(seconds))


def _close(window: Any) -> None:
    async def go() -> None:
        closed = asyncio.Event()
        window.closed.connect(closed.set)
        window.close()
        await asyncio.wait_for(closed.wait(), 30)

    try:
        run_on_loop(go())
    finally:
        dispose(window)


def _steps(step: Callable[[int], None], repaint: Callable[[], None], count: int) -> list[float]:
    """Time ``count`` steps of ``step(i)`` + ``repaint()`` (ms each).

    The steps run inside the qasync loop, which handles the Qt events between them (as the app's loop
    does): pumping Qt events outside a running loop would run the window's asyncio callbacks (its
    model listing's connects) with no running loop.
    """

    async def go() -> list[float]:
        out = []
        for i in range(count):
            start = time.perf_counter()
            step(i)
            repaint()
            out.append((time.perf_counter() - start) * 1000.0)
            await asyncio.sleep(0)
        return out

    return run_on_loop(go())


Figures = dict[str, list[float]]


def _pan_zoom(window: Any, steps: int, rounds: int) -> tuple[Figures, Figures, int]:
    """``rounds`` rounds of ``steps`` pan and zoom steps over the board and over an empty area.

    Returns:
        Per figure (``pan_board``, ``zoom_board``, ``pan_empty``, ``zoom_empty``) the p99 of each
        round, every step's time (ms) of all rounds, and the cards in sight over the board at 50 %.
    """
    from PySide6.QtCore import QPointF

    board = window.canvas
    view = board.view
    if not board.is_canvas():
        board.set_mode("canvas")
    viewport = view.viewport()
    centre = QPointF(6000, 3000)
    view.resetTransform()
    view.set_zoom(0.5)
    p99s: Figures = {}
    times: Figures = {}
    sight = 0

    def pan(i: int) -> None:
        dx = 40 if (i // 40) % 2 == 0 else -40
        view.pan_by(dx, 10 if i % 2 else -10)

    def zoom(i: int) -> None:
        view.zoom_at(1.02 if (i // 10) % 2 == 0 else 1 / 1.02)

    for _ in range(rounds):
        for name, where in (("board", centre), ("empty", QPointF(-60000, -60000))):
            view.set_zoom(0.5)
            view.center_on(where)
            if name == "board":
                sight = sum(1 for c in board.cards.values() if c.rect().intersects(view.visible_scene_rect()))
            _steps(pan, viewport.repaint, 10)  # warm-up: glyph caches
            for kind, step in (("pan", pan), ("zoom", zoom)):
                view.set_zoom(0.5)
                view.center_on(where)
                got = _steps(step, viewport.repaint, steps)
                p99s.setdefault(f"{kind}_{name}", []).append(percentile(got, 99))
                times.setdefault(f"{kind}_{name}", []).extend(got)
        view.set_zoom(0.5)
    return p99s, times, sight


def _switches(window: Any, runs: int) -> tuple[list[float], list[float], int]:
    """Desk ↔ Canvas with the canvas at reading zoom over the board's first cards (their live nodes
    move between the views, as when the user reads a node there), and the tabbed switch; the number
    of live cards."""
    from PySide6.QtCore import QRectF

    from desktop.ui.canvas.view import READING_ZOOM

    board = window.canvas
    board.set_mode("canvas")
    first = sorted(board.cards.values(), key=lambda c: (c.rect().y(), c.rect().x()))[:2]
    rect = QRectF()
    for card in first:
        rect = rect.united(card.rect())
    board.view.show_rect(rect, max_zoom=1.0, margin=10)
    if board.view.zoom() < READING_ZOOM:
        board.view.zoom_at(READING_ZOOM / board.view.zoom())
    _settle(0.1)
    live = sum(1 for c in board.cards.values() if c.live)
    if live == 0:
        raise RuntimeError("no card shows its live node: the switch would move nothing")
    board.set_mode("desk")
    _settle(0.1)
    canvas_ms: list[float] = []
    tabs_ms: list[float] = []
    for _ in range(runs):
        for mode in ("canvas", "desk"):
            start = time.perf_counter()
            board.set_mode(mode)
            window.repaint()
            canvas_ms.append((time.perf_counter() - start) * 1000.0)
            _settle(0.05)
        for tabbed in (True, False):
            start = time.perf_counter()
            window.set_tabbed(tabbed)
            window.repaint()
            tabs_ms.append((time.perf_counter() - start) * 1000.0)
            _settle(0.05)
    return canvas_ms, tabs_ms, live


def _stall(window: Any, bench: BenchServices, stream: Stream, mode: str) -> list[float]:
    from PySide6.QtCore import QRectF

    board = window.canvas
    board.set_mode(mode)
    if mode == "canvas":
        rect = QRectF()
        for card in board.cards.values():
            rect = rect.united(card.rect())
        board.view.show_rect(rect, max_zoom=1.0, margin=10)
        _settle(0.1)
        live = [c for c in board.cards.values() if c.live and c.node.isVisible()]
        if len(live) != len(board.cards):
            raise RuntimeError(f"only {len(live)} of {len(board.cards)} cards show their live node")
    else:
        window.tile()
        _settle(0.1)
        hidden = [n for n in window.nodes() if not n.isVisible()]
        if hidden:  # the baseline must paint what it streams, as the canvas does
            raise RuntimeError(f"{len(hidden)} of {len(window.nodes())} nodes are not shown in the desk")
    nodes = window.nodes()
    beat = Heartbeat()

    async def go() -> list[float]:
        bench.fake.script(*([stream.turn] * len(nodes)))
        beat.start()
        reasons = await wait_finished(nodes)
        if reasons != ["end_turn"] * len(nodes):
            raise RuntimeError(f"the runs ended with {reasons}")
        await wait_shown(nodes, stream)
        await asyncio.sleep(0.05)
        return beat.stop()

    try:
        return run_on_loop(go())
    finally:
        beat.stop()


def _write_config(config: Path, bench: BenchServices) -> None:
    from desktop.core.config import SettingsStore, settings_from_dict

    raw = {"version": 1, "default_provider": "fake", "default_model": MODEL,
           "providers": [{"id": "fake", "name": "Fake", "api": "openai",
                          "base_url": bench.fake.openai_base_url, "needs_key": False, "key_env": None,
                          "models": [MODEL]}]}
    SettingsStore(config).save(settings_from_dict(json.loads(json.dumps(raw))))


def run(settings: Settings) -> list[Row]:
    """Pan and zoom on 200 nodes, Desk ↔ Canvas on 30, streaming into 8 cards."""
    n_board = 20 if settings.smoke else 200
    n_switch = 3 if settings.smoke else 30
    steps = 20 if settings.smoke else 200
    rounds = settings.runs
    bench = BenchServices.start("openai")
    rows: list[Row] = []
    try:
        with tempfile.TemporaryDirectory(prefix="chatnodes-canvas-") as tmp:
            root = Path(tmp)
            config = root / "config"
            _write_config(config, bench)
            write_grid(root / "board", n_board)
            window = _open(root / "board", config)
            try:
                p99s, times, sight = _pan_zoom(window, steps, rounds)
            finally:
                _close(window)
            note = (f"{n_board} nodes, {sight} cards in sight at 50 %; one step = pan 40 px (or zoom 2 %) + "
                    f"repaint of the 1600×1000 window's viewport; median of {rounds} rounds' p99 of {steps} "
                    f"steps each; step median {median(times['pan_board']):.2f} ms (pan), "
                    f"{median(times['zoom_board']):.2f} ms (zoom).")
            rows += [
                Row("canvas.pan_p99", f"pan a {n_board}-node board at 50 %: frame time p99", "ms",
                    p99s["pan_board"], "same steps over empty board",
                    p99s["pan_empty"], Budget.at_most(16, "ms"), note),
                Row("canvas.zoom_p99", f"zoom a {n_board}-node board about 50 %: frame time p99", "ms",
                    p99s["zoom_board"], "same steps over empty board",
                    p99s["zoom_empty"], Budget.at_most(16, "ms")),
            ]
            write_grid(root / "switch", n_switch, columns=6, mode="desk")
            window = _open(root / "switch", config)
            try:
                canvas_ms, tabs_ms, live = _switches(window, settings.runs)
            finally:
                _close(window)
            rows.append(Row("canvas.switch", f"Desk ↔ Canvas on a {n_switch}-node project (one switch, "
                            "repainted)", "ms", canvas_ms, "Tabbed on/off, same window", tabs_ms,
                            Budget.at_most(200, "ms"),
                            f"the canvas at reading zoom, {live} cards live (their nodes move each way)."))
            k = 2 if settings.smoke else settings.stall_nodes
            write_grid(root / "stream", k, columns=4)
            _shrink_cards(root / "stream")
            window = _open(root / "stream", config)
            stream = markdown_stream(settings.stall_events)
            try:
                canvas_p99, desk_p99, canvas_max, desk_max = [], [], [], []
                for _ in range(max(1, settings.runs // 2)):
                    gaps = _stall(window, bench, stream, "canvas")
                    canvas_p99.append(percentile(gaps, 99))
                    canvas_max.append(max(gaps, default=0.0))
                    gaps = _stall(window, bench, stream, "desk")
                    desk_p99.append(percentile(gaps, 99))
                    desk_max.append(max(gaps, default=0.0))
            finally:
                _close(window)
            note = (f"{k} cards live at reading zoom, each streaming {stream.deltas:,} Markdown deltas; "
                    f"heartbeat every {HEARTBEAT_MS} ms; baseline: the same window's desk, tiled.")
            rows += [
                Row("canvas.stall_p99", f"UI stall, {k} cards streaming Markdown: heartbeat gap p99", "ms",
                    canvas_p99, "desk (tiled), same window", desk_p99, Budget.at_most(16, "ms"), note),
                Row("canvas.stall_max", f"UI stall, {k} cards streaming Markdown: heartbeat gap max", "ms",
                    canvas_max, "desk (tiled), same window", desk_max, Budget.at_most(50, "ms")),
            ]
    finally:
        bench.close()
    return rows


def _shrink_cards(project: Path) -> None:
    """Cards of 500×520 (30 px apart): 8 of them fit a 1600×1000 window at reading zoom."""
    path = project / "project.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    for i, node_id in enumerate(data["canvas"]["cards"]):
        data["canvas"]["cards"][node_id] = [(i % 4) * 530, (i // 4) * 550, 500, 520]
    path.write_text(json.dumps(data), encoding="utf-8")
