"""Bootstrap: command line, QApplication + qasync loop, and the wiring of one main window.

``python -m desktop [PROJECT_DIR] [--demo] [--config-dir DIR] [--smoke-test]`` and the ``chatnodes``
script both end up in :func:`main`. :func:`create_main_window` builds a fully wired window on the
running qasync loop; tests and the screenshot tool call it directly.
"""

from __future__ import annotations

import time

_MODULE_LOADED = time.perf_counter()

import argparse  # noqa: E402
import logging  # noqa: E402
import os  # noqa: E402
import shutil  # noqa: E402
import sys  # noqa: E402
from collections.abc import Callable, Iterable, Mapping, Sequence  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import TYPE_CHECKING, Any, NoReturn  # noqa: E402

import PySide6  # noqa: E402,F401  (the Qt binding is imported before qasync so qasync picks PySide6)
from PySide6.QtCore import QEvent, QEventLoop, QObject  # noqa: E402
from PySide6.QtWidgets import QApplication, QMainWindow  # noqa: E402

from desktop.demo import DEMO_FIRST_PROMPT, DEMO_PROVIDER_ID  # noqa: E402  (constants only: no server import)

# The window, the settings, the project and the chat node's widgets are imported by main() before the
# first paint; asyncio, qasync, httpx, the keyring, the runtime, the providers, MCP and the Markdown
# renderer only after a node accepts input (see main() and AppContext.load_services).
if TYPE_CHECKING:
    import asyncio

    from desktop.core.attachments import AttachmentResolver, AttachmentStore
    from desktop.core.config import CONFIG_DIR_ENV, SecretStore
    from desktop.core.redact import KeyScrubFilter
    from desktop.ui.context import AppContext
    from desktop.ui.demo_offer import DemoOffer, DemoServer
    from desktop.ui.window.main_window import MainWindow

log = logging.getLogger(__name__)

__all__ = [
    "main",
    "run",
    "parse_args",
    "AppContext",
    "make_context",
    "create_main_window",
    "wire_window",
    "demo_offer",
    "install_key_scrub_filter",
    "add_log_file",
    "log_dir",
    "DEMO_PROVIDER_ID",
    "DEMO_FIRST_PROMPT",
    "resolve_config_dir",
    "default_project_dir",
    "CONFIG_DIR_ENV",
]

APP_NAME = "Chat Nodes"
APP_ID = "chatnodes"
LOG_DIR_ENV = "CHATNODES_LOG_DIR"
"""Overrides the folder of the log file (default: the platform's user log folder)."""
LOG_FILE = "chatnodes.log"
LOG_MAX_BYTES = 1 << 20
"""The log file is rotated at this size; ``LOG_BACKUPS`` older files are kept beside it."""
LOG_BACKUPS = 3


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """Parse the command line (``argv`` without the program name; ``sys.argv[1:]`` when None)."""
    parser = argparse.ArgumentParser(
        prog="chatnodes",
        description="Chat Nodes: a desktop client for OpenAI-compatible and Anthropic LLM providers.",
    )
    parser.add_argument("project_dir", nargs="?", type=Path, default=None, metavar="PROJECT_DIR",
                        help="project folder to open (created when missing; default: your 'Default project')")
    parser.add_argument("--demo", action="store_true",
                        help="use the built-in offline demo provider (no key, no network)")
    parser.add_argument("--config-dir", type=Path, default=None, metavar="DIR",
                        help="settings folder (default: $CHATNODES_CONFIG_DIR, else the platform's "
                             "config dir)")
    parser.add_argument("--smoke-test", action="store_true",
                        help="quit right after the first paint and print the start-up time (exit code 0)")
    return parser.parse_args(list(sys.argv[1:] if argv is None else argv))


def resolve_config_dir(cli_value: Path | None, environ: Mapping[str, str] | None = None) -> Path:
    """``--config-dir``, else ``$CHATNODES_CONFIG_DIR``, else the platform's user config dir."""
    if cli_value is not None:
        return cli_value.expanduser()
    from desktop.core.config import default_config_dir

    return Path(default_config_dir(os.environ if environ is None else environ))


