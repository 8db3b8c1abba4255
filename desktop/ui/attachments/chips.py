"""The chips of a node's pending attachments, above its input (``attachmentChips``).

One ``AttachmentChip`` (object name ``attachmentChip``) per item of the node's ``AttachmentTray``: a
thumbnail of an image or a badge of a file, its name, its size and what the classifier says (pages,
"only the first 1 MB is sent", or in red why it cannot be sent: ``attachmentProblem``), and a remove
button (``removeAttachmentButton``). Chips are kept by item and updated in place as items are read.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QSizePolicy, QToolButton, QVBoxLayout, QWidget

from desktop.core.chat.attachment_ref import format_size
from desktop.ui.attachments.flow import FlowLayout
from desktop.ui.attachments.intake import AttachmentTray, Pending
from desktop.ui.attachments.tiles import badge_text, fitted_pixmap, make_badge, restyle

__all__ = ["AttachmentChip", "ChipStrip"]

_CHIP_WIDTH = 250
_THUMB = 38


class AttachmentChip(QFrame):
    """One pending attachment (see the module doc).

    Signals:
        remove_requested(int): the remove button was clicked: the item's id.
    """

    remove_requested = Signal(int)

    def __init__(self, item: Pending, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("attachmentChip")
        self.item = item
        self.setFixedWidth(_CHIP_WIDTH)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(5, 4, 4, 4)
        lay.setSpacing(8)
        self.picture = QLabel(self)
        self.picture.setObjectName("attachmentChipThumb")
        self.picture.setFixedSize(_THUMB, _THUMB)
        self.picture.setAlignment(Qt.AlignmentFlag.AlignCenter)
        lay.addWidget(self.picture)
        self._badge: QLabel | None = None
        text = QVBoxLayout()
        text.setSpacing(0)
        self.name_label = QLabel(self)
        self.name_label.setObjectName("attachmentName")
        self.name_label.setTextFormat(Qt.TextFormat.PlainText)
        text.addWidget(self.name_label)
        self.note_label = QLabel(self)
        self.note_label.setObjectName("attachmentNote")
        self.note_label.setTextFormat(Qt.TextFormat.PlainText)
        text.addWidget(self.note_label)
        lay.addLayout(text, 1)
        self.remove_button = QToolButton(self)
        self.remove_button.setObjectName("removeAttachmentButton")
        self.remove_button.setText("✕")
        self.remove_button.setToolTip("Remove this attachment")
        self.remove_button.setAccessibleName(f"Remove {item.name}")
        self.remove_button.setCursor(Qt.CursorShape.PointingHandCursor)
        self.remove_button.setAutoRaise(True)
        self.remove_button.clicked.connect(lambda: self.remove_requested.emit(self.item.id))
        lay.addWidget(self.remove_button, 0, Qt.AlignmentFlag.AlignTop)
        self.update_item()

    @property
    def problem(self) -> str | None:
        """Why the item cannot be sent, or None."""
        item = self.item
        return item.error or (item.found.problem if item.found is not None else None)

    def update_item(self) -> None:
        """Show the item's latest state (read, failed)."""
        item, found = self.item, self.item.found
        width = _CHIP_WIDTH - _THUMB - 48
        metrics = self.name_label.fontMetrics()
        self.name_label.setText(metrics.elidedText(item.name, Qt.TextElideMode.ElideMiddle, width))
        problem = self.problem
        if found is None and problem is None:
            note = "reading…"
        else:
            parts = [format_size(found.size)] if found is not None else []
            if problem:
                parts.append(problem)
            elif found is not None and found.note:
                parts.append(found.note)
            elif found is not None and found.width and found.height:
                parts.append(f"{found.width}×{found.height}")
            note = " · ".join(parts)
        metrics = self.note_label.fontMetrics()
        self.note_label.setText(metrics.elidedText(note, Qt.TextElideMode.ElideRight, width))
        self.note_label.setObjectName("attachmentProblem" if problem else "attachmentNote")
        restyle(self.note_label)
        tip = [item.name]
        if found is not None:
            tip.append(f"{found.media_type}, {format_size(found.size)}")
        if problem:
            tip.append(problem)
        elif found is not None and found.note:
            tip.append(found.note)
        self.setToolTip("\n".join(tip))
        if item.thumb is not None and not item.thumb.isNull():
            self.picture.setPixmap(fitted_pixmap(item.thumb, _THUMB, self.devicePixelRatioF()))
            self.picture.setText("")
        elif found is not None and self._badge is None:
            self._badge = make_badge(badge_text(item.name, found.media_type), _THUMB, self)
            self.picture.hide()
            layout = self.layout()
            if isinstance(layout, QHBoxLayout):
                layout.insertWidget(0, self._badge)
        elif found is None:
            self.picture.setText("…")


class ChipStrip(QFrame):
    """The chips of a tray, wrapping (object name ``attachmentChips``), and a status line
    (``attachmentStatus``) saying why a send waits."""

    def __init__(self, tray: AttachmentTray, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("attachmentChips")
        self.tray = tray
        self.chips: dict[int, AttachmentChip] = {}
        outer = QVBoxLayout(self)
        outer.setContentsMargins(10, 6, 10, 0)
        outer.setSpacing(4)
        self._box = QWidget(self)
        policy = QSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)
        policy.setHeightForWidth(True)
        self._box.setSizePolicy(policy)
        self._flow = FlowLayout(self._box, 6)
        outer.addWidget(self._box)
        self.status = QLabel(self)
        self.status.setObjectName("attachmentStatus")
        self.status.setTextFormat(Qt.TextFormat.PlainText)
        self.status.setWordWrap(True)
        self.status.hide()
        outer.addWidget(self.status)
        tray.changed.connect(self.sync)
        self.sync()

    def sync(self) -> None:
        """Match the chips to the tray's items (new ones added, gone ones removed, others updated)."""
        items = {i.id: i for i in self.tray.items}
        for item_id in [k for k in self.chips if k not in items]:
            gone = self.chips.pop(item_id)
            self._flow.removeWidget(gone)
            gone.hide()
            gone.deleteLater()
        for item in self.tray.items:
            chip = self.chips.get(item.id)
            if chip is None:
                chip = AttachmentChip(item, self._box)
                chip.remove_requested.connect(self.tray.remove)
                self._flow.addWidget(chip)
                self.chips[item.id] = chip
                chip.show()
            else:
                chip.update_item()
        if not items:
            self.show_status(None)
        self.setVisible(bool(items))
        self._box.updateGeometry()

    def show_status(self, text: str | None) -> None:
        """Show (or with None hide) the line under the chips."""
        self.status.setText(text or "")
        self.status.setVisible(bool(text))

    def ordered_chips(self) -> list[AttachmentChip]:
        """The chips in the tray's order."""
        return [self.chips[i.id] for i in self.tray.items if i.id in self.chips]
