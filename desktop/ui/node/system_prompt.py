"""The node's system prompt, visible: a one-line summary under the header that expands into an editor.

:class:`SystemPromptField` (object name ``systemPrompt``) shows the prompt ``/system`` sets and every
send uses (``ChatNodeWidget.system``): collapsed (the default) it is a single line ("System prompt:
none" or the prompt's start); its toggle (``systemPromptToggle``) opens the editor
(``systemPromptEdit``). Typing there sets the node's prompt (``edited``); ``/system`` updates the field
(:meth:`show_prompt`).
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QFrame, QPlainTextEdit, QSizePolicy, QToolButton, QVBoxLayout, QWidget

from desktop.core.visible import visible_prefix

__all__ = ["SystemPromptField"]

_SUMMARY_CHARS = 70
_EDITOR_LINES = 5


class SystemPromptField(QFrame):
    """The system prompt of one node (see the module doc).

    Args:
        prompt: The node's system prompt (None: none).
        parent: The node.

    Signals:
        edited(object): The user changed the prompt in the editor: the new prompt (None when blank).
    """

    edited = Signal(object)

    def __init__(self, prompt: str | None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("systemPrompt")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 2, 10, 4)
        layout.setSpacing(2)
        self.toggle = QToolButton(self)
        self.toggle.setObjectName("systemPromptToggle")
        self.toggle.setCheckable(True)
        self.toggle.setAutoRaise(True)
        self.toggle.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        self.toggle.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)
        self.toggle.setToolTip("The instructions sent before every message of this node "
                               "(/system sets them too)")
        self.toggle.toggled.connect(self._expand)
        layout.addWidget(self.toggle, 0, Qt.AlignmentFlag.AlignLeft)
        self.editor = QPlainTextEdit(self)
        self.editor.setObjectName("systemPromptEdit")
        self.editor.setAccessibleName("System prompt")
        self.editor.setPlaceholderText("e.g. You are a concise assistant. Answer in British English.")
        self.editor.setTabChangesFocus(True)
        line = self.editor.fontMetrics().lineSpacing()
        self.editor.setFixedHeight(line * _EDITOR_LINES + 14)
        self.editor.hide()
        self.editor.textChanged.connect(self._on_text_changed)
        layout.addWidget(self.editor)
        self.show_prompt(prompt)

    def is_expanded(self) -> bool:
        """True while the editor is open."""
        return self.toggle.isChecked()

    def prompt(self) -> str | None:
        """The prompt in the editor (None when blank)."""
        text = self.editor.toPlainText()
        return text if text.strip() else None

    def show_prompt(self, prompt: str | None) -> None:
        """Show ``prompt`` (the node's, e.g. after ``/system``) without emitting ``edited``."""
        if (prompt or "") != self.editor.toPlainText():
            self.editor.blockSignals(True)
            try:
                self.editor.setPlainText(prompt or "")
            finally:
                self.editor.blockSignals(False)
        self._update_summary()

    def _expand(self, expanded: bool) -> None:
        self.editor.setVisible(expanded)
        self._update_summary()
        if expanded:
            self.editor.setFocus(Qt.FocusReason.OtherFocusReason)

    def _on_text_changed(self) -> None:
        self._update_summary()
        self.edited.emit(self.prompt())

    def _update_summary(self) -> None:
        prompt = self.prompt()
        if self.is_expanded():
            summary = ""
        elif prompt is None:
            summary = "none"
        else:
            shown, cut = visible_prefix(" ".join(prompt.split()), _SUMMARY_CHARS)
            summary = shown + ("…" if cut else "")
        arrow = "\u25be" if self.is_expanded() else "\u25b8"
        text = f"{arrow}  System prompt: {summary}" if summary else f"{arrow}  System prompt"
        self.toggle.setText(text.replace("&", "&&"))