def default_project_dir() -> Path:
    """The "Default project" folder under the platform's user data dir (created)."""
    import platformdirs

    folder = Path(platformdirs.user_data_dir(APP_ID, appauthor=False)) / "Default project"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def create_main_window(*, project_dir: Path, config_dir: Path, demo: bool = False) -> MainWindow:
    """Build a fully wired main window on the running qasync loop (not shown yet).

    The window owns an :class:`~desktop.ui.context.AppContext` (one shared ``httpx.AsyncClient``,
    settings and key stores, the chat runtime and its Qt bridge, and with ``demo`` the loopback demo
    provider) and the project store of ``project_dir``; its error reporter is installed. Closing the
    window stops every run, saves the project and closes the client and the demo server; its ``closed``
    signal fires when that is done.

    Args:
        project_dir: The project folder (created when missing).
        config_dir: The settings folder (created on first save).
        demo: Start the offline demo provider and select it.
    """
    from desktop.ui.window.main_window import MainWindow

    window = MainWindow()
    wire_window(window, make_context(config_dir=Path(config_dir), demo=demo))
    window.open_project(Path(project_dir))
    return window


def wire_window(window: MainWindow, context: AppContext) -> None:
    """Attach ``context`` to the window shell and install its error reporter (removed when it closes)."""
    window.attach(context)
    reporter = window.error_reporter
    reporter.install()
    window.closed.connect(reporter.uninstall)


def demo_offer() -> DemoOffer:
    """The offline demo this app ships: the loopback provider playing the scripted tour."""
    from desktop.demo import DEMO_MODEL, DEMO_MODELS
    from desktop.ui.demo_offer import DemoOffer

    def start(tokens_per_second: float | None) -> DemoServer:
        from desktop.demo import start_demo_provider  # the server modules load only when it starts

        return start_demo_provider(tokens_per_second=tokens_per_second)

    return DemoOffer(provider_id=DEMO_PROVIDER_ID, model=DEMO_MODEL, models=tuple(DEMO_MODELS),
                     first_prompt=DEMO_FIRST_PROMPT, start=start)


def make_context(
    *,
    config_dir: Path,
    demo: bool = False,
    environ: Mapping[str, str] | None = None,
    secrets: SecretStore | None = None,
    defer_services: bool = False,
) -> AppContext:
    """An :class:`~desktop.ui.context.AppContext` wired with the app's demo and key scrubber.

    Args:
        config_dir: The settings folder.
        demo: Start the demo provider now and make it the default.
        environ: Environment used for key resolution (default ``os.environ``).
        secrets: The key store (default: the OS keyring, or session-only when there is none).
        defer_services: Load the key store, HTTP client, runtime, ledger and MCP hub only in
            ``AppContext.load_services`` (or on first use): what :func:`main` does before its first paint.
    """
    from desktop.core.redact import scrub_key_shapes
    from desktop.ui.context import AppContext

    return AppContext(config_dir=Path(config_dir), key_scrubber=scrub_key_shapes,
                      demo_offer=demo_offer(), demo=demo, environ=environ, secrets=secrets,
                      defer_services=defer_services, attachments_for=_project_attachments)


def _project_attachments(folder: Path | None) -> tuple[AttachmentStore | None, AttachmentResolver | None]:
    """The project's attachment store and resolver, with Qt's codecs (``AppContext.attachments_for``)."""
    from desktop.ui.attachments.images import project_attachments  # start-up: loaded with the first file

    return project_attachments(folder)


def install_key_scrub_filter(
    logger: logging.Logger | None = None, secrets: Callable[[], Iterable[str | None]] | None = None
) -> KeyScrubFilter:
    """Add one :class:`~desktop.core.redact.KeyScrubFilter` to every handler of ``logger``.

    Args:
        logger: The logger whose handlers get the filter (the root logger when None).
        secrets: Returns the keys known right now (scrubbed with any 8+ character run of them);
            None scrubs key shapes only.

    Returns:
        The filter (already installed; a handler that has one is not given a second one).
    """
    from desktop.core.redact import KeyScrubFilter

    target = logger if logger is not None else logging.getLogger()
    key_filter = KeyScrubFilter(secrets)
    for handler in target.handlers:
        if not any(isinstance(f, KeyScrubFilter) for f in handler.filters):
            handler.addFilter(key_filter)
    return key_filter


