"""The tool card: one tool call under the answer that made it, updated in place.

It shows the call's name, an argument summary (tooltip: the arguments), its status, the images the tool
returned (thumbnails: ``desktop.ui.attachments.message_row.ToolImages``, click to view) and a collapsible
result; while the call awaits approval it embeds the permission card. The name and the arguments are
the model's: made visible (``desktop.core.visible``) and cut. ``toPlainText()`` is what it shows.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QSizePolicy, QToolButton, QVBoxLayout, QWidget

from desktop.core.chat.types import ToolCall
from desktop.core.visible import visible_args, visible_prefix
from desktop.ui.attachments.items import ImageItem
from desktop.ui.attachments.message_row import ToolImages
from desktop.ui.transcript.card_parts import ARROW_DOWN, ARROW_RIGHT, FitPlainText, mono_font, summarize_args
from desktop.ui.transcript.mcp_details import mcp_result_extras
from desktop.ui.transcript.permission_card import CardDecision, CardMark, PermissionCard

__all__ = ["STATUS_TEXT", "TOOLTIP_VALUE_CHARS", "ToolCard", "shown_name", "summarize_args"]

TOOLTIP_VALUE_CHARS = 200
"""Characters of one argument value the tooltip shows before "…"."""
_TOOLTIP_CHARS = 4000
_NAME_CHARS = 120


def shown_name(name: str) -> str:
    """A call's name as a card shows it: made visible (``visible_text``) and cut."""
    shown, cut = visible_prefix(name, _NAME_CHARS)
    return shown + "…" if cut else shown


def _tooltip(args_json: str) -> str:
    """The arguments for the tooltip: visible, values cut, whole lines up to ``_TOOLTIP_CHARS``."""
    text, _cut = visible_args(args_json, value_limit=TOOLTIP_VALUE_CHARS)
    if len(text) > _TOOLTIP_CHARS:
        text = text[: text.rfind("\n", 0, _TOOLTIP_CHARS) + 1] + "…"
    # Model-controlled text: escaped, or Qt would render (and load) any HTML it starts with.
    return f"<pre>{html.escape(text)}</pre>"

STATUS_TEXT: dict[str, str] = {
    "awaiting_approval": "needs approval",
    "running": "running…",
    "done": "done",
    "error": "error",
    "denied": "denied",
    "skipped": "skipped",
    "interrupted": "not run (interrupted)",
}


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
        self.images: ToolImages | None = None
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
        self.name_label = QLabel(shown_name(call.name), self)
        self.name_label.setObjectName("toolName")
        self.name_label.setTextFormat(Qt.TextFormat.PlainText)
        self.name_label.setMinimumWidth(60)  # a long name is clipped (whole in its tooltip)
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
        self.result_view = FitPlainText("toolResult", 12, self)
        self.result_view.setFont(mono_font())
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
        self.name_label.setText(shown_name(call.name))
        # Model-controlled text: escaped, or Qt would take a name starting with "<" for rich text.
        self.name_label.setToolTip(f"<p>{html.escape(shown_name(call.name))}</p>")
        self.args_label.setText(summarize_args(call.args_json))
        self.args_label.setToolTip(_tooltip(call.args_json))
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

    def show_images(self, items: Sequence[ImageItem]) -> None:
        """Show the images the tool returned, under the card's head (once)."""
        if self.images is None and items:
            self.images = ToolImages(items, self)
            self._layout.insertWidget(1, self.images)

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
        arrow = ARROW_DOWN if self.result_toggle.isChecked() else ARROW_RIGHT
        self.result_toggle.setText(f"{arrow} result")

    def _on_result_toggled(self, checked: bool) -> None:
        if checked:
            self.result_view.set_text(self.call.result or "")
        self.result_view.setVisible(checked)
        self._update_toggle_text()

    def toPlainText(self) -> str:  # noqa: N802
        """What the card shows, as text: name, arguments, status and result."""
        call = f"{shown_name(self.call.name)}({summarize_args(self.call.args_json)})"
        parts = [f"{call} — {self.status_label.text()}"]
        if self.call.result is not None:
            parts.append(self.call.result)
        if self.permission is not None:
            parts.append(self.permission.toPlainText())
        return "\n".join(parts)
