"""The permission card: an inline approval request for one tool call, with real buttons.

It exposes what it shows through ``toPlainText()`` (tests and screen readers read it) and real
``QPushButton`` s with the object names of ``docs/DESIGN.md`` §2.5.

A permission request for a call whose ``path`` argument names a dotfile or anything inside a
dot-folder (``.envrc``, ``.git/config``, ``.vscode/tasks.json``) is marked as dangerous: such files
configure other programs (git hooks, the shell, editor tasks), so one approved write can make them
run a command.

Nothing the model or a server chose reaches the card raw: the call's name, the argument keys and
values (``visible_args``, each value cut at ``ARG_VALUE_CHARS`` with "Show all") and the MCP details
(``McpDetails``) show control, bidi and zero-width characters as escapes, so a name holding a newline
or U+202E cannot make the card claim another server, tool or argument. A ``write_file`` call shows
its content as text and what it does to the file there (``desktop.ui.transcript.write_view``).
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Literal, TypeAlias

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from desktop.core.chat.types import ToolCall
from desktop.core.visible import visible_args, visible_prefix
from desktop.ui.transcript.card_parts import FitPlainText, mono_font, show_all_button
from desktop.ui.transcript.mcp_details import CardToolSupport, McpDetails, find_tool_support
from desktop.ui.transcript.write_view import WriteFileView

__all__ = [
    "ARG_VALUE_CHARS",
    "CardDecision",
    "CardMark",
    "DANGER_BUTTON_STYLE",
    "DANGER_PATH_CHARS",
    "NAME_CHARS",
    "PermissionCard",
    "danger_warning_text",
    "dotted_path",
    "write_file_args",
]

ARG_VALUE_CHARS = 2000
"""Characters of one argument key or value the card shows before "…" and "Show all"."""
NAME_CHARS = 120
"""Characters of a call's name the card shows before "…"."""

CardDecision: TypeAlias = Literal["approve", "deny", "always"]
"""What the permission card's three buttons decide (``approveButton``, ``denyButton``,
``alwaysAllowButton``); the ``decided`` signals carry it as a ``str``."""
CardMark: TypeAlias = Literal["approve", "deny", "always", "interrupted"]
"""What a card can be marked with: a ``CardDecision``, or ``interrupted`` for a call that waits
for an approval no running loop will ever read (a persisted call)."""

_PATH_SEPARATORS = re.compile(r"[/\\]")


def dotted_path(args_json: str) -> str | None:
    """The ``path`` argument of a call when it names a dotfile or something inside a dot-folder.

    Any component that starts with ``.`` counts (``.envrc``, ``.git/config``, ``a/.vscode/x``,
    ``..``), except ``.`` itself (the current folder); both ``/`` and ``\\`` separate components.

    Args:
        args_json: the call's arguments as JSON text.

    Returns:
        The path as given, or None when there is no string ``path`` argument or it has no such
        component.
    """
    try:
        args = json.loads(args_json) if args_json.strip() else None
    except ValueError:
        return None
    path = args.get("path") if isinstance(args, dict) else None
    if not isinstance(path, str):
        return None
    for part in _PATH_SEPARATORS.split(path):
        if part.startswith(".") and part != ".":
            return path
    return None


DANGER_BUTTON_STYLE = (
    "QPushButton { background: #c62828; color: #ffffff; border: 1px solid #8e1b1b; font-weight: 600; }"
    " QPushButton:hover { background: #b71c1c; }"
    " QPushButton:disabled { background: #d98c8c; color: #f5f5f5; }"
)
"""The Approve button of a dangerous request: white on red, readable on light and dark nodes.

Set on the button itself: a widget's own style sheet wins over the node's ``approveButton`` rule."""


DANGER_PATH_CHARS = 300
"""A longer path is shortened (with an ellipsis) in the warning line."""


def danger_warning_text(path: str) -> str:
    """The warning a permission card shows for a write to the dotfile or dot-folder ``path``.

    The path is shown as a Python string literal, so control and invisible characters (a newline,
    a right-to-left override) are shown as escapes instead of disguising the name.
    """
    shown = repr(path)
    if len(shown) > DANGER_PATH_CHARS:
        shown = shown[: DANGER_PATH_CHARS - 1] + "…"
    return (
        f"Warning: {shown} is a dotfile or inside a dot-folder. Files like this configure other "
        "programs (git, the shell, editors): changing it can change how tools or the shell behave, "
        "and even make them run a command. Approve only if you expected this."
    )


