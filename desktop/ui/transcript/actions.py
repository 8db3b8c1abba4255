"""The per-message action row: ``‹ k/n ›`` version switcher, Edit, Regenerate, Fork, and the inline editor.

A message view creates one ``MessageActions`` in its constructor and forwards its ``requested``
signal; the transcript forwards it again and the chat node applies it through
``desktop.core.chat.versions``. The row knows nothing of conversations: the node tells it what to
show (``set_versions``, ``set_busy``) and opens the editor with the message's text
(``open_editor``).

Actions (``requested(action, message_id, argument)``):

* ``"edit"``: the Edit button was clicked (the node answers with ``open_editor``);
* ``"edit_send"``: the inline editor was sent; the argument is the new text;
* ``"regenerate"``: the Regenerate button was clicked;
* ``"version"``: a switcher arrow was clicked; the argument is the wanted version (1-based);
* ``"fork"``: the Fork button was clicked.

The buttons are small flat text buttons in the palette's quiet text colour, so they do not
compete with the messages; the switcher only shows at a fork point.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeyEvent, QPalette
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

__all__ = ["MessageActions", "InlineEditor", "BUSY_TOOLTIP"]

BUSY_TOOLTIP = "Not while a response is running: wait for it to end, or stop it"
"""The tooltip of the edit, regenerate and version buttons while the node is busy."""

_SEND_TOOLTIP = "Send the edited message (Enter; Shift+Enter for a new line); the current version is kept"
_TOOLTIPS = {
    "editButton": "Edit this message and send it again (the current version is kept)",
    "regenerateButton": "Get a new answer (this one is kept as a version)",
    "prevVersionButton": "Previous version",
    "nextVersionButton": "Next version",
}


def _quiet(widget: QWidget) -> None:
    """Draw ``widget`` in the palette's placeholder (quiet) text colour, a little smaller."""
    pal = widget.palette()
    muted = pal.color(QPalette.ColorRole.PlaceholderText)
    for role in (QPalette.ColorRole.ButtonText, QPalette.ColorRole.WindowText):
        pal.setColor(role, muted)
    widget.setPalette(pal)
    font = widget.font()
    if font.pointSizeF() > 0:
        font.setPointSizeF(font.pointSizeF() * 0.9)
    widget.setFont(font)


class _EditorText(QPlainTextEdit):
    """The editor's text box, keyed like the main input: Enter (or Ctrl+Enter) sends, Shift+Enter
    inserts a new line, Esc cancels."""

    send = Signal()
    cancel = Signal()

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 - Qt override
        """Enter sends, Shift+Enter inserts a new line, Esc cancels; other keys edit."""
        key = event.key()
        if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            mods = event.modifiers()
            if mods & Qt.KeyboardModifier.ShiftModifier:
                self.textCursor().insertText("\n")
                return
            if not mods & Qt.KeyboardModifier.AltModifier:
                self.send.emit()
                return
        if key == Qt.Key.Key_Escape:
            self.cancel.emit()
            return
        super().keyPressEvent(event)


