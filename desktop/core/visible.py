"""Text a server or a model chose, made safe to show: nothing in it can hide, reorder or fake a line.

A permission card shows names, descriptions and arguments that an MCP server or the model picked.
Shown raw they can forge the card: a newline puts text on a line of its own (a second
"MCP server … — tool …" line), U+202E reverses everything after it, zero-width characters hide
the difference between two names. ``visible_text`` shows each such character as an escape:

* ``\\n``, ``\\r`` and ``\\t`` as those two characters (a backslash and a letter);
* every other control character (C0, DEL, C1), every format character (Unicode category Cf: the
  bidi controls U+202A–U+202E, U+2066–U+2069, U+200E, U+200F, U+061C; the zero-width U+200B–U+200D,
  U+2060–U+2064, U+FEFF; the soft hyphen; the tag characters U+E0000–U+E007F that can smuggle
  invisible text…), the line and paragraph separators U+2028/U+2029, lone surrogates, the
  invisible fillers (U+034F, U+115F, U+1160, U+17B4, U+17B5, U+3164, U+FFA0) and the variation
  selectors U+E0100–U+E01EF, as ``<U+202E>``.

Everything else is kept as is: letters of every script, ordinary spaces, emoji (the emoji
variation selectors U+FE00–U+FE0F are kept; an emoji joined with U+200D shows the joiner). A
backslash is not escaped: ``\\n`` in the output is a newline or those two characters, and it never
breaks a line.

``visible_prefix`` and ``elide`` cut long values for a "show all" button; ``visible_args`` shows a
tool call's JSON arguments this way, keys and values.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Callable
from typing import Any

__all__ = ["elide", "visible_args", "visible_prefix", "visible_text"]

_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}

# Category Cf of Unicode 15.1 (a test checks this table against ``unicodedata``), Zl, Zp, the
# surrogates, and the invisible characters of other categories.
_INVISIBLE = (
    "\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b-\u200f\u202a-\u202e"
    "\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f"
    "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f"
    "\u2028\u2029\ud800-\udfff"
    "\u034f\u115f\u1160\u17b4\u17b5\u3164\uffa0\U000e0100-\U000e01ef"
)
_SHOWN = re.compile(f"[\x00-\x1f\x7f-\x9f{_INVISIBLE}]")
_SHOWN_KEEP_NEWLINES = re.compile(f"[\x00-\x09\x0b-\x1f\x7f-\x9f{_INVISIBLE}]")


def _escape(char: str) -> str:
    return _NAMED.get(char) or f"<U+{ord(char):04X}>"


def _pattern(keep_newlines: bool) -> re.Pattern[str]:
    return _SHOWN_KEEP_NEWLINES if keep_newlines else _SHOWN


def visible_text(text: str, *, keep_newlines: bool = False) -> str:
    """``text`` with every control, bidi, zero-width and other invisible character as an escape.

    Args:
        text: Any text a server or a model supplied.
        keep_newlines: Keep ``\\n`` as a line break (for a multi-line box of its own, such as a
            description); never for a name or anything shown inside a line.

    Returns:
        Text that shows every character it holds (see the module doc); ``text`` itself when
        nothing needed an escape.
    """
    pattern = _pattern(keep_newlines)
    if pattern.search(text) is None:
        return text
    return pattern.sub(lambda m: _escape(m.group()), text)


def visible_prefix(text: str, limit: int, *, keep_newlines: bool = False) -> tuple[str, bool]:
    """``visible_text(text)`` cut to at most ``limit`` characters, never inside an escape.

    Only the part of ``text`` that is shown is looked at, so a 50 MB value costs no more than a
    short one.

    Returns:
        ``(shown, cut)``: the shown prefix (no ellipsis added) and True when something was left out.

    Raises:
        ValueError: ``limit`` is negative.
    """
    if limit < 0:
        raise ValueError("limit must not be negative")
    out: list[str] = []
    room = limit
    pos = 0
    for match in _pattern(keep_newlines).finditer(text):
        plain = text[pos : match.start()]
        if len(plain) > room:
            out.append(plain[:room])
            return "".join(out), True
        out.append(plain)
        room -= len(plain)
        escape = _escape(match.group())
        if len(escape) > room:
            return "".join(out), True
        out.append(escape)
        room -= len(escape)
        pos = match.end()
    rest = text[pos:]
    if len(rest) > room:
        out.append(rest[:room])
        return "".join(out), True
    out.append(rest)
    return "".join(out), False


def elide(text: str, limit: int) -> tuple[str, bool]:
    """At most ``limit`` characters of ``text`` (no ellipsis added) and whether it was cut.

    A cut never separates a character from the combining marks (or zero-width joiner) after it:
    they are left out together.

    Raises:
        ValueError: ``limit`` is negative.
    """
    if limit < 0:
        raise ValueError("limit must not be negative")
    if len(text) <= limit:
        return text, False
    end = limit
    while end > 0 and (unicodedata.combining(text[end]) or text[end] == "\u200d"):
        end -= 1
    return text[:end], True


def visible_args(args_json: str, *, value_limit: int | None = None) -> tuple[str, bool]:
    """A tool call's arguments as a permission card shows them: pretty JSON (control characters
    in strings escaped the JSON way, ``\n``, ``\u001b``), every other invisible character of any
    key or value escaped by ``visible_text``; each key and string value cut to ``value_limit``
    characters (ending with "…") when given.

    Arguments that are not valid JSON (or nest too deeply to print) are shown as their raw text,
    made visible with its line breaks kept, cut to ``value_limit`` when given.

    Returns:
        ``(text, cut)``: ``cut`` is True when something was shortened (offer "show all": the same
        call without ``value_limit``).
    """
    raw = args_json.strip()
    if not raw:
        return "{}", False
    cut = False

    def short(text: str) -> str:
        nonlocal cut
        if value_limit is None:
            return text
        prefix, was_cut = elide(text, value_limit)
        cut = cut or was_cut
        return prefix + "\u2026" if was_cut else prefix

    try:
        text = json.dumps(_map_strings(json.loads(raw), short), indent=2, ensure_ascii=False)
    except (ValueError, RecursionError):
        if value_limit is None:
            return visible_text(args_json, keep_newlines=True), False
        shown, cut = visible_prefix(args_json, value_limit, keep_newlines=True)
        return (shown + "\u2026" if cut else shown), cut
    return visible_text(text, keep_newlines=True), cut  # newlines left are the layout's own


def _map_strings(value: Any, fn: Callable[[str], str]) -> Any:
    """``value`` with ``fn`` applied to every string in it, keys included (recursion is bounded
    by what ``json.loads`` accepted; a ``RecursionError`` falls back to the raw text)."""
    if isinstance(value, str):
        return fn(value)
    if isinstance(value, list):
        return [_map_strings(v, fn) for v in value]
    if isinstance(value, dict):
        return {fn(k): _map_strings(v, fn) for k, v in value.items()}
    return value
