"""The node's title: the field in its header (Enter keeps a rename, Escape cancels it) and the title a
node takes from its first message.

:class:`TitleField` (object name ``nodeTitle``) takes the keyboard focus only when clicked or asked
(Node → Rename, F2), never when a sub-window is activated or by Tab, so keys meant for the message box
never rename the node. Escape puts back the title it had when the rename began; Enter and Escape hand
the focus back (``done``). :func:`first_message_title` is the automatic title (``desktop.core.titles``).
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFocusEvent, QKeyEvent
from PySide6.QtWidgets import QLineEdit, QWidget

from desktop.core.chat.types import ChatMessage
from desktop.core.titles import auto_title, is_default_title

__all__ = ["TitleField", "first_message_title"]


class TitleField(QLineEdit):
    """The title field of a node's header (see the module doc).

    Signals:
        done(): Enter kept the rename or Escape cancelled it: the focus should go back to the input.
    """

    done = Signal()

    def __init__(self, title: str, parent: QWidget | None = None) -> None:
        super().__init__(title, parent)
        self._before = title
        self.setFocusPolicy(Qt.FocusPolicy.ClickFocus)  # never by Tab or a sub-window's activation

    def focusInEvent(self, event: QFocusEvent) -> None:  # noqa: N802 (Qt API)
        self._before = self.text()
        super().focusInEvent(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 (Qt API)
        key = event.key()
        if key == Qt.Key.Key_Escape:
            self.setText(self._before)  # cancelled: the editing-finished that follows changes nothing
            event.accept()
            self.done.emit()
            return
        super().keyPressEvent(event)
        if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            self._before = self.text()
            self.done.emit()


def first_message_title(title: str, messages: Sequence[ChatMessage], text: str) -> str | None:
    """The title a node takes as its first message ``text`` goes out, or None to keep ``title``.

    Only a node still called by its default title ("Chat", "Chat 2", ...) whose conversation holds no
    other user message is renamed (the user's own titles, imported and forked nodes keep theirs).
    """
    if not is_default_title(title) or sum(1 for m in messages if m.role == "user") > 1:
        return None
    return auto_title(text) or None