class InlineEditor(QFrame):
    """The inline editor of a user message (``messageEditorFrame``).

    Holds the text box (``messageEditor``), Send (``editSendButton``, also Enter like the main
    input; Shift+Enter inserts a new line) and Cancel (``editCancelButton``, also Esc).

    Signals:
        sent(str): Send with the edited text (never empty).
        cancelled(): Cancel or Esc.
    """

    sent = Signal(str)
    cancelled = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("messageEditorFrame")
        lay = QVBoxLayout(self)
        lay.setContentsMargins(48, 2, 0, 2)
        lay.setSpacing(4)
        self.text = _EditorText(self)
        self.text.setObjectName("messageEditor")
        self.text.setAccessibleName("Edit message")
        self.text.setTabChangesFocus(True)
        self.text.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.text.setFixedHeight(self.text.fontMetrics().lineSpacing() * 4 + 16)
        self.text.send.connect(self._send)
        self.text.cancel.connect(self.cancelled)
        lay.addWidget(self.text)
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addStretch(1)
        self.cancel_button = QPushButton("Cancel", self)
        self.cancel_button.setObjectName("editCancelButton")
        self.cancel_button.setToolTip("Keep the message as it is (Esc)")
        self.cancel_button.setAutoDefault(False)
        self.cancel_button.clicked.connect(self.cancelled)
        self.send_button = QPushButton("Send", self)
        self.send_button.setObjectName("editSendButton")
        self._busy = False
        self.send_button.setAutoDefault(False)
        self.send_button.clicked.connect(self._send)
        row.addWidget(self.cancel_button)
        row.addWidget(self.send_button)
        lay.addLayout(row)
        self.text.textChanged.connect(self._update_send)
        self._update_send()
        self.setVisible(False)

    def set_busy(self, busy: bool) -> None:
        """Refuse to send while the node runs (the Send button's tooltip says why)."""
        self._busy = busy
        self._update_send()

    def _update_send(self) -> None:
        self.send_button.setEnabled(not self._busy and bool(self.text.toPlainText().strip()))
        self.send_button.setToolTip(BUSY_TOOLTIP if self._busy else _SEND_TOOLTIP)

    def _send(self) -> None:
        text = self.text.toPlainText()
        if text.strip() and self.send_button.isEnabled():
            self.sent.emit(text)


