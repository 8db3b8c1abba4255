"""``WrapLabel``: a word-wrapped ``QLabel`` that measures its height for a width once per text.

A word-wrapped ``QLabel`` lays its text out again (shaping every glyph) each time a layout asks
``heightForWidth``, and Qt's box layouts ask several times per relayout (minimum size, size hint,
height for width, geometry): a transcript relaid out at every frame of a stream asked each message's
cost line and each user message's text again, 28 % of the frame's layout time on the canvas with
eight answers streaming. The answer only changes with the text, the font or the style.
"""

from __future__ import annotations

import logging

from PySide6.QtCore import QEvent
from PySide6.QtWidgets import QLabel, QWidget

log = logging.getLogger(__name__)

__all__ = ["WrapLabel"]

_WIDTHS_KEPT = 8
"""Widths remembered per label (a resize drag asks for many, one after another)."""


class WrapLabel(QLabel):
    """A ``QLabel`` with word wrap on whose ``heightForWidth`` answers are kept until its text,
    font or style changes."""

    def __init__(self, text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(text, parent)
        self.setWordWrap(True)
        self._heights: dict[int, int] = {}

    def setText(self, text: str) -> None:  # noqa: N802 - Qt's name
        """Show ``text`` (the heights measured for the old text are forgotten)."""
        if text != self.text():
            self._heights.clear()
            super().setText(text)

    def heightForWidth(self, width: int) -> int:  # noqa: N802 - Qt's name
        """The height the text needs at ``width`` (measured once per width and text)."""
        height = self._heights.get(width)
        if height is None:
            height = super().heightForWidth(width)
            if len(self._heights) >= _WIDTHS_KEPT:
                self._heights.clear()
            self._heights[width] = height
        return height

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt's name
        """Forget the heights when the font or the style (its margins, its font) changes."""
        if event.type() in (QEvent.Type.FontChange, QEvent.Type.StyleChange):
            self._heights.clear()
        super().changeEvent(event)
