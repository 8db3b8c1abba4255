"""The thinking block: the model's reasoning above its answer, collapsed by default."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QToolButton, QVBoxLayout, QWidget

from desktop.ui.transcript.card_parts import ARROW_DOWN, ARROW_RIGHT, FitPlainText

__all__ = ["ThinkingBlock"]


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
        self.body = FitPlainText("thinkingBody", 14, self)
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
        arrow = ARROW_DOWN if self.toggle.isChecked() else ARROW_RIGHT
        label = "Thinking…" if self._streaming else "Thought"
        words = len(self._text.split())
        count = f"  ({words} words)" if words and not self._streaming else ""
        self.toggle.setText(f"{arrow} {label}{count}")
        self.toggle.setAccessibleName("Show reasoning" if not self.toggle.isChecked() else "Hide reasoning")
