"""The query syntax: words, "phrases", prefix*, as-you-type; FTS5 syntax is never passed through."""

from __future__ import annotations

import sqlite3

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from desktop.core.search import MIN_PREFIX, Term, match_expression, parse_query


def _fts() -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE fts USING fts5(body, parts, tokenize='unicode61 remove_diacritics 2')")
    conn.execute("INSERT INTO fts VALUES ('near the AND or NOT body: \"quoted\" text', '')")
    return conn


def test_words_phrases_and_prefixes() -> None:
    assert parse_query("retry  Policy") == (Term(("retry",)), Term(("policy",)))
    assert parse_query('"retry policy" works') == (Term(("retry", "policy")), Term(("works",)))
    assert parse_query("stream*") == (Term(("stream",), prefix=True),)
    assert parse_query('"exponential back"*') == (Term(("exponential", "back"), prefix=True),)
    assert parse_query("Müller") == (Term(("muller",)),)


def test_as_you_type_makes_the_last_word_a_prefix_unless_a_space_follows() -> None:
    assert parse_query("retry pol", as_you_type=True) == (Term(("retry",)), Term(("pol",), prefix=True))
    assert parse_query("retry pol ", as_you_type=True) == (Term(("retry",)), Term(("pol",)))
    assert parse_query('"retry pol', as_you_type=True) == (Term(("retry", "pol"), prefix=True),)
    assert parse_query('"retry pol"', as_you_type=True) == (Term(("retry", "pol")),)
    # a one-letter prefix would match almost everything: it stays a word
    assert parse_query("retry p", as_you_type=True)[-1] == Term(("p",))
    assert MIN_PREFIX == 2


def test_identifiers_and_cjk_become_phrases_camel_case_gets_its_parts() -> None:
    assert parse_query("parse_document") == (Term(("parse", "document")),)
    assert parse_query("httpx.AsyncClient") == (Term(("httpx", "asyncclient")),)
    assert parse_query("TextDocument") == (Term(("textdocument",), alt=("text", "document")),)
    assert parse_query("渲染") == (Term(("渲", "染")),)
    assert match_expression(parse_query("TextDocument doc*")) == (
        '("textdocument" OR "text document") AND "doc"*')


@pytest.mark.parametrize("text", [
    '"', '""', '"unbalanced', 'a"b"c', "*", "**", "-", "--x", ":", "body:", "body:text", "NEAR(", "NEAR(a b",
    "AND", "OR", "NOT", "a AND", "OR b", "NOT NOT", "(", ")", "())", "^start", "+plus", "{a b}", "a:b:c",
    "\x00", "'", "`rm -rf`", "\\", "\ud83d", "🙂", " ", "",
])
def test_fts_syntax_never_reaches_sqlite(text: str) -> None:
    conn = _fts()
    terms = parse_query(text, as_you_type=True)
    match = match_expression(terms)
    if match is not None:
        conn.execute("SELECT count(*) FROM fts WHERE fts MATCH ?", (match,)).fetchone()
    words = {t for term in terms for t in term.tokens}
    assert not words & {"(", ")", '"', "*", ":", "-"}


def test_syntax_words_are_searched_as_words() -> None:
    conn = _fts()
    for text in ("AND", "NOT", "near", "body:"):
        match = match_expression(parse_query(text))
        assert match is not None
        assert conn.execute("SELECT count(*) FROM fts WHERE fts MATCH ?", (match,)).fetchone()[0] == 1


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list('ab "*-:()^+NEAROTD\u00fc\u6e32_.\t')), max_size=40),
       st.booleans())
def test_any_query_is_valid_fts(text: str, typing: bool) -> None:
    match = match_expression(parse_query(text, as_you_type=typing))
    if match is not None:
        _fts().execute("SELECT count(*) FROM fts WHERE fts MATCH ?", (match,)).fetchone()


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=60), st.booleans())
def test_any_text_at_all_is_valid_fts(text: str, typing: bool) -> None:
    match = match_expression(parse_query(text, as_you_type=typing))
    if match is not None:
        _fts().execute("SELECT count(*) FROM fts WHERE fts MATCH ?", (match,)).fetchone()
