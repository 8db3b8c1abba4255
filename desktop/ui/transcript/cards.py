"""Cards shown inside a chat node's transcript: thinking block, tool card, permission card, error row.

Every card exposes what it shows through ``toPlainText()`` (tests and screen readers read it) and
real ``QPushButton`` s with the object names of ``docs/DESIGN.md`` §2.5.

A permission request for a call whose ``path`` argument names a dotfile or anything inside a
dot-folder (``.envrc``, ``.git/config``, ``.vscode/tasks.json``) is marked as dangerous: such files
configure other programs (git hooks, the shell, editor tasks), so one approved write can make them
run a command.
"""

from __future__ import annotations

import html
import json
import re
from typing import Literal, TypeAlias

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFont, QFontDatabase, QResizeEvent, QTextCursor
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from desktop.core.chat.types import ToolCall
from desktop.ui.transcript.mcp_details import McpDetails, find_tool_support, mcp_result_extras

__all__ = [
    "CardDecision",
    "CardMark",
    "dotted_path",
    "ThinkingBlock",
    "ToolCard",
    "PermissionCard",
    "ErrorRow",
    "summarize_args",
    "danger_warning_text",
    "DANGER_BUTTON_STYLE",
    "DANGER_PATH_CHARS",
    "pretty_args",
    "STATUS_TEXT",
]

CardDecision: TypeAlias = Literal["approve", "deny", "always"]
"""What the permission card's three buttons decide (``approveButton``, ``denyButton``,
``alwaysAllowButton``); the ``decided`` signals carry it as a ``str``."""
CardMark: TypeAlias = Literal["approve", "deny", "always", "interrupted"]
"""What a card can be marked with: a ``CardDecision``, or ``interrupted`` for a call that waits
for an approval no running loop will ever read (a persisted call)."""

STATUS_TEXT: dict[str, str] = {
    "awaiting_approval": "needs approval",
    "running": "running…",
    "done": "done",
    "error": "error",
    "denied": "denied",
    "skipped": "skipped",
    "interrupted": "not run (interrupted)",
}

_ARROW_RIGHT = "▸"
_ARROW_DOWN = "▾"


def pretty_args(args_json: str) -> str:
    """The arguments pretty-printed in full (raw text when they are not valid JSON)."""
    text = args_json.strip()
    if not text:
        return "{}"
    try:
        return json.dumps(json.loads(text), indent=2, ensure_ascii=False)
    except ValueError:
        return args_json


def summarize_args(args_json: str, limit: int = 90) -> str:
    """A one-line summary of the arguments: ``path="a.txt", content="hello…"``."""
    text = args_json.strip()
    try:
        value = json.loads(text) if text else {}
    except ValueError:
        value = None
    if isinstance(value, dict):
        parts = []
        for key, val in value.items():
            shown = json.dumps(val, ensure_ascii=False) if not isinstance(val, str) else json.dumps(val)
            if len(shown) > 40:
                shown = shown[:39] + "…"
            parts.append(f"{key}={shown}")
        summary = ", ".join(parts)
    else:
        summary = " ".join(text.split())
    if len(summary) > limit:
        summary = summary[: limit - 1] + "…"
    return summary


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


def _mono_font() -> QFont:
    return QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)