def __getattr__(name: str) -> Any:
    """Names still importable here, loaded lazily: ``AppContext``, ``CONFIG_DIR_ENV``,
    ``cancel_and_wait``, ``KeyScrubFilter`` and ``scrub_key_shapes``."""
    if name == "AppContext":
        from desktop.ui.context import AppContext

        return AppContext
    if name == "CONFIG_DIR_ENV":
        from desktop.core.config import CONFIG_DIR_ENV

        return CONFIG_DIR_ENV
    if name in ("KeyScrubFilter", "scrub_key_shapes"):
        from desktop.core import redact

        return getattr(redact, name)
    if name == "cancel_and_wait":
        from desktop.core.aio import cancel_and_wait

        return cancel_and_wait
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class _FirstPaintWatcher(QObject):
    """Notices the window's first paint; with ``report`` it prints the start-up time to stderr."""

    def __init__(self, window: QMainWindow, started_at: float, *, report: bool) -> None:
        super().__init__(window)
        self._started_at = started_at
        self._report = report
        self.first_paint_ms: float | None = None

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt API)
        if self.first_paint_ms is None and event.type() == QEvent.Type.Paint:
            self.first_paint_ms = (time.perf_counter() - self._started_at) * 1000.0
            if self._report:
                print(f"chatnodes: first paint after {self.first_paint_ms:.1f} ms "
                      f"(first_paint_ms={self.first_paint_ms:.1f})", file=sys.stderr, flush=True)
        return False


_LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def log_dir(environ: Mapping[str, str] | None = None) -> Path:
    """Where the log file goes: ``$CHATNODES_LOG_DIR``, else the platform's user log folder
    (``~/.local/state/chatnodes/log`` on Linux, ``~/Library/Logs/chatnodes`` on macOS)."""
    env = os.environ if environ is None else environ
    override = env.get(LOG_DIR_ENV, "").strip()
    if override:
        return Path(override).expanduser()
    import platformdirs

    return Path(platformdirs.user_log_dir(APP_ID, appauthor=False))


def add_log_file(folder: Path, logger: logging.Logger | None = None) -> Path | None:
    """Log to ``folder/chatnodes.log`` too, rotated at ``LOG_MAX_BYTES`` (``LOG_BACKUPS`` kept).

    Call :func:`install_key_scrub_filter` afterwards: it filters every handler of the logger, this
    one included, so no key reaches the file.

    Args:
        folder: The log folder (created, readable by the user only).
        logger: Where the handler goes (the root logger when None).

    Returns:
        The log file, or None when it cannot be written (said on the other handlers).
    """
    from logging.handlers import RotatingFileHandler

    target = logger if logger is not None else logging.getLogger()
    path = Path(folder) / LOG_FILE
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        handler = RotatingFileHandler(path, maxBytes=LOG_MAX_BYTES, backupCount=LOG_BACKUPS,
                                      encoding="utf-8")
        os.chmod(path, 0o600)
    except OSError as exc:
        log.warning("no log file: %s cannot be written (%s)", path, exc.strerror or exc)
        return None
    handler.setFormatter(logging.Formatter(_LOG_FORMAT))
    target.addHandler(handler)
    return path


def _configure_logging() -> Path | None:
    """Log to stderr and to the rotated log file; returns the log file (None: none could be written)."""
    level = os.environ.get("CHATNODES_LOG", "INFO").upper()
    logging.basicConfig(level=getattr(logging, level, logging.INFO), format=_LOG_FORMAT)
    return add_log_file(log_dir())


