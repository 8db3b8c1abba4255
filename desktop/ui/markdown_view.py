"""``MarkdownView``: the read-only rich-text view of rendered Markdown, and the link/clipboard helpers.

The view fits its height to its content, never scrolls itself (the transcript scrolls) and loads
no resources: no images, no style sheets, no remote or local files. Clicked links open in the
system browser only when ``desktop.ui.markdown.safe_link`` accepts them.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from PySide6.QtCore import QByteArray, Qt, QUrl
from PySide6.QtGui import QContextMenuEvent, QDesktopServices, QGuiApplication, QWheelEvent
from PySide6.QtWidgets import QFrame, QSizePolicy, QTextBrowser, QWidget

from desktop.ui.markdown import MarkdownTheme, document_css, render_markdown, safe_link

log = logging.getLogger(__name__)

__all__ = ["MarkdownView", "open_link", "copy_to_clipboard"]


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


class MarkdownView(QTextBrowser):
    """A read-only rich-text view (``messageBody``) that fits its height to its content.

    Attributes:
        copy_message: called by the context menu's "Copy message (Markdown)" entry; the entry is
            only shown when it is set.
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
        self._top_gap = 0
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
        self.set_html(render_markdown(text, theme), theme)

    def set_html(self, html: str, theme: MarkdownTheme) -> None:
        """Show rendered Markdown ``html`` (nothing is done when the same is already shown)."""
        css = document_css(theme)
        if css == self._css and html == self._html:
            return
        if css != self._css:
            self.document().setDefaultStyleSheet(css)
            self._css = css
        self._html = html
        self.setHtml(html)

    def set_top_gap(self, pixels: int) -> None:
        """Empty space above the text (separates it from the block before it)."""
        if pixels != self._top_gap:
            self._top_gap = pixels
            self.setViewportMargins(0, pixels, 0, 0)
            self._fit()

    def _height_for(self, doc_height: float) -> int:
        return int(doc_height + 0.999) + 2 * self.frameWidth() + 2 + getattr(self, "_top_gap", 0)

    def _fit(self, size: object = None) -> None:
        h = self._height_for(self.document().size().height())
        if h != self.height():
            self.setFixedHeight(h)

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
