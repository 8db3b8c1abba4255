"""The index's text rules: the Python tokenizer agrees with SQLite's ``unicode61`` exactly, CJK is
one token per character, camelCase parts go to the ``parts`` column, keys are scrubbed."""

from __future__ import annotations

import sqlite3

import pytest

from desktop.core.search._text import camel_parts, camel_words, clean_text, fold, index_columns, tokens

SAMPLE = (  # composed (NFC), as the index stores text
    "Müller café naïve été Straße STRASSE ẞ İstanbul ǅungla Ærø ﬁne ł đ ệ ά й ё ガ 가 "
    "parse_document QTextDocument HTTPServer httpx.AsyncClient Vec<u8> don't 3.14 x² utf8Decoder "
    "流式输出需要逐块渲染，已完成的块只渲染一次。 長い会話でも画面に見えている部分だけ 스트리밍 중에도 "
    "\u200bzero\u200bwidth tab\there new\nline"
)


def _sqlite_terms(text: str) -> list[str]:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE f USING fts5(b, tokenize='unicode61 remove_diacritics 2')")
    conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab(f, 'row')")
    conn.execute("INSERT INTO f VALUES (?)", (text,))
    return sorted(r[0] for r in conn.execute("SELECT term FROM v"))


def test_the_python_tokenizer_finds_exactly_the_tokens_sqlite_indexes() -> None:
    body, _ = index_columns(SAMPLE)
    assert sorted({t for _, _, t in tokens(SAMPLE)}) == _sqlite_terms(body)


def test_token_offsets_point_at_the_text() -> None:
    for start, end, folded in tokens(SAMPLE):
        assert fold(SAMPLE[start:end]) == folded


@pytest.mark.parametrize(("word", "folded"), [
    ("Müller", "muller"), ("NAÏVE", "naive"), ("Straße", "straße"), ("İ", "i"), ("ệ", "e"),
    ("ά", "ά"), ("ガ", "ガ"), ("가", "가"), ("Ærø", "ærø"),
])
def test_fold_removes_latin_diacritics_only_like_sqlite(word: str, folded: str) -> None:
    assert fold(word) == folded
    assert _sqlite_terms(word) == [folded]


def test_cjk_characters_are_tokens_of_their_own() -> None:
    assert [t for _, _, t in tokens("DB连接池")] == ["db", "连", "接", "池"]
    body, _ = index_columns("流式渲染")
    assert body.split() == ["流", "式", "渲", "染"]


def test_camel_case_parts_go_to_the_parts_column() -> None:
    assert camel_words("use QTextDocument and HTTPServer, not parse_document or HTTP") == [
        "QTextDocument", "HTTPServer"]
    assert camel_parts("QTextDocument") == ["Q", "Text", "Document"]
    assert camel_parts("HTTPServer") == ["HTTP", "Server"]
    assert index_columns("the QTextDocument class")[1] == "Q Text Document"
    assert index_columns("nothing here")[1] == ""


def test_decomposed_accents_are_composed_before_indexing() -> None:
    assert clean_text("e\u0301te\u0301 Mu\u0308ller") == "été Müller"
    assert [t for _, _, t in tokens(clean_text("e\u0301te\u0301"))] == ["ete"]


def test_clean_text_scrubs_known_keys_and_key_shapes_and_repairs_unicode() -> None:
    secret = "my-very-secret-key-1234567890"
    text = f"key {secret} and sk-abcdefghijklmnopqrstu and \ud83d lone"
    out = clean_text(text, [secret])
    assert secret not in out and "sk-abcdefghijklmnopqrstu" not in out
    assert "[redacted]" in out and "***" in out
    out.encode("utf-8")  # no lone surrogate left
