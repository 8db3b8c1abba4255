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
import re  # noqa: E402
import shutil  # noqa: E402
import sys  # noqa: E402
from collections.abc import Mapping, Sequence  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import TYPE_CHECKING, Any  # noqa: E402

import PySide6  # noqa: E402,F401  (the Qt binding is imported before qasync so qasync picks PySide6)
from PySide6.QtCore import QEvent, QEventLoop, QObject  # noqa: E402
from PySide6.QtWidgets import QApplication, QMainWindow  # noqa: E402

# Everything else (asyncio's loop, qasync, httpx, the keyring, the core, the chat node) is imported
# only after the window's first paint: see main().
if TYPE_CHECKING:
    import asyncio

    from desktop.core.chat.types import ChatDriver, ChatToolDef, ProviderConfig
    from desktop.core.secrets import SecretStore
    from desktop.core.settings import SendTarget, Settings
    from desktop.testing import FakeProvider
    from desktop.ui.main_window import MainWindow

log = logging.getLogger(__name__)

__all__ = [
    "main",
    "parse_args",
    "AppContext",
    "create_main_window",
    "resolve_config_dir",
    "default_project_dir",
    "CONFIG_DIR_ENV",
]

CONFIG_DIR_ENV = "CHATNODES_CONFIG_DIR"
APP_NAME = "Chat Nodes"
APP_ID = "chatnodes"


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
                        help=f"settings folder (default: ${CONFIG_DIR_ENV}, else the platform's config dir)")
    parser.add_argument("--smoke-test", action="store_true",
                        help="quit right after the first paint and print the start-up time (exit code 0)")
    return parser.parse_args(list(sys.argv[1:] if argv is None else argv))


def resolve_config_dir(cli_value: Path | None, environ: Mapping[str, str] | None = None) -> Path:
    """``--config-dir``, else ``$CHATNODES_CONFIG_DIR``, else the platform's user config dir."""
    env = os.environ if environ is None else environ
    if cli_value is not None:
        return cli_value.expanduser()
    from_env = env.get(CONFIG_DIR_ENV, "").strip()
    if from_env:
        return Path(from_env).expanduser()
    from desktop.core.settings import default_config_dir

    return Path(default_config_dir(env))


def default_project_dir() -> Path:
    """The "Default project" folder under the platform's user data dir (created)."""
    import platformdirs

    folder = Path(platformdirs.user_data_dir(APP_ID, appauthor=False)) / "Default project"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def create_main_window(*, project_dir: Path, config_dir: Path, demo: bool = False) -> QMainWindow:
    """Build a fully wired main window on the running qasync loop (not shown yet).

    The window owns an :class:`~desktop.ui.context.AppContext` (one shared ``httpx.AsyncClient``,
    settings and key stores, the chat runtime and its Qt bridge, and with ``demo`` the loopback demo
    provider) and the project store of ``project_dir``. Closing the window stops every run, saves the
    project and closes the client and the demo server; its ``closed`` signal fires when that is done.

    Args:
        project_dir: The project folder (created when missing).
        config_dir: The settings folder (created on first save).
        demo: Start the offline demo provider and select it.
    """
    from desktop.ui.main_window import MainWindow

    context = AppContext(config_dir=Path(config_dir), demo=demo)
    window = MainWindow(context)
    window.open_project(Path(project_dir))
    return window


DEMO_PROVIDER_ID = "demo"
DEMO_MODEL = "claude-sonnet-4-5"
_KEY_PATTERN = re.compile(r"\b(sk-[A-Za-z0-9_\-]{8,}|gsk_[A-Za-z0-9]{8,}|AIza[0-9A-Za-z_\-]{20,})")


def scrub_key_shapes(text: str) -> str:
    """``text`` with anything shaped like a provider key (``sk-…``, ``gsk_…``, ``AIza…``) as ``***``."""
    return _KEY_PATTERN.sub("***", text)


