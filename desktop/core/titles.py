"""Node titles: the numbered default a new node gets, and the title its first message gives it.

A new node is called "Chat", "Chat 2", ... (``default_title``). When the user sends the first message
of a node that still has such a title, the node takes ``auto_title(message)``: the message's first
words on one line, without Markdown markers, at most ``MAX_TITLE_WORDS`` words and
``MAX_TITLE_CHARS`` characters. No model is asked; the title stays editable.
"""

from __future__ import annotations

import re

__all__ = ["MAX_TITLE_CHARS", "MAX_TITLE_WORDS", "auto_title", "default_title", "is_default_title"]

MAX_TITLE_WORDS = 6
MAX_TITLE_CHARS = 40

_DEFAULT = re.compile(r"Chat(?: [1-9][0-9]{0,5})?")
# Markdown markers and quotes at the edges of a word; fenced code and links are reduced to their text.
_FENCE = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)
_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_EDGE = "#*_`>~\"'“”‘’([{<-–—•:;,."
# Invisible and control characters never make it into a title (a title is shown on one line).
_INVISIBLE = re.compile("[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff]")


def default_title(index: int) -> str:
    """The title of a new node at position ``index`` among the open ones: "Chat", "Chat 2", ..."""
    return "Chat" if index <= 0 else f"Chat {index + 1}"


def is_default_title(title: str) -> bool:
    """True for a title ``default_title`` gives (the user has not named the node)."""
    return _DEFAULT.fullmatch(title.strip()) is not None


def auto_title(text: str) -> str:
    """A short title from a user message, or ``""`` when it has no words to make one.

    Args:
        text: The message as the user typed it.

    Returns:
        Its first words (at most ``MAX_TITLE_WORDS``, cut at ``MAX_TITLE_CHARS`` with "…"),
        Markdown markers, code fences, control characters and surrounding punctuation removed.
    """
    text = _FENCE.sub(" ", text)
    text = _LINK.sub(r"\1", text)
    text = _INVISIBLE.sub(" ", text)
    words = [w.strip(_EDGE) for w in text.split()]
    words = [w for w in words if w]
    if not words:
        return ""
    title = " ".join(words[:MAX_TITLE_WORDS])
    cut = len(words) > MAX_TITLE_WORDS
    if len(title) > MAX_TITLE_CHARS:
        title = title[:MAX_TITLE_CHARS].rsplit(" ", 1)[0] if " " in title[:MAX_TITLE_CHARS] else \
            title[:MAX_TITLE_CHARS]
        cut = True
    title = title.rstrip(_EDGE + " ")
    return title[:1].upper() + title[1:] + ("…" if cut else "")
