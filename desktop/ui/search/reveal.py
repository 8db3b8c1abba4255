"""Show one message of an open node: its version, built, scrolled into view, outlined briefly.

``reveal_message`` is what activating a search hit ends with. The window finds or opens the node first
(``window/search_flow``) and has the node's archive link load the archive when the hit is there.
"""

from __future__ import annotations

import logging

from desktop.ui.node.chat_node import ChatNodeWidget
from desktop.ui.node.find_bar import scroll_to_message

__all__ = ["reveal_message"]

log = logging.getLogger(__name__)


def reveal_message(node: ChatNodeWidget, message_id: str) -> bool:
    """Switch ``node`` to the version holding ``message_id`` (unless it is archived), build it, scroll
    it into view and outline it; False when the node does not have it (deleted since it was indexed)."""
    if node.transcript.view_for(message_id) is None and not node.versions.show_message(message_id):
        return False
    return scroll_to_message(node.transcript, message_id) is not None
