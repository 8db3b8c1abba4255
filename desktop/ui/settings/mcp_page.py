"""The "MCP servers" settings page: the app-wide servers of ``settings.json`` with their live status.

The list (``mcpServerList``) shows each server and its status (starting / ready with N tools / failed,
with the last lines of its stderr below). Add (``mcpAddButton``) opens a form (name, command, arguments,
environment, or URL and headers) beside a JSON editor (``desktop.ui.settings.mcp_form``); Edit as JSON
(``mcpEditButton``) opens the same dialog on its JSON tab. The JSON is the ``{"<name>": {...}}`` object
users already have from Claude Desktop, Cursor or Claude Code;
Remove (``mcpRemoveButton``), Restart (``mcpRestartButton``, at once) and "Import from Claude Desktop"
(``mcpImportButton``). Edits apply on OK like the rest of the dialog. A bearer token typed in
``mcpTokenEdit`` goes to the OS keyring (service ``chatnodes``, user ``mcp:<name>``), never to a file.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from desktop.core.config import Settings
from desktop.ui.lifetime import connect_for
from desktop.ui.mcp.status import short_status
from desktop.ui.mcp_hub import SETTINGS_KEY, McpHub, write_app_servers
from desktop.ui.settings.mcp_form import McpServerDialog

if TYPE_CHECKING:
    from desktop.core.config import SecretStore
    from desktop.core.mcp import McpServerConfig, ServerStatus

log = logging.getLogger(__name__)

__all__ = ["McpPage", "NEW_SERVER_TEMPLATE"]

NEW_SERVER_TEMPLATE = """{
  "my-server": {
    "command": "npx",
    "args": ["-y", "@modelcontextprotocol/server-filesystem", "/path/to/folder"],
    "approval": "ask"
  }
}"""


class McpPage(QWidget):
    """The app-wide MCP servers (object name ``mcpPage``).

    Args:
        settings: The dialog's working copy of the settings (``"mcpServers"`` is read from it).
        secrets: The key store (bearer tokens).
        hub: The context's MCP hub (live status, restart); None without an app context.
        parent: The dialog.

    Attributes:
        claude_config_path: Where "Import from Claude Desktop" reads (None: the platform's location).
        problems: Why the saved ``mcpServers`` could not be read (shown above the list), or None.
    """

    def __init__(self, settings: Settings, secrets: SecretStore, hub: McpHub | None,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("mcpPage")
        self._secrets = secrets
        self._hub = hub
        self._tokens: dict[str, str] = {}
        self.claude_config_path: Path | None = None
        self.problems: str | None = None
        self._servers: dict[str, McpServerConfig] = {}
        self._raw_invalid: Any = None
        self._load(settings)

        root = QVBoxLayout(self)
        root.setContentsMargins(0, 8, 0, 0)
        intro = QLabel("Tool servers (Model Context Protocol) every project can use. The format is Claude "
                       "Desktop's \u201cmcpServers\u201d; a project's own servers come from its .mcp.json.",
                       self)
        intro.setWordWrap(True)
        root.addWidget(intro)
        self.problem_label = QLabel(self.problems or "", self)
        self.problem_label.setObjectName("mcpProblems")
        self.problem_label.setWordWrap(True)
        self.problem_label.setStyleSheet("color: #d04545;")
        self.problem_label.setVisible(bool(self.problems))
        root.addWidget(self.problem_label)
        row = QHBoxLayout()
        self.server_list = QListWidget(self)
        self.server_list.setObjectName("mcpServerList")
        self.server_list.currentRowChanged.connect(lambda _r: self._show_current())
        row.addWidget(self.server_list, 1)
        buttons = QVBoxLayout()
        self._button("Add…", "mcpAddButton", self._add_dialog, buttons)
        self.edit_button = self._button("Edit as JSON…", "mcpEditButton", self._edit_dialog, buttons)
        self.remove_button = self._button("Remove", "mcpRemoveButton", self.remove_current, buttons)
        self.restart_button = self._button("Restart", "mcpRestartButton", self.restart_current, buttons)
        self._button("Import from Claude Desktop", "mcpImportButton", self.import_claude_desktop, buttons)
        buttons.addStretch(1)
        row.addLayout(buttons)
        root.addLayout(row, 1)
        self.status_label = QLabel(self)
        self.status_label.setObjectName("mcpStatusLabel")
        self.status_label.setWordWrap(True)
        self.status_label.setTextFormat(Qt.TextFormat.PlainText)
        root.addWidget(self.status_label)
        self.stderr_view = QPlainTextEdit(self)
        self.stderr_view.setObjectName("mcpStderr")
        self.stderr_view.setReadOnly(True)
        self.stderr_view.setPlaceholderText("The server's last stderr lines show here.")
        self.stderr_view.setMaximumHeight(110)
        root.addWidget(self.stderr_view)
        token_row = QHBoxLayout()
        token_row.addWidget(QLabel("Bearer token (HTTP servers):", self))
        self.token_edit = QLineEdit(self)
        self.token_edit.setObjectName("mcpTokenEdit")
        self.token_edit.setEchoMode(QLineEdit.EchoMode.Password)
        self.token_edit.setPlaceholderText("stored in the OS keyring, never in settings.json")
        self.token_edit.textEdited.connect(self._on_token_edited)
        token_row.addWidget(self.token_edit, 1)
        root.addLayout(token_row)
        self.result_label = QLabel(self)
        self.result_label.setObjectName("mcpImportResult")
        self.result_label.setWordWrap(True)
        self.result_label.setTextFormat(Qt.TextFormat.PlainText)
        root.addWidget(self.result_label)
        if hub is not None:  # the hub outlives the dialog: the connections end with this page
            connect_for(self, hub.signals.status_changed, lambda _status: self.refresh())
            connect_for(self, hub.signals.servers_changed, self.refresh)
        self.refresh()

    def _button(self, text: str, name: str, slot: Any, box: QVBoxLayout) -> QPushButton:
        button = QPushButton(text, self)
        button.setObjectName(name)
        button.setAutoDefault(False)
        button.clicked.connect(lambda _c=False: slot())
        box.addWidget(button)
        return button

    def _load(self, settings: Settings) -> None:
        from desktop.core.mcp import McpConfigError, parse_mcp_servers

        raw = settings.extra.get(SETTINGS_KEY)
        try:
            self._servers = parse_mcp_servers(raw)
        except McpConfigError as err:
            self.problems = "settings.json \u201cmcpServers\u201d is invalid and kept as it is: " + str(err)
            self._raw_invalid = raw

    # -- the list ----------------------------------------------------------------------------------
    def server_names(self) -> list[str]:
        """The servers listed, in order."""
        return list(self._servers)

    def _status(self, name: str) -> ServerStatus | None:
        return self._hub.statuses().get(name) if self._hub is not None else None

    def refresh(self) -> None:
        """Re-read the live status of every server."""
        current = self.current_name()
        self.server_list.blockSignals(True)
        try:
            self.server_list.clear()
            for name, config in self._servers.items():
                status = self._status(name)
                if not config.enabled:
                    state = "disabled"
                elif status is None:
                    state = "not started (applies on OK)"
                else:
                    state = short_status(status)
                item = QListWidgetItem(f"{name} \u2014 {state}")
                item.setData(Qt.ItemDataRole.UserRole, name)
                self.server_list.addItem(item)
            names = list(self._servers)
            if names:
                self.server_list.setCurrentRow(names.index(current) if current in names else 0)
        finally:
            self.server_list.blockSignals(False)
        self._show_current()

    def current_name(self) -> str | None:
        """The selected server's name."""
        item = self.server_list.currentItem() if hasattr(self, "server_list") else None
        value = item.data(Qt.ItemDataRole.UserRole) if item is not None else None
        return value if isinstance(value, str) else None

    def select(self, name: str | None) -> None:
        """Select the server ``name`` (no effect when it is not listed)."""
        if name in self._servers:
            self.server_list.setCurrentRow(list(self._servers).index(name))

    def _show_current(self) -> None:
        name = self.current_name()
        has = name is not None
        for button in (self.edit_button, self.remove_button, self.restart_button, self.token_edit):
            button.setEnabled(has)
        if name is None:
            self.status_label.setText("No MCP server yet: Add one, or import Claude Desktop's.")
            self.stderr_view.setPlainText("")
            return
        config = self._servers[name]
        status = self._status(name)
        where = config.describe()
        text = f"{name}: {status.summary() if status is not None else 'not running'}\n{where}"
        self.status_label.setText(text)
        self.stderr_view.setPlainText("\n".join(status.stderr_tail) if status is not None else "")
        self.token_edit.setEnabled(config.transport != "stdio")
        has_token = name in self._tokens or bool(self._secrets.get(_user(name)))
        self.token_edit.clear()
        self.token_edit.setPlaceholderText("a token is stored in the OS keyring" if has_token
                                           else "stored in the OS keyring, never in settings.json")

    # -- editing -----------------------------------------------------------------------------------
    def add_from_json(self, text: str, *, replace: str | None = None) -> list[str]:
        """Add (or, with ``replace``, replace) servers from a ``{"<name>": {...}}`` JSON object.

        Returns:
            The problems found (nothing changes when there is any).
        """
        from desktop.core.mcp import McpConfigError, parse_mcp_servers

        try:
            raw = json.loads(text)
        except ValueError as err:
            return [f"not valid JSON: {err}"]
        if isinstance(raw, dict) and isinstance(raw.get(SETTINGS_KEY), dict):
            raw = raw[SETTINGS_KEY]  # a whole config file pasted
        try:
            parsed = parse_mcp_servers(raw)
        except McpConfigError as err:
            return list(err.problems)
        if not parsed:
            return ["no server in the object"]
        clashes = [n for n in parsed if n in self._servers and n != replace]
        if clashes:
            return [f'a server named "{n}" already exists' for n in clashes]
        if replace is not None:
            rebuilt: dict[str, McpServerConfig] = {}
            for name, config in self._servers.items():
                if name == replace:
                    rebuilt.update(parsed)  # in the edited server's place
                else:
                    rebuilt[name] = config
            self._servers = rebuilt
        else:
            self._servers.update(parsed)
        self.refresh()
        self.select(next(iter(parsed)))
        return []

    def current_json(self) -> str:
        """The selected server as the JSON object the editor shows."""
        name = self.current_name()
        if name is None:
            return NEW_SERVER_TEMPLATE
        return json.dumps({name: self._servers[name].to_dict()}, indent=2, ensure_ascii=False)

    def remove_current(self) -> None:
        """Remove the selected server (its token leaves the keyring on OK)."""
        name = self.current_name()
        if name is not None:
            del self._servers[name]
            self._tokens[name] = ""
            self.refresh()

    def restart_current(self) -> None:
        """Restart the selected server now."""
        name = self.current_name()
        if name is not None and self._hub is not None:
            self._hub.restart(name)
            self.status_label.setText(f"{name}: restarting…")

    def import_claude_desktop(self) -> None:
        """Add Claude Desktop's servers (names already listed are kept as they are)."""
        from desktop.core.mcp import McpImportError, import_claude_desktop

        try:
            found = import_claude_desktop(self.claude_config_path)
        except McpImportError as err:
            self.result_label.setText(str(err))
            return
        added = [n for n in found if n not in self._servers]
        for name in added:
            self._servers[name] = found[name]
        skipped = [n for n in found if n not in added]
        parts = [f"Imported {len(added)} server{'s' if len(added) != 1 else ''} from Claude Desktop"
                 + (f": {', '.join(added)}" if added else "")]
        if skipped:
            parts.append(f"already listed: {', '.join(skipped)}")
        self.result_label.setText("; ".join(parts) + ". They start when you press OK.")
        self.refresh()

    def _on_token_edited(self, text: str) -> None:
        name = self.current_name()
        if name is not None:
            self._tokens[name] = text.strip()

    def _server_dialog(self, title: str, text: str, replace: str | None, *, start_on_json: bool) -> None:
        dialog = McpServerDialog(title, text, lambda t: self.add_from_json(t, replace=replace),
                                 start_on_json=start_on_json, parent=self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose, True)
        dialog.open()

    def _add_dialog(self) -> None:
        self._server_dialog("Add MCP server", NEW_SERVER_TEMPLATE, None, start_on_json=False)

    def _edit_dialog(self) -> None:
        name = self.current_name()
        if name is not None:
            self._server_dialog(f"Edit {name}", self.current_json(), name, start_on_json=True)

    # -- OK ----------------------------------------------------------------------------------------
    def apply_to(self, settings: Settings) -> None:
        """Put the edited servers into ``settings`` (an invalid saved object is kept when untouched)."""
        if self._raw_invalid is not None and not self._servers:
            settings.extra[SETTINGS_KEY] = self._raw_invalid
            return
        write_app_servers(settings, self._servers)

    def commit_tokens(self) -> list[str]:
        """Store the typed tokens in the keyring (an empty one is removed); the names whose token changed.

        Raises:
            ValueError: The keyring refused a token (the message never holds it).
        """
        changed: list[str] = []
        for name, token in self._tokens.items():
            if token:
                self._secrets.set(_user(name), token)
            else:
                self._secrets.delete(_user(name))
            changed.append(name)
        self._tokens.clear()
        return changed


def _user(name: str) -> str:
    from desktop.core.mcp import keyring_user

    return keyring_user(name)
