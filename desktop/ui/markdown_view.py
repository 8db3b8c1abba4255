"""``MarkdownView``: the read-only rich-text view of rendered Markdown, and the link/clipboard helpers.

The view fits its height to its content, never scrolls itself (the transcript scrolls) and loads
no resources: no images, no style sheets, no remote or local files. Clicked links open in the
system browser only when ``desktop.ui.markdown.safe_link`` accepts them.

``CodeBlockView`` shows one code block: its language, a **Copy** button (``copyCodeButton``) that
copies the raw code, and the highlighted code in a ``MarkdownView``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from PySide6.QtCore import QByteArray, Qt, QUrl
from PySide6.QtGui import QContextMenuEvent, QDesktopServices, QGuiApplication, QWheelEvent
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QSizePolicy,
    QTextBrowser,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from desktop.ui.markdown import MarkdownTheme, document_css, render_markdown, safe_link

log = logging.getLogger(__name__)

__all__ = ["MarkdownView", "CodeBlockView", "open_link", "copy_to_clipboard"]


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


class CodeBlockView(QFrame):
    """One code block (``codeBlock``): language label, Copy button, highlighted code.

    Attributes:
        code: the raw code shown (what Copy puts on the clipboard).
        lang: the fence's language ("" when none).
        copy_button: the ``copyCodeButton``.
        body: the ``MarkdownView`` (``codeBody``) showing the highlighted code.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("codeBlock")
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.code = ""
        self.lang = ""
        self._top_gap = 0
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.setSpacing(0)
        self._frame = QFrame(self)
        self._frame.setObjectName("codeFrame")
        outer.addWidget(self._frame)
        lay = QVBoxLayout(self._frame)
        lay.setContentsMargins(8, 4, 8, 8)
        lay.setSpacing(2)
        head = QHBoxLayout()
        head.setContentsMargins(0, 0, 0, 0)
        self.lang_label = QLabel(self._frame)
        self.lang_label.setObjectName("codeLang")
        self.copy_button = QToolButton(self._frame)
        self.copy_button.setObjectName("copyCodeButton")
        self.copy_button.setText("Copy")
        self.copy_button.setToolTip("Copy this code")
        self.copy_button.setAccessibleName("Copy code")
        self.copy_button.setCursor(Qt.CursorShape.PointingHandCursor)
        self.copy_button.clicked.connect(self.copy_code)
        head.addWidget(self.lang_label)
        head.addStretch(1)
        head.addWidget(self.copy_button)
        lay.addLayout(head)
        self.body = MarkdownView(self._frame)
        self.body.setObjectName("codeBody")
        lay.addWidget(self.body)

    @property
    def copy_message(self) -> Callable[[], None] | None:
        """The context menu's "Copy message (Markdown)" action (handed to the code's view)."""
        return self.body.copy_message

    @copy_message.setter
    def copy_message(self, action: Callable[[], None] | None) -> None:
        self.body.copy_message = action

    def set_code(self, code: str, lang: str, pre_html: str, theme: MarkdownTheme) -> None:
        """Show ``code`` (raw, for Copy) as ``pre_html`` (its rendering by ``highlight_code``)."""
        self.code = code
        if lang != self.lang:
            self.lang = lang
            self.lang_label.setText(lang)
        self.lang_label.setVisible(bool(lang))
        self.body.set_html(pre_html, theme)

    def copy_code(self) -> None:
        """Put the raw code on the clipboard (no fence, no formatting)."""
        copy_to_clipboard(self.code)

    def set_top_gap(self, pixels: int) -> None:
        """Empty space above the block (separates it from the block before it)."""
        if pixels != self._top_gap:
            self._top_gap = pixels
            self.setContentsMargins(0, pixels, 0, 0)

    def toPlainText(self) -> str:  # noqa: N802 - Qt naming, read by tests and accessibility
        """The language line (when there is one) and the code, as shown."""
        code = self.body.toPlainText()
        return f"{self.lang}\n{code}" if self.lang else code

    def text(self) -> str:
        """Same as ``toPlainText()``."""
        return self.toPlainText()
