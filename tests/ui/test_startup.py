"""Start-up: a usable window first, the rest right after (issue 11's start-up budget).

``python -m desktop`` builds the window and the project's nodes with only Qt, the settings and the
node's own widgets imported; a node accepts input before the network stack, the keyring, the runtime,
MCP and the Markdown renderer are loaded (``AppContext.load_services`` loads them right after). These
tests guard both halves: nothing heavy before the first node accepts input, and everything usable
after, including a message sent before the services had loaded.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QWidget

from desktop import app
from desktop.core.store import ProjectStore
from desktop.testing import FakeProvider
from desktop.ui.window.main_window import MainWindow

pytest_plugins = ["test_app_support"]  # fixtures: fake, make_context, open_window

ROOT = Path(__file__).resolve().parents[2]

HEAVY = ("asyncio", "qasync", "httpx", "httpcore", "keyring", "markdown_it", "pygments",
         "desktop.core.providers", "desktop.core.mcp", "desktop.core.chat.runtime",
         "desktop.core.config._secrets",
         "desktop.ui.transcript", "desktop.ui.mcp_hub", "desktop.demo._server",
         # the search: its core (and SQLite) and its panel come with the first search or index update
         "sqlite3", "desktop.core.search", "desktop.ui.search",
         # the markdown room, all but its light theme (the colours a node derives from its palette)
         "desktop.ui.markdown.render", "desktop.ui.markdown.rich_text", "desktop.ui.markdown.parser",
         "desktop.ui.markdown.code", "desktop.ui.markdown.colour", "desktop.ui.markdown.stream",
         "desktop.ui.markdown.block_stream", "desktop.ui.markdown.segments", "desktop.ui.markdown.view",
         "desktop.ui.markdown.textflow", "desktop.ui.markdown.shaping", "desktop.ui.markdown.selection")
"""Modules the first node must accept input without (each one, or any of its submodules)."""


def _imported_before_ready(stderr: str) -> list[str]:
    """The modules ``-X importtime`` reported before the ``ready_ms=`` line, in import order."""
    names: list[str] = []
    for line in stderr.splitlines():
        if "ready_ms=" in line:
            return names
        if line.startswith("import time:") and "|" in line:
            name = line.rsplit("|", 1)[1].strip()
            if name != "package":  # the header line
                names.append(name)
    raise AssertionError("no ready_ms= line: no node accepted input\n" + stderr[-3000:])


def _heavy(names: list[str]) -> list[str]:
    return [n for n in names if any(n == h or n.startswith(h + ".") for h in HEAVY)]


def test_no_heavy_module_loads_before_the_first_node_accepts_input(tmp_path: Path) -> None:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen",
               PYTHON_KEYRING_BACKEND="keyring.backends.fail.Keyring")
    env.pop("CHATNODES_CONFIG_DIR", None)
    project = tmp_path / "proj"
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "desktop", str(project), "--config-dir",
         str(tmp_path / "cfg"), "--smoke-test"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=60,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    before = _imported_before_ready(result.stderr)
    # the parse sees them
    assert "desktop.ui.node.chat_node" in before and "desktop.core.store._project" in before
    assert _heavy(before) == []
    # It closed properly although it never loaded the rest: the project is saved and released.
    assert (project / "project.json").is_file()
    store = ProjectStore(project)
    try:
        store.open()
        assert not store.read_only
    finally:
        store.release()


@pytest.fixture
def deferred_window(qtbot: Any, qloop: Any, tmp_path: Path) -> Iterator[Callable[[Path], MainWindow]]:
    """``deferred_window(config_dir) -> MainWindow`` built like ``desktop.app.main`` builds it: the
    context's services not loaded, the nodes opened light, the window shown."""
    made: list[MainWindow] = []

    def _open(config_dir: Path) -> MainWindow:
        context = app.make_context(config_dir=config_dir, environ={}, defer_services=True)
        window = MainWindow()
        app.wire_window(window, context)
        window.node_area.defer_loading = True
        window.open_project(tmp_path / "proj")
        made.append(window)
        window.show()
        qtbot.waitExposed(window)
        return window

    yield _open
    for window in made:
        if not window.is_shut_down():
            with qtbot.waitSignal(window.closed, timeout=10_000):
                window.close()


