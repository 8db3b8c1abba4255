"""``MarkdownView``: the read-only rich-text view of rendered Markdown, and the link/clipboard helpers.

The view fits its height to its content, never scrolls itself (the transcript scrolls) and loads
no resources: no images, no style sheets, no remote or local files. Clicked links open in the
system browser only when ``desktop.ui.markdown.rich_text.safe_link`` accepts them.

Each code block shown gets a **Copy** button (``copyCodeButton``, a real ``QToolButton`` on the
view's viewport, at the right of the block's label line) that copies the block's raw code.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from functools import partial

from PySide6.QtCore import QByteArray, QMimeData, Qt, QUrl
from PySide6.QtGui import (
    QContextMenuEvent,
    QDesktopServices,
    QGuiApplication,
    QResizeEvent,
    QTextDocument,
    QTextFrame,
    QTextTable,
    QWheelEvent,
)
from PySide6.QtWidgets import QFrame, QSizePolicy, QTextBrowser, QToolButton, QWidget

from desktop.ui.frames import frame_scheduler, tick_deadline
from desktop.ui.lifetime import call_later
from desktop.ui.markdown.colour import COLOUR_SLICE, CodeColourer
from desktop.ui.markdown.render import render_markdown_blocks
from desktop.ui.markdown.rich_text import safe_link
from desktop.ui.markdown.selection import selection_text
from desktop.ui.markdown.shaping import layout_font, needs_shaping
from desktop.ui.markdown.theme import MarkdownTheme, document_css

log = logging.getLogger(__name__)

__all__ = ["COPIED_MS", "MarkdownView", "open_link", "copy_to_clipboard", "document_tables"]

COPIED_MS = 1500
"""How long a code block's Copy button says "Copied" after a click."""

_COPY_BUTTON_HEIGHT = 20
"""Height of a code block's Copy button: it fits on the block's label line (see ``code_block_html``)."""


def copy_to_clipboard(text: str) -> None:
    """Put ``text`` on the system clipboard (does nothing when there is no clipboard)."""
    clipboard = QGuiApplication.clipboard()
    if clipboard is not None:
        clipboard.setText(text)


def open_link(url: QUrl) -> None:
    """Open a clicked link in the system browser, only for http(s)/mailto URLs."""
    text = url.toString()
    if safe_link(text) is None:
        log.info("refusing to open a link with scheme %r", url.scheme())
        return
    QDesktopServices.openUrl(url)


def _forget(colourer: CodeColourer, key: tuple[str, int], *_args: object) -> None:
    """A view is going away: no more colouring for it (its document is deleted with it)."""
    colourer.stop()
    frame_scheduler().cancel(key)


def document_tables(doc: QTextDocument) -> list[QTextTable]:
    """The tables of ``doc`` in document order (a table, then the tables inside it)."""
    frames: list[QTextFrame] = []
    pending = list(doc.rootFrame().childFrames())
    while pending:
        frame = pending.pop(0)
        frames.append(frame)
        pending[:0] = frame.childFrames()
    return [f for f in frames if isinstance(f, QTextTable)]


