"""What of a message is searchable, and the one tokenizer shared by the index, queries and snippets.

The index is an FTS5 table with SQLite's ``unicode61 remove_diacritics 2`` tokenizer: a token is a
run of letters, digits and combining marks; case and diacritics are folded (``Müller`` and
``muller`` are one token). Two things it cannot do are prepared here, in Python, before the text
reaches SQLite (the table is contentless, so this transient form is never stored):

* **CJK**: Chinese, Japanese and Korean are written without spaces, and ``unicode61`` would make a
  whole run one token. :func:`index_columns` puts a space around every CJK character, so each is a
  token and a query word in CJK becomes a phrase of its characters (``渲染`` finds
  ``逐块渲染``: adjacent tokens, in order). Two-character words, the common case, work; a trigram
  index would not find them (it needs three characters).
* **Code identifiers**: ``unicode61`` already splits ``parse_document`` and ``httpx.AsyncClient`` at
  the ``_`` and the ``.``; camelCase is one token (``qtextdocument``), so its parts (``q text
  document``) go to a second column, ``parts``: ``document`` finds ``QTextDocument``.

:func:`tokens` reproduces ``unicode61`` (plus the two rules above) in Python, with the character
offsets of each token: the query parser and the snippet builder use it, so a highlighted span is
exactly a token the index matched.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable, Iterator

from ..redact import scrub_key_shapes, scrub_secrets
from ..text import repair_text

__all__ = [
    "Secrets",
    "clean_text",
    "index_columns",
    "tokens",
    "fold",
    "camel_parts",
    "camel_spans",
    "camel_words",
    "is_cjk",
]

Secrets = Callable[[], Iterable[str | None]]
"""Returns the known secrets (API keys) at the time of the call."""

# Chinese (ideographs, radicals, bopomofo), Japanese (kana, iteration marks), Korean (hangul).
_CJK_CLASS = (
    "\u2e80-\u2fdf\u3005-\u3007\u3040-\u30ff\u3100-\u312f\u3130-\u318f\u31a0-\u31ff\u3400-\u4dbf"
    "\u4e00-\u9fff\ua960-\ua97f\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f\U00020000-\U0003134f"
)
_CJK_RUN = re.compile(f"[{_CJK_CLASS}]+")
_CJK_ANY = re.compile(f"[{_CJK_CLASS}]")
_MARKS = "\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f"
# unicode61's token characters: letters, digits (Python's alphanumerics minus "_") and marks.
_TOKEN = re.compile(f"(?:[^\\W_]|[{_MARKS}])+")
_CJK_SPLIT = re.compile(f"[{_CJK_CLASS}]|[^{_CJK_CLASS}]+")
_CAMEL = re.compile(r"[A-Za-z0-9]*(?:[a-z0-9][A-Z]|[A-Z][A-Z][a-z])[A-Za-z0-9]*")
_UPPER = re.compile(r"[A-Z]")  # one class: the regex engine's fast scan (an alternation is 5× slower)
_ASCII_WORD = re.compile(r"[A-Za-z0-9]+")
_CAMEL_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")


def is_cjk(text: str) -> bool:
    """True when ``text`` holds a CJK character (each one is a token of its own)."""
    return _CJK_ANY.search(text) is not None


def clean_text(text: str, secrets: Iterable[str | None] = ()) -> str:
    """``text`` as the index may hold it: valid Unicode in composed form (NFC: ``e`` + a combining
    accent becomes ``é``, as SQLite and the query expect), known secrets and key-shaped words
    removed."""
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            text = repair_text(text)
        if not unicodedata.is_normalized("NFC", text):
            text = unicodedata.normalize("NFC", text)
    return scrub_key_shapes(scrub_secrets(text, secrets))


def camel_parts(word: str) -> list[str]:
    """The parts of an ASCII camelCase word (``QTextDocument`` → ``Q``, ``Text``, ``Document``);
    ``[word]`` for any other word."""
    if not _CAMEL.fullmatch(word):
        return [word]
    return _CAMEL_PART.findall(word) or [word]


def camel_spans(word: str) -> list[tuple[int, int]]:
    """``(start, end)`` of each camelCase part of ``word`` (one span when it has no parts)."""
    if not _CAMEL.fullmatch(word):
        return [(0, len(word))]
    return [m.span() for m in _CAMEL_PART.finditer(word)]


def _spaced(match: re.Match[str]) -> str:
    return " " + " ".join(match.group()) + " "


def camel_words(text: str) -> list[str]:
    """The ASCII words of ``text`` with a camelCase inside (``QTextDocument``, ``HTTPServer``)."""
    out: list[str] = []
    end = -1
    for m in _UPPER.finditer(text):
        i = m.start()
        if i <= end or i == 0:
            continue
        p = text[i - 1]
        upper_then_lower = "A" <= p <= "Z" and "a" <= text[i + 1 : i + 2] <= "z"  # HTTPServer
        if not ("a" <= p <= "z" or "0" <= p <= "9" or upper_then_lower):
            continue
        s = i - 1
        while s > 0 and text[s - 1].isascii() and text[s - 1].isalnum():
            s -= 1
        word = _ASCII_WORD.match(text, s)
        if word is not None:
            out.append(word.group())
            end = word.end()
    return out


def index_columns(body: str) -> tuple[str, str]:
    """``(body, parts)``: the two column values the FTS table indexes for a message text.

    ``body`` is the text with a space around each CJK character; ``parts`` the camelCase parts of
    its identifiers (empty when it has none). Deterministic: deleting a row from the contentless
    table passes the same values again.
    """
    spaced = _CJK_RUN.sub(_spaced, body) if _CJK_ANY.search(body) else body
    words = camel_words(body)
    parts = " ".join(" ".join(camel_parts(w)) for w in words) if words else ""
    return spaced, parts


def _fold_char(c: str) -> str:
    """One character as ``unicode61 remove_diacritics 2`` folds it: lower case, and a Latin letter
    without its diacritics (``ü`` → ``u``, ``ệ`` → ``e``); other scripts keep theirs (``ά``, ``й``,
    ``ガ`` stay: SQLite folds only Latin)."""
    if "\u0300" <= c <= "\u036f":
        return ""  # a lone combining accent (text is composed first: rare)
    low = c.lower()
    parts = unicodedata.normalize("NFD", low)
    base = parts[0]
    if (base < "\u0250" or "\u1e00" <= base <= "\u1eff") and all(unicodedata.combining(x) for x in parts[1:]):
        return base
    return low


_FOLDED: dict[str, str] = {}


def fold(token: str) -> str:
    """A token as the index compares it: lower case, Latin diacritics removed (``Müller`` →
    ``muller``)."""
    if token.isascii():
        return token.lower()
    out = []
    for c in token:
        f = _FOLDED.get(c)
        if f is None:
            if len(_FOLDED) > 65_536:
                _FOLDED.clear()
            f = _FOLDED[c] = _fold_char(c)
        out.append(f)
    return "".join(out)


def tokens(text: str) -> Iterator[tuple[int, int, str]]:
    """The index's tokens of ``text``: ``(start, end, folded token)``, character offsets into ``text``.

    CJK characters are tokens of their own; everything else follows ``unicode61`` (runs of letters,
    digits and combining marks).
    """
    for match in _TOKEN.finditer(text):
        word = match.group()
        start = match.start()
        if word.isascii() or not _CJK_ANY.search(word):
            folded = fold(word)
            if folded:
                yield start, match.end(), folded
            continue
        for piece in _CJK_SPLIT.finditer(word):
            folded = fold(piece.group())
            if folded:
                yield start + piece.start(), start + piece.end(), folded