class AppContext:
    """The services one main window runs on.

    One shared ``httpx.AsyncClient``, the settings store and the current settings, the secret store,
    the chat runtime and its Qt bridge, and (in demo mode) the loopback demo provider. The demo
    provider is added to the settings in memory only: :meth:`effective_settings` shows it,
    :attr:`settings` (what is saved) never holds it.

    Args:
        config_dir: The settings folder.
        demo: Start the demo provider now and make it the default.
        environ: Environment used for key resolution (default ``os.environ``).
        secrets: The key store (default: the OS keyring, or session-only when there is none).
    """

    def __init__(
        self,
        *,
        config_dir: Path,
        demo: bool = False,
        environ: Mapping[str, str] | None = None,
        secrets: SecretStore | None = None,
    ) -> None:
        import httpx

        from desktop.core.chat.runtime import ChatRuntimeDeps, create_chat_runtime
        from desktop.core.secrets import SecretStore
        from desktop.core.settings import SettingsStore
        from desktop.ui.bridge import RuntimeBridge

        self.config_dir = Path(config_dir)
        self.environ: Mapping[str, str] = os.environ if environ is None else environ
        self.settings_store = SettingsStore(self.config_dir)
        self.settings: Settings = self.settings_store.load()
        self.settings_error: str | None = self.settings_store.last_error
        self.secrets = secrets if secrets is not None else SecretStore()
        self.client = httpx.AsyncClient(timeout=httpx.Timeout(60.0, connect=10.0))
        self.demo_server: FakeProvider | None = None
        self.project_dir: Path | None = None
        self.bridge = RuntimeBridge()
        self._deps = ChatRuntimeDeps(
            resolve_provider=self.resolve_provider,
            broadcast=self.bridge.broadcast,
            tools_for=self.tools_for,
            driver_for=self._driver_for,
            log=logging.getLogger("desktop.runtime").info,
            max_iterations=self.settings.max_iterations,
        )
        self.runtime = create_chat_runtime(self._deps)
        self._closed = False
        self._inflight: set[asyncio.Future[list[str]]] = set()
        if demo:
            self.start_demo()

    # -- settings -------------------------------------------------------------------------------
    @property
    def demo(self) -> bool:
        """True while the demo provider runs."""
        return self.demo_server is not None

    def effective_settings(self) -> Settings:
        """The settings in use: the saved ones plus, in demo mode, the demo provider as the default."""
        if self.demo_server is None:
            return self.settings
        from desktop.core.settings import ProviderSettings
        from desktop.testing.demo import DEMO_MODELS

        eff = self.settings.copy()
        eff.providers = [p for p in eff.providers if p.id != DEMO_PROVIDER_ID]
        eff.providers.insert(0, ProviderSettings(
            id=DEMO_PROVIDER_ID,
            name="Offline demo",
            api="anthropic",
            base_url=self.demo_server.anthropic_base_url,
            needs_key=False,
            key_env=None,
            models=list(DEMO_MODELS),
        ))
        eff.default_provider = DEMO_PROVIDER_ID
        eff.default_model = DEMO_MODEL
        return eff

    def save_settings(self, settings: Settings) -> None:
        """Validate, save and adopt ``settings`` (the demo provider is never saved).

        Raises:
            SettingsError: The settings are invalid (nothing changes).
            OSError: Writing failed.
        """
        clean = settings.copy()
        clean.providers = [p for p in clean.providers if p.id != DEMO_PROVIDER_ID]
        if clean.default_provider == DEMO_PROVIDER_ID:
            clean.default_provider = self.settings.default_provider
            clean.default_model = self.settings.default_model
        self.settings_store.save(clean)
        self.settings = clean
        self.settings_error = None
        self._deps.max_iterations = clean.max_iterations

    # -- runtime dependencies ------------------------------------------------------------------
    def resolve_provider(self, req: SendTarget) -> ProviderConfig | None:
        """``ChatRuntimeDeps.resolve_provider``: the current settings and keys."""
        from desktop.core.settings import resolve_provider

        return resolve_provider(self.effective_settings(), req, secrets=self.secrets, environ=self.environ)

    def provider_config(self, provider_id: str | None, model: str | None = None) -> ProviderConfig | None:
        """The provider configuration for ``provider_id`` (the default when None), or None."""
        return self.resolve_provider(_Target(provider_id, model))

    def tools_for(self, req: object) -> list[ChatToolDef]:
        """``ChatRuntimeDeps.tools_for``: the project tools, rooted at the open project folder."""
        if self.project_dir is None:
            return []
        from desktop.core.tools import project_tools

        return list(project_tools(self.project_dir))

    def _driver_for(self, config: ProviderConfig) -> ChatDriver:
        from desktop.core.providers import driver_for

        return driver_for(config, self.client)

    async def list_models(self, provider_id: str) -> list[str]:
        """``AppServices.list_models``: the provider's models (its configured list when keyless and down).

        Raises:
            ChatError: The provider refused or could not be reached.
        """
        import asyncio

        from desktop.core.chat.types import ChatError
        from desktop.core.providers import list_models

        config = self.provider_config(provider_id)
        if config is None:
            raise ChatError(
                f"{provider_id}: no key configured (Settings → Providers)", provider=provider_id, kind="auth"
            )
        if self._closed:
            raise ChatError("the application is shutting down", provider=provider_id, kind="network")
        # Run as a task the context holds, so shutdown can wait for its connection to be released
        # before the client closes (a cancelled caller alone would leave the socket to the GC).
        task = asyncio.ensure_future(list_models(config, self.client))
        self._inflight.add(task)
        task.add_done_callback(self._inflight.discard)
        return list(await asyncio.shield(task))

    def has_usable_provider(self) -> bool:
        """True when the default provider can be used (a key found, or a keyless provider)."""
        return self.provider_config(None) is not None

    # -- demo -----------------------------------------------------------------------------------
    def start_demo(self, *, tokens_per_second: float | None = 60.0) -> None:
        """Start the loopback demo provider (idempotent) and make it the default, in memory only.

        Args:
            tokens_per_second: Streaming speed of the demo (None: as fast as possible).
        """
        if self.demo_server is not None:
            return
        from desktop.testing.demo import start_demo_provider

        self.demo_server = start_demo_provider(tokens_per_second=tokens_per_second)
        log.info("offline demo provider listening on %s", self.demo_server.base_url)

    # -- secrets hygiene -----------------------------------------------------------------------
    def known_keys(self) -> list[str]:
        """Every key the app could use right now (to scrub them from messages)."""
        from desktop.core.settings import resolve_key

        keys: list[str] = []
        for provider in self.settings.providers:
            try:
                key = resolve_key(provider, self.secrets, self.environ).key
            except Exception:  # never let scrubbing fail the error path
                key = None
            if key and len(key) >= 4:
                keys.append(key)
        return keys

    def scrub(self, text: str) -> str:
        """``text`` without any known key and without anything shaped like one."""
        for key in sorted(self.known_keys(), key=len, reverse=True):
            text = text.replace(key, "***")
        return scrub_key_shapes(text)

    # -- shutdown -------------------------------------------------------------------------------
    async def aclose(self) -> None:
        """Stop every run, close the HTTP client and the demo server. Idempotent."""
        if self._closed:
            return
        self._closed = True
        try:
            await self.runtime.aclose()
        except Exception:
            log.exception("stopping the runs failed")
        await cancel_and_wait(self._inflight)
        await self.client.aclose()
        self.stop_demo_server()

    def stop_demo_server(self) -> None:
        """Stop the demo server if it runs."""
        server, self.demo_server = self.demo_server, None
        if server is not None:
            server.stop()


