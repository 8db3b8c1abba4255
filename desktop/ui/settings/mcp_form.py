"""The dialog that adds or edits an MCP server: a form beside the JSON editor (``mcpServerDialog``).

Two tabs over one server:

* **Form** (``mcpFormTab``): the name (``mcpFormName``); "Run a program (stdio)" (``mcpFormStdio``)
  with the command (``mcpFormCommand``), its arguments one per line (``mcpFormArgs``) and environment
  variables as ``NAME=value`` lines (``mcpFormEnv``), or "Connect to a URL (HTTP)" (``mcpFormHttp``)
  with the URL (``mcpFormUrl``) and headers as ``Name: value`` lines (``mcpFormHeaders``); when to ask
  before a call (``mcpFormApproval``).
* **JSON** (``mcpJsonTab``): the ``{"<name>": {...}}`` object users already have from Claude Desktop,
  Cursor or Claude Code (``mcpJsonEdit``); a whole config file pasted works too.

Switching tabs carries the server across (keys the form has no field for, such as ``timeout_s`` or
``cwd``, are kept). OK validates through the core's ``parse_mcp_servers`` (the page's
``add_from_json``); every problem shows in ``mcpJsonError`` and nothing changes until there is none.
A header that carries a literal credential (``Authorization``, ``*-token``, ``*-key``) is refused in
the form: settings.json is no place for secrets; the page's token field (OS keyring) or
``${env:NAME}`` is.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QButtonGroup,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QRadioButton,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

__all__ = ["FORM_KEYS", "McpServerDialog", "form_problems"]

FORM_KEYS = frozenset({"type", "command", "args", "env", "url", "headers", "approval"})
"""The keys of a server entry the form edits; every other key is carried through untouched."""

_APPROVALS = (
    ("ask", "Ask before every call"),
    ("ask_unless_read_only", "Ask unless the server says the tool is read-only"),
    ("never", "Never ask (run every call)"),
)
_SECRET_HEADER = re.compile(r"^(authorization|proxy-authorization|cookie|.*(token|key|secret).*)$", re.I)
_ENV_REF = re.compile(r"^\s*(bearer\s+)?\$\{[^}]+\}\s*$", re.I)


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


def _pairs(text: str, sep: str, what: str, problems: list[str]) -> dict[str, str]:
    """``NAME<sep>value`` lines as a dict; a line without ``sep`` or a name is a problem."""
    out: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        name, found, value = line.partition(sep)
        if not found or not name.strip():
            example = "NAME=value" if sep == "=" else "Name: value"
            problems.append(f'{what} line {number}: write it as "{example}"')
            continue
        out[name.strip()] = value.strip()
    return out


def form_problems(headers: dict[str, str]) -> list[str]:
    """Problems the core would accept but the form refuses: a literal credential in a header."""
    return [f'header "{name}": put the token in the page\'s bearer token field (kept in the OS keyring) '
            "or write ${env:NAME}; settings.json is no place for secrets"
            for name, value in headers.items()
            if _SECRET_HEADER.match(name) and value and not _ENV_REF.match(value)]


class McpServerDialog(QDialog):
    """Add or edit one MCP server (see the module docstring).

    Args:
        title: The window title.
        text: The JSON the editor starts with (``{"<name>": {...}}``: an example, or the server edited).
        apply: Validates and applies a JSON text; returns the problems (nothing changed when any).
        start_on_json: Open on the JSON tab (Edit as JSON), the form filled from ``text``; otherwise
            open on an empty form (the JSON tab keeps ``text`` as an example until the form is used).
        parent: The settings page.
    """

    def __init__(self, title: str, text: str, apply: Callable[[str], list[str]], *,
                 start_on_json: bool = False, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("mcpServerDialog")
        self.setWindowTitle(title)
        self.resize(640, 480)
        self._apply = apply
        self._extra: dict[str, Any] = {}
        lay = QVBoxLayout(self)
        self.tabs = QTabWidget(self)
        self.tabs.setObjectName("mcpServerTabs")
        self.tabs.addTab(self._form_tab(), "Form")
        self.json_edit = QPlainTextEdit(text, self)
        self.json_edit.setObjectName("mcpJsonEdit")
        json_tab = QWidget(self)
        json_tab.setObjectName("mcpJsonTab")
        json_lay = QVBoxLayout(json_tab)
        json_lay.addWidget(QLabel("The \u201cmcpServers\u201d format of Claude Desktop, Cursor and Claude "
                                  "Code:", json_tab))
        json_lay.addWidget(self.json_edit, 1)
        self.tabs.addTab(json_tab, "JSON")
        lay.addWidget(self.tabs, 1)
        self.error = QLabel(self)
        self.error.setObjectName("mcpJsonError")
        self.error.setWordWrap(True)
        self.error.setTextFormat(Qt.TextFormat.PlainText)
        self.error.setStyleSheet("color: #d04545;")
        lay.addWidget(self.error)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel, self)
        lay.addWidget(self.buttons)
        self.buttons.accepted.connect(self._accept)
        self.buttons.rejected.connect(self.reject)
        if start_on_json:
            self._fill_form(text)
            self.tabs.setCurrentIndex(1)
        self.tabs.currentChanged.connect(self._on_tab)

    # -- the form ----------------------------------------------------------------------------------
    def _form_tab(self) -> QWidget:
        tab = QWidget(self)
        tab.setObjectName("mcpFormTab")
        outer = QVBoxLayout(tab)
        form = QFormLayout()
        outer.addLayout(form)
        outer.addStretch(1)
        self.name_edit = self._line(tab, "mcpFormName", "my-server")
        form.addRow("Name:", self.name_edit)
        self.stdio_radio = QRadioButton("Run a program (stdio)", tab)
        self.stdio_radio.setObjectName("mcpFormStdio")
        self.http_radio = QRadioButton("Connect to a URL (HTTP)", tab)
        self.http_radio.setObjectName("mcpFormHttp")
        group = QButtonGroup(tab)
        group.addButton(self.stdio_radio)
        group.addButton(self.http_radio)
        self.stdio_radio.setChecked(True)
        self.stdio_radio.toggled.connect(self._show_transport)
        kind = QWidget(tab)
        kind_lay = QHBoxLayout(kind)
        kind_lay.setContentsMargins(0, 0, 0, 0)
        kind_lay.addWidget(self.stdio_radio)
        kind_lay.addWidget(self.http_radio)
        kind_lay.addStretch(1)
        form.addRow("Server:", kind)
        self.command_edit = self._line(tab, "mcpFormCommand",
                                       "the program only, e.g. npx, uvx or /usr/bin/python3")
        self.args_edit = self._box(tab, "mcpFormArgs", "one argument per line, e.g.\n-y\n"
                                   "@modelcontextprotocol/server-filesystem\n/path/to/folder")
        self.env_edit = self._box(tab, "mcpFormEnv", "NAME=value, one per line; ${env:NAME} reads your "
                                  "environment when the server starts")
        self.url_edit = self._line(tab, "mcpFormUrl", "https://example.com/mcp")
        self.headers_edit = self._box(tab, "mcpFormHeaders", "Name: value, one per line; ${env:NAME} reads "
                                      "your environment. A bearer token goes in the page's token field.")
        self._stdio_rows = [("Command:", self.command_edit), ("Arguments:", self.args_edit),
                            ("Environment:", self.env_edit)]
        self._http_rows = [("URL:", self.url_edit), ("Headers:", self.headers_edit)]
        for label, widget in (*self._stdio_rows, *self._http_rows):
            form.addRow(label, widget)
        self.approval_combo = QComboBox(tab)
        self.approval_combo.setObjectName("mcpFormApproval")
        for value, label in _APPROVALS:
            self.approval_combo.addItem(label, value)
        form.addRow("Approval:", self.approval_combo)
        self._form = form
        self._show_transport()
        return tab

    @staticmethod
    def _line(parent: QWidget, name: str, placeholder: str) -> QLineEdit:
        edit = QLineEdit(parent)
        edit.setObjectName(name)
        edit.setPlaceholderText(placeholder)
        return edit

    @staticmethod
    def _box(parent: QWidget, name: str, placeholder: str) -> QPlainTextEdit:
        box = QPlainTextEdit(parent)
        box.setObjectName(name)
        box.setPlaceholderText(placeholder)
        box.setTabChangesFocus(True)
        box.setFixedHeight(box.fontMetrics().lineSpacing() * 4 + 14)
        return box

    def _show_transport(self) -> None:
        stdio = self.stdio_radio.isChecked()
        for rows, shown in ((self._stdio_rows, stdio), (self._http_rows, not stdio)):
            for _label, widget in rows:
                self._form.setRowVisible(widget, shown)

    def form_entry(self) -> tuple[str, dict[str, Any], list[str]]:
        """The form as ``(name, entry, problems)``: the entry in the ``mcpServers`` format (with the
        keys the form does not edit carried over), and what the form itself refuses."""
        problems: list[str] = []
        entry: dict[str, Any] = dict(self._extra)
        if self.stdio_radio.isChecked():
            entry["command"] = self.command_edit.text().strip()
            args = _lines(self.args_edit.toPlainText())
            if args:
                entry["args"] = args
            env = _pairs(self.env_edit.toPlainText(), "=", "environment", problems)
            if env:
                entry["env"] = env
        else:
            entry["type"] = "http"
            entry["url"] = self.url_edit.text().strip()
            headers = _pairs(self.headers_edit.toPlainText(), ":", "headers", problems)
            problems += form_problems(headers)
            if headers:
                entry["headers"] = headers
        approval = self.approval_combo.currentData()
        if approval != "ask":
            entry["approval"] = approval
        return self.name_edit.text().strip(), entry, problems

    def _fill_form(self, text: str) -> str | None:
        """Fill the form from a JSON text; why it cannot be shown in the form, or None."""
        try:
            raw = json.loads(text)
        except ValueError as err:
            return f"the JSON is not valid ({err})"
        if isinstance(raw, dict) and isinstance(raw.get("mcpServers"), dict):
            raw = raw["mcpServers"]
        if not isinstance(raw, dict) or len(raw) != 1:
            return "the form shows one server; the JSON holds " + (
                f"{len(raw)}" if isinstance(raw, dict) else "no server object")
        ((name, entry),) = raw.items()
        if not isinstance(entry, dict):
            return f'server "{name}" is not a JSON object'
        kind = entry.get("type")
        if kind not in (None, "stdio", "http", "streamable-http"):
            return f'the form has no field for "type": {json.dumps(kind)} (edit it as JSON)'
        args, env, headers = entry.get("args", []), entry.get("env", {}), entry.get("headers", {})
        approval = entry.get("approval", "ask")
        if not (_str_or_none(entry.get("command")) and _str_or_none(entry.get("url"))
                and isinstance(args, list) and all(isinstance(a, str) and "\n" not in a for a in args)
                and _str_map(env) and _str_map(headers) and self.approval_combo.findData(approval) >= 0):
            return "some of its values do not fit the form's fields (fix them as JSON)"
        url_only = "url" in entry and "command" not in entry
        http = kind in ("http", "streamable-http") or (kind is None and url_only)
        self.name_edit.setText(str(name))
        (self.http_radio if http else self.stdio_radio).setChecked(True)
        self.command_edit.setText(entry.get("command") or "")
        self.args_edit.setPlainText("\n".join(args))
        self.env_edit.setPlainText("\n".join(f"{k}={v}" for k, v in env.items()))
        self.url_edit.setText(entry.get("url") or "")
        self.headers_edit.setPlainText("\n".join(f"{k}: {v}" for k, v in headers.items()))
        self.approval_combo.setCurrentIndex(self.approval_combo.findData(approval))
        self._extra = {k: v for k, v in entry.items() if k not in FORM_KEYS}
        return None

    def _form_is_empty(self) -> bool:
        edits = (self.name_edit, self.command_edit, self.url_edit)
        boxes = (self.args_edit, self.env_edit, self.headers_edit)
        return not any(e.text().strip() for e in edits) and not any(b.toPlainText().strip() for b in boxes)

    def _form_json(self) -> str:
        name, entry, _problems = self.form_entry()
        return json.dumps({name or "my-server": entry}, indent=2, ensure_ascii=False)

    # -- switching and OK --------------------------------------------------------------------------
    def _on_tab(self, index: int) -> None:
        self.error.clear()
        if index == 1:
            if self._form_is_empty():
                return  # nothing typed yet: the JSON tab keeps its example
            self.json_edit.setPlainText(self._form_json())
            return
        why = self._fill_form(self.json_edit.toPlainText())
        if why is not None:
            self.error.setText(f"The form still shows what it held: {why}.")

    def _accept(self) -> None:
        if self.tabs.currentIndex() == 1:
            problems = self._apply(self.json_edit.toPlainText())
        else:
            name, entry, problems = self.form_entry()
            if not name:
                problems.insert(0, "give the server a name")
            if not problems:
                problems = self._apply(json.dumps({name: entry}))
        if problems:
            self.error.setText("Please fix: " + "; ".join(problems))
            return
        self.accept()


def _str_or_none(value: object) -> bool:
    return value is None or (isinstance(value, str) and "\n" not in value)


def _str_map(value: object) -> bool:
    """A map the form can show as one ``name<sep>value`` line per entry."""
    return isinstance(value, dict) and all(
        isinstance(v, str) and "\n" not in k + v and "=" not in k and ":" not in k for k, v in value.items())
