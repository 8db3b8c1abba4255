"""Settings → "MCP servers": list with live status, add / edit as JSON / remove / restart, tokens, import."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLineEdit, QListWidget, QPushButton
from test_app_support import close_window
from test_mcp_app import SERVERS, hostile_entry, stdio_entry, wait_ready, write_mcp_settings

from desktop.core.config import SecretStore
from desktop.testing import FakeProvider, MemoryKeyring
from desktop.ui.settings.dialog import SettingsDialog

pytest_plugins = ["test_app_support"]  # fixtures: fake, make_context, open_window


def test_page_lists_servers_with_live_status(qtbot: Any, open_window: Any, fake: FakeProvider,
                                             tmp_path: Path) -> None:
    config = tmp_path / "config"
    write_mcp_settings(config, fake, {"local": stdio_entry(), "broken": hostile_entry("die")})
    window = open_window(tmp_path / "project", config)
    wait_ready(qtbot, window, "local")
    dialog = window.open_settings()
    dialog.show_mcp_page("broken")
    page = dialog.mcp_page
    assert dialog.tabs.currentWidget() is page
    for cls, name in ((QListWidget, "mcpServerList"), (QPushButton, "mcpAddButton"),
                      (QPushButton, "mcpEditButton"), (QPushButton, "mcpRemoveButton"),
                      (QPushButton, "mcpRestartButton"), (QPushButton, "mcpImportButton"),
                      (QLineEdit, "mcpTokenEdit")):
        assert page.findChild(cls, name) is not None, name
    qtbot.waitUntil(lambda: "failed" in page.status_label.text(), timeout=10_000)
    assert "MY_SERVICE_TOKEN is not set" in page.stderr_view.toPlainText()
    texts = [page.server_list.item(i).text() for i in range(page.server_list.count())]
    assert any(t.startswith("local") and "ready" in t and "tools" in t for t in texts)
    assert any(t.startswith("broken") and "failed" in t for t in texts)
    dialog.reject()
    close_window(qtbot, window)


def test_add_edit_remove_apply_on_ok(
    qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path
) -> None:
    config = tmp_path / "config"
    write_mcp_settings(config, fake, {})
    window = open_window(tmp_path / "project", config)
    dialog = window.open_settings()
    page = dialog.mcp_page
    assert page.add_from_json("{not json") and page.server_names() == []
    problems = page.add_from_json('{"x": {"command": 3}}')
    assert problems and "x" in problems[0]
    entry = {"local": stdio_entry(approval="ask_unless_read_only")}
    assert page.add_from_json(json.dumps(entry)) == []
    assert page.server_names() == ["local"]
    assert page.add_from_json(json.dumps(entry)) == ['a server named "local" already exists']
    edited = json.loads(page.current_json())
    edited["local"]["timeout_s"] = 30
    edited["local"]["myOwnKey"] = {"kept": True}
    assert page.add_from_json(json.dumps(edited), replace="local") == []
    dialog.accept()
    saved = json.loads((config / "settings.json").read_text())
    assert saved["mcpServers"]["local"]["timeout_s"] == 30
    assert saved["mcpServers"]["local"]["myOwnKey"] == {"kept": True}
    assert saved["mcpServers"]["local"]["approval"] == "ask_unless_read_only"
    wait_ready(qtbot, window, "local")  # OK starts the added server
    info = window.context.mcp.tool_info("mcp__local__add")
    assert info is not None and info.read_only and not info.needs_approval
    dialog = window.open_settings()
    dialog.mcp_page.select("local")
    dialog.mcp_page.remove_current()
    dialog.accept()
    assert "mcpServers" not in json.loads((config / "settings.json").read_text())
    qtbot.waitUntil(lambda: "local" not in window.context.mcp.statuses(), timeout=10_000)
    close_window(qtbot, window)


def test_token_goes_to_the_keyring_never_a_file(
    qtbot: Any, make_context: Any, tmp_path: Path
) -> None:
    ring = MemoryKeyring()
    ctx = make_context(secrets=SecretStore(backend=ring))
    dialog = SettingsDialog(ctx)
    qtbot.addWidget(dialog)
    page = dialog.mcp_page
    assert page.add_from_json('{"remote": {"type": "http", "url": "http://127.0.0.1:9/mcp", '
                              '"enabled": false}}') == []
    page.select("remote")
    qtbot.keyClicks(page.token_edit, "sekrit-token-123")
    dialog.accept()
    assert ring.get_password("chatnodes", "mcp:remote") == "sekrit-token-123"
    assert not [p for p in tmp_path.rglob("*") if p.is_file() and b"sekrit-token-123" in p.read_bytes()]
    assert ctx.mcp.secret_for("remote") == "sekrit-token-123"
    assert ctx.mcp.secret_for("not-an-app-server") is None


def test_import_from_claude_desktop(
    qtbot: Any, make_context: Any, tmp_path: Path
) -> None:
    ctx = make_context(secrets=SecretStore(backend=MemoryKeyring()))
    dialog = SettingsDialog(ctx)
    qtbot.addWidget(dialog)
    page = dialog.mcp_page
    page.claude_config_path = tmp_path / "missing.json"
    page.import_claude_desktop()
    assert "not found" in page.result_label.text()
    cfg = tmp_path / "claude_desktop_config.json"
    cfg.write_text(json.dumps({"mcpServers": {
        "files": {"command": sys.executable, "args": [str(SERVERS / "stdio_server.py")]},
        "web": {"type": "http", "url": "https://mcp.example.com/mcp"}}}))
    page.claude_config_path = cfg
    page.import_claude_desktop()
    assert page.server_names() == ["files", "web"]
    assert "Imported 2 servers" in page.result_label.text()
    page.import_claude_desktop()
    assert "already listed: files, web" in page.result_label.text()


def test_add_dialog_validates_the_json(qtbot: Any, make_context: Any) -> None:
    from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QPlainTextEdit, QTabBar

    ctx = make_context(secrets=SecretStore(backend=MemoryKeyring()))
    dialog = SettingsDialog(ctx)
    qtbot.addWidget(dialog)
    page = dialog.mcp_page
    page.findChild(QPushButton, "mcpAddButton").click()
    editor = dialog.findChild(QDialog, "mcpServerDialog")
    assert editor is not None
    tab_bar = editor.findChild(QTabBar)
    qtbot.mouseClick(tab_bar, Qt.MouseButton.LeftButton, pos=tab_bar.tabRect(1).center())  # "JSON"
    assert "my-server" in editor.findChild(QPlainTextEdit, "mcpJsonEdit").toPlainText()
    ok = editor.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Ok)
    editor.findChild(QPlainTextEdit, "mcpJsonEdit").setPlainText('{"bad": {"approval": "sometimes"}}')
    ok.click()
    assert editor.isVisible() and "Please fix" in editor.findChild(QLabel, "mcpJsonError").text()
    editor.findChild(QPlainTextEdit, "mcpJsonEdit").setPlainText(
        json.dumps({"mcpServers": {"pasted": {"type": "http", "url": "https://mcp.example.com/mcp"}}}))
    ok.click()  # a whole config file pasted works too
    assert not editor.isVisible()
    assert page.server_names() == ["pasted"]
    assert "https://mcp.example.com/mcp" in page.status_label.text()