def main(argv: Sequence[str] | None = None, *, started_at: float | None = None) -> int:
    """Run the application; returns the process exit code.

    Start-up shows a usable window first and loads the rest right after, as fast desktop apps do:
    with only Qt, the settings, the project and the chat node's own widgets imported, the window and
    the project's nodes are built and painted, and the first node's message input gets the focus.
    Then the qasync loop starts and the context's deferred services load (keyring, HTTP client,
    runtime, usage ledger, MCP), and the nodes get their transcripts and model lists. A message
    sent before that loads them first. ``--smoke-test`` reports and quits once a node accepts input.
    """
    t0 = started_at if started_at is not None else _MODULE_LOADED
    args = parse_args(argv)
    log_file = _configure_logging()
    key_source: list[Callable[[], list[str]]] = []  # the context's keys, once it exists
    install_key_scrub_filter(secrets=lambda: key_source[0]() if key_source else [])
    from desktop.ui.gc_guard import GuiThreadCollector
    from desktop.ui.lifetime import connect_for
    from desktop.ui.theme import app_icon, apply_theme, system_scheme
    from desktop.ui.window.main_window import MainWindow

    app = QApplication.instance()
    if not isinstance(app, QApplication):
        app = QApplication([sys.argv[0] if sys.argv else APP_ID])
    app.setApplicationName(APP_NAME)
    app.setApplicationDisplayName(APP_NAME)
    app.setOrganizationName(APP_ID)
    app.setDesktopFileName(APP_ID)
    app.setWindowIcon(app_icon())
    app.setQuitOnLastWindowClosed(False)  # the window's async shutdown decides when the loop ends
    apply_theme(app, system_scheme(exact=False))
    # Tools read files in worker threads and --demo serves on a thread: collect garbage on the GUI
    # thread only, so no Qt object is ever finalised from another thread.
    collector = GuiThreadCollector(app)

    config_dir = resolve_config_dir(args.config_dir)
    project_dir = args.project_dir.expanduser() if args.project_dir is not None else None
    if project_dir is None:
        folder = default_project_dir() if not args.demo else _demo_project_dir()
    else:
        folder = project_dir
    context = make_context(config_dir=config_dir, demo=args.demo, defer_services=True)
    context.log_file = log_file  # the error banner says where the details are
    key_source.append(context.recent_keys)
    window = MainWindow()
    watcher = _FirstPaintWatcher(window, t0, report=args.smoke_test)
    window.installEventFilter(watcher)
    wire_window(window, context)
    window.node_area.defer_loading = True  # transcripts and model lists after the first paint
    window.open_project(folder)
    # A session that ends without closing the window (logout): at least the project is saved.
    connect_for(window, app.aboutToQuit, lambda: None if window.is_shut_down() else window.save_project())
    window.show()
    if args.smoke_test:
        ready = _show_until(app, window, lambda: _accepting_input(window, watcher), budget_s=30.0)
    else:  # the loop starts once the window painted (half a second at most), whatever has the focus
        ready = _show_until(app, window, lambda: watcher.first_paint_ms is not None, budget_s=0.5)
    if args.smoke_test:
        _report_ready(window, ready, t0)
        if not context.needs_async_close():
            window.close()  # nothing to await: saved, released and closed right here
    try:
        if not window.is_shut_down():
            code = _run_loop(app, window, context, close_at_once=args.smoke_test)
        else:
            code = 0
    finally:
        collector.stop()
    if project_dir is None and args.demo:
        shutil.rmtree(folder, ignore_errors=True)
    if watcher.first_paint_ms is None:
        print("chatnodes: the window did not paint within 30 s", file=sys.stderr, flush=True)
        return 1
    if args.smoke_test and not ready:
        code = 1
    if args.smoke_test and window.is_shut_down():
        _smoke_test_exit.append(code)
    return code


_smoke_test_exit: list[int] = []
"""Set when a --smoke-test run closed its window with everything saved and released (see :func:`run`)."""


def run(started_at: float | None = None) -> NoReturn:
    """The entry point of ``python -m desktop`` and the bundle: :func:`main`, then exit the process.

    A ``--smoke-test`` run that closed its window (project saved, lock released, demo stopped) ends
    with ``os._exit`` once the logs and the standard streams are flushed: interpreter and Qt teardown
    would add nothing but time to a check of the start-up.
    """
    code = main(started_at=started_at)
    if _smoke_test_exit:
        logging.shutdown()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)


