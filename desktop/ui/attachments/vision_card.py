"""The card shown before images go to a model known not to see them (object name ``visionCard``).

``model_capabilities(model).vision is False`` (LiteLLM says so): instead of sending images the
model would only get a note about, the node holds the send and asks: **Send the text only**
(``sendTextOnlyButton``: the images are taken off, anything else attached still goes) or **Pick
another model** (``pickModelButton``: the node's model picker opens; the message waits in the box).
A model nobody knows about is allowed: the card is not shown.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

__all__ = ["VisionCard"]


class VisionCard(QFrame):
    """The inline card of a node whose send holds images for a blind model (hidden until needed).

    Signals:
        send_text_only(): send without the images.
        pick_model(): let the user choose another model.
    """

    send_text_only = Signal()
    pick_model = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("visionCard")
        lay = QVBoxLayout(self)
        lay.setContentsMargins(12, 8, 12, 8)
        self.label = QLabel(self)
        self.label.setObjectName("visionText")
        self.label.setTextFormat(Qt.TextFormat.PlainText)
        self.label.setWordWrap(True)
        lay.addWidget(self.label)
        row = QHBoxLayout()
        row.addStretch(1)
        self.pick_button = QPushButton("Pick another model", self)
        self.pick_button.setObjectName("pickModelButton")
        self.pick_button.setAutoDefault(False)
        self.pick_button.clicked.connect(self._on_pick)
        row.addWidget(self.pick_button)
        self.text_button = QPushButton("Send the text only", self)
        self.text_button.setObjectName("sendTextOnlyButton")
        self.text_button.setAutoDefault(False)
        self.text_button.clicked.connect(self._on_text_only)
        row.addWidget(self.text_button)
        lay.addLayout(row)
        self.hide()

    def ask(self, model: str, images: int, *, anything_else: bool) -> None:
        """Show the card for ``images`` images and ``model``.

        Args:
            model: The model that cannot see images.
            images: How many images are attached.
            anything_else: Whether text or other files would still be sent without them.
        """
        what = "this image" if images == 1 else f"these {images} images"
        self.label.setText(f"Not sent: {model} cannot see images, so {what} would not reach it. "
                           "Your message is still in the box.")
        self.text_button.setEnabled(anything_else)
        self.text_button.setToolTip("" if anything_else else "There is nothing to send without the images")
        self.show()

    def _on_text_only(self) -> None:
        self.hide()
        self.send_text_only.emit()

    def _on_pick(self) -> None:
        self.hide()
        self.pick_model.emit()
