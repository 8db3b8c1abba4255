"""The history archive, reachable: "N earlier messages in the history archive — show".

Once a node reaches the history cap, its older messages move to ``.chatnodes/archive/`` and a note
(``core.archive.archive_note_count``) takes their place. ``ArchiveLink`` shows a link above the
transcript of such a node (object name ``archiveLink``); clicking it reads the archive and builds its
messages on top of the transcript, read-only (they are not in the conversation: nothing is sent or
saved again), ``PAGE`` messages per frame tick from the newest archived one up, the content under the
eye anchored, so the user can scroll back to the very first message. ``load_all`` does it at once (a
search hit in the archive).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QLabel, QWidget

from desktop.core.chat.conversation import Conversation
from desktop.core.chat.types import ChatMessage
from desktop.core.store import archive_note_count

if TYPE_CHECKING:  # start-up: the transcript room loads after the first paint
    from desktop.ui.transcript.transcript import Transcript

__all__ = ["ArchiveLink", "PAGE"]

log = logging.getLogger(__name__)

PAGE = 25
"""Archived messages built per frame tick."""
_LEAD = 4  # the note follows the system messages: it is among the first few


class ArchiveLink(QLabel):
    """The link to a node's archived messages, and their paging into the transcript.

    Args:
        parent: The node.
        conversation: Returns the node's conversation.
        transcript: Returns the node's transcript.
        read_archive: Reads the node's archived messages (oldest first), or None (no project).
    """

    def __init__(self, parent: QWidget, conversation: Callable[[], Conversation],
                 transcript: Callable[[], Transcript],
                 read_archive: Callable[[], list[ChatMessage]] | None) -> None:
        super().__init__(parent)
        self.setObjectName("archiveLink")
        self.setContentsMargins(10, 4, 10, 4)
        self.setAccessibleName("Show the archived messages")
        self._conversation = conversation
        self._transcript = transcript
        self._read = read_archive
        self._pending: list[ChatMessage] = []
        self._loaded_first: str | None = None  # the oldest archived message built
        self._timer = QTimer(self)
        self._timer.setInterval(0)
        self._timer.timeout.connect(self._next_page)
        self.linkActivated.connect(lambda _link: self.load())
        self.hide()

    def archived_count(self) -> int:
        """How many messages the conversation's archive note says were archived (0: none)."""
        return max((archive_note_count(m) for m in self._conversation().messages[:_LEAD]), default=0)

    def is_loaded(self) -> bool:
        """The archived messages are (being) built into the transcript."""
        if self._pending:
            return True
        first = self._loaded_first
        return first is not None and self._transcript().view_for(first) is not None

    def refresh(self) -> None:
        """Show the link when the node has archived messages that are not shown."""
        count = self.archived_count()
        if count and self._read is not None and not self.is_loaded():
            s = "s" if count != 1 else ""
            self.setText(f'{count} earlier message{s} in the history archive — <a href="show">show</a>')
            self.show()
        else:
            self.hide()

    def load(self) -> bool:
        """Read the archive and page its messages into the transcript (a page per frame tick)."""
        if self._read is None or self.is_loaded():
            return False
        try:
            messages = self._read()
        except Exception as exc:  # noqa: BLE001 - a damaged archive is reported, never raised
            log.warning("could not read the history archive: %s", exc)
            self.setText(f"The history archive could not be read: {exc}")
            return False
        if not messages:
            self.hide()
            return False
        self._pending = list(messages)
        self._loaded_first = messages[0].id
        self.setText("Loading the history archive…")
        self._timer.start()
        return True

    def load_all(self) -> None:
        """Build every archived message now (a search hit there must be shown at once)."""
        if not self._pending:
            self.load()
        self._timer.stop()
        if self._pending:
            self._transcript().prepend_archived(self._pending)
            self._pending = []
        self.hide()

    def _next_page(self) -> None:
        page, self._pending = self._pending[-PAGE:], self._pending[:-PAGE]
        self._transcript().prepend_archived(page)
        if not self._pending:
            self._timer.stop()
            self.hide()
