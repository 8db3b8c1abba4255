"""The error row: what went wrong with a run, under the transcript's messages, with a Retry button."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QWidget

__all__ = ["ErrorRow"]


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
