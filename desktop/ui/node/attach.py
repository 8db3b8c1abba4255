"""A chat node's attachments: every way in, the chips, the send, the meter's estimate, the sent rows.

``NodeAttachments`` belongs to one ``ChatNodeWidget``. Files come in through the paperclip beside the
input (``attachButton``: the platform's multi-file dialog), a drop on the input or the transcript, or
a paste (copied files, or image data such as a screenshot: ``ChatInput`` hands both over). They wait
in the node's tray (``desktop.ui.attachments.intake``), read and classified off the GUI thread, as
chips above the input; Backspace in the empty input takes the last one off.

At send the node hands the text here: a model known not to see images gets the vision card first
(``visionCard``); then the tray stores every file in the project (a worker: hashing, atomic writes)
and only then does the node save the message with their references and start the run. The context
meter adds the pending attachments' estimated tokens. Sent messages show their attachments from the
project's store (``attachment_row`` of a user message's view, bound as the transcript builds it).

The attachments room (and the core's attachment package) load when the first file is attached or
the transcript is built, never before the window's first paint.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import QEvent, QObject, QPointF, Qt
from PySide6.QtGui import QColor, QDropEvent, QIcon, QImage, QPainter, QPainterPath, QPalette, QPen, QPixmap
from PySide6.QtWidgets import QBoxLayout, QFileDialog, QToolButton, QWidget

from desktop.ui.node.input import ChatInput, local_files

if TYPE_CHECKING:
    from desktop.core.attachments import AttachmentRef, AttachmentStore
    from desktop.ui.attachments.chips import ChipStrip
    from desktop.ui.attachments.intake import AttachmentTray, StoreFailed
    from desktop.ui.attachments.vision_card import VisionCard
    from desktop.ui.node.header import NodeHeader
    from desktop.ui.node.models import NodeModelChoice
    from desktop.ui.services import AppServices
    from desktop.ui.transcript.transcript import Transcript

log = logging.getLogger(__name__)

__all__ = ["AttachHost", "NodeAttachments", "paperclip_icon"]


class AttachHost(Protocol):
    """What :class:`NodeAttachments` needs of its node (a ``ChatNodeWidget``)."""

    @property
    def model_choice(self) -> NodeModelChoice: ...
    @property
    def header(self) -> NodeHeader: ...
    def send_message(self, text: str, attachments: Sequence[AttachmentRef] = ()) -> None: ...
    def update_chips(self) -> None: ...
    def is_closed(self) -> bool: ...


def paperclip_icon(color: QColor, side: int = 18) -> QIcon:
    """A paperclip drawn in ``color`` (no icon font or file needed)."""
    pixmap = QPixmap(side * 2, side * 2)
    pixmap.setDevicePixelRatio(2.0)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.translate(side / 2, side / 2)
    painter.rotate(40)
    s = side / 18
    path = QPainterPath(QPointF(1.6 * s, -2.5 * s))  # the inner leg, going down
    path.lineTo(1.6 * s, 3.2 * s)
    path.arcTo(-1.6 * s, 1.6 * s, 3.2 * s, 3.2 * s, 0, -180)
    path.lineTo(-1.6 * s, -5.2 * s)  # up the middle leg
    path.arcTo(-1.6 * s, -7.6 * s, 4.8 * s, 4.8 * s, 180, -180)
    path.lineTo(3.2 * s, 4.0 * s)  # down the outer leg
    path.arcTo(-3.2 * s, 0.8 * s, 6.4 * s, 6.4 * s, 0, -180)
    path.lineTo(-3.2 * s, -3.0 * s)
    pen = QPen(color, 1.5 * s)
    pen.setCapStyle(Qt.PenCapStyle.RoundCap)
    painter.setPen(pen)
    painter.drawPath(path)
    painter.end()
    return QIcon(pixmap)


class _AttachButton(QToolButton):
    """The paperclip (``attachButton``), redrawn in the text colour when the palette changes."""

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self.setObjectName("attachButton")
        self.setToolTip("Attach files (or paste an image, or drop files here)")
        self.setAccessibleName("Attach files")
        self.setAutoRaise(True)
        self._paint_icon()

    def _paint_icon(self) -> None:
        self.setIcon(paperclip_icon(self.palette().color(QPalette.ColorRole.Text)))

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt override
        """Follow light/dark switches."""
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            self._paint_icon()


class NodeAttachments(QObject):
    """The attachments of one chat node (see the module docstring).

    Args:
        node: The node (its widget parents the dialogs and the chips).
        services: The app's services (the project's attachment store, the settings).
    """

    def __init__(self, node: AttachHost, services: AppServices) -> None:
        super().__init__(node if isinstance(node, QObject) else None)
        self._node = node
        self._services = services
        if not isinstance(node, QWidget):
            raise TypeError("NodeAttachments needs the node's widget")
        self._widget: QWidget = node
        self._tray: AttachmentTray | None = None
        self._strip: ChipStrip | None = None
        self._card: VisionCard | None = None
        self._root: QBoxLayout | None = None
        self._bar: QWidget | None = None
        self._input: ChatInput | None = None
        self._waiting: str | None = None  # the text of a send waiting for the files to be read
        self._held: str | None = None  # the text of a send the vision card holds
        self._sending = False
        self._last_dir = str(Path.home())
        self.button: QToolButton | None = None

    # -- the ways in ----------------------------------------------------------------------------

    def place(self, root: QBoxLayout, bar: QWidget, row: QBoxLayout, chat_input: ChatInput) -> None:
        """Put the paperclip in the input row (before the input) and listen to the input's drops,
        pastes and Backspace; the chips and the vision card go above ``bar`` when first needed."""
        self._root, self._bar, self._input = root, bar, chat_input
        button = self.button = _AttachButton(bar)
        button.setCursor(Qt.CursorShape.PointingHandCursor)
        button.clicked.connect(self.choose_files)
        row.insertWidget(0, button, 0, Qt.AlignmentFlag.AlignBottom)
        chat_input.files_attached.connect(self.add_files)
        chat_input.image_pasted.connect(self.add_image)
        chat_input.remove_last_requested.connect(self.remove_last)

    def choose_files(self) -> None:
        """The paperclip: pick files in the platform's dialog, then attach them."""
        paths, _filter = QFileDialog.getOpenFileNames(self._widget, "Attach files", self._last_dir)
        if paths:
            self._last_dir = str(Path(paths[0]).parent)
            self.add_files([Path(p) for p in paths])

    def add_files(self, paths: Sequence[Path]) -> None:
        """Attach files (dropped, pasted or picked)."""
        if paths:
            self._refused(self.tray().add_paths(list(paths)))

    def add_image(self, image: object) -> None:
        """Attach pasted image data: a ``QImage`` (stored as PNG) or PNG bytes."""
        if isinstance(image, QImage):
            self._refused(self.tray().add_image(image))
        elif isinstance(image, bytes):
            self._refused(self.tray().add_png(image))

    def _refused(self, count: int) -> None:
        if count and self._strip is not None:
            from desktop.ui.attachments.intake import MAX_PENDING  # start-up: the room loads with a file

            self._strip.show_status(f"A message takes at most {MAX_PENDING} attachments: "
                                    f"{count} more {'was' if count == 1 else 'were'} not attached.")

    def remove_last(self) -> None:
        """Backspace in the empty input: take the last chip off."""
        if self._tray is not None:
            self._tray.remove_last()

    def connect_transcript(self, transcript: Transcript) -> None:
        """Accept files dropped on ``transcript`` and show sent attachments in its views."""
        viewport = transcript.viewport()
        viewport.setAcceptDrops(True)
        viewport.installEventFilter(self)
        transcript.view_created.connect(self.setup_view)
        for view in transcript.views():
            self.setup_view(view)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        """Files dragged onto the transcript are attached like files dropped on the input."""
        kind = event.type()
        drag = (QEvent.Type.DragEnter, QEvent.Type.DragMove, QEvent.Type.Drop)
        if kind in drag and isinstance(event, QDropEvent):
            files = local_files(event.mimeData())
            if files:
                event.acceptProposedAction()
                if kind == QEvent.Type.Drop:
                    self.add_files(files)
                return True
        return False

    def setup_view(self, view: object) -> None:
        """Show a user message's attachments from the project's store (``Transcript.view_created``)."""
        row = getattr(view, "attachment_row", None)
        if row is not None:
            row.bind(self.store())

    # -- the tray and its chips -----------------------------------------------------------------

    def tray(self) -> AttachmentTray:
        """The pending attachments (made, with their chips, on first use)."""
        if self._tray is None:
            from desktop.ui.attachments.chips import ChipStrip  # start-up: loads with the first file
            from desktop.ui.attachments.intake import AttachmentTray

            self._tray = AttachmentTray(self)
            self._strip = ChipStrip(self._tray, self._widget)
            self._insert(self._strip)
            self._tray.changed.connect(self._on_tray_changed)
        return self._tray

    @property
    def chips(self) -> ChipStrip | None:
        """The chip strip (None before the first attachment)."""
        return self._strip

    def has_pending(self) -> bool:
        """True when attachments wait for the next message."""
        return self._tray is not None and bool(self._tray.items)

    def _insert(self, widget: QWidget) -> None:
        if self._root is not None and self._bar is not None:
            self._root.insertWidget(self._root.indexOf(self._bar), widget)

    def _on_tray_changed(self) -> None:
        tray = self._tray
        if tray is None or self._node.is_closed():
            return
        if not tray.items and self._card is not None:
            self._card.hide()
            self._held = None
        self._node.update_chips()
        if self._waiting is not None and not self._sending and tray.all_ready():
            text, self._waiting = self._waiting, None
            self.send(text)

    def store(self) -> AttachmentStore | None:
        """The open project's attachment store (None: no project)."""
        get = self._services.attachment_store
        return get() if get is not None else None

    # -- sending --------------------------------------------------------------------------------

    def send(self, text: str, *, text_only: bool = False) -> None:
        """Send ``text`` with the pending attachments (the node has already let the send through:
        not a command, not busy, within budget). The files are stored first, in a worker."""
        tray, strip = self._tray, self._strip
        if tray is None or strip is None or self._sending:
            return
        if not tray.items:
            self._finish(text, [])
            return
        store = self.store()
        if store is None:
            strip.show_status("Not sent: attachments need a project folder to be kept in.")
            return
        if any(item.error for item in tray.items):
            strip.show_status("Not sent: remove the attachments marked in red first.")
            return
        if not tray.all_ready():
            self._waiting = text
            strip.show_status("Sending once the attachments are read…")
            return
        if not text_only and tray.images() and self._blind_model() is not None:
            self._held = text
            others = bool(text.strip()) or len(tray.items) > tray.images()
            self.card().ask(self._blind_model() or "", tray.images(), anything_else=others)
            return
        strip.show_status(None)
        self._sending = True
        if self._input is not None:
            self._input.setReadOnly(True)
        tray.store(store, lambda refs, failure: self._stored(text, refs, failure))

    def _stored(self, text: str, refs: list[AttachmentRef] | None, failure: StoreFailed | None) -> None:
        self._sending = False
        if self._input is not None:
            self._input.setReadOnly(False)
        if self._node.is_closed():
            return
        if refs is None:
            if self._strip is not None:
                self._strip.show_status(f"Not sent: an attachment could not be stored ({failure}).")
            return
        self._finish(text, refs)

    def _finish(self, text: str, refs: Sequence[AttachmentRef]) -> None:
        if self._tray is not None:
            self._tray.clear()
        if self._input is not None and self._input.toPlainText() == text:
            self._input.clear()
        if text.strip() or refs:
            self._node.send_message(text, refs)

    def _blind_model(self) -> str | None:
        """The model a send uses when it is known not to see images, else None."""
        from desktop.core.usage import model_capabilities  # start-up: the capability table loads here

        model = self._node.model_choice.pricing_model()
        return model if model and model_capabilities(model).vision is False else None

    def card(self) -> VisionCard:
        """The "cannot see images" card (made on first use)."""
        if self._card is None:
            from desktop.ui.attachments.vision_card import VisionCard  # start-up: loads when needed

            self._card = VisionCard(self._widget)
            self._card.send_text_only.connect(self._on_text_only)
            self._card.pick_model.connect(self._on_pick_model)
            self._insert(self._card)
        return self._card

    def _on_text_only(self) -> None:
        text, self._held = self._held or "", None
        if self._tray is not None:
            self._tray.drop_images()
        self.send(text, text_only=True)

    def _on_pick_model(self) -> None:
        self._held = None
        picker = self._node.header.model_picker
        picker.setFocus()
        picker.showPopup()

    # -- what the rest of the node asks -----------------------------------------------------------

    def pending_tokens(self) -> int:
        """The estimated input tokens of the pending attachments (the context meter adds them)."""
        if self._tray is None or not self._tray.items:
            return 0
        from desktop.core.attachments import estimate_tokens  # start-up: loads with the first file

        choice = self._node.model_choice
        provider_id = choice.provider_id()
        provider = self._services.settings().provider(provider_id) if provider_id else None
        api = provider.api if provider is not None else "openai"
        return estimate_tokens(self._tray.estimate_refs(), api=api, model=choice.pricing_model())

    def export_link(self, export_dir: Path | None) -> Callable[[AttachmentRef], str | None] | None:
        """How an export saved in ``export_dir`` links each attached file (None: no project)."""
        store = self.store()
        if store is None:
            return None
        return lambda ref: store.link(ref, export_dir)