class MessageActions(QWidget):
    """The action row of one message (object name ``messageActions``).

    Args:
        message_id: The message the row acts on.
        role: Its role: ``user`` rows offer Edit, ``assistant`` rows Regenerate; every row offers
            Fork and shows the version switcher at a fork point.
        parent: The message view.
        place_editor: Puts the inline editor into the view when it is first opened.

    Signals:
        requested(str, str, str): ``(action, message_id, argument)``; see the module doc.
        editing_changed(bool): the inline editor opened (True) or closed (False).

    Attributes:
        editor: The inline editor (user rows only; built when first opened, placed by the view
            through ``place_editor``).
    """

    requested = Signal(str, str, str)
    editing_changed = Signal(bool)

    def __init__(
        self,
        message_id: str,
        role: str,
        parent: QWidget | None = None,
        place_editor: Callable[[InlineEditor], None] | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("messageActions")
        self.message_id = message_id
        self._place_editor = place_editor
        self._k = 1
        self._n = 1
        self._busy = False
        lay = self._lay = QHBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(0)
        # The switcher is built at the first fork point (``_switcher``): most messages never have one.
        self.prev_button: QToolButton | None = None
        self.version_label: QLabel | None = None
        self.next_button: QToolButton | None = None
        self.edit_button: QToolButton | None = None
        self.regenerate_button: QToolButton | None = None
        self.editor: InlineEditor | None = None
        if role == "user":
            self.edit_button = self._button("editButton", "Edit", "Edit message")
            self.edit_button.clicked.connect(lambda: self.requested.emit("edit", self.message_id, ""))
            lay.addWidget(self.edit_button)
        elif role == "assistant":
            self.regenerate_button = self._button("regenerateButton", "Regenerate", "Regenerate answer")
            self.regenerate_button.clicked.connect(
                lambda: self.requested.emit("regenerate", self.message_id, "")
            )
            lay.addWidget(self.regenerate_button)
        self.fork_button = self._button("forkButton", "Fork", "Fork into a new node")
        self.fork_button.setToolTip("Open a new node with the conversation up to this message")
        self.fork_button.clicked.connect(lambda: self.requested.emit("fork", self.message_id, ""))
        lay.addWidget(self.fork_button)
        self._update()

    def _button(self, name: str, text: str, accessible: str) -> QToolButton:
        button = QToolButton(self)
        button.setObjectName(name)
        button.setText(text)
        button.setAccessibleName(accessible)
        button.setAutoRaise(True)
        button.setCursor(Qt.CursorShape.PointingHandCursor)
        button.setFocusPolicy(Qt.FocusPolicy.TabFocus)
        _quiet(button)
        return button

    # -- state set by the node

    def set_versions(self, k: int, n: int) -> None:
        """Show ``‹ k/n ›`` (hidden when ``n`` is 1)."""
        self._k, self._n = k, n
        self._update()

    def versions(self) -> tuple[int, int]:
        """The ``(k, n)`` shown."""
        return self._k, self._n

    def set_busy(self, busy: bool) -> None:
        """Disable edit, regenerate and switching while the node runs (the tooltips say why)."""
        if busy != self._busy:
            self._busy = busy
            self._update()

    def _switcher(self) -> tuple[QToolButton, QLabel, QToolButton]:
        """The ``‹ k/n ›`` switcher at the row's start, built the first time it is needed."""
        if self.prev_button is None or self.version_label is None or self.next_button is None:
            self.prev_button = self._button("prevVersionButton", "‹", "Previous version")
            self.version_label = QLabel(self)
            self.version_label.setObjectName("versionLabel")
            self.version_label.setAccessibleName("Version")
            _quiet(self.version_label)
            self.next_button = self._button("nextVersionButton", "›", "Next version")
            self.prev_button.clicked.connect(lambda: self._go(self._k - 1))
            self.next_button.clicked.connect(lambda: self._go(self._k + 1))
            for i, w in enumerate((self.prev_button, self.version_label, self.next_button)):
                self._lay.insertWidget(i, w)
        return self.prev_button, self.version_label, self.next_button

    def _update(self) -> None:
        at_fork = self._n > 1
        if at_fork or self.prev_button is not None:
            prev, label, next_ = self._switcher()
            label.setText(f"{self._k}/{self._n}")
            label.setToolTip(f"Version {self._k} of {self._n}")
            for w in (prev, label, next_):
                if w.isVisibleTo(self) != at_fork:
                    w.setVisible(at_fork)
            prev.setEnabled(not self._busy and self._k > 1)
            next_.setEnabled(not self._busy and self._k < self._n)
        for button in (self.edit_button, self.regenerate_button, self.prev_button, self.next_button):
            if button is not None:
                button.setToolTip(BUSY_TOOLTIP if self._busy else _TOOLTIPS[button.objectName()])
        for button in (self.edit_button, self.regenerate_button):
            if button is not None:
                button.setEnabled(not self._busy)
        if self.editor is not None:
            self.editor.set_busy(self._busy)

    def _go(self, k: int) -> None:
        if not self._busy and 1 <= k <= self._n and k != self._k:
            self.requested.emit("version", self.message_id, str(k))

    # -- the inline editor

    def _make_editor(self) -> InlineEditor | None:
        """The inline editor, built the first time it is opened (most messages are never edited:
        its eight widgets would cost every user message's build)."""
        if self.editor is None and self.edit_button is not None:
            self.editor = InlineEditor(self.parentWidget())
            self.editor.sent.connect(self._on_sent)
            self.editor.cancelled.connect(self.close_editor)
            self.editor.set_busy(self._busy)
            if self._place_editor is not None:
                self._place_editor(self.editor)
        return self.editor

    def open_editor(self, text: str) -> None:
        """Show the inline editor with ``text`` selected and focused (user rows only)."""
        if self._busy:
            return
        editor = self._make_editor()
        if editor is None:
            return
        editor.text.setPlainText(text)
        editor.text.selectAll()
        editor.setVisible(True)
        editor.text.setFocus()
        if self.edit_button is not None:
            self.edit_button.setVisible(False)  # the editor is open: nothing more to click here
        self.editing_changed.emit(True)

    def close_editor(self) -> None:
        """Hide the inline editor (the message is shown again)."""
        if self.editor is not None and self.editor.isVisibleTo(self.editor.parentWidget() or self.editor):
            self.editor.setVisible(False)
            if self.edit_button is not None:
                self.edit_button.setVisible(True)
            self.editing_changed.emit(False)

    def _on_sent(self, text: str) -> None:
        if self._busy:
            return
        self.close_editor()
        self.requested.emit("edit_send", self.message_id, text)
