"""The bottom of a chat node: the budget card, the input bar (paperclip, input box, Send/Stop) and
what Enter and Send do with the text.

:class:`NodeInputBar` belongs to one ``ChatNodeWidget``. It lays out the budget card
(``money.budget_card.BudgetCard``) and the input bar (object name ``inputBar``) at the end of the
node's layout and hands the input row to the attachments (``NodeAttachments.place``: the paperclip,
the chips above the bar). Enter or Send submits the input's text: a slash command runs locally
(``NodeCommands``); a message waits while a run is in progress or a spent budget holds it; with
attachments pending, ``attach`` stores them first and sends; otherwise the node sends it
(``ChatNodeWidget.send_message``). While a run is in progress Send becomes Stop.

The bar is handed its node as an :class:`InputBarHost` (what it needs of it), not the node's class:
the node's module imports this one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QHBoxLayout, QPushButton, QVBoxLayout

from desktop.core.chat.conversation import detect_slash_command
from desktop.ui.money.budget_card import BudgetCard
from desktop.ui.node.input import ChatInput

if TYPE_CHECKING:
    from desktop.core.chat.attachment_ref import AttachmentRef
    from desktop.ui.node.attach import NodeAttachments
    from desktop.ui.node.commands import NodeCommands
    from desktop.ui.services import AppServices

__all__ = ["InputBarHost", "NodeInputBar"]


class InputBarHost(Protocol):
    """What :class:`NodeInputBar` needs of its node (a ``ChatNodeWidget``; a Protocol, so this module
    does not import the node's module back)."""

    @property
    def commands(self) -> NodeCommands: ...
    @property
    def attach(self) -> NodeAttachments: ...
    def is_closed(self) -> bool: ...
    def is_busy(self) -> bool: ...
    def stop(self) -> None: ...
    def send_message(self, text: str, attachments: Sequence[AttachmentRef] = ()) -> None: ...


class NodeInputBar:
    """The budget card, the input bar and the submitting of one chat node (see the module docstring).

    Args:
        node: The node.
        services: The app's services (the budget check, the budget settings).
        layout: The node's layout, installed on it (the layout's widget, the node, is the parent of
            the card and the bar); the card and the bar take the next positions in it.
    """

    def __init__(self, node: InputBarHost, services: AppServices, layout: QVBoxLayout) -> None:
        self._node = node
        parent = layout.parentWidget()
        if parent is None:
            raise ValueError("the layout must be installed on the node")
        self.budget_card = BudgetCard(services.budget_check, parent)
        self.budget_card.send_anyway.connect(self._on_send_clicked)
        if services.open_budget_settings is not None:
            self.budget_card.open_settings.connect(services.open_budget_settings)
        layout.addWidget(self.budget_card)
        bar = QFrame(parent)
        bar.setObjectName("inputBar")
        row = QHBoxLayout(bar)
        row.setContentsMargins(10, 8, 10, 10)
        row.setSpacing(8)
        self.chat_input = ChatInput(bar)
        self.chat_input.submitted.connect(self._on_input_submitted)
        row.addWidget(self.chat_input, 1)
        node.attach.place(layout, bar, row, self.chat_input)
        self.send_button = QPushButton("Send", bar)
        self.send_button.setObjectName("sendButton")
        self.send_button.setAutoDefault(False)
        self.send_button.setCursor(Qt.CursorShape.PointingHandCursor)
        self.send_button.setProperty("busy", False)
        self.send_button.clicked.connect(self._on_send_clicked)
        row.addWidget(self.send_button, 0, Qt.AlignmentFlag.AlignBottom)
        layout.addWidget(bar)

    def submit(self, text: str) -> bool:
        """Run ``text``: a slash command, or a message to send.

        Args:
            text: What the user typed.

        Returns:
            True when it was accepted (the input box may be cleared); False when nothing ran, or when
            pending attachments are being stored (``attach`` sends and clears the box itself).
        """
        node = self._node
        if node.is_closed() or not (text.strip() or node.attach.has_pending()):
            return False
        command = detect_slash_command(text)
        if command is not None:
            node.commands.run(command)
            return True
        if node.is_busy() or not self.budget_card.allows_send():
            return False
        if node.attach.has_pending():
            node.attach.send(text)
            return False
        node.send_message(text)
        return True

    def show_busy(self, busy: bool) -> None:
        """Show whether a run is in progress: Send becomes Stop (re-polished only on a change, ~0.5 ms)."""
        button = self.send_button
        if button.property("busy") == busy:
            return
        button.setText("Stop" if busy else "Send")
        button.setToolTip("Stop the response" if busy else "Send (Enter)")
        button.setProperty("busy", busy)
        button.style().unpolish(button)
        button.style().polish(button)

    def _on_input_submitted(self, text: str) -> None:
        if self.submit(text):
            self.chat_input.clear()

    def _on_send_clicked(self) -> None:
        if self._node.is_busy():
            self._node.stop()
            return
        if self.submit(self.chat_input.toPlainText()):
            self.chat_input.clear()
        self.chat_input.setFocus()
