"""What the user typed, parsed into terms, and the FTS5 ``MATCH`` expression built from them.

The syntax is small on purpose and never raises:

* words: every word must appear (``retry policy``); case and accents do not matter;
* ``"phrases in quotes"``: the words in this order, next to each other (an unclosed quote runs to
  the end of the query);
* prefixes: ``stream*`` (a word starting with ``stream``); while typing (``as_you_type``) the last
  word is a prefix too, unless the query ends with a space;
* a word with punctuation inside is a phrase of its parts: ``parse_document`` is ``"parse
  document"``, ``httpx.AsyncClient`` is ``"httpx asyncclient"``; a camelCase word also matches its
  parts (``TextDocument`` finds ``QTextDocument``);
* CJK is a phrase of its characters (``渲染``).

Everything else is text: FTS5's own syntax (``AND``, ``OR``, ``NOT``, ``NEAR(``, ``-``, ``:``,
``^``, ``+``, parentheses, column filters) is never passed through. The expression is built from
the parsed tokens, each quoted, so no input can make SQLite raise a syntax error.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

from ._text import camel_parts, fold, is_cjk, tokens

__all__ = ["Term", "parse_query", "match_expression", "MIN_PREFIX", "MAX_TERMS", "MAX_QUERY_CHARS"]

MIN_PREFIX = 2
"""Shortest prefix searched as one (a one-letter prefix matches nearly everything: it is a word)."""
MAX_TERMS = 16
"""Terms beyond this many are ignored."""
MAX_QUERY_CHARS = 1_000
"""Characters of a query beyond this many are ignored."""
_MAX_TOKENS = 32


@dataclass(frozen=True, slots=True)
class Term:
    """One thing that must appear.

    Attributes:
        tokens: Folded tokens that must appear in this order, next to each other.
        prefix: The last token is a prefix.
        alt: For a one-token camelCase word: its folded parts, matched as an alternative.
    """

    tokens: tuple[str, ...]
    prefix: bool = False
    alt: tuple[str, ...] = ()


def _term(text: str, *, prefix: bool) -> Term | None:
    text = unicodedata.normalize("NFC", text)
    found = list(tokens(text))[:_MAX_TOKENS]
    if not found:
        return None
    folded = tuple(t for _, _, t in found)
    last = folded[-1]
    prefix = prefix and len(last) >= MIN_PREFIX and not is_cjk(last)
    alt: tuple[str, ...] = ()
    if len(found) == 1:
        start, end, _ = found[0]
        parts = camel_parts(text[start:end])
        if len(parts) > 1:
            alt = tuple(fold(p) for p in parts)
    return Term(folded, prefix, alt)


def parse_query(text: str, *, as_you_type: bool = False) -> tuple[Term, ...]:
    """The terms of a query (see the module doc); empty when nothing searchable is left.

    Args:
        text: What the user typed (any text).
        as_you_type: Treat the last word as a prefix unless the text ends with whitespace.
    """
    text = text[:MAX_QUERY_CHARS]
    raw: list[tuple[str, bool, bool]] = []  # (text, explicit prefix, open at the end)
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c.isspace():
            i += 1
            continue
        if c == '"':
            close = text.find('"', i + 1)
            end = n if close < 0 else close
            body = text[i + 1 : end]
            i = n if close < 0 else close + 1
            star = i < n and text[i] == "*"
            if star:
                i += 1
            raw.append((body, star, close < 0))
            continue
        j = i
        while j < n and not text[j].isspace() and text[j] != '"':
            j += 1
        word = text[i:j]
        i = j
        raw.append((word, word.endswith("*"), i >= n))
    terms: list[Term] = []
    for k, (body, star, open_end) in enumerate(raw):
        typing = as_you_type and open_end and k == len(raw) - 1 and not text[-1:].isspace()
        term = _term(body, prefix=star or typing)
        if term is not None and term not in terms:
            terms.append(term)
        if len(terms) >= MAX_TERMS:
            break
    return tuple(terms)


def _phrase(words: tuple[str, ...], prefix: bool) -> str:
    quoted = '"' + " ".join(words).replace('"', '""') + '"'
    return quoted + "*" if prefix else quoted


def match_expression(terms: tuple[Term, ...]) -> str | None:
    """The FTS5 ``MATCH`` text for ``terms`` (every term required), or None when there are none."""
    if not terms:
        return None
    parts: list[str] = []
    for term in terms:
        main = _phrase(term.tokens, term.prefix)
        if term.alt:
            parts.append(f"({main} OR {_phrase(term.alt, term.prefix)})")
        else:
            parts.append(main)
    return " AND ".join(parts)
