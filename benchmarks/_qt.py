"""Qt plumbing of the UI benchmarks: one QApplication and one qasync loop per process, a chat node
wired to the real runtime, real drivers and the loopback fake provider, and first-paint detection.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import time
from collections.abc import Coroutine
from dataclasses import dataclass
from typing import Any, TypeVar

import httpx
import PySide6  # noqa: F401  (the binding is imported before qasync so qasync picks PySide6)
from PySide6.QtCore import QEvent, QMessageLogContext, QObject, Qt, QTimer, QtMsgType, qInstallMessageHandler
from PySide6.QtWidgets import QApplication, QMainWindow, QMdiArea, QWidget

from benchmarks._remote import RemoteProvider
from benchmarks.corpus import openai_stream_body, sentinel, split_deltas, stream_answer
from desktop.core.chat.runtime import ChatRuntime, ChatRuntimeDeps, create_chat_runtime
from desktop.core.config import ProviderSettings, Settings, resolve_provider
from desktop.core.providers import driver_for
from desktop.core.store import NodeState, new_node_state
from desktop.testing import FakeProvider, Turn
from desktop.ui.bridge import RuntimeBridge
from desktop.ui.event_loop import new_event_loop
from desktop.ui.gc_guard import GuiThreadCollector
from desktop.ui.node.chat_node import ChatNodeWidget
from desktop.ui.services import AppServices
from desktop.ui.theme import apply_theme

log = logging.getLogger(__name__)

__all__ = ["app_and_loop", "run_on_loop", "BenchServices", "PaintWatch", "Stream", "markdown_stream",
           "plain_stream", "shown_text", "shown_end", "Heartbeat", "tiled_window", "wait_finished",
           "wait_shown", "dispose", "HEARTBEAT_MS"]

T = TypeVar("T")
MODEL = "fake-fast"
_loop: asyncio.AbstractEventLoop | None = None
_collector: GuiThreadCollector | None = None


_NOISE = ("does not support propagateSizeHints",)
_handler_installed = False


def _qt_messages(kind: QtMsgType, context: QMessageLogContext, message: str) -> None:
    """Drop the offscreen plugin's per-window chatter; pass everything else to stderr."""
    if any(noise in message for noise in _NOISE):
        return
    print(message, file=sys.stderr)


def app_and_loop() -> tuple[QApplication, asyncio.AbstractEventLoop]:
    """The process's QApplication and qasync loop (created on first use, then reused)."""
    global _loop, _handler_installed
    if not _handler_installed:
        qInstallMessageHandler(_qt_messages)
        _handler_installed = True
    app = QApplication.instance()
    if not isinstance(app, QApplication):
        app = QApplication(["chatnodes-bench"])
        # What desktop.app.main applies: Fusion, the palette and the app-wide style sheet (every
        # widget then polishes and paints through the style sheet style, as users get it).
        apply_theme(app, "light")
    global _collector
    if _collector is None:
        # What desktop.app.main installs: garbage collected from a GUI-thread timer, full
        # collections put off while frames render. Benchmarks measure the app as it runs.
        _collector = GuiThreadCollector(app)
    if _loop is None or _loop.is_closed():
        _loop = new_event_loop(app)
    asyncio.set_event_loop(_loop)
    return app, _loop


