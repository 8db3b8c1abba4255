"""What the window of built messages is made of (``message_window.py``): a slot per message widget,
whether a view may be released now, and what building a view is predicted to cost.
"""

from __future__ import annotations

from PySide6.QtWidgets import QApplication, QWidget

from desktop.ui.transcript.answer import AssistantMessageView
from desktop.ui.transcript.views import MessageView

__all__ = ["CostModel", "Slot", "unfilled", "may_release"]


def unfilled(view: MessageView | None) -> bool:
    """Whether a view being made still has body segments to fill."""
    return isinstance(view, AssistantMessageView) and view.body.pending


def may_release(view: MessageView, busy: set[str]) -> bool:
    """Whether releasing ``view`` loses nothing: not streaming or waiting to render (``busy``
    message ids), not being edited, no permission asked, no focus in it."""
    if view.message_id in busy:
        return False
    if isinstance(view, AssistantMessageView):
        if view.rendering() or (view.rendered_body() is None and view.body.isVisibleTo(view)):
            return False
        if any(card.permission is not None for card in view.cards.values()):
            return False
    editor = view.action_row.editor if view.action_row is not None else None
    if editor is not None and editor.isVisibleTo(view):
        return False
    focus = QApplication.focusWidget()
    return focus is None or not view.isAncestorOf(focus)


class Slot:
    """One message widget of the transcript: its view, or a placeholder of the view's height.

    Attributes:
        message_id: the message shown.
        view: the view (hidden, out of the layout and without its body while released).
        holder: the placeholder, while released.
    """

    __slots__ = ("message_id", "view", "holder", "spare")

    def __init__(self, view: MessageView) -> None:
        self.message_id = view.message_id
        self.view = view
        self.holder: QWidget | None = None
        self.spare: QWidget | None = None  # the placeholder of an earlier release, hidden, kept

    def widget(self) -> QWidget:
        """The widget in the layout (the view or its placeholder)."""
        return self.holder if self.holder is not None else self.view


class CostModel:
    """Predicts what building a message costs from its size, learning from what builds cost.

    Two kinds of work: ``"render"`` (Markdown to segments) and ``"build"`` (the widgets or the
    documents, from rendered segments). Each is ``base + per_char × characters`` seconds;
    ``per_char`` follows the measured costs (a moving average): a slow machine predicts slow builds.
    Two kinds of steps of making an older answer's view in slices, ``"slice"`` (making the view or
    filling more of it: at least one segment) and ``"place"`` (polishing and laying it out at the
    top), are predicted as the moving average of their measured durations (``step``).
    """

    def __init__(self) -> None:
        self._base = {"render": 0.0003, "build": 0.0015}
        self._per_char = {"render": 1.8e-6, "build": 1.5e-6}
        self._steps = {"slice": 0.003, "place": 0.0012}

    def step(self, kind: str) -> float:
        """Predicted seconds of one ``"slice"`` or ``"place"`` step."""
        return self._steps[kind]

    def record_step(self, kind: str, seconds: float) -> None:
        """Learn from a measured step."""
        self._steps[kind] = 0.8 * self._steps[kind] + 0.2 * min(seconds, 0.1)

    def estimate(self, kind: str, chars: int) -> float:
        """Predicted seconds of ``kind`` work for a message of ``chars`` characters."""
        return self._base[kind] + self._per_char[kind] * chars

    def record(self, kind: str, chars: int, seconds: float) -> None:
        """Learn from a measured cost."""
        rate = max(0.0, seconds - self._base[kind]) / max(chars, 200)
        self._per_char[kind] = 0.8 * self._per_char[kind] + 0.2 * min(rate, 1e-4)