def _accepting_input(window: MainWindow, watcher: _FirstPaintWatcher) -> bool:
    """True when the window has painted and a node's message input is enabled, visible and the
    window's focus widget (where the first key goes)."""
    if watcher.first_paint_ms is None:
        return False
    node = window.active_node() or next(iter(window.nodes()), None)
    if node is None:
        return False
    edit = node.chat_input
    return edit.isEnabled() and edit.isVisible() and window.focusWidget() is edit


def _show_until(app: QApplication, window: QMainWindow, done: Callable[[], bool], *, budget_s: float) -> bool:
    """Process Qt events (no loop runs yet) until ``done()``; False when it was not within ``budget_s``.

    Then ``window`` is repainted once more, so what ``done`` checked is on screen.
    """
    deadline = time.perf_counter() + budget_s
    while not done() and time.perf_counter() < deadline:
        app.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 20)
        if not done():
            time.sleep(0.002)
    ready = done()
    window.repaint()
    app.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 20)
    return ready


def _report_ready(window: MainWindow, ready: bool, t0: float) -> None:
    """--smoke-test: say on stderr when a node accepted input (or that none did)."""
    ready_ms = (time.perf_counter() - t0) * 1000.0
    if ready:
        print(f"chatnodes: ready with {len(window.nodes())} node(s) after {ready_ms:.1f} ms "
              f"(ready_ms={ready_ms:.1f})", file=sys.stderr, flush=True)
    else:
        print("chatnodes: no node accepted input within 30 s", file=sys.stderr, flush=True)


def track_async_generators(loop: asyncio.AbstractEventLoop) -> None:
    """Install asyncio's async-generator hooks for ``loop``, as asyncio's own ``run_forever`` does
    and qasync's does not.

    An async generator left suspended (an HTTP response's body reader when a run is stopped) is then
    closed by a task on the loop, where its cleanup may await; without the hooks the garbage
    collector closes it outside any loop and httpcore's cleanup fails ("Exception ignored ...").
    ``loop.shutdown_asyncgens()`` (``asyncio.Runner`` does it at exit) closes the ones still open.
    """
    firstiter = getattr(loop, "_asyncgen_firstiter_hook", None)
    finalizer = getattr(loop, "_asyncgen_finalizer_hook", None)
    if firstiter is not None and finalizer is not None:
        sys.set_asyncgen_hooks(firstiter=firstiter, finalizer=finalizer)


def _run_loop(app: QApplication, window: MainWindow, context: AppContext, *, close_at_once: bool) -> int:
    """Run the qasync loop until the window's shutdown finished: first load the context's deferred
    services (the nodes finish loading with them), then follow the system's colour scheme.

    Args:
        app: The application.
        window: The shown main window.
        context: Its context.
        close_at_once: Close the window as soon as the loop runs (--smoke-test with something to
            await on close).

    Returns:
        The exit code (0).
    """
    import asyncio

    from desktop.ui.event_loop import new_event_loop
    from desktop.ui.theme import apply_theme, current_scheme, follow_system_scheme, system_scheme

    async def run() -> int:
        track_async_generators(asyncio.get_running_loop())
        closed: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        def on_closed() -> None:
            if not closed.done():
                closed.set_result(None)

        window.closed.connect(on_closed)
        window.error_reporter.install()  # now on the running loop: its exception handler too
        if close_at_once:
            window.close()
        else:
            context.load_services()  # keyring, HTTP client, runtime, ledger, MCP; the nodes finish loading
            if system_scheme() != current_scheme():  # the exact answer, now that the window is up
                apply_theme(app)
            follow_system_scheme(app)
        await closed
        return 0

    def loop_factory() -> asyncio.AbstractEventLoop:
        loop = new_event_loop(app)
        return loop

    with asyncio.Runner(loop_factory=loop_factory) as runner:
        return runner.run(run())


def _demo_project_dir() -> Path:
    """A fresh throw-away project folder for ``--demo`` without a PROJECT_DIR."""
    import tempfile

    return Path(tempfile.mkdtemp(prefix="chatnodes-demo-"))
