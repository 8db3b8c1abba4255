"""Syntax highlighting of code blocks for Qt rich text, with Pygments (no Qt needed).

The lexer comes from the fence's language only (``get_lexer_by_name``): no guessing, so a block
without a language, or with one Pygments does not know, is shown as plain text. Colours come from
a Pygments style chosen by the theme's darkness and are emitted as inline ``<span style=...>``
(colour, bold, italic: what Qt's rich text supports). The text inside the ``<pre>`` is exactly the
code, so the document's plain text is the code.

A lexer's first use compiles its regular expressions (25-45 ms for Python, SQL or JavaScript,
holding the thread): a view asks :func:`lexer_ready` first, which has a worker thread
prepare a lexer not loaded yet, and colours the block once it is (the code shows plain meanwhile).
"""

from __future__ import annotations

import html
import logging
import threading
from collections import OrderedDict
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from functools import lru_cache, partial
from typing import NamedTuple

from pygments.lexer import Lexer
from pygments.lexers import get_lexer_by_name
from pygments.styles import get_style_by_name
from pygments.token import _TokenType
from pygments.util import ClassNotFound

log = logging.getLogger(__name__)

__all__ = [
    "code_pieces",
    "highlight_code",
    "highlight_runs",
    "styled_tokens",
    "lexer_for",
    "lexer_ready",
    "Run",
    "Look",
    "PLAIN",
    "LIGHT_STYLE",
    "DARK_STYLE",
    "HIGHLIGHT_LIMIT",
]

LIGHT_STYLE = "default"
"""Pygments style used on a light background."""
DARK_STYLE = "github-dark"
"""Pygments style used on a dark background."""
HIGHLIGHT_LIMIT = 400_000
"""Code longer than this many characters is shown without colours (lexing it would stall the UI)."""


_LEXERS_KEPT = 256
"""Lexers (and unknown names) remembered; model output can name any number of languages."""
_LEXERS: dict[str, Lexer | None] = {}  # by lower-cased name, oldest first
_PREPARING: dict[str, Future[Lexer | None]] = {}
_LOCK = threading.Lock()
_worker: ThreadPoolExecutor | None = None


def _name(lang: str) -> str | None:
    """The lexer name a fence's info word asks for (None: none, too long to be one)."""
    name = lang.strip().lower()
    return name if name and len(name) <= 40 else None


def lexer_for(lang: str) -> Lexer | None:
    """The Pygments lexer named ``lang`` (a fence's info word), or None when there is none.

    Loaded (and its expressions compiled) by the first call on any thread, then remembered.
    """
    name = _name(lang)
    if name is None:
        return None
    try:
        return _LEXERS[name]
    except KeyError:
        pass
    try:
        lexer: Lexer | None = get_lexer_by_name(name, stripnl=False, ensurenl=False, stripall=False)
    except ClassNotFound:
        lexer = None
    except Exception:  # noqa: BLE001 - a broken lexer plugin must not break rendering
        log.exception("could not load the Pygments lexer %r", name)
        lexer = None
    with _LOCK:
        _LEXERS.setdefault(name, lexer)
        while len(_LEXERS) > _LEXERS_KEPT:
            del _LEXERS[next(iter(_LEXERS))]
    return lexer


def lexer_ready(lang: str) -> bool:
    """True when :func:`lexer_for` answers ``lang`` at once; otherwise start preparing it on the
    lexer thread (one for the process) and answer False until that is done."""
    global _worker
    name = _name(lang)
    if name is None or name in _LEXERS:
        return True
    with _LOCK:
        if name not in _PREPARING:
            if _worker is None:
                _worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="chatnodes-lexers")
            future = _worker.submit(lexer_for, name)
            _PREPARING[name] = future
            future.add_done_callback(partial(_prepared, name))
    return False


def _prepared(name: str, _future: Future[Lexer | None]) -> None:
    with _LOCK:
        _PREPARING.pop(name, None)


Look = tuple[str, bool, bool]
"""How a token is shown: ``(colour "#rrggbb" or "", bold, italic)``; ``PLAIN`` is unstyled."""
PLAIN: Look = ("", False, False)


class Run(NamedTuple):
    """A stretch of code shown in one style: ``code[start:start + length]``."""

    start: int
    length: int
    color: str
    bold: bool
    italic: bool


@lru_cache(maxsize=2048)
def _style(style_name: str, ttype: _TokenType) -> Look:
    """``(colour "#rrggbb" or "", bold, italic)`` of ``ttype`` in ``style_name``."""
    info = get_style_by_name(style_name).style_for_token(ttype)
    colour = f"#{info['color']}" if info.get("color") else ""
    return (colour, bool(info.get("bold")), bool(info.get("italic")))


def styled_tokens(code: str, lang: str, dark: bool) -> Iterator[tuple[str, Look]] | None:
    """The tokens of ``code`` for ``lang`` with their look, lazily (a view lexes a slice at a time).

    The token texts, joined, are exactly ``code``. The iterator may raise if the lexer fails.

    Returns:
        The iterator, or None when the code is shown plain (no language, an unknown one, too long).
    """
    lexer = lexer_for(lang) if len(code) <= HIGHLIGHT_LIMIT else None
    if lexer is None:
        return None
    key = (code, lang, dark)
    cached = _LEXED.get(key)
    if cached is not None:
        _LEXED.move_to_end(key)
        return iter(cached)
    style = DARK_STYLE if dark else LIGHT_STYLE
    return _kept(key, ((value, _style(style, ttype)) for ttype, value in lexer.get_tokens(code)))


