"""The chat node's input box: Enter sends, Shift+Enter inserts a newline, "/" completes commands (the
popup lists each command with its description), Up in the empty box edits the last user message. Files
dropped on it or pasted into it (copied files, or image data: a screenshot) are handed to the node as
attachments, never inserted as text; Backspace in the empty box takes the last attachment off."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QMimeData, Qt, Signal
from PySide6.QtGui import (
    QDragEnterEvent,
    QDragMoveEvent,
    QDropEvent,
    QImage,
    QInputMethodEvent,
    QKeyEvent,
    QPalette,
    QStandardItem,
    QStandardItemModel,
    QTextCursor,
)
from PySide6.QtWidgets import QAbstractItemView, QCompleter, QPlainTextEdit, QSizePolicy, QTreeView, QWidget

from desktop.core.chat.commands import COMMAND_HELP

__all__ = ["ChatInput", "SLASH_COMPLETIONS", "local_files"]

SLASH_COMPLETIONS: tuple[tuple[str, str], ...] = COMMAND_HELP

_MIN_LINES = 2
_MAX_LINES = 10


def local_files(mime: QMimeData | None) -> list[Path]:
    """The local files ``mime`` carries as URLs (copied or dragged files), in order."""
    if mime is None or not mime.hasUrls():
        return []
    return [Path(url.toLocalFile()) for url in mime.urls() if url.isLocalFile() and url.toLocalFile()]


def _pasted_image(mime: QMimeData) -> QImage | bytes | None:
    """Image data a paste should attach: a decoded image, raw PNG bytes, or None (text wins when the
    clipboard has text too: a spreadsheet's cells come with a picture of themselves)."""
    if mime.hasText():
        return None
    if mime.hasImage():
        image = mime.imageData()
        if isinstance(image, QImage) and not image.isNull():
            return image
    if "image/png" in mime.formats():
        data = bytes(mime.data("image/png").data())
        return data or None
    return None


class ChatInput(QPlainTextEdit):
    """Multi-line message editor (object name ``chatInput``).

    Signals:
        submitted(str): Enter was pressed (without Shift) with this text; the owner decides
            whether to accept it and clears the box with ``clear()``.
        edit_last_requested(): Up was pressed in the empty box: edit the last user message.
        files_attached(list): files were dropped or pasted: their paths.
        image_pasted(object): image data was pasted: a ``QImage``, or PNG ``bytes``.
        remove_last_requested(): Backspace in the empty box: take the last attachment off.
    """

    submitted = Signal(str)
    edit_last_requested = Signal()
    files_attached = Signal(list)
    image_pasted = Signal(object)
    remove_last_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("chatInput")
        self.setAccessibleName("Message")
        self.setPlaceholderText("Message…  (Enter to send, Shift+Enter for a new line, / for commands)")
        self.setTabChangesFocus(True)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.document().setDocumentMargin(2)
        self._completer = QCompleter(self)
        self._model = QStandardItemModel(0, 2, self._completer)  # the command, then what it does
        for name, help_text in SLASH_COMPLETIONS:
            command, description = QStandardItem(name), QStandardItem(help_text)
            for item in (command, description):
                item.setToolTip(help_text)
                item.setEditable(False)
            self._model.appendRow([command, description])
        self._completer.setModel(self._model)
        self._completer.setCompletionColumn(0)
        popup = QTreeView()
        popup.setObjectName("slashPopup")
        popup.setHeaderHidden(True)
        popup.setRootIsDecorated(False)
        popup.setUniformRowHeights(True)
        popup.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        popup.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self._completer.setPopup(popup)  # after the model: it shows both columns
        self._completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self._completer.setCompletionMode(QCompleter.CompletionMode.PopupCompletion)
        self._completer.setWidget(self)
        self._completer.activated.connect(self._insert_completion)
        self.textChanged.connect(self._fit)
        self.textChanged.connect(self._update_completion)
        self._fit()

    def completer(self) -> QCompleter:
        """The slash-command completer."""
        return self._completer

    def completion_visible(self) -> bool:
        """True while the completion popup is shown."""
        return self._popup().isVisible()

    def _popup(self) -> QAbstractItemView:
        """The completer's popup list (``slashPopup``); the completer creates it on first use."""
        popup = self._completer.popup()
        if popup is None:  # pragma: no cover - QCompleter.popup() always creates one
            raise RuntimeError("the slash-command completer has no popup")
        return popup

    # -- behaviour

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 - Qt override
        """Enter submits, Shift+Enter inserts a newline; keys drive the popup while it is open."""
        key = event.key()
        popup = self._popup()
        if popup.isVisible() and key in (
            Qt.Key.Key_Enter,
            Qt.Key.Key_Return,
            Qt.Key.Key_Escape,
            Qt.Key.Key_Tab,
            Qt.Key.Key_Backtab,
        ):
            if key == Qt.Key.Key_Escape:
                popup.hide()
                return
            index = popup.currentIndex()
            if index.isValid():
                self._insert_completion(str(index.siblingAtColumn(0).data()))
            else:
                completion = self._completer.currentCompletion()
                if completion:
                    self._insert_completion(completion)
            popup.hide()
            return
        if key == Qt.Key.Key_Up and not self.toPlainText() and not event.modifiers():
            self.edit_last_requested.emit()
            return
        if key == Qt.Key.Key_Backspace and not self.toPlainText() and not event.modifiers():
            self.remove_last_requested.emit()
            return
        if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            mods = event.modifiers()
            if mods & Qt.KeyboardModifier.ShiftModifier:
                self.textCursor().insertText("\n")
                return
            if not mods & (Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.AltModifier):
                self.submitted.emit(self.toPlainText())
                return
        super().keyPressEvent(event)
        self._echo()

    # -- attachments: paste and drop (the node decides what to do with them)

    def canInsertFromMimeData(self, source: QMimeData) -> bool:  # noqa: N802 - Qt override
        """Copied files and image data can be pasted too."""
        if local_files(source) or _pasted_image(source) is not None:
            return True
        return super().canInsertFromMimeData(source)

    def insertFromMimeData(self, source: QMimeData) -> None:  # noqa: N802 - Qt override
        """Ctrl+V: copied files and image data become attachments; text is inserted as usual."""
        files = local_files(source)
        if files:
            self.files_attached.emit(files)
            return
        image = _pasted_image(source)
        if image is not None:
            self.image_pasted.emit(image)
            return
        super().insertFromMimeData(source)

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:  # noqa: N802 - Qt override
        """Files dragged over the box may be dropped (as attachments)."""
        if local_files(event.mimeData()):
            event.acceptProposedAction()
        else:
            super().dragEnterEvent(event)

    def dragMoveEvent(self, event: QDragMoveEvent) -> None:  # noqa: N802 - Qt override
        """Keep accepting dragged files wherever they move over the box."""
        if local_files(event.mimeData()):
            event.acceptProposedAction()
        else:
            super().dragMoveEvent(event)

    def dropEvent(self, event: QDropEvent) -> None:  # noqa: N802 - Qt override
        """Dropped files become attachments (not their paths as text)."""
        files = local_files(event.mimeData())
        if files:
            event.acceptProposedAction()
            self.files_attached.emit(files)
        else:
            super().dropEvent(event)

    def inputMethodEvent(self, event: QInputMethodEvent) -> None:  # noqa: N802 - Qt override
        """Composed text (IME) is echoed at once, like typed keys."""
        super().inputMethodEvent(event)
        self._echo()

    def _echo(self) -> None:
        """Paint the box now, not at the window's next paint.

        While nodes stream, the window's next paint comes after their rendering slice and the
        network reads already waiting: a typed character would wait for all of that. Painting this
        small viewport synchronously shows it as soon as the key is handled (~0.3 ms).
        """
        if self.isVisible():
            self.viewport().repaint()

    def _insert_completion(self, completion: str) -> None:
        self.setPlainText(completion + " ")
        cursor = self.textCursor()
        cursor.movePosition(QTextCursor.MoveOperation.End)
        self.setTextCursor(cursor)
        self._popup().hide()

    def _update_completion(self) -> None:
        text = self.toPlainText()
        popup = self._popup()
        if text.startswith("/") and " " not in text and "\n" not in text and self.hasFocus():
            self._completer.setCompletionPrefix(text)
            if self._completer.completionCount() > 0 and text not in {n for n, _ in SLASH_COMPLETIONS}:
                self._mute_descriptions()
                rect = self.cursorRect()
                names = popup.sizeHintForColumn(0) + 18
                if isinstance(popup, QTreeView):
                    popup.setColumnWidth(0, names)
                rect.setWidth(min(max(280, names + popup.sizeHintForColumn(1) + 24), max(280, self.width())))
                self._completer.complete(rect)
                popup.setCurrentIndex(self._completer.completionModel().index(0, 0))
                return
        if popup.isVisible():
            popup.hide()

    def _mute_descriptions(self) -> None:
        """The descriptions in the palette's quiet text colour (the scheme may have changed)."""
        color = self.palette().color(QPalette.ColorRole.PlaceholderText)
        for row in range(self._model.rowCount()):
            item = self._model.item(row, 1)
            if item is not None and item.foreground().color() != color:
                item.setForeground(color)

    def _fit(self) -> None:
        doc_lines = max(1, int(self.document().documentLayout().documentSize().height()))
        lines = min(max(doc_lines, _MIN_LINES), _MAX_LINES)
        line_h = self.fontMetrics().lineSpacing()
        margins = self.contentsMargins()
        h = lines * line_h + int(2 * self.document().documentMargin()) + margins.top() + margins.bottom() + 10
        if h != self.height():
            self.setFixedHeight(h)