class PermissionCard(QFrame):
    """Inline approval request for one tool call: the full arguments and three real buttons.

    A call whose ``path`` argument names a dotfile or dot-folder (``dotted_path``) also shows a
    warning line (``dangerWarning``) and a red Approve button (property ``danger`` true). An MCP
    call shows its server, tool, description and annotations (``mcpDetails``) and a fourth button,
    ``alwaysAllowServerButton``, which grants the server in this node and approves. A
    ``write_file`` call with a string path and content shows a ``WriteFileView`` (``writeFileView``)
    instead of the arguments box (``permissionArgs``).

    Signals:
        decided(str, str): ``(call_id, decision)``; the decision is a ``CardDecision``.

    Attributes:
        danger_label: the warning line, or None when the request is not marked dangerous.
        write_view: the ``write_file`` view, or None.
        args_view: the arguments box (None when ``write_view`` shows the call).
        args_show_all: "Show all" under the arguments box when a value was cut, or None.
    """

    decided = Signal(str, str)

    def __init__(self, call: ToolCall, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("permissionCard")
        self.call_id = call.id
        shown_name, name_cut = visible_prefix(call.name, NAME_CHARS)
        self.tool_name = shown_name + ("…" if name_cut else "")  # as shown: made visible, cut
        lay = QVBoxLayout(self)
        lay.setContentsMargins(10, 8, 10, 10)
        lay.setSpacing(6)
        self.title = QLabel(f"Allow <b>{html.escape(self.tool_name)}</b> to run with these arguments?", self)
        self.title.setObjectName("permissionTitle")
        self.title.setTextFormat(Qt.TextFormat.RichText)
        self.title.setWordWrap(True)
        lay.addWidget(self.title)
        support = find_tool_support(parent) if parent is not None else None
        info = support.tool_details(call.name) if support is not None else None
        self.mcp_details = McpDetails(info, self) if info is not None else None
        if self.mcp_details is not None:
            lay.addWidget(self.mcp_details)
        self.danger_label: QLabel | None = None
        danger_path = dotted_path(call.args_json)
        if danger_path is not None:
            # Model-controlled text: plain text only, never rich text.
            self.danger_label = QLabel(danger_warning_text(danger_path), self)
            self.danger_label.setObjectName("dangerWarning")
            self.danger_label.setTextFormat(Qt.TextFormat.PlainText)
            self.danger_label.setWordWrap(True)
            bold = self.danger_label.font()
            bold.setBold(True)
            self.danger_label.setFont(bold)
            self.danger_label.setAccessibleName("Warning")
            lay.addWidget(self.danger_label)
        self.write_view: WriteFileView | None = None
        self.args_view: FitPlainText | None = None
        self.args_show_all: QPushButton | None = None
        write = write_file_args(call) if info is None else None
        if write is not None:
            folder = _project_folder(support)
            self.write_view = WriteFileView(write[0], write[1], folder, self)
            lay.addWidget(self.write_view)
        else:
            self._args_view(call, lay)
        row = QHBoxLayout()
        row.setSpacing(6)
        self.approve_button = QPushButton("Approve", self)
        self.approve_button.setObjectName("approveButton")
        self.deny_button = QPushButton("Deny", self)
        self.deny_button.setObjectName("denyButton")
        self.always_button = QPushButton("Always allow this tool in this node", self)
        self.always_button.setObjectName("alwaysAllowButton")
        self.approve_button.setProperty("danger", danger_path is not None)
        if danger_path is not None:
            self.approve_button.setStyleSheet(DANGER_BUTTON_STYLE)
        buttons: tuple[tuple[QPushButton, CardDecision], ...] = (
            (self.approve_button, "approve"),
            (self.deny_button, "deny"),
            (self.always_button, "always"),
        )
        for button, decision in buttons:
            button.setCursor(Qt.CursorShape.PointingHandCursor)
            button.setAutoDefault(False)
            button.clicked.connect(lambda _c=False, d=decision: self._decide(d))
            row.addWidget(button)
        self.server_button: QPushButton | None = None
        if info is not None and support is not None:
            self.server_button = QPushButton("Always allow this server in this node", self)
            self.server_button.setObjectName("alwaysAllowServerButton")
            self.server_button.setAutoDefault(False)
            server = info.server

            def allow_server(_checked: bool = False) -> None:
                support.allow_server(server)  # the user's grant (config dir), then this call runs
                self._decide("approve")

            self.server_button.clicked.connect(allow_server)
            server_row = QHBoxLayout()  # a row of its own: four buttons in one would widen a narrow node
            server_row.addWidget(self.server_button)
            server_row.addStretch(1)
        row.addStretch(1)
        lay.addLayout(row)
        if self.server_button is not None:
            lay.addLayout(server_row)

    def _args_view(self, call: ToolCall, lay: QVBoxLayout) -> None:
        """The arguments, keys and values made visible, long values cut with "Show all"."""
        view = self.args_view = FitPlainText("permissionArgs", 16, self)
        view.setFont(mono_font())
        text, cut = visible_args(call.args_json, value_limit=ARG_VALUE_CHARS)
        view.set_text(text)
        view.setAccessibleName(f"Arguments of {self.tool_name}")
        lay.addWidget(view)
        if cut:
            args_json = call.args_json
            self.args_show_all = show_all_button(self, "argsShowAllButton",
                                                 lambda: view.set_text(visible_args(args_json)[0]))
            lay.addWidget(self.args_show_all, 0, Qt.AlignmentFlag.AlignLeft)

    def _decide(self, decision: CardDecision) -> None:
        for button in (self.approve_button, self.deny_button, self.always_button, self.server_button):
            if button is not None:
                button.setEnabled(False)
        self.decided.emit(self.call_id, decision)

    def toPlainText(self) -> str:  # noqa: N802
        """What the card shows, as text: the question, the warning (if any) and the arguments."""
        lines = [f"Allow {self.tool_name} to run with these arguments?"]
        if self.mcp_details is not None:
            lines.append(self.mcp_details.toPlainText())
        if self.danger_label is not None:
            lines.append(self.danger_label.text())
        if self.write_view is not None:
            lines.append(self.write_view.toPlainText())
        if self.args_view is not None:
            lines.append(self.args_view.toPlainText())
        return "\n".join(lines)


def write_file_args(call: ToolCall) -> tuple[str, str] | None:
    """``(path, content)`` of a ``write_file`` call whose arguments hold both as strings, else None
    (odd arguments are shown as arguments: the tool itself will refuse them)."""
    if call.name != "write_file":
        return None
    try:
        args = json.loads(call.args_json) if call.args_json.strip() else None
    except (ValueError, RecursionError):
        return None
    if not isinstance(args, dict):
        return None
    path, content = args.get("path"), args.get("content")
    if not isinstance(path, str) or not isinstance(content, str):
        return None
    return path, content


def _project_folder(support: CardToolSupport | None) -> Path | None:
    getter = getattr(support, "project_folder", None)
    folder = getter() if callable(getter) else None
    return folder if isinstance(folder, Path) else None