LEXED_CHARS = 4_000_000
"""Code (characters) whose tokens are kept once lexed to the end: a code block shown again (scrolled
back into view, re-themed) is coloured without lexing it again."""
_LEXED: OrderedDict[tuple[str, str, bool], list[tuple[str, Look]]] = OrderedDict()
_lexed_chars = 0


def _kept(key: tuple[str, str, bool], tokens: Iterator[tuple[str, Look]]) -> Iterator[tuple[str, Look]]:
    """``tokens``, kept for ``key`` once they have all been read (least recently used go first)."""
    global _lexed_chars
    out: list[tuple[str, Look]] = []
    for token in tokens:
        out.append(token)
        yield token
    if key in _LEXED:
        return
    _LEXED[key] = out
    _lexed_chars += len(key[0])
    while _lexed_chars > LEXED_CHARS and len(_LEXED) > 1:
        old, _ = _LEXED.popitem(last=False)
        _lexed_chars -= len(old[0])


def highlight_runs(code: str, lang: str, dark: bool) -> list[Run] | None:
    """The styled stretches of ``code`` for ``lang`` (what ``highlight_code`` colours, as offsets).

    Args:
        code: The raw code.
        lang: The fence's language.
        dark: Use the dark style.

    Returns:
        The runs in order (unstyled text has none), or None when the code is shown plain (no
        language, an unknown one, too long, or the lexer failed).
    """
    tokens = styled_tokens(code, lang, dark)
    if tokens is None:
        return None
    runs: list[Run] = []
    pos = begin = 0
    current = PLAIN
    try:
        for value, look in tokens:
            if look != current:
                if pos > begin and current != PLAIN:
                    runs.append(Run(begin, pos - begin, *current))
                current, begin = look, pos
            pos += len(value)
    except Exception:  # noqa: BLE001 - a lexer bug must not lose the code: show it plain
        log.exception("highlighting %d characters of %r failed", len(code), lang)
        return None
    if pos > begin and current != PLAIN:
        runs.append(Run(begin, pos - begin, *current))
    return runs


@lru_cache(maxsize=2048)
def _span(style_name: str, ttype: _TokenType) -> str:
    """The opening ``<span>`` for ``ttype`` in ``style_name`` ("" when the token is unstyled)."""
    info = get_style_by_name(style_name).style_for_token(ttype)
    css: list[str] = []
    if info.get("color"):
        css.append(f"color:#{info['color']}")
    if info.get("bold"):
        css.append("font-weight:600")
    if info.get("italic"):
        css.append("font-style:italic")
    return f"<span style='{'; '.join(css)}'>" if css else ""


def highlight_code(code: str, lang: str, dark: bool) -> str:
    """The ``<pre>`` showing ``code``, highlighted for ``lang`` when Pygments knows it.

    Args:
        code: The raw code (untrusted; every character is escaped).
        lang: The fence's language ("" for none: plain).
        dark: Use the dark style (the code's background is dark).

    Returns:
        ``<pre style='margin:0'>...</pre>`` whose text is exactly ``code``.
    """
    # Qt's HTML reader drops one newline right after ``<pre>`` and one right before ``</pre>``: a
    # code whose first or last line is blank keeps it with one more.
    opening = "<pre style='margin:0'>" + ("\n" if code.startswith("\n") else "")
    closing = ("\n" if code.endswith("\n") else "") + "</pre>"
    lexer = lexer_for(lang) if len(code) <= HIGHLIGHT_LIMIT else None
    if lexer is None:
        return opening + html.escape(code, quote=False) + closing
    style = DARK_STYLE if dark else LIGHT_STYLE
    out: list[str] = [opening]
    run: list[str] = []
    current = ""

    def flush() -> None:
        if run:
            text = html.escape("".join(run), quote=False)
            out.append(f"{current}{text}</span>" if current else text)
            run.clear()

    try:
        for ttype, value in lexer.get_tokens(code):
            opener = _span(style, ttype)
            if opener != current:
                flush()
                current = opener
            run.append(value)
        flush()
    except Exception:  # noqa: BLE001 - a lexer bug must not lose the code: show it plain
        log.exception("highlighting %d characters of %r failed", len(code), lang)
        return opening + html.escape(code, quote=False) + closing
    out.append(closing)
    return "".join(out)


def code_pieces(code: str, limit: int) -> list[str]:
    """``code`` cut into pieces of at most ``limit`` lines (one piece when it is shorter).

    Each piece is coloured on its own, so a cut should not split a token that spans lines (a
    docstring, a block comment: they often hold blank lines). A cut goes after the last blank
    line followed by a line that starts at the margin (a new top-level statement) in the last
    two thirds of a piece, else at the limit.
    """
    lines = code.split("\n")
    if len(lines) <= limit:
        return [code]
    out: list[str] = []
    start = 0
    while len(lines) - start > limit:
        window = range(start + limit - 1, start + limit // 3, -1)
        tops = [i for i in window if not lines[i].strip()
                and lines[i + 1][:1] not in ("", " ", "\t", '"', "'", "`", "*", "/", "#", ")", "]", "}")]
        end = (tops or [start + limit - 1])[0] + 1
        out.append("\n".join(lines[start:end]))
        start = end
    out.append("\n".join(lines[start:]))
    return out
