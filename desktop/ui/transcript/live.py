"""The live rendering of a transcript: what changed since the last frame, and bringing views up to date.

The node applies every event to the ``Conversation`` at once; the transcript renders at most once per
frame. :class:`LiveRender` records what an event changed (dirty message ids, the message being
streamed, tool call ids) and, at the next frame, syncs the views of those messages and the cards of
those calls (``messages.MessageViews``). A message being streamed ("live") is rendered block by block
(``desktop.ui.markdown.stream``); a view with blocks of a burst still to render says so
(``AssistantMessageView.rendering``) and stays dirty for the next frame.
"""

from __future__ import annotations

from collections.abc import Callable

from desktop.core.chat.types import (
    ChatEvent,
    ChatMessage,
    Delta,
    Done,
    Notice,
    Thinking,
    ToolCallFinished,
    ToolCallRequested,
    UsageReport,
)
from desktop.ui.transcript.answer import AssistantMessageView
from desktop.ui.transcript.messages import MessageViews

__all__ = ["LiveRender"]


class LiveRender:
    """What changed in one transcript's conversation since it last rendered.

    Attributes:
        dirty: Ids of the messages whose views must sync.
        calls: Ids of the tool calls whose cards must sync (through the view that shows them).
        live: The id of the message being streamed (at most one).
        ended: Messages that ended streaming before their view was built.
    """

    def __init__(self) -> None:
        self.dirty: set[str] = set()
        self.calls: set[str] = set()
        self.live: set[str] = set()
        self.ended: set[str] = set()

    def clear(self) -> None:
        """Forget every change (the conversation is shown from scratch)."""
        self.dirty.clear()
        self.calls.clear()
        self.live.clear()
        self.ended.clear()

    def note(self, event: ChatEvent, last_id: Callable[[], str]) -> bool:
        """Record what ``event`` (already applied to the conversation) changed.

        Args:
            event: The event.
            last_id: Returns the id of the conversation's last message (events without one).

        Returns:
            True for ``Done``: render now, not at the next frame.
        """
        if isinstance(event, Delta | Thinking):
            mid = event.message_id or last_id()
            if mid not in self.live:
                for other in self.live:
                    self.dirty.add(other)
                self.live = {mid}
            self.dirty.add(mid)
        elif isinstance(event, UsageReport):
            self.dirty.add(event.message_id or last_id())
        elif isinstance(event, ToolCallRequested):
            self.end_live()
            self.dirty.add(event.message_id or last_id())
            self.calls.add(event.call.id)
        elif isinstance(event, ToolCallFinished):
            self.end_live()
            self.calls.add(event.call.id)
        elif isinstance(event, Notice):
            self.end_live()
        elif isinstance(event, Done):
            self.end_live()
            if event.message_id:
                self.dirty.add(event.message_id)
            return True
        return False

    def end_live(self) -> None:
        """The message being streamed ended: render it once more, as finished."""
        if self.live:
            self.dirty.update(self.live)
            self.ended.update(self.live)
            self.live = set()

    def sync(self, views: MessageViews, find: Callable[[str], ChatMessage | None], behind: set[str]) -> None:
        """Bring the views of the dirty messages and the cards of the dirty calls up to date.

        Args:
            views: The transcript's views.
            find: The message with that id, from the conversation (None: gone).
            behind: Gets the ids of the views with blocks of a burst still to render.
        """
        if self.dirty:
            for mid in self.dirty:
                view = views.views.get(mid)
                if view is None:
                    continue
                found = find(mid)
                if found is not None:
                    if found.role == "assistant" and found.tool_calls:
                        views.owned_calls.update(c.id for c in found.tool_calls)
                    view.sync(found, live=mid in self.live)
                    if isinstance(view, AssistantMessageView) and view.rendering():
                        behind.add(mid)
            self.dirty.clear()
        if self.calls:
            for call_id in self.calls:
                entry = views.cards.get(call_id)
                if entry is None:
                    continue
                owner = entry[1]
                found = find(owner.message_id)
                if found is not None:
                    owner.sync(found, live=owner.message_id in self.live)
            self.calls.clear()
