"""What a sent message shows of its attachments, and a tool result of its images.

``AttachmentRow`` (object name ``attachmentRow``) sits above a user message's bubble: a thumbnail tile
per image (``tiles.AttachmentThumb``, click to view) and a file chip per other file
(``attachmentFile``: a badge, the name, the size or pages). Nothing is read until the row is given
the project's store (``bind``); then each image's thumbnail is decoded and each file checked in a
worker. A file that is missing or damaged becomes a placeholder (``attachmentPlaceholder``) saying
so: it is logged and shown, and stops nothing. ``ToolImages`` (``toolImages``) shows the images a
tool returned the same way (read from the message, not from the store).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QSizePolicy, QVBoxLayout, QWidget

from desktop.core.attachments import AttachmentRef, AttachmentStore
from desktop.core.chat.attachment_ref import format_size
from desktop.ui.attachments.flow import FlowLayout
from desktop.ui.attachments.items import ImageItem, check_file, store_item
from desktop.ui.attachments.jobs import run_job
from desktop.ui.attachments.tiles import AttachmentThumb, badge_text, make_badge, restyle, tile_size
from desktop.ui.attachments.viewer import show_viewer

log = logging.getLogger(__name__)

__all__ = ["AttachmentRow", "FileChip", "MESSAGE_TILE", "ToolImages"]

#: The side of an image tile on a message, in pixels.
MESSAGE_TILE = 112
_CHIP_WIDTH = 230


class FileChip(QFrame):
    """A sent file: badge, name, size (object name ``attachmentFile``; ``attachmentPlaceholder`` once
    found missing or damaged)."""

    def __init__(self, ref: AttachmentRef, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("attachmentFile")
        self.ref = ref
        self.problem: str | None = None
        self.setFixedWidth(_CHIP_WIDTH)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(6, 5, 8, 5)
        lay.setSpacing(8)
        lay.addWidget(make_badge(badge_text(ref.name, ref.media_type), 34, self))
        text = QVBoxLayout()
        text.setSpacing(0)
        self.name_label = _elided_label(ref.name, "attachmentName", _CHIP_WIDTH - 64, self)
        text.addWidget(self.name_label)
        details = [format_size(ref.size)]
        if ref.pages:
            details.append(f"{ref.pages} page{'s' if ref.pages != 1 else ''}")
        self.details_label = _elided_label(" · ".join(details), "attachmentNote", _CHIP_WIDTH - 64, self)
        text.addWidget(self.details_label)
        lay.addLayout(text, 1)
        self.setToolTip(ref.describe() + (f"\n{ref.note}" if ref.note else ""))

    def show_problem(self, problem: str) -> None:
        """Become the placeholder of a missing or damaged file."""
        self.problem = problem
        self.setObjectName("attachmentPlaceholder")
        self.details_label.setObjectName("attachmentProblem")
        missing = "missing" in problem
        self.details_label.setText("missing from the project" if missing else "damaged: not sent")
        self.setToolTip(f"{self.ref.name}: {problem}")
        restyle(self)
        restyle(self.details_label)


def _elided_label(text: str, name: str, width: int, parent: QWidget) -> QLabel:
    label = QLabel(parent)
    label.setObjectName(name)
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setText(label.fontMetrics().elidedText(text, Qt.TextElideMode.ElideMiddle, width))
    label.setMaximumWidth(width)
    return label


class AttachmentRow(QWidget):
    """A user message's attachments (see the module doc).

    Args:
        refs: The message's references, in order.
    """

    def __init__(self, refs: Sequence[AttachmentRef], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("attachmentRow")
        self.refs = list(refs)
        self.store: AttachmentStore | None = None
        self.thumbs: list[AttachmentThumb] = []
        self.files: list[FileChip] = []
        policy = QSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)
        policy.setHeightForWidth(True)
        self.setSizePolicy(policy)
        self._flow = FlowLayout(self, 6, align_right=True)  # rows end at the bubble's edge, items at its line

    def bind(self, store: AttachmentStore | None) -> None:
        """Show the references read from ``store`` (None: no project; the tiles stay empty)."""
        if store is self.store and (self.thumbs or self.files):
            return
        self.store = store
        for widget in [*self.thumbs, *self.files]:
            self._flow.removeWidget(widget)
            widget.deleteLater()
        self.thumbs, self.files = [], []
        for ref in self.refs:
            if ref.kind == "image" and store is not None:
                size = tile_size(MESSAGE_TILE, ref.width, ref.height)
                thumb = AttachmentThumb(store_item(store, ref), size, self._view, self)
                self._flow.addWidget(thumb)
                self.thumbs.append(thumb)
                thumb.load()
            else:
                chip = FileChip(ref, self)
                self._flow.addWidget(chip)
                self.files.append(chip)
                if store is not None:
                    self._check(store, chip)
        self.updateGeometry()

    def _check(self, store: AttachmentStore, chip: FileChip) -> None:
        ref = chip.ref
        run_job(chip, lambda: check_file(store, ref), lambda problem, _e: _problem(chip, problem))

    def _view(self, item: ImageItem) -> None:
        show_viewer(item, self)

    def hasHeightForWidth(self) -> bool:  # noqa: N802 - Qt override
        """True: the tiles wrap."""
        return True

    def heightForWidth(self, width: int) -> int:  # noqa: N802 - Qt override
        """The height the tiles need at ``width``."""
        return self._flow.heightForWidth(width)


def _problem(chip: FileChip, problem: object) -> None:
    if isinstance(problem, str):
        chip.show_problem(problem)


class ToolImages(QWidget):
    """The images a tool returned, as tiles (object name ``toolImages``); click to view."""

    def __init__(self, items: Sequence[ImageItem], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("toolImages")
        policy = QSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)
        policy.setHeightForWidth(True)
        self.setSizePolicy(policy)
        self._flow = FlowLayout(self, 6)
        self.thumbs: list[AttachmentThumb] = []
        for item in items:
            size = tile_size(MESSAGE_TILE, None, None)  # the pixel size is known once decoded
            thumb = AttachmentThumb(item, size, lambda i: show_viewer(i, self), self)
            self._flow.addWidget(thumb)
            self.thumbs.append(thumb)
            thumb.load()

    def hasHeightForWidth(self) -> bool:  # noqa: N802 - Qt override
        """True: the tiles wrap."""
        return True

    def heightForWidth(self, width: int) -> int:  # noqa: N802 - Qt override
        """The height the tiles need at ``width``."""
        return self._flow.heightForWidth(width)