async def cancel_and_wait(tasks: set[asyncio.Future[Any]] | list[asyncio.Future[Any]]) -> None:
    """Cancel ``tasks`` and wait until each has finished (their results and errors are dropped)."""
    import asyncio

    pending = [t for t in list(tasks) if not t.done()]
    for task in pending:
        task.cancel()
    if pending:
        await asyncio.gather(*pending, return_exceptions=True)


class _Target:
    """A minimal ``SendTarget``: a provider id and a model."""

    def __init__(self, provider: str | None, model: str | None) -> None:
        self.provider = provider
        self.model = model


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


def _paint_now(app: QApplication, watcher: _FirstPaintWatcher, budget_s: float = 0.5) -> None:
    """Process Qt events until the window painted (at most ``budget_s``), before any loop runs."""
    deadline = time.perf_counter() + budget_s
    while watcher.first_paint_ms is None and time.perf_counter() < deadline:
        app.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 20)
        if watcher.first_paint_ms is None:
            time.sleep(0.002)


def _configure_logging() -> None:
    level = os.environ.get("CHATNODES_LOG", "INFO").upper()
    logging.basicConfig(level=getattr(logging, level, logging.INFO),
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")


def main(argv: Sequence[str] | None = None, *, started_at: float | None = None) -> int:
    """Run the application; returns the process exit code.

    Start-up happens in two steps so the window appears as early as a bare Qt program's: first the
    window's shell (menus, toolbar, status bar) is built and painted with only Qt imported; then the
    qasync loop starts, the context (settings, keyring, HTTP client, runtime) is built, and the
    project's nodes open inside the already visible window.
    """
    t0 = started_at if started_at is not None else _MODULE_LOADED
    args = parse_args(argv)
    _configure_logging()
    from desktop.ui.main_window import MainWindow
    from desktop.ui.theme import (
        app_icon,
        apply_theme,
        current_scheme,
        follow_system_scheme,
        system_scheme,
    )

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

    window = MainWindow()
    watcher = _FirstPaintWatcher(window, t0, report=args.smoke_test)
    window.installEventFilter(watcher)
    window.show()
    _paint_now(app, watcher)

    config_dir = resolve_config_dir(args.config_dir)
    project_dir = args.project_dir.expanduser() if args.project_dir is not None else None
    if project_dir is None:
        folder = default_project_dir() if not args.demo else _demo_project_dir()
    else:
        folder = project_dir

    import asyncio

    import qasync

    from desktop.ui.gc_guard import GuiThreadCollector

    # Tools read files in worker threads and --demo serves on a thread: collect garbage on the GUI
    # thread only, so no Qt object is ever finalised from another thread.
    collector = GuiThreadCollector(app)

    async def run() -> int:
        closed: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        window.closed.connect(lambda: closed.done() or closed.set_result(None))
        # A session that ends without closing the window (logout): at least the project is saved.
        app.aboutToQuit.connect(lambda: None if window.is_shut_down() else window.save_project())
        if system_scheme() != current_scheme():  # the exact answer, now that the window is up
            apply_theme(app)
        follow_system_scheme(app)
        window.attach(AppContext(config_dir=config_dir, demo=args.demo))
        window.open_project(folder)
        if args.smoke_test:
            await _finish_smoke_test(window, watcher, t0)
        await closed
        if project_dir is None and args.demo:
            shutil.rmtree(folder, ignore_errors=True)
        if watcher.first_paint_ms is None:
            print("chatnodes: the window did not paint within 30 s", file=sys.stderr, flush=True)
            return 1
        return 0

    def loop_factory() -> asyncio.AbstractEventLoop:
        return qasync.QEventLoop(app)

    try:
        with asyncio.Runner(loop_factory=loop_factory) as runner:
            code = runner.run(run())
    finally:
        collector.stop()
    return code


async def _finish_smoke_test(window: MainWindow, watcher: _FirstPaintWatcher, t0: float) -> None:
    """--smoke-test: once painted and wired (nodes open, one more frame), report and close."""
    import asyncio

    deadline = time.perf_counter() + 30.0
    while watcher.first_paint_ms is None and time.perf_counter() < deadline:
        await asyncio.sleep(0.01)
    window.repaint()
    await asyncio.sleep(0)
    ready_ms = (time.perf_counter() - t0) * 1000.0
    print(f"chatnodes: ready with {len(window.nodes())} node(s) after {ready_ms:.1f} ms "
          f"(ready_ms={ready_ms:.1f})", file=sys.stderr, flush=True)
    window.close()


def _demo_project_dir() -> Path:
    """A fresh throw-away project folder for ``--demo`` without a PROJECT_DIR."""
    import tempfile

    return Path(tempfile.mkdtemp(prefix="chatnodes-demo-"))