class _FitPlainText(QPlainTextEdit):
    """A read-only plain text box that grows with its text up to ``max_lines`` lines, then scrolls."""

    def __init__(self, object_name: str, max_lines: int, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName(object_name)
        self.setReadOnly(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse | Qt.TextInteractionFlag.TextSelectableByKeyboard
        )
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self._max_lines = max_lines
        self._shown = ""
        self.document().documentLayout().documentSizeChanged.connect(lambda _s: self._fit())

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 (Qt API)
        super().resizeEvent(event)
        # A new width re-wraps the text, but the plain-text layout does not always report it.
        if event.size().width() != event.oldSize().width():
            self._fit()

    def _fit(self) -> None:
        lines = max(1, self.document().documentLayout().documentSize().height())
        shown = min(lines, self._max_lines)
        line_h = self.fontMetrics().lineSpacing()
        margins = self.contentsMargins()
        doc_margin = self.document().documentMargin()
        h = int(shown * line_h + 2 * doc_margin + margins.top() + margins.bottom() + 4)
        if h != self.height():
            self.setFixedHeight(h)

    def set_text(self, text: str) -> None:
        """Show ``text``, appending only the new tail when it extends what is shown."""
        # Compare with what was set, not toPlainText(): Qt normalises CRLF and no-break spaces, so
        # the prefix test would fail on every update and re-set the whole text (quadratic).
        current = self._shown
        if text == current:
            return
        if current and text.startswith(current):
            cursor = QTextCursor(self.document())
            cursor.movePosition(QTextCursor.MoveOperation.End)
            cursor.insertText(text[len(current) :])
        else:
            self.setPlainText(text)
        self._shown = text
        self._fit()


class ThinkingBlock(QFrame):
    """A collapsible block showing the model's reasoning (collapsed by default)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("thinkingBlock")
        self._text = ""
        self._streaming = False
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 0, 0, 0)
        lay.setSpacing(2)
        self.toggle = QToolButton(self)
        self.toggle.setObjectName("thinkingToggle")
        self.toggle.setCheckable(True)
        self.toggle.setCursor(Qt.CursorShape.PointingHandCursor)
        self.toggle.toggled.connect(self._on_toggled)
        lay.addWidget(self.toggle, 0, Qt.AlignmentFlag.AlignLeft)
        self.body = _FitPlainText("thinkingBody", 14, self)
        self.body.setVisible(False)
        lay.addWidget(self.body)
        self._update_toggle()

    def is_expanded(self) -> bool:
        """True when the reasoning text is shown."""
        return self.toggle.isChecked()

    def set_text(self, text: str, *, streaming: bool) -> None:
        """Update the reasoning text (the body only does work while expanded)."""
        changed = text != self._text or streaming != self._streaming
        self._text = text
        self._streaming = streaming
        if self.toggle.isChecked():
            self.body.set_text(text)
        if changed:
            self._update_toggle()

    def toPlainText(self) -> str:  # noqa: N802 - Qt naming, read by tests and accessibility
        """The reasoning text."""
        return self._text

    def _on_toggled(self, checked: bool) -> None:
        if checked:
            self.body.set_text(self._text)
        self.body.setVisible(checked)
        self._update_toggle()

    def _update_toggle(self) -> None:
        arrow = _ARROW_DOWN if self.toggle.isChecked() else _ARROW_RIGHT
        label = "Thinking…" if self._streaming else "Thought"
        words = len(self._text.split())
        count = f"  ({words} words)" if words and not self._streaming else ""
        self.toggle.setText(f"{arrow} {label}{count}")
        self.toggle.setAccessibleName("Show reasoning" if not self.toggle.isChecked() else "Hide reasoning")


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
    ``alwaysAllowServerButton``, which grants the server in this node and approves.

    Signals:
        decided(str, str): ``(call_id, decision)``; the decision is a ``CardDecision``.

    Attributes:
        danger_label: the warning line, or None when the request is not marked dangerous.
    """

    decided = Signal(str, str)

    def __init__(self, call: ToolCall, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("permissionCard")
        self.call_id = call.id
        self.tool_name = call.name
        lay = QVBoxLayout(self)
        lay.setContentsMargins(10, 8, 10, 10)
        lay.setSpacing(6)
        title = QLabel(f"Allow <b>{_esc(call.name)}</b> to run with these arguments?", self)
        title.setObjectName("permissionTitle")
        title.setTextFormat(Qt.TextFormat.RichText)
        title.setWordWrap(True)
        lay.addWidget(title)
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
        self.args_view = _FitPlainText("permissionArgs", 16, self)
        self.args_view.setFont(_mono_font())
        self.args_view.set_text(pretty_args(call.args_json))
        self.args_view.setAccessibleName(f"Arguments of {call.name}")
        lay.addWidget(self.args_view)
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
            row.addWidget(self.server_button)
        row.addStretch(1)
        lay.addLayout(row)

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
        lines.append(self.args_view.toPlainText())
        return "\n".join(lines)


def _esc(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


class ToolCard(QFrame):
    """One tool call: name, argument summary, status and a collapsible result; updated in place.

    While the call awaits approval (and no decision was made here yet) the card embeds a
    ``PermissionCard``; it is removed as soon as a decision is made or the status moves on.

    Signals:
        decided(str, str): ``(call_id, decision)`` forwarded from the permission card; the
            decision is a ``CardDecision``.
    """

    decided = Signal(str, str)

    def __init__(self, call: ToolCall, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("toolCard")
        self.call = call.copy()
        self.permission: PermissionCard | None = None
        self.mcp_extras: QWidget | None = None
        self._decided = False
        self._decision: CardMark | None = None
        lay = QVBoxLayout(self)
        lay.setContentsMargins(10, 6, 10, 6)
        lay.setSpacing(4)
        head = QHBoxLayout()
        head.setSpacing(8)
        icon = QLabel("⚙", self)
        icon.setObjectName("toolIcon")
        head.addWidget(icon)
        self.name_label = QLabel(call.name, self)
        self.name_label.setObjectName("toolName")
        self.name_label.setTextFormat(Qt.TextFormat.PlainText)
        head.addWidget(self.name_label)
        self.args_label = QLabel(self)
        self.args_label.setObjectName("toolArgs")
        self.args_label.setTextFormat(Qt.TextFormat.PlainText)
        self.args_label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        head.addWidget(self.args_label, 1)
        self.status_label = QLabel(self)
        self.status_label.setObjectName("toolStatus")
        head.addWidget(self.status_label)
        self.result_toggle = QToolButton(self)
        self.result_toggle.setObjectName("resultToggle")
        self.result_toggle.setCheckable(True)
        self.result_toggle.setCursor(Qt.CursorShape.PointingHandCursor)
        self.result_toggle.toggled.connect(self._on_result_toggled)
        head.addWidget(self.result_toggle)
        lay.addLayout(head)
        self.result_view = _FitPlainText("toolResult", 12, self)
        self.result_view.setFont(_mono_font())
        self.result_view.setVisible(False)
        lay.addWidget(self.result_view)
        self._layout = lay
        self.update_call(call)

    @property
    def call_id(self) -> str:
        """The id of the call this card shows."""
        return self.call.id

    def update_call(self, call: ToolCall) -> None:
        """Show the latest state of the call (same id)."""
        self.call = call.copy()
        self.name_label.setText(call.name)
        self.args_label.setText(summarize_args(call.args_json))
        # Model-controlled text: escaped, or Qt would render (and load) any HTML it starts with.
        self.args_label.setToolTip(f"<pre>{html.escape(pretty_args(call.args_json)[:4000])}</pre>")
        status = call.status
        shown_status: str = status
        if status == "awaiting_approval" and self._decided:
            shown_status = self._decided_status()
        self.status_label.setText(STATUS_TEXT.get(shown_status, shown_status))
        if self.status_label.property("status") != shown_status:
            self.status_label.setProperty("status", shown_status)
            self.status_label.style().unpolish(self.status_label)
            self.status_label.style().polish(self.status_label)
        has_result = call.result is not None
        self.result_toggle.setVisible(has_result)
        if has_result:
            self._update_toggle_text()
            if self.result_toggle.isChecked():
                self.result_view.set_text(call.result or "")
            if self.mcp_extras is None and status in ("done", "error"):
                self.mcp_extras = mcp_result_extras(self, call, self._show_whole_result)
                if self.mcp_extras is not None:
                    self._layout.addWidget(self.mcp_extras)
        if status == "awaiting_approval" and not self._decided:
            if self.permission is None:
                self.permission = PermissionCard(call, self)
                self.permission.decided.connect(self._on_decided)
                self._layout.addWidget(self.permission)
        else:
            self._drop_permission()

    def mark_decided(self, decision: CardMark) -> None:
        """A decision was sent for this call: turn into the normal card state right away.

        Args:
            decision: the user's ``CardDecision``, or ``interrupted`` for a call no running loop
                waits for.
        """
        self._decided = True
        self._decision = decision
        self._drop_permission()
        if self.call.status != "awaiting_approval":
            return
        shown = self._decided_status()
        self.status_label.setText(STATUS_TEXT[shown])
        self.status_label.setProperty("status", shown)
        self.status_label.style().unpolish(self.status_label)
        self.status_label.style().polish(self.status_label)

    def _decided_status(self) -> str:
        if self._decision in ("approve", "always"):
            return "running"
        if self._decision == "deny":
            return "denied"
        return "interrupted"

    def _drop_permission(self) -> None:
        if self.permission is not None:
            # Keep it parented (Qt owns it) and delete it later: this often runs inside the
            # card's own button click, and dropping the Python reference of an unparented
            # widget would delete it right there.
            card = self.permission
            self.permission = None
            card.setObjectName("")
            card.hide()
            self._layout.removeWidget(card)
            card.deleteLater()

    def _on_decided(self, call_id: str, decision: CardDecision) -> None:
        self.decided.emit(call_id, decision)

    def _show_whole_result(self, text: str) -> None:
        self.result_toggle.setChecked(True)
        self.result_view.set_text(text)

    def _update_toggle_text(self) -> None:
        arrow = _ARROW_DOWN if self.result_toggle.isChecked() else _ARROW_RIGHT
        self.result_toggle.setText(f"{arrow} result")

    def _on_result_toggled(self, checked: bool) -> None:
        if checked:
            self.result_view.set_text(self.call.result or "")
        self.result_view.setVisible(checked)
        self._update_toggle_text()

    def toPlainText(self) -> str:  # noqa: N802
        """What the card shows, as text: name, arguments, status and result."""
        parts = [f"{self.call.name}({summarize_args(self.call.args_json)}) — {self.status_label.text()}"]
        if self.call.result is not None:
            parts.append(self.call.result)
        if self.permission is not None:
            parts.append(self.permission.toPlainText())
        return "\n".join(parts)


class ErrorRow(QFrame):
    """The error shown under the transcript after a failed run, with a Retry button.

    Signals:
        retry_clicked(): the user asked to send the conversation again.
    """

    retry_clicked = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("errorRow")
        self.setAccessibleName("Error")
        lay = QHBoxLayout(self)
        lay.setContentsMargins(10, 8, 10, 8)
        lay.setSpacing(8)
        icon = QLabel("⚠", self)
        lay.addWidget(icon, 0, Qt.AlignmentFlag.AlignTop)
        self.message = QLabel(self)
        self.message.setObjectName("errorMessage")
        self.message.setTextFormat(Qt.TextFormat.PlainText)
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        lay.addWidget(self.message, 1)
        self.retry_button = QPushButton("Retry", self)
        self.retry_button.setObjectName("retryButton")
        self.retry_button.setAutoDefault(False)
        self.retry_button.setCursor(Qt.CursorShape.PointingHandCursor)
        self.retry_button.clicked.connect(self.retry_clicked)
        lay.addWidget(self.retry_button, 0, Qt.AlignmentFlag.AlignTop)

    def set_error(self, text: str) -> None:
        """Show ``text`` as the error message."""
        self.message.setText(text)

    def text(self) -> str:
        """The error message."""
        return self.message.text()

    def toPlainText(self) -> str:  # noqa: N802
        """The error message."""
        return self.message.text()
