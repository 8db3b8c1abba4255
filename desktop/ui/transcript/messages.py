"""The message widgets of one transcript: a view per message, the tool cards in them, the decisions.

:class:`MessageViews` builds the widget of a message (``views.py``, ``answer.py``) and keeps them by
message id. Tool calls render as ``ToolCard`` s under the assistant message that made them, upserted
by call id; a ``tool`` message whose call such a card shows gets no view of its own (an orphan result
gets its own card). The views announce their cards and the permission decisions with signals; the
decisions of the node are kept here and re-applied to a card built later (a rebuilt or older message).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from functools import partial
from typing import TYPE_CHECKING

from PySide6.QtWidgets import QWidget

from desktop.core.chat.summary import message_meta
from desktop.core.chat.types import TOOL_IMAGES_KEY, ChatMessage
from desktop.ui.attachments.items import ImageItem, tool_image_items
from desktop.ui.markdown.theme import MarkdownTheme
from desktop.ui.transcript.answer import AssistantMessageView, RenderedBody
from desktop.ui.transcript.permission_card import CardMark
from desktop.ui.transcript.tool_card import ToolCard
from desktop.ui.transcript.views import MessageView, NoteMessageView, ToolMessageView, UserMessageView

if TYPE_CHECKING:
    from PySide6.QtCore import SignalInstance

__all__ = ["MessageViews"]


class MessageViews:
    """The message widgets of one transcript (see the module docstring).

    Args:
        content: The transcript's content widget (the views' parent).
        width: Returns the width the layout will give a new view (0 or less: not known yet).
        decision: Where a card's ``(call_id, decision)`` goes (the transcript's ``decision`` signal).
        action: Where a view's ``(action, message_id, argument)`` goes (``message_action``).
        created: Emitted with each new view (``view_created``).
        call_changed: Called with the call id of a ``tool`` message whose card an assistant view shows
            (that card shows the result).

    Attributes:
        theme: The Markdown theme of new views (change it with :meth:`set_theme`).
        views: The views built, by message id.
        cards: Each tool card built, with the view that shows it, by call id.
        owned_calls: The calls an assistant message of the conversation made (shown by its cards).
        decisions: The permission decisions of the node, by call id.
    """

    def __init__(self, content: QWidget, width: Callable[[], int], *, decision: SignalInstance,
                 action: SignalInstance, created: SignalInstance,
                 call_changed: Callable[[str], None]) -> None:
        self._content = content
        self._width = width
        self._decision = decision
        self._action = action
        self._created = created
        self._call_changed = call_changed
        self.theme = MarkdownTheme()
        self._meta_text: Callable[[ChatMessage, bool], str] = _meta
        self.views: dict[str, MessageView] = {}
        self.cards: dict[str, tuple[ToolCard, AssistantMessageView]] = {}
        self.owned_calls: set[str] = set()
        self.decisions: dict[str, CardMark] = {}
        self.tool_images: dict[str, list[ImageItem]] = {}  # a result's images, for its card (any order)

    def start(self, messages: Sequence[ChatMessage]) -> None:
        """A conversation is shown from scratch: note the calls its answers made; a persisted call
        still awaiting approval belongs to no running loop (``interrupted``)."""
        self.owned_calls = {
            c.id for m in messages if m.role == "assistant" and m.tool_calls for c in m.tool_calls
        }
        for m in messages:
            if m.role == "assistant" and m.tool_calls:
                for c in m.tool_calls:
                    if c.status == "awaiting_approval":
                        self.decisions.setdefault(c.id, "interrupted")

    def make(
        self, msg: ChatMessage, *, live: bool, rendered: RenderedBody | None = None,
        deadline: float | None = None,
    ) -> MessageView | None:
        """The view of ``msg`` (None: a tool result its call's card shows); see ``AssistantMessageView``
        for ``rendered`` and ``deadline``."""
        view: MessageView
        if msg.role == "user":
            view = UserMessageView(msg, self._content)
        elif msg.role == "assistant":
            assistant = AssistantMessageView(
                msg, theme=self.theme, meta_text=self._meta_text, parent=self._content
            )
            width = self._width()
            if width > 0:  # the width the layout will give it: its text is laid out once, not twice
                assistant.resize(width, assistant.height())
            # Connected before the first sync, which announces the cards already in the message.
            assistant.card_created.connect(partial(self._on_card_created, assistant))
            assistant.card_decided.connect(self._decision)
            if rendered is not None:
                assistant.reuse(rendered)
            assistant.sync(msg, live=live, deadline=deadline)
            view = assistant
        elif msg.role == "tool":
            call_id = msg.tool_calls[0].id if msg.tool_calls else None
            if call_id is not None and call_id in self.owned_calls:
                images = self.tool_images[call_id] = tool_image_items(msg.extra.get(TOOL_IMAGES_KEY), msg.id)
                entry = self.cards.get(call_id)
                if entry is not None:
                    entry[0].show_images(images)
                    self._call_changed(call_id)
                return None
            view = ToolMessageView(msg, self._content)
        else:
            view = NoteMessageView(msg, self._content)
        self.views[msg.id] = view
        view.action_requested.connect(self._action)  # versions: actions.py
        self._created.emit(view)
        return view

    def _on_card_created(self, owner: AssistantMessageView, call_id: str, card: ToolCard) -> None:
        """Track a new card (``owner.card_created``); a call decided here before starts decided."""
        self.cards[call_id] = (card, owner)
        card.show_images(self.tool_images.get(call_id, []))
        decision = self.decisions.get(call_id)
        if decision is not None:
            card.mark_decided(decision)
            card.update_call(card.call)

    def card_for(self, call_id: str) -> ToolCard | None:
        """The card of a tool call, if built."""
        entry = self.cards.get(call_id)
        return entry[0] if entry else None

    def set_theme(self, theme: MarkdownTheme) -> None:
        """Use ``theme`` for Markdown and re-render finished messages."""
        self.theme = theme
        for view in self.views.values():
            if isinstance(view, AssistantMessageView):
                view.set_theme(theme)

    @property
    def meta_text(self) -> Callable[[ChatMessage, bool], str]:
        """Formats the meta line under an assistant message (model, tokens, cost)."""
        return self._meta_text

    @meta_text.setter
    def meta_text(self, formatter: Callable[[ChatMessage, bool], str]) -> None:
        self._meta_text = formatter
        for view in self.views.values():
            if isinstance(view, AssistantMessageView):
                view.meta_text = formatter

    def drop(self, message_ids: Iterable[str]) -> None:
        """These messages left the transcript: forget their views."""
        for message_id in message_ids:
            self.views.pop(message_id, None)

    def forget(self) -> None:
        """The views were removed from the transcript: drop them and their cards (not the decisions)."""
        self.views.clear()
        self.cards.clear()
        self.tool_images.clear()


def _meta(msg: ChatMessage, live: bool) -> str:
    """The meta line without a node's model or price overrides (a transcript on its own)."""
    return message_meta(msg, live=live)
