"""The text of a streamed answer's newest lines as they show before they are rendered as Markdown.

While an answer streams, its last lines (the line being written, and lines that completed since
the tail was last rendered) are shown as plain text (``desktop.ui.markdown.stream``): appending to
plain text costs O(new text), rendering Markdown every frame would not. :func:`display_text` hides
the Markdown syntax of that text so none of it flashes on screen: heading and quote markers go, a
list marker becomes a bullet, emphasis and code markers go, a fence line is left out, and a marker
still being written at the very end (``*``, ``#``, ``-``, a backtick) is held back until the next
character says what it is. Lines inside an open code fence are shown as they are. The rendered
Markdown replaces this text within ``LIVE_MARKDOWN_INTERVAL`` (or when the block closes).
:class:`TailText` gives the same text for a tail that grows, reading only what is new.
"""

from __future__ import annotations

import re

__all__ = ["display_text", "TailText"]

_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")
_HEADING = re.compile(r"^ {0,3}#{1,6}(?:[ \t]+|$)")
_QUOTE = re.compile(r"^ {0,3}(?:>[ \t]?)+")
_BULLET = re.compile(r"^([ \t]*)[-*+][ \t]+")
_RULE = re.compile(r" {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$")
_STRONG = re.compile(r"\*\*+|__+(?=\S)|(?<=\S)__+|~~")
_EM = re.compile(r"(?<![\w*\\])\*(?=[^\s*])|(?<=[^\s*\\])\*(?![\w*])")
_CODE = re.compile(r"`+")
_UNFINISHED = re.compile(r"(?:^|(?<=\s))[-*+#>_`~|]+$|[*_`~]+$")


def _line(line: str) -> str:
    if _RULE.match(line):
        return ""
    line = _HEADING.sub("", line, count=1)
    line = _QUOTE.sub("", line, count=1) if line.lstrip().startswith(">") else line
    return _inline(_BULLET.sub(lambda m: f"{m.group(1)}• ", line, count=1))


def _inline(text: str) -> str:
    """``text`` without its emphasis and code markers (no rule here reads across a space)."""
    return _EM.sub("", _STRONG.sub("", _CODE.sub("", text)))


def display_text(text: str, *, in_fence: bool = False) -> str:
    """``text`` (whole lines but the last) with its Markdown syntax hidden.

    Args:
        text: The newest lines of a streamed answer.
        in_fence: The text starts inside an open code fence.

    Returns:
        What to show for it: the same lines, without their markers; a marker at the very end that
        is still being written is held back.
    """
    out: list[str] = []
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if _FENCE.match(line):
            in_fence = not in_fence
            if i < len(lines) - 1:
                continue  # the fence line itself shows nothing
            out.append("")
            continue
        if in_fence:
            out.append(line)
            continue
        shown = _line(line)
        if i == len(lines) - 1:
            shown = _UNFINISHED.sub("", shown)
        out.append(shown)
    return "\n".join(out)


_INLINE_CUT = 512
"""A last line longer than this past its cached part gets a new cut (``TailText``)."""
_CUT_WINDOW = 256
"""How far back from the end ``TailText`` looks for a place to cut a long line."""
_CUT_FROM = 64
"""A line is cut no nearer its start than this (its start's markers are read whole)."""
_CUT = re.compile(r" (?=[^\s\-*+#>_`~|\\])")
"""A place a line may be cut: a space before a character no rule reads as (part of) a marker."""


class TailText:
    """:func:`display_text` of a growing text, reading each character about once.

    The tail of a streamed answer grows at its end at every frame; a long paragraph (or an open
    code fence) would otherwise be read whole again each time. Complete lines are kept as shown,
    and a long last line is cut at a space (before a character that is not a marker): the part
    before the cut is kept as shown, since none of the rules reads across such a place. The result
    is the same as ``display_text(content[start:], in_fence=in_fence)``.

    Attributes:
        read: characters read by the rules so far (what the cache saves is what it does not read).
    """

    def __init__(self) -> None:
        self.read = 0
        self._key: tuple[int, bool] | None = None
        self._seen = 0
        self._pos = 0  # where the first line not yet complete starts
        self._fence = False  # inside an open fence at ``_pos``
        self._done = ""  # the complete lines as shown, joined
        self._lines = 0  # how many complete lines are shown in ``_done``
        self._cut = 0  # the last line's part before this is shown as ``_cut_out``
        self._cut_out = ""

    def _reset(self, start: int, in_fence: bool) -> None:
        self._key = (start, in_fence)
        self._pos = self._cut = start
        self._fence = in_fence
        self._done, self._lines, self._cut_out = "", 0, ""

    def show(self, content: str, start: int, *, in_fence: bool = False) -> str:
        """What ``content[start:]`` shows (``display_text``); ``content`` only grew since the last call.

        Args:
            content: The whole text so far.
            start: Where the tail starts; another ``start`` (or ``in_fence``) starts over.
            in_fence: The tail starts inside an open code fence.
        """
        if self._key != (start, in_fence) or len(content) < self._seen:
            self._reset(start, in_fence)
        self._seen = len(content)
        end = content.rfind("\n", self._pos) + 1
        if end > self._pos:
            self._complete(content, end)
        return self._last(content)

    def _complete(self, content: str, end: int) -> None:
        """Take the lines that completed up to ``end`` (just after a newline) into ``_done``."""
        shown: list[str] = []
        lines = content[self._pos : end - 1].split("\n")
        self.read += end - 1 - max(self._pos, self._cut)
        for i, line in enumerate(lines):
            if _FENCE.match(line):
                self._fence = not self._fence
            elif self._fence:
                shown.append(line)
            elif i == 0 and self._cut > self._pos:
                shown.append(self._cut_out + _inline(line[self._cut - self._pos :]))
            else:
                shown.append(_line(line))
        if shown:
            joined = "\n".join(shown)
            self._done = f"{self._done}\n{joined}" if self._lines else joined
            self._lines += len(shown)
        self._pos = self._cut = end
        self._cut_out = ""

    def _last(self, content: str) -> str:
        """The complete lines and the last line, as shown."""
        pos, size = self._pos, len(content)
        if _FENCE.match(content, pos):
            last = ""
        elif self._fence:
            last = content[pos:]
        else:
            if size - self._cut > _INLINE_CUT:
                self._move_cut(content)
            self.read += size - self._cut
            if self._cut > pos:
                last = self._cut_out + _UNFINISHED.sub("", _inline(content[self._cut :]))
            else:
                last = _UNFINISHED.sub("", _line(content[pos:]))
        return f"{self._done}\n{last}" if self._lines else last

    def _move_cut(self, content: str) -> None:
        """Cut the last line near its end, keeping what comes before the cut as shown."""
        pos = self._pos
        lo = max(self._cut, pos + _CUT_FROM, len(content) - _CUT_WINDOW)
        cut = -1
        for match in _CUT.finditer(content, lo):
            cut = match.end()
        if cut < 0:
            return
        if self._cut > pos:
            self._cut_out += _inline(content[self._cut : cut])
        else:
            head = content[pos:cut]
            if _RULE.match(head):
                return
            self._cut_out = _line(head)
        self.read += cut - self._cut
        self._cut = cut
