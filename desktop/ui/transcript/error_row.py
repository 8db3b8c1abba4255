"""The error row: what went wrong with a run, under the transcript's messages, with a Retry button (and
"Open Settings" when the run had no provider to go to)."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QWidget

__all__ = ["ErrorRow"]


class ErrorRow(QFrame):
    """The error shown under the transcript after a failed run, with a Retry button.

    Signals:
        retry_clicked(): the user asked to send the conversation again.
        settings_clicked(): the user asked for the settings (``errorSettingsButton``, shown with
            ``set_error(..., settings=True)``).
    """

    retry_clicked = Signal()
    settings_clicked = Signal()

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
        self.settings_button = QPushButton("Open Settings", self)
        self.settings_button.setObjectName("errorSettingsButton")
        self.settings_button.setAutoDefault(False)
        self.settings_button.setCursor(Qt.CursorShape.PointingHandCursor)
        self.settings_button.clicked.connect(self.settings_clicked)
        self.settings_button.hide()
        lay.addWidget(self.settings_button, 0, Qt.AlignmentFlag.AlignTop)
        self.retry_button = QPushButton("Retry", self)
        self.retry_button.setObjectName("retryButton")
        self.retry_button.setAutoDefault(False)
        self.retry_button.setCursor(Qt.CursorShape.PointingHandCursor)
        self.retry_button.clicked.connect(self.retry_clicked)
        lay.addWidget(self.retry_button, 0, Qt.AlignmentFlag.AlignTop)

    def set_error(self, text: str, *, settings: bool = False) -> None:
        """Show ``text`` as the error message (starting with a capital), with "Open Settings" when
        ``settings``."""
        self.message.setText(text[:1].upper() + text[1:])
        self.settings_button.setVisible(settings)

    def text(self) -> str:
        """The error message."""
        return self.message.text()

    def toPlainText(self) -> str:  # noqa: N802
        """The error message."""
        return self.message.text()
