"""The text of a streamed answer's newest lines as they show before they are rendered as Markdown.

While an answer streams, its last lines (the line being written, and lines that completed since
the tail was last rendered) are shown as plain text (``desktop.ui.markdown.stream``): appending to
plain text costs O(new text), rendering Markdown every frame would not. :func:`display_text` hides
the Markdown syntax of that text so none of it flashes on screen: heading and quote markers go, a
list marker becomes a bullet, emphasis and code markers go, a fence line is left out, and a marker
still being written at the very end (``*``, ``#``, ``-``, a backtick) is held back until the next
character says what it is. Lines inside an open code fence are shown as they are. The rendered
Markdown replaces this text within ``LIVE_MARKDOWN_INTERVAL`` (or when the block closes).
"""

from __future__ import annotations

import re

__all__ = ["display_text"]

_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")
_HEADING = re.compile(r" {0,3}#{1,6}(?:[ \t]+|$)")
_QUOTE = re.compile(r" {0,3}(?:>[ \t]?)+")
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
    line = _BULLET.sub(lambda m: f"{m.group(1)}• ", line, count=1)
    line = _CODE.sub("", line)
    line = _STRONG.sub("", line)
    return _EM.sub("", line)


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