class MarkdownView(QTextBrowser):
    """A read-only rich-text view (``messageBody``) that fits its height to its content.

    Attributes:
        copy_message: called by the context menu's "Copy message (Markdown)" entry; the entry is
            only shown when it is set.
        colourer: colours the code blocks shown (``desktop.ui.markdown.colour``), a slice per frame.
        resize_relayouts_skipped: first resizes that needed no new layout (already at the width).
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("messageBody")
        self.setOpenLinks(False)
        self.setOpenExternalLinks(False)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse
            | Qt.TextInteractionFlag.TextSelectableByKeyboard
            | Qt.TextInteractionFlag.LinksAccessibleByMouse
            | Qt.TextInteractionFlag.LinksAccessibleByKeyboard
        )
        self.document().setDocumentMargin(1)
        self.document().setUndoRedoEnabled(False)
        self.viewport().setAutoFillBackground(False)
        self.anchorClicked.connect(open_link)
        self.document().documentLayout().documentSizeChanged.connect(self._fit)
        self.copy_message: Callable[[], None] | None = None
        self._css = ""
        self._html: str | None = None
        self._langs: tuple[str, ...] = ()
        self.resize_relayouts_skipped = 0
        self.colourer = CodeColourer(self.document())
        self.destroyed.connect(partial(_forget, self.colourer, ("colour", id(self))))
        self._top_gap = 0
        self._edge_to_edge = False
        self._codes: list[tuple[int, str]] = []  # (table index in document order, raw code)
        self.copy_buttons: list[QToolButton] = []
        self.setFixedHeight(self._height_for(0.0))

    def loadResource(self, type: int, name: QUrl | str) -> object:  # noqa: A002,N802 - Qt signature
        """Refuse every resource request.

        Returns:
            An empty (but valid) value: returning nothing would make ``QTextDocument`` fall back
            to reading local files itself.
        """
        return QByteArray()

    def set_markdown(self, text: str, theme: MarkdownTheme) -> None:
        """Render ``text`` as Markdown (replacing what is shown)."""
        blocks = render_markdown_blocks(text, theme, spans=False)
        self.set_html(
            "".join(b.html for b in blocks),
            theme,
            tuple(t for b in blocks for t in b.tables),
            tuple(lang for b in blocks for lang in b.langs),
            tuple(c for b in blocks for c in (b.copies or b.tables)),
        )

    def set_edge_to_edge(self, edge_to_edge: bool) -> None:
        """Show the text with no margin around it: the pieces of a long code block, stacked, then
        read as one block."""
        if edge_to_edge != self._edge_to_edge:
            self._edge_to_edge = edge_to_edge
            self.document().setDocumentMargin(0 if edge_to_edge else 1)
            self._fit()

    def set_html(
        self,
        html: str,
        theme: MarkdownTheme,
        tables: tuple[str | None, ...] = (),
        langs: tuple[str, ...] = (),
        copies: tuple[str | None, ...] = (),
    ) -> None:
        """Show rendered Markdown ``html`` (nothing is done when the same is already shown).

        Args:
            html: Qt rich text from ``desktop.ui.markdown.render``.
            theme: the theme it was rendered with (sets the document's style sheet).
            tables: ``MarkdownBlock.tables`` of what ``html`` holds: each code block gets a Copy
                button copying its raw code.
            langs: ``MarkdownBlock.langs`` of what ``html`` holds: each code block with a language
                is coloured with text formats (``highlight_runs``; the HTML holds it uncoloured).
            copies: ``MarkdownBlock.copies``: what each table's Copy button copies instead of
                ``tables`` (None: no button); empty: ``tables``.
        """
        css = document_css(theme)
        if css == self._css and html == self._html and langs == self._langs:
            return
        if css != self._css:
            self.document().setDefaultStyleSheet(css)
            self._css = css
        self._html = html
        # Latin-only text is laid out without shaping, ~30 % faster (``desktop.ui.markdown.shaping``).
        font = layout_font(self.font(), shaped=needs_shaping(html))
        if font != self.document().defaultFont():
            self.document().clear()  # not laid out again in the new font just before being replaced
            self.document().setDefaultFont(font)
        # Lay the text out at the width the view has (or was given before it is shown): Qt would
        # otherwise lay it out unwrapped now and again at the real width when the view is shown.
        width = self.width() - 2 * self.frameWidth()
        sized = self.isVisible() or self.testAttribute(Qt.WidgetAttribute.WA_Resized)
        if sized and width > 0 and self.document().textWidth() != width:
            self.document().setTextWidth(width)
        self.setHtml(html)
        self._langs = langs
        self.colourer.start(document_tables(self.document()) if any(langs) else [], tables, langs, theme.dark)
        self._colour()
        copied = copies or tables
        self._set_copy_buttons([(i, code) for i, code in enumerate(copied) if code is not None])

    def release(self) -> None:
        """Drop the text and its layout (the view is hidden far away); ``set_html`` shows it again."""
        self.colourer.stop()
        frame_scheduler().cancel(("colour", id(self)))
        self._html = None
        self._langs = ()
        self.document().clear()  # the Copy buttons hide: the document has no code block left

    def _colour(self) -> None:
        """Colour code for ``COLOUR_SLICE`` seconds; what is left waits for the next frame."""
        frames = frame_scheduler()
        key = ("colour", id(self))
        budget = COLOUR_SLICE
        shared = tick_deadline()  # inside a tick: what is left of the budget all nodes share
        if shared is not None:
            budget = max(0.0, min(budget, shared - time.perf_counter()))
        if self.colourer.busy and self.colourer.step(budget):
            frames.request(key, self._colour, background=True)
        else:
            frames.cancel(key)

    def _set_copy_buttons(self, codes: list[tuple[int, str]]) -> None:
        self._codes = codes
        buttons = self.copy_buttons
        while len(buttons) < len(codes):
            button = QToolButton(self.viewport())
            button.setObjectName("copyCodeButton")
            button.setText("Copy")
            button.setToolTip("Copy this code")
            button.setAccessibleName("Copy code")
            button.setCursor(Qt.CursorShape.PointingHandCursor)
            button.clicked.connect(lambda _=False, b=button: self._copy_code(b))
            buttons.append(button)
        for button in buttons[len(codes) :]:
            button.hide()
            button.deleteLater()
        del buttons[len(codes) :]
        self._place_copy_buttons()

    def _copy_code(self, button: QToolButton) -> None:
        if button in self.copy_buttons:
            copy_to_clipboard(self.code_for(button))
            self._label_copy_button(button, "Copied")  # what the click did, for a moment
            call_later(button, COPIED_MS, lambda: self._label_copy_button(button, "Copy"))

    def _label_copy_button(self, button: QToolButton, text: str) -> None:
        button.setText(text)
        self._place_copy_buttons()  # its width changed: still flush with the block's right edge

    def code_for(self, button: QToolButton) -> str:
        """The raw code a Copy button copies."""
        return self._codes[self.copy_buttons.index(button)][1]

    def _place_copy_buttons(self) -> None:
        """Put each Copy button at the top right of its code block (after every layout change)."""
        if not self.copy_buttons:
            return
        tables = document_tables(self.document())
        layout = self.document().documentLayout()
        for button, (index, _code) in zip(self.copy_buttons, self._codes, strict=True):
            if index >= len(tables):
                button.hide()
                continue
            rect = layout.frameBoundingRect(tables[index])
            width = button.sizeHint().width()
            right = min(int(rect.right()), self.viewport().width() - 1)
            button.setGeometry(right - width - 6, int(rect.top()) + 3, width, _COPY_BUTTON_HEIGHT)
            button.show()

    def set_top_gap(self, pixels: int) -> None:
        """Empty space above the text (separates it from the block before it)."""
        if pixels != self._top_gap:
            self._top_gap = pixels
            self.setViewportMargins(0, pixels, 0, 0)
            self._fit()

    def _height_for(self, doc_height: float) -> int:
        edge = 0 if getattr(self, "_edge_to_edge", False) else 2
        return int(doc_height + 0.999) + 2 * self.frameWidth() + edge + getattr(self, "_top_gap", 0)

    def _fit(self, size: object = None) -> None:
        h = self._height_for(self.document().size().height())
        if h != self.height():
            self.setFixedHeight(h)
        self._place_copy_buttons()

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt override
        """Re-wrap, then move the Copy buttons with their code blocks.

        The first resize event (delivered when the view is shown, with no old size) lays the whole
        document out again in ``QTextEdit`` even when ``set_html`` already laid it out at this
        very width: then only the frame's handling runs.
        """
        if event.oldSize().width() < 0 and self.document().textWidth() == self.viewport().width():
            QFrame.resizeEvent(self, event)
            self.resize_relayouts_skipped += 1
            log.debug("shown at its layout's width: no relayout (%d)", self.resize_relayouts_skipped)
        else:
            super().resizeEvent(event)
        self._place_copy_buttons()

    def createMimeDataFromSelection(self) -> QMimeData:  # noqa: N802 - Qt override
        """What Copy puts on the clipboard: Qt's rich text, and plain text with the list markers and
        table tabs the reader sees (``desktop.ui.markdown.selection``)."""
        data = super().createMimeDataFromSelection()
        cursor = self.textCursor()
        if cursor.hasSelection():
            # Qt's mime data writes all its formats when one is first read: read one first, or
            # that would overwrite the text set here.
            data.html()
            data.setText(selection_text(self.document(), cursor.selectionStart(), cursor.selectionEnd()))
        return data

    def wheelEvent(self, event: QWheelEvent) -> None:  # noqa: N802 - Qt override
        """Let the transcript scroll: this view never scrolls itself."""
        event.ignore()

    def contextMenuEvent(self, event: QContextMenuEvent) -> None:  # noqa: N802 - Qt override
        """The standard menu plus "Copy message (Markdown)"."""
        menu = self.createStandardContextMenu(event.pos())
        if self.copy_message is not None:
            menu.addSeparator()
            action = menu.addAction("Copy message (Markdown)")
            action.triggered.connect(self.copy_message)
        menu.exec(event.globalPos())
        menu.deleteLater()

