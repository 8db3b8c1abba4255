"""Budget of issue 27's search panel: keystroke → first rows painted, on a 100,000-message index.

The corpus and the index are ``benchmarks.search``'s (5 projects × 40 nodes × 500 Markdown-rich
messages, archives and a stored version per node; built by a ``SearchService`` as in the app). A real
``SearchPanel`` in a shown window is wired to a ``SearchService`` on that index the way the window
wires it (``query_changed`` → ``service.search`` on the searcher thread → a queued signal →
``show_results``). For each query the text but its last character is put in ``searchInput``, then the
last key is pressed (``QTest.keyClick``); the sample is the time from that key press to the first
paint of the results view's viewport with rows in the model: the debounce (``panel.DEBOUNCE_MS``),
the query with its snippets on the searcher thread, the signal back, the model reset and the paint.
Queries: the words, phrases and prefixes of ``benchmarks.search`` (each found in the corpus), newest
first, several passes (the first warms the page cache and is not counted).

The baseline is the query alone (``SearchResults.elapsed_ms``, measured by the searcher thread for
the same queries): the difference is what the UI adds.
"""

from __future__ import annotations

import logging
import tempfile
import time
from pathlib import Path

from PySide6.QtCore import QEvent, QEventLoop, QObject, Qt, Signal
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QMainWindow

from benchmarks._harness import Budget, Row, Settings, median, percentile
from benchmarks._qt import app_and_loop
from benchmarks.search import PHRASES, PREFIXES, WORDS, build_once, make_corpus
from desktop.core.search import SearchResults, SearchService
from desktop.ui.search.panel import SearchPanel

log = logging.getLogger(__name__)

__all__ = ["measure", "run", "FIRST_RESULTS_BUDGET_MS"]

FIRST_RESULTS_BUDGET_MS = 100.0


class _Relay(QObject):
    results = Signal(object)


class _PaintWatch(QObject):
    """Notes the first paint of the results' viewport once the model has rows."""

    def __init__(self, panel: SearchPanel) -> None:
        super().__init__(panel)
        self._panel = panel
        self.painted_at: float | None = None
        panel.results.viewport().installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt API
        if event.type() == QEvent.Type.Paint and self.painted_at is None and self._panel.model.rowCount():
            self.painted_at = time.perf_counter()
        return False


def _samples(panel: SearchPanel, watch: _PaintWatch, texts: list[str], elapsed: list[float],
             app: QApplication) -> list[float]:
    out: list[float] = []
    for text in texts:
        panel.input.setText(text[:-1])
        panel.model.set_hits(())
        panel.status.setText("")  # a "0 found" left by the previous query must not end this one's wait
        app.processEvents()
        watch.painted_at = None
        elapsed.clear()
        start = time.perf_counter()
        QTest.keyClick(panel.input, text[-1])
        deadline = start + 10.0
        while watch.painted_at is None and time.perf_counter() < deadline:
            app.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 2)
            if elapsed and not panel.model.rowCount() and panel.status.text().startswith("0 found"):
                break
        if watch.painted_at is None:
            log.warning("search UI benchmark: %r found nothing (not counted)", text)
            continue
        out.append((watch.painted_at - start) * 1000)
    return out


def measure(projects: int = 5, nodes: int = 40, per_node: int = 500, runs: int = 3) -> dict[str, list[float]]:
    """Build the corpus and its index, then time ``runs`` passes of the queries (see the module doc)."""
    app, _loop = app_and_loop()
    texts = [t for t in (*WORDS, *PHRASES, *PREFIXES) if t[-1].isascii() and not t.startswith('"End')]
    with tempfile.TemporaryDirectory(prefix="chatnodes-search-ui-bench-") as tmp:
        root = Path(tmp)
        corpus = make_corpus(root / "projects", projects, nodes, per_node)
        index_dir = root / "index"
        build_once(corpus, index_dir)
        service = SearchService(index_dir, known_projects=lambda: corpus.folders)
        service.start()
        service.wait_idle(120)
        window = QMainWindow()
        window.resize(1200, 800)
        panel = SearchPanel(window, lambda: None)
        window.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, panel)
        relay = _Relay()
        elapsed: list[float] = []

        def answered(results: SearchResults) -> None:
            elapsed.append(results.elapsed_ms)
            relay.results.emit(results)

        relay.results.connect(panel.show_results)
        panel.query_changed.connect(lambda q: service.search(q, answered))
        watch = _PaintWatch(panel)
        window.show()
        panel.open_panel()
        app.processEvents()
        ours: list[float] = []
        queries: list[float] = []
        try:
            for r in range(runs + 1):
                run_elapsed: list[float] = []
                samples: list[float] = []
                for text in texts:
                    samples += _samples(panel, watch, [text], elapsed, app)
                    run_elapsed += elapsed[-1:]
                if r:  # the first pass warms the page cache
                    ours += samples
                    queries += run_elapsed
        finally:
            service.close()
            window.close()
            window.deleteLater()
            app.processEvents()
    return {"first_paint_ms": ours, "query_ms": queries}


def run(settings: Settings) -> list[Row]:
    """The suite's rows (2 projects × 2 nodes × 40 messages in the smoke run)."""
    shape = (2, 2, 40) if settings.smoke else (5, 40, 500)
    result = measure(*shape, runs=1 if settings.smoke else min(settings.runs, 3))
    ours, base = result["first_paint_ms"], result["query_ms"]
    n = "100,000" if not settings.smoke else "a tiny"
    return [
        Row("search_ui.first_results", f"search first results: keystroke → first rows painted in the panel, "
            f"{n}-message index, median", "ms", ours, "the query alone (searcher thread)", base,
            Budget.at_most(FIRST_RESULTS_BUDGET_MS, "ms"),
            note=f"p95 {percentile(ours, 95):.0f} ms (query alone p95 {percentile(base, 95):.0f} ms, "
            f"median {median(base):.0f} ms) over {len(ours)} keystrokes; includes the "
            "panel's debounce"),
        Row("search_ui.first_results_p95", "search first results: keystroke → first rows painted, p95", "ms",
            [percentile(ours, 95)], "the query alone, p95", [percentile(base, 95)],
            Budget.at_most(FIRST_RESULTS_BUDGET_MS, "ms")),
    ]
