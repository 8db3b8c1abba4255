"""The line of a search hit: a window of the message around the first match, with the matches marked.

Model output is untrusted, so a snippet is plain text plus character spans, never markup: the UI
escapes the text (or draws it as plain text) and highlights ``text[start:end]`` for each span.
Matches are found with the index's own tokenizer (``_text.tokens``), so what is highlighted is what
the index matched: whole tokens, prefixes, phrases, CJK characters and camelCase parts. Whitespace
runs (line breaks included) are shown as one space.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from ._query import Term, parse_query
from ._text import camel_spans, fold, tokens

__all__ = ["Snippet", "make_snippet", "match_spans", "SNIPPET_CHARS"]

SNIPPET_CHARS = 160
"""Characters of message text in a snippet (before whitespace is collapsed)."""
_LEAD = 40  # characters shown before the first match
_SCAN_LIMIT = 200_000  # a match further into a huge message is not looked for (the start is shown)
_CANDIDATES = 8  # places checked where a term's first token occurs before scanning from the start
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True, slots=True)
class Snippet:
    """Plain text and the spans to highlight in it.

    Attributes:
        text: Part of the message, whitespace runs collapsed, ``…`` where it was cut.
        spans: ``(start, end)`` character offsets into ``text``, sorted, not overlapping.
    """

    text: str
    spans: tuple[tuple[int, int], ...] = ()


def _same(words: tuple[str, ...], prefix: bool, seq: Sequence[str]) -> bool:
    last = len(words) - 1
    for i, word in enumerate(words):
        if seq[i] != word and not (prefix and i == last and seq[i].startswith(word)):
            return False
    return True


def _camel_matches(raw: str, start: int, terms: tuple[Term, ...]) -> Iterator[tuple[int, int]]:
    """Terms matching camelCase parts inside one token (``document`` in ``QTextDocument``)."""
    parts = camel_spans(raw)
    if len(parts) < 2:
        return
    folded = [fold(raw[a:b]) for a, b in parts]
    for term in terms:
        for words in (term.tokens, term.alt):
            k = len(words)
            if not k or k > len(parts):
                continue
            for i in range(len(parts) - k + 1):
                if _same(words, term.prefix, folded[i : i + k]):
                    yield start + parts[i][0], start + parts[i + k - 1][1]


def _matches(text: str, terms: tuple[Term, ...], limit: int | None) -> Iterator[tuple[int, int]]:
    """Spans of every term occurrence in ``text`` (in order of their end), looking at most ``limit``
    characters into it."""
    singles = [(t.tokens[0], t.prefix) for t in terms if len(t.tokens) == 1]
    phrases = [t for t in terms if len(t.tokens) > 1]
    recent: deque[tuple[int, str]] = deque(maxlen=max(len(t.tokens) for t in terms))
    for start, end, folded in tokens(text):
        if limit is not None and start > limit:
            return
        recent.append((start, folded))
        for word, prefix in singles:
            if folded == word or (prefix and folded.startswith(word)):
                yield start, end
        for term in phrases:
            k = len(term.tokens)
            if k <= len(recent) and _same(term.tokens, term.prefix, [r[1] for r in list(recent)[-k:]]):
                yield recent[-k][0], end
        if end - start > 2 and not text[start + 1 : end].islower() and not folded.isdigit():
            yield from _camel_matches(text[start:end], start, terms)


def _merge(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for s, e in sorted(spans):
        if out and s <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], e))
        else:
            out.append((s, e))
    return out


def _collapse(text: str, spans: list[tuple[int, int]]) -> tuple[str, list[tuple[int, int]]]:
    """``text`` with whitespace runs as one space, and ``spans`` moved to match."""
    def moved(offset: int) -> int:
        return len(_SPACE.sub(" ", text[:offset]))

    return _SPACE.sub(" ", text), [(moved(s), moved(e)) for s, e in spans]


def _folded_text(text: str) -> str | None:
    """``text`` folded like the index's tokens, character for character (None in the rare case
    where folding changes the length, so offsets would not agree)."""
    table = {ord(c): fold(c) for c in set(text) if not c.isascii()}
    folded = text.translate(table).lower()
    return folded if len(folded) == len(text) else None


def _anchor(term: Term) -> tuple[str, int]:
    """The token of a term to look for (the longest: likely the rarest) and how many characters of
    the term may come before it."""
    i = max(range(len(term.tokens)), key=lambda k: len(term.tokens[k]))
    return term.tokens[i], sum(len(t) + 2 for t in term.tokens[:i])


def _occurrences(text: str, terms: tuple[Term, ...]) -> list[int]:
    out: list[int] = []
    for term in terms:
        token, before = _anchor(term)
        pos = text.find(token)
        while pos >= 0 and len(out) < _CANDIDATES * len(terms):
            out.append(max(0, pos - before))
            pos = text.find(token, pos + 1)
    return out


def _candidates(body: str, terms: tuple[Term, ...]) -> list[int]:
    """Where a term may start: where its longest token occurs in the lower-cased text, or (for a
    term that needs accents folded, ``muller`` in ``Müller``) in the folded text."""
    lowered = body.lower()
    found = _occurrences(lowered, terms) if len(lowered) == len(body) else []
    if not found and not body.isascii():
        folded = _folded_text(body)
        found = _occurrences(folded, terms) if folded is not None else []
    return sorted(found)[:_CANDIDATES]


def _first_match(body: str, terms: tuple[Term, ...]) -> tuple[int, int] | None:
    """A match to show: found fast where a term's first token occurs, checked there with the
    tokenizer; else the first match of a scan from the start."""
    reach = _LEAD + max(sum(len(w) + 8 for w in t.tokens) for t in terms) + 64
    for pos in _candidates(body, terms):
        start = max(0, pos - _LEAD)
        found = next(_matches(body[start : pos + reach], terms, None), None)
        if found is not None:
            return start + found[0], start + found[1]
    return next(_matches(body, terms, _SCAN_LIMIT), None)


def make_snippet(body: str, terms: tuple[Term, ...], width: int = SNIPPET_CHARS) -> Snippet:
    """The snippet of ``body`` for ``terms``: about ``width`` characters from a little before a
    match (the start of the message when no match is found within the first 200,000 characters)."""
    first = _first_match(body, terms) if terms else None
    begin = 0
    if first is not None and first[0] > _LEAD:
        begin = first[0] - _LEAD
        space = body.rfind(" ", max(0, begin - 20), begin)
        if space >= 0:
            begin = space + 1
        begin = min(begin, max(0, len(body) - width))
        begin = min(begin, first[0])
    end = min(len(body), begin + max(width, (first[1] - begin) if first else 0))
    window = body[begin:end]
    spans = _merge(list(_matches(window, terms, None))) if terms else []
    spans = [(s, min(e, len(window))) for s, e in spans if s < len(window)]
    text, spans = _collapse(window, spans)
    lead = text[:1] == " "
    text = text.strip()
    if lead:
        spans = [(s - 1, e - 1) for s, e in spans]
    spans = [(max(0, s), min(e, len(text))) for s, e in spans if e > 0 and s < len(text)]
    if begin > 0:
        text = "…" + text
        spans = [(s + 1, e + 1) for s, e in spans]
    if end < len(body):
        text += "…"
    return Snippet(text, tuple(spans))


def match_spans(text: str, query: str, *, as_you_type: bool = False) -> list[tuple[int, int]]:
    """Where ``query`` matches in ``text``, as the index would match it: sorted ``(start, end)``
    spans (e.g. to find and highlight in an open conversation). Empty when the query has no
    searchable term.

    Unlike the index, which needs every term somewhere in a message, this lists the occurrences
    of each term wherever it is.
    """
    terms = parse_query(query, as_you_type=as_you_type)
    return _merge(list(_matches(text, terms, None))) if terms else []
