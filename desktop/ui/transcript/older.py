"""The messages above the built ones: how many are left, the link to them, and building them on top.

A transcript builds its newest messages first; the older ones are built on demand, above the
others: a batch when the user clicks "load more" or a search needs one (``OlderMessages.load``, a
frame's budget at a time unless told otherwise), ahead of need while the user scrolls up (the
message window calls ``next_older`` and ``place_older``), while the built ones do not fill the view
(``fill_viewport``), and the read-only messages of the history archive above all of them
(``prepend_archived``). Every view placed on top goes into a page (``content.OlderPages``) and gets
its slot in the message window; the "earlier messages" line says how many are left.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QLabel, QScrollArea, QVBoxLayout, QWidget

from desktop.core.chat.types import ChatMessage
from desktop.ui.frames import settle
from desktop.ui.transcript.content import OLDER_BUDGET, OlderPages, build_older
from desktop.ui.transcript.message_window import MessageWindow
from desktop.ui.transcript.views import MessageView

__all__ = ["OlderHooks", "OlderMessages", "BATCH_MESSAGES"]

BATCH_MESSAGES = 40
"""Most older messages built per step when the user scrolls to the top (``OLDER_BUDGET`` bounds the time)."""


class OlderHooks(NamedTuple):
    """What ``OlderMessages`` needs from its transcript.

    Attributes:
        messages: the messages of the conversation shown (empty when there is none).
        ready: builds what the transcript left for its first show (before anything goes above it).
        make: builds the view of a message, not placed yet (None: the message has no view of its own).
        anchor: keeps what is under the eye in place through the next change of the scroll range.
    """

    messages: Callable[[], Sequence[ChatMessage]]
    ready: Callable[[], None]
    make: Callable[[ChatMessage], MessageView | None]
    anchor: Callable[[], None]


class OlderMessages:
    """The older messages of one transcript: those not built yet, and the views built above the others.

    Attributes:
        start: index of the oldest message built (how many older messages are not built yet).
    """

    def __init__(self, area: QScrollArea, content: QWidget, layout: QVBoxLayout, label: QLabel,
                 window: MessageWindow, hooks: OlderHooks) -> None:
        """Build on top of ``content`` (laid out by ``layout``) in ``area``.

        Args:
            area: the transcript's scroll area.
            content: the transcript's content widget.
            layout: the content's layout (the pages go under its first row, ``label``).
            label: the "earlier messages" line (``loadOlder``); its link loads a batch.
            window: the transcript's message window (every view placed on top gets a slot).
            hooks: what is asked of the transcript.
        """
        self.start = 0
        self._area = area
        self._content = content
        self._label = label
        self._window = window
        self._hooks = hooks
        self._pages = OlderPages(layout, content)
        label.linkActivated.connect(lambda _l: self.load())

    def load(self, count: int = BATCH_MESSAGES, *, budget: float | None = OLDER_BUDGET) -> int:
        """Build older messages at the top, keeping the scroll position.

        Args:
            count: build at most this many.
            budget: seconds to spend at most (at least one message is built): reaching the top
                builds what fits in a frame, the next step up builds more. None: all ``count``.

        Returns:
            How many older messages were built.
        """
        self._hooks.ready()
        self._window.finish_making()
        if self.start == 0:
            return 0
        self._hooks.anchor()
        new_start = build_older(
            self._hooks.messages(), self.start, count, self._hooks.make, self.place_on_top, budget=budget,
        )
        loaded = self.start - new_start
        self.start = new_start
        self.update_label()
        return loaded

    def prepend_archived(self, msgs: Sequence[ChatMessage]) -> None:
        """Build archived messages (oldest first, read-only) on top, what is under the eye anchored."""
        self.load(self.start, budget=None)  # the archive goes above every message
        self._hooks.anchor()
        for view in filter(None, (self._hooks.make(m) for m in reversed(msgs))):
            if view.action_row is not None:  # read-only: no Edit, Regenerate or Fork of the archive
                view.action_row.hide()
            self.place_on_top(view)

    def next_older(self) -> ChatMessage | None:
        """The next older message not built yet (None: all are)."""
        return self._hooks.messages()[self.start - 1] if self.start > 0 else None

    def place_older(self, view: MessageView | None) -> None:
        """The next older message is built (``message_window``, ahead of need): its view on top."""
        self.start -= 1
        if view is not None:
            self.place_on_top(view)

    def place_on_top(self, view: MessageView) -> None:
        """Put ``view`` above every view built, with its slot in the message window."""
        self._pages.place(view, shown=self._content.isVisible())
        self._window.prepend(view)

    def clear(self) -> None:
        """Delete the views placed on top (the transcript starts over)."""
        self._pages.clear()

    def update_label(self) -> None:
        """Say how many earlier messages are not built yet (the line is hidden when none is left)."""
        if self.start > 0:
            link = "<a href='#load'>load more</a>"
            self._label.setText(f"↑ {self.start:,} earlier messages — scroll up or {link}")
        self._label.setVisible(self.start > 0)

    def fill_soon(self) -> None:
        """``fill_viewport`` once control is back in the event loop (if older messages are left)."""
        if self.start > 0:
            QTimer.singleShot(0, self._area, self.fill_viewport)

    def fill_viewport(self) -> None:
        """Build older messages while the built ones do not fill the view (nothing to scroll up to)."""
        if self.start == 0 or not self._area.isVisible():
            return
        settle()  # the scroll range is only right once the layouts have run
        if self._area.verticalScrollBar().maximum() == 0 and self.start > 0:
            self.load()  # a frame's budget of them; then look again
            QTimer.singleShot(0, self._area, self.fill_viewport)
