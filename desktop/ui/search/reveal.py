"""Show one message of an open node: its version, built, scrolled into view, highlighted briefly.

``reveal_message`` is what activating a search hit (or a find-bar match) ends with. The window
finds or opens the node first (``window/search_flow``); the archive's messages are loaded into the
transcript by the node's archive link before this runs.
"""

from __future__ import annotations

import logging

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QFrame, QWidget

from desktop.ui.node.chat_node import ChatNodeWidget

__all__ = ["FLASH_MS", "reveal_message", "flash"]

log = logging.getLogger(__name__)

FLASH_MS = 1600
"""How long a revealed message stays highlighted."""


def reveal_message(node: ChatNodeWidget, message_id: str) -> bool:
    """Switch ``node`` to the version holding ``message_id``, build it, scroll it into view and
    highlight it; False when the node does not have it (deleted since it was indexed)."""
    if not node.versions.show_message(message_id):
        return False
    transcript = node.transcript
    view = transcript.view_for(message_id)
    while view is None and transcript.unloaded_count() > 0:
        transcript.load_older(budget=None)
        view = transcript.view_for(message_id)
    if view is None:
        return False
    content = transcript.widget()
    if content is not None:
        content.adjustSize()
    transcript.ensureWidgetVisible(view, 0, max(0, (transcript.viewport().height() - view.height()) // 2))
    flash(view)
    return True


def flash(view: QWidget) -> None:
    """Outline ``view`` for ``FLASH_MS`` (object name ``searchHighlight``, transparent to the mouse)."""
    mark = QFrame(view)
    mark.setObjectName("searchHighlight")
    mark.setStyleSheet("#searchHighlight { border: 2px solid #f0b400; border-radius: 6px;"
                       " background: rgba(255, 214, 64, 40); }")
    mark.setGeometry(view.rect())
    mark.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents, True)
    mark.show()
    mark.raise_()
    QTimer.singleShot(FLASH_MS, mark.deleteLater)