def run_on_loop(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` to completion on the qasync loop (Qt events are processed meanwhile)."""
    _app, loop = app_and_loop()
    return loop.run_until_complete(coro)


@dataclass
class BenchServices:
    """A fake provider, one shared httpx client, the runtime and bridge, and the node services."""

    fake: RemoteProvider
    client: httpx.AsyncClient
    settings: Settings
    bridge: RuntimeBridge
    runtime: ChatRuntime
    services: AppServices

    @classmethod
    def start(cls, api: str = "openai") -> BenchServices:
        """Start the fake provider and wire everything (call with the qasync loop set)."""
        app_and_loop()
        fake = RemoteProvider().start()  # in its own process, as a real provider is
        client = httpx.AsyncClient(timeout=httpx.Timeout(30.0))
        base = fake.openai_base_url if api == "openai" else fake.anthropic_base_url
        settings = Settings(
            providers=[ProviderSettings(id="fake", name="Fake", api=api, base_url=base,  # type: ignore[arg-type]
                                        needs_key=False, models=[MODEL])],
            default_provider="fake",
            default_model=MODEL,
        )
        bridge = RuntimeBridge()
        runtime = create_chat_runtime(ChatRuntimeDeps(
            resolve_provider=lambda req: resolve_provider(settings, req, secrets=None, environ={}),
            broadcast=bridge.broadcast,
            driver_for=lambda cfg: driver_for(cfg, client),
        ))

        async def models(_provider_id: str) -> list[str]:
            return [MODEL]

        services = AppServices(runtime=runtime, bridge=bridge, settings=lambda: settings, list_models=models)
        return cls(fake, client, settings, bridge, runtime, services)

    def provider_config(self) -> Any:
        """The ``ProviderConfig`` the runtime would use (for the driver-only baseline)."""
        return resolve_provider(self.settings, _Target(), secrets=None, environ={})

    def node(self, state: NodeState, *, width: int = 640, height: int = 760) -> ChatNodeWidget:
        """A chat node on these services (not shown)."""
        node = ChatNodeWidget(state, self.services)
        node.resize(width, height)
        return node

    def close(self) -> None:
        """Stop the runtime, close the client, stop the fake provider."""
        run_on_loop(self.runtime.aclose())
        run_on_loop(self.client.aclose())
        self.fake.stop()


class _Target:
    provider: str | None = None
    model: str | None = None


def dispose(widget: QWidget) -> None:
    """Shut a node (or window) down and delete it now, so runs do not accumulate widgets.

    A main window the benchmark closed needs this too: closing only hides it (the app ends with it;
    a benchmark's process goes on), and left alive each window's event filters, timers and caches ran
    beside every later row (eight windows and 6,700 widgets by the end of the suite).
    """
    shutdown = getattr(widget, "shutdown", None)
    if callable(shutdown):
        shutdown()
    widget.hide()
    widget.deleteLater()
    QApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    QApplication.processEvents()
    if _collector is not None:
        # The idle moment after a run, when the app's collector timer would run a full collection
        # it put off while frames rendered (between runs the loop is not running, so its timer is not).
        _collector.check()


class PaintWatch(QObject):
    """Records the time of the first ``Paint`` event a widget receives.

    Attributes:
        painted_at: ``time.perf_counter()`` of the first paint, or None.
    """

    def __init__(self, widget: QWidget) -> None:
        super().__init__(widget)
        self.painted_at: float | None = None
        widget.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt API
        if self.painted_at is None and event.type() == QEvent.Type.Paint:
            self.painted_at = time.perf_counter()
        return False

    def wait(self, timeout_s: float = 10.0) -> float:
        """Process events until the first paint; return its ``perf_counter`` time.

        Raises:
            TimeoutError: No paint within ``timeout_s``.
        """
        deadline = time.perf_counter() + timeout_s
        while self.painted_at is None:
            if time.perf_counter() > deadline:
                raise TimeoutError("the widget was not painted")
            QApplication.processEvents()
        return self.painted_at

    async def wait_async(self, timeout_s: float = 10.0) -> float | None:
        """On the qasync loop: yield to Qt until the first paint; its time, or None after ``timeout_s``.

        Never call ``QApplication.processEvents()`` inside a coroutine on qasync: it would run other
        tasks re-entrantly ("Cannot enter into task ...").
        """
        deadline = time.perf_counter() + timeout_s
        while self.painted_at is None and time.perf_counter() < deadline:
            await asyncio.sleep(0)
        return self.painted_at


# ----------------------------------------------------------------------------------------------
# Scripted answers, streaming nodes and the heartbeat (shared by node_stream and interactive)

HEARTBEAT_MS = 5
CORPUS_SEED = 11


@dataclass(frozen=True)
class Stream:
    """One scripted answer: its text, how many deltas carry it, the turn that serves it.

    Attributes:
        kind: ``markdown`` (the corpus) or ``plain`` (``"tok tok …"``, the extra rows).
        text: The whole answer.
        deltas: How many text deltas the stream carries.
        turn: The ``FakeProvider`` turn (bytes rendered ahead: serving costs nothing per run).
        marker: Text the node shows once the answer is completely rendered.
    """

    kind: str
    text: str
    deltas: int
    turn: Turn
    marker: str

    def complete(self, shown: str) -> bool:
        """Whether ``shown`` (a message's plain text) is the completely rendered answer."""
        if self.kind == "plain":
            return shown.count("tok") == self.deltas
        return self.marker in shown[-2_000:]

    def received(self, text: str) -> bool:
        """Whether ``text`` (what a driver delivered) is the whole answer."""
        return text == self.text


def markdown_stream(n: int) -> Stream:
    """The corpus answer (``benchmarks.corpus.stream_answer``) in ``n`` token-like deltas."""
    text = stream_answer(n, CORPUS_SEED)
    body = openai_stream_body(split_deltas(text, n), model=MODEL)
    return Stream("markdown", text, n, Turn(text=text, raw_body=body, model=MODEL), sentinel(CORPUS_SEED))


def plain_stream(n: int) -> Stream:
    """``n`` deltas of ``"tok "`` (one paragraph, no Markdown): the plain-text extra rows."""
    turn = FakeProvider.fast_turn(n, model=MODEL)
    return Stream("plain", turn.text, n, turn, "tok")


def shown_text(node: ChatNodeWidget) -> str:
    """The plain text of the node's newest message widget."""
    views = node.transcript.views()
    return views[-1].toPlainText() if views else ""


def shown_end(node: ChatNodeWidget) -> str:
    """The plain text of the last segment of the node's newest message (where its last block shows).

    Reading every segment of a 140 KB answer costs milliseconds; ``wait_shown`` checks often, so it
    reads only the end (the corpus's closing line is the last block; the plain stream is one
    paragraph, shown by one segment).
    """
    views = node.transcript.views()
    if not views:
        return ""
    body = getattr(views[-1], "body", None)
    segments = getattr(body, "segments", None)
    if not segments:
        return views[-1].toPlainText()
    return str(segments[-1].toPlainText())


async def wait_finished(nodes: list[ChatNodeWidget], timeout_s: float = 300.0) -> list[str]:
    """Submit a prompt to every node; the stop reasons once every run finished."""
    loop = asyncio.get_running_loop()
    futures: list[asyncio.Future[str]] = []
    for node in nodes:
        fut: asyncio.Future[str] = loop.create_future()
        node.run_finished.connect(lambda reason, f=fut: f.done() or f.set_result(reason))
        futures.append(fut)
        node.submit("Say many words.")
    async with asyncio.timeout(timeout_s):
        return list(await asyncio.gather(*futures))


async def wait_shown(nodes: list[ChatNodeWidget], stream: Stream, timeout_s: float = 60.0) -> None:
    """Yield to Qt until every node shows the whole answer (its last block rendered).

    Raises:
        RuntimeError: A node did not show the whole answer within ``timeout_s``.
    """
    deadline = time.perf_counter() + timeout_s
    while True:
        # The closing line is plain words (the raw tail shows it too): the node must also have
        # nothing left to render (no block waiting, no update half shown; colouring is not waited for).
        pending = [n for n in nodes if n.transcript.is_rendering() or not stream.complete(shown_end(n))]
        if not pending:
            return
        if time.perf_counter() > deadline:
            tail = shown_text(pending[0])[-120:]
            raise RuntimeError(f"{len(pending)} node(s) do not show the whole answer; one ends with {tail!r}")
        await asyncio.sleep(0.001)  # a check reads only each node's last segment


class Heartbeat:
    """A precise timer ticking every ``HEARTBEAT_MS``; ``gaps`` holds the ms between ticks."""

    def __init__(self) -> None:
        self.gaps: list[float] = []
        self._last: float | None = None
        self._timer = QTimer()
        self._timer.setTimerType(Qt.TimerType.PreciseTimer)
        self._timer.setInterval(HEARTBEAT_MS)
        self._timer.timeout.connect(self._tick)

    def _tick(self) -> None:
        now = time.perf_counter()
        if self._last is not None:
            self.gaps.append((now - self._last) * 1000.0)
        self._last = now

    def start(self) -> None:
        """Forget earlier gaps and start ticking."""
        self.gaps.clear()
        self._last = None
        self._timer.start()

    def stop(self) -> list[float]:
        """Stop ticking; the gaps recorded since ``start``."""
        self._timer.stop()
        return list(self.gaps)


def tiled_window(bench: BenchServices, count: int) -> tuple[QMainWindow, list[ChatNodeWidget]]:
    """A 1600×1000 window with ``count`` fresh nodes tiled in a ``QMdiArea``, shown and painted."""
    window = QMainWindow()
    area = QMdiArea(window)
    window.setCentralWidget(area)
    window.resize(1600, 1000)
    nodes = []
    for i in range(count):
        node = bench.node(new_node_state(f"Node {i + 1}"))
        area.addSubWindow(node).show()
        nodes.append(node)
    area.tileSubWindows()
    window.show()
    QApplication.processEvents()
    return window, nodes
