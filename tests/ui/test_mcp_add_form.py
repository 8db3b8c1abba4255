"""Settings → MCP servers → Add…: a form (name, command, arguments, environment, or URL and headers) beside
the JSON editor, validated by the core's parser; typed and clicked through in the real window."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QRadioButton,
    QTabBar,
    QWidget,
)
from test_app_support import close_window
from test_mcp_app import SERVERS, wait_ready, write_mcp_settings

from desktop.testing import FakeProvider

pytest_plugins = ["test_app_support"]  # fixtures: fake, make_context, open_window


def child(widget: QWidget, cls: type, name: str) -> Any:
    found = widget.findChild(cls, name)
    assert found is not None, f"no {cls.__name__} named {name}"
    return found


def open_add_form(qtbot: Any, window: Any) -> tuple[Any, QDialog]:
    settings = window.open_settings()
    settings.show_mcp_page(None)
    qtbot.mouseClick(child(settings.mcp_page, QPushButton, "mcpAddButton"), Qt.MouseButton.LeftButton)
    form = child(settings, QDialog, "mcpServerDialog")
    qtbot.waitUntil(form.isVisible, timeout=10_000)
    return settings, form


def ok(qtbot: Any, dialog: QDialog) -> None:
    box = dialog.findChild(QDialogButtonBox)
    qtbot.mouseClick(box.button(QDialogButtonBox.StandardButton.Ok), Qt.MouseButton.LeftButton)


def type_lines(qtbot: Any, box: QPlainTextEdit, lines: list[str]) -> None:
    box.setFocus()
    for i, line in enumerate(lines):
        if i:
            qtbot.keyClick(box, Qt.Key.Key_Return)
        qtbot.keyClicks(box, line)


def switch_tab(qtbot: Any, dialog: QDialog, index: int) -> None:
    bar = dialog.findChild(QTabBar)
    qtbot.mouseClick(bar, Qt.MouseButton.LeftButton, pos=bar.tabRect(index).center())


def test_a_stdio_server_added_through_the_form_starts(qtbot: Any, open_window: Any, fake: FakeProvider,
                                                       tmp_path: Path) -> None:
    config = tmp_path / "config"
    write_mcp_settings(config, fake, {})
    window = open_window(tmp_path / "project", config)
    settings, form = open_add_form(qtbot, window)
    assert child(form, QRadioButton, "mcpFormStdio").isChecked()
    assert not child(form, QLineEdit, "mcpFormUrl").isVisible()
    qtbot.keyClicks(child(form, QLineEdit, "mcpFormName"), "local")
    ok(qtbot, form)  # no command yet: the core's parser says what is missing, nothing is added
    error = child(form, QLabel, "mcpJsonError").text()
    assert form.isVisible() and error.startswith("Please fix:") and '"command" must be a non-empty' in error
    assert settings.mcp_page.server_names() == []
    qtbot.keyClicks(child(form, QLineEdit, "mcpFormCommand"), sys.executable)
    type_lines(qtbot, child(form, QPlainTextEdit, "mcpFormArgs"), [str(SERVERS / "stdio_server.py")])
    type_lines(qtbot, child(form, QPlainTextEdit, "mcpFormEnv"), ["GREETING=hello world", "EMPTY="])
    ok(qtbot, form)
    assert not form.isVisible()
    assert settings.mcp_page.server_names() == ["local"]
    settings.accept()
    saved = json.loads((config / "settings.json").read_text())["mcpServers"]["local"]
    assert saved == {"command": sys.executable, "args": [str(SERVERS / "stdio_server.py")],
                     "env": {"GREETING": "hello world", "EMPTY": ""}}
    wait_ready(qtbot, window, "local")  # OK started the server the form described
    close_window(qtbot, window)


def test_an_http_server_and_a_token_kept_out_of_the_file(qtbot: Any, open_window: Any, fake: FakeProvider,
                                                         tmp_path: Path) -> None:
    config = tmp_path / "config"
    write_mcp_settings(config, fake, {})
    window = open_window(tmp_path / "project", config)
    settings, form = open_add_form(qtbot, window)
    qtbot.keyClicks(child(form, QLineEdit, "mcpFormName"), "docs")
    qtbot.mouseClick(child(form, QRadioButton, "mcpFormHttp"), Qt.MouseButton.LeftButton)
    assert child(form, QLineEdit, "mcpFormUrl").isVisible()
    assert not child(form, QLineEdit, "mcpFormCommand").isVisible()
    qtbot.keyClicks(child(form, QLineEdit, "mcpFormUrl"), "https://mcp.example.com/mcp")
    headers = child(form, QPlainTextEdit, "mcpFormHeaders")
    type_lines(qtbot, headers, ["X-Team: docs", "Authorization: Bearer sk-live-1234"])
    ok(qtbot, form)
    assert "bearer token field" in child(form, QLabel, "mcpJsonError").text()
    assert settings.mcp_page.server_names() == []
    headers.clear()
    type_lines(qtbot, headers, ["X-Team: docs", "Authorization: Bearer ${env:DOCS_TOKEN}"])
    ok(qtbot, form)
    assert settings.mcp_page.server_names() == ["docs"]
    settings.accept()
    text = (config / "settings.json").read_text()
    assert "sk-live-1234" not in text
    assert json.loads(text)["mcpServers"]["docs"] == {
        "type": "http", "url": "https://mcp.example.com/mcp",
        "headers": {"X-Team": "docs", "Authorization": "Bearer ${env:DOCS_TOKEN}"}}
    close_window(qtbot, window)


def test_the_form_and_the_json_tab_carry_one_server(qtbot: Any, open_window: Any, fake: FakeProvider,
                                                    tmp_path: Path) -> None:
    config = tmp_path / "config"
    write_mcp_settings(config, fake, {})
    window = open_window(tmp_path / "project", config)
    settings, form = open_add_form(qtbot, window)
    qtbot.keyClicks(child(form, QLineEdit, "mcpFormName"), "files")
    qtbot.keyClicks(child(form, QLineEdit, "mcpFormCommand"), "npx")
    type_lines(qtbot, child(form, QPlainTextEdit, "mcpFormArgs"), ["-y", "server-filesystem", "/my docs"])
    switch_tab(qtbot, form, 1)
    editor = child(form, QPlainTextEdit, "mcpJsonEdit")
    assert json.loads(editor.toPlainText()) == {"files": {"command": "npx",
                                                          "args": ["-y", "server-filesystem", "/my docs"]}}
    edited = {"files": {"command": "uvx", "args": ["mcp-files"], "timeout_s": 30, "approval": "never"}}
    editor.setPlainText(json.dumps(edited))
    switch_tab(qtbot, form, 0)
    assert child(form, QLineEdit, "mcpFormCommand").text() == "uvx"
    assert child(form, QPlainTextEdit, "mcpFormArgs").toPlainText() == "mcp-files"
    ok(qtbot, form)  # from the form: the key it has no field for (timeout_s) is kept
    assert not form.isVisible()
    settings.accept()
    saved = json.loads((config / "settings.json").read_text())["mcpServers"]["files"]
    assert saved == {"command": "uvx", "args": ["mcp-files"], "timeout_s": 30, "approval": "never"}
    close_window(qtbot, window)


def test_json_the_form_cannot_show_stays_json(qtbot: Any, open_window: Any, fake: FakeProvider,
                                              tmp_path: Path) -> None:
    config = tmp_path / "config"
    write_mcp_settings(config, fake, {})
    window = open_window(tmp_path / "project", config)
    settings, form = open_add_form(qtbot, window)
    switch_tab(qtbot, form, 1)
    editor = child(form, QPlainTextEdit, "mcpJsonEdit")
    editor.setPlainText(json.dumps({"a": {"command": "x"}, "b": {"command": "y"}}))
    switch_tab(qtbot, form, 0)
    assert "holds 2" in child(form, QLabel, "mcpJsonError").text()
    switch_tab(qtbot, form, 1)
    ok(qtbot, form)  # OK on the JSON tab adds what the JSON says
    assert settings.mcp_page.server_names() == ["a", "b"]
    settings.reject()
    close_window(qtbot, window)
