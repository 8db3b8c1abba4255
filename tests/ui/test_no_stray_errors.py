"""No stray error banners (issue 25, item 2): every dialog and node opened and closed while real stdio
MCP servers change status, a project switch and a quit leave nothing for the error reporter.

Before the fix, the MCP settings page's ``status_changed`` lambda outlived its list ("Internal C++
object (QListWidget) already deleted") and a closed node's Tools button did the same on quit.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QMenuBar,
    QPlainTextEdit,
    QPushButton,
    QTabWidget,
    QWidget,
)
from test_app_support import fake_provider_entry
from test_mcp_app import stdio_entry, wait_ready

from desktop.testing import FakeProvider

pytest_plugins = ["test_app_support"]  # fixtures: fake, make_context, open_window

_LEFT = Qt.MouseButton.LeftButton


def _write_settings(config: Path, fake: FakeProvider, servers: dict[str, Any]) -> None:
    from desktop.core.config import SettingsStore, settings_from_dict

    raw = {"version": 1, "providers": [fake_provider_entry(fake)], "default_provider": "fake",
           "default_model": None, "mcpServers": servers}
    SettingsStore(config).save(settings_from_dict(raw))


def _trigger(window: Any, name: str) -> None:
    """Trigger the menu bar action ``name`` as a user picking it from its menu would."""
    bar = window.findChild(QMenuBar)
    for menu_action in bar.actions():
        menu = menu_action.menu()
        for action in menu.actions() if menu is not None else []:
            if action.objectName() == name:
                action.trigger()
                return
    raise AssertionError(f"no menu action {name}")


def _ok(qtbot: Any, dialog: QDialog) -> None:
    box = dialog.findChild(QDialogButtonBox)
    qtbot.mouseClick(box.button(QDialogButtonBox.StandardButton.Ok), _LEFT)


def _restart_and_wait(qtbot: Any, window: Any, name: str) -> None:
    """Restart an MCP server and wait until it is ready again (status changes: starting, ready)."""
    hub = window.context.mcp
    seen: list[str] = []
    hub.signals.status_changed.connect(lambda s: seen.append(s.state) if s.name == name else None)
    hub.restart(name)
    qtbot.waitUntil(lambda: "ready" in seen, timeout=15_000)


def test_dialogs_nodes_project_switch_and_quit_report_no_error(
    qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.ERROR)
    config = tmp_path / "config"
    _write_settings(config, fake, {"local": stdio_entry()})
    window = open_window(tmp_path / "one", config)
    reporter = window.error_reporter
    wait_ready(qtbot, window, "local")

    # Settings: every page, then Add… an MCP server through its JSON editor and press OK.
    _trigger(window, "settingsAction")
    dialog = window.settings_dialog
    assert dialog is not None
    tabs = dialog.findChild(QTabWidget, "settingsTabs")
    for index in range(tabs.count()):
        tabs.setCurrentIndex(index)
        qtbot.waitUntil(lambda i=index: tabs.currentWidget().isVisible() and tabs.currentIndex() == i)
    qtbot.mouseClick(dialog.findChild(QPushButton, "mcpAddButton"), _LEFT)
    editor = dialog.findChild(QDialog, "mcpServerDialog")
    tabs = editor.findChild(QTabWidget, "mcpServerTabs")
    tabs.setCurrentWidget(editor.findChild(QWidget, "mcpJsonTab"))  # the JSON editor beside the form
    editor.findChild(QPlainTextEdit, "mcpJsonEdit").setPlainText(json.dumps({"second": stdio_entry()}))
    _ok(qtbot, editor)
    _ok(qtbot, dialog)
    qtbot.waitUntil(lambda: window.settings_dialog is None, timeout=10_000)  # closed and deleted
    wait_ready(qtbot, window, "second")  # its status changes reach no dead page
    _restart_and_wait(qtbot, window, "local")

    # The usage dashboard and the project budget, opened and closed from the menus.
    _trigger(window, "usageAction")
    usage = window.money.usage_dialog
    assert usage is not None
    qtbot.waitUntil(lambda: usage.isVisible())
    box = usage.findChild(QDialogButtonBox)
    qtbot.mouseClick(box.button(QDialogButtonBox.StandardButton.Close), _LEFT)
    qtbot.waitUntil(lambda: window.money.usage_dialog is None, timeout=10_000)
    _trigger(window, "projectBudgetAction")
    budget = window.findChild(QDialog, "projectBudgetDialog")
    assert budget is not None
    _ok(qtbot, budget)

    # A node opened, its Tools menu shown, then closed; the servers change status afterwards.
    _trigger(window, "newNodeAction")
    assert len(window.nodes()) == 2
    node = window.active_node()
    node.node_tools.fill_menu()
    _trigger(window, "closeNodeAction")
    qtbot.waitUntil(lambda: len(window.nodes()) == 1)
    _restart_and_wait(qtbot, window, "second")

    # Another project: every node of the first one goes; then quit from the menu.
    window.open_project(tmp_path / "two")
    _restart_and_wait(qtbot, window, "local")
    with qtbot.waitSignal(window.closed, timeout=15_000):
        _trigger(window, "quitAction")

    assert reporter.last_error is None
    assert window.banner_area.find("errorBanner") is None
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert errors == [], [r.getMessage()[:300] for r in errors]


def test_a_model_listing_nobody_waits_for_leaves_no_unretrieved_error(
    qtbot: Any, make_context: Any, qloop: Any, tmp_path: Path
) -> None:
    """A node's model listing cancelled by a newer one (Settings → OK reloads every node) while its
    request still runs: the request's error must not reach asyncio's "never retrieved" report (the
    error reporter turns that into a banner)."""
    import gc

    from desktop.core.config import SettingsStore, settings_from_dict

    config = tmp_path / "config"
    down = {"id": "down", "name": "Down", "api": "openai", "base_url": "http://127.0.0.1:9/v1",
            "needs_key": False, "key_env": None, "models": []}
    SettingsStore(config).save(settings_from_dict({"version": 1, "providers": [down],
                                                   "default_provider": "down", "default_model": None}))
    ctx = make_context(config_dir=config)
    reported: list[dict[str, Any]] = []
    previous = qloop.get_exception_handler()
    qloop.set_exception_handler(lambda _loop, context: reported.append(context))
    try:
        caller = qloop.create_task(ctx.list_models("down"))
        qtbot.waitUntil(lambda: bool(ctx._inflight), timeout=10_000)  # noqa: SLF001 - the request runs
        inner = next(iter(ctx._inflight))  # noqa: SLF001
        caller.cancel()  # the node asked again: this caller stops waiting
        qtbot.waitUntil(inner.done, timeout=10_000)  # the refused connection fails the request
        del caller, inner
        gc.collect()
        qtbot.waitUntil(lambda: not ctx._inflight, timeout=10_000)  # noqa: SLF001
    finally:
        qloop.set_exception_handler(previous)
    assert [c.get("message") for c in reported] == []


def test_closing_a_node_while_its_send_waits_for_a_server_reports_no_error(
    qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    import sys

    from test_mcp_app import SERVERS

    caplog.set_level(logging.ERROR)
    config = tmp_path / "config"
    silent = {"command": sys.executable, "args": [str(SERVERS / "hostile_server.py"), "silent"]}
    _write_settings(config, fake, {"silent": silent})  # never answers "initialize": stays "starting"
    window = open_window(tmp_path / "project", config)
    reporter = window.error_reporter
    node = window.nodes()[0]
    node.submit("right away")
    qtbot.waitUntil(node.header.tools_status.isVisible, timeout=10_000)  # waiting for "silent"
    _trigger(window, "closeNodeAction")
    qtbot.waitUntil(lambda: not window.nodes(), timeout=10_000)
    gone = node.header.tools_status  # the closed node's widgets are deleted (deleteLater)
    qtbot.waitUntil(lambda: not _alive(gone), timeout=10_000)
    _trigger(window, "newNodeAction")  # the window goes on; the cancelled wait ended quietly
    with qtbot.waitSignal(window.closed, timeout=20_000):
        _trigger(window, "quitAction")
    assert reporter.last_error is None
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert errors == [], [r.getMessage()[:300] for r in errors]


def _alive(widget: Any) -> bool:
    import shiboken6

    return bool(shiboken6.isValid(widget))