def test_a_message_sent_before_the_services_load_still_goes_out(
    qtbot: Any, fake: FakeProvider, deferred_window: Callable[[Path], MainWindow], tmp_path: Path
) -> None:
    from test_app_support import fake_provider_entry, write_settings

    config = tmp_path / "config"
    write_settings(config, fake_provider_entry(fake), default="fake")
    window = deferred_window(config)
    context = window.context
    node = window.nodes()[0]
    assert not context.services_loaded and not context.needs_async_close()
    assert node.loading.pending and node.loading.built() is None
    node.chat_input.setFocus()
    qtbot.keyClicks(node.chat_input, "hello before the runtime")
    with qtbot.waitSignal(node.run_finished, timeout=10_000):
        qtbot.keyClick(node.chat_input, Qt.Key.Key_Return)
    assert context.services_loaded and not node.loading.pending
    assert node.loading.built() is node.transcript
    roles = [(m.role, m.content) for m in node.conversation.messages]
    assert roles[0] == ("user", "hello before the runtime")
    assert roles[-1][0] == "assistant" and "hello before the runtime" in roles[-1][1]


def test_loading_the_services_finishes_the_nodes_and_the_first_run(
    qtbot: Any, deferred_window: Callable[[Path], MainWindow], tmp_path: Path
) -> None:
    window = deferred_window(tmp_path / "config")  # no provider: a first run
    context = window.context
    node = window.nodes()[0]
    # Before: no keyring looked at, so no welcome yet; the node has its input, not its transcript.
    assert window.banner_area.find("welcomeBanner") is None
    placeholder = node.findChild(QWidget, "transcriptPlaceholder")
    assert node.loading.built() is None and placeholder is not None and placeholder.isVisible()
    context.load_services()
    assert node.loading.built() is not None and not node.loading.pending
    assert not placeholder.isVisible() and node.transcript.isVisible()
    assert window.banner_area.find("welcomeBanner") is not None
    assert context.needs_async_close()  # the HTTP client and the runtime exist now


def test_a_window_whose_services_never_loaded_closes_at_once(
    qtbot: Any, deferred_window: Callable[[Path], MainWindow], tmp_path: Path
) -> None:
    window = deferred_window(tmp_path / "config")
    node = window.nodes()[0]
    node.set_title("Renamed before closing")
    with qtbot.waitSignal(window.closed, timeout=10_000):
        window.close()
    assert window.is_shut_down()  # synchronously: nothing was there to await
    store = ProjectStore(tmp_path / "proj")
    try:
        loaded = store.open()
        assert not loaded.read_only_reason
        assert [n.title for n in loaded.value.nodes] == ["Renamed before closing"]
    finally:
        store.release()


def test_logging_never_loads_the_key_store_and_loading_it_logs_once(
    qtbot: Any, qloop: Any, monkeypatch: pytest.MonkeyPatch, memory_keyring: Any, tmp_path: Path
) -> None:
    """The log filter asks the context for its keys on every record: before the key store is loaded
    that is the environment's keys (no stored key was read yet), so a record does not load it; and
    what the store logs while it is created goes through the filter without creating it again."""
    import logging

    import desktop.core.config

    made: list[object] = []
    real = desktop.core.config.SecretStore

    class WarningStore(real):  # type: ignore[misc, valid-type]
        def __init__(self) -> None:
            made.append(self)
            logging.getLogger("desktop.core.config._secrets").warning("OS keyring unavailable (test)")
            super().__init__(backend=memory_keyring)

    monkeypatch.setattr(desktop.core.config, "SecretStore", WarningStore)
    context = app.make_context(config_dir=tmp_path / "config", defer_services=True,
                               environ={"OPENAI_API_KEY": "sk-test-env-key-123456"})
    records: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(self.format(record))

    logger = logging.getLogger("desktop.core")
    handler = Collect()
    logger.addHandler(handler)
    try:
        app.install_key_scrub_filter(logger, context.recent_keys)
        logging.getLogger("desktop.core.test").warning("key sk-test-env-key-123456 in a message")
        assert made == [] and len(records) == 1 and "sk-test-env-key-123456" not in records[0]
        assert context.secrets is made[0]  # loading it logs through the same filter, once
    finally:
        logger.removeHandler(handler)
        context.close_now()  # only the key store was loaded: nothing to await
    assert len(made) == 1 and records[1:] == ["OS keyring unavailable (test)"]
