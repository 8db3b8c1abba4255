"""The benchmark corpus (benchmarks/corpus.py): deterministic, shaped like real answers, deltas like tokens.

The shape of the 20k-delta answer is pinned: docs/PERFORMANCE.md documents it and the before/after
figures of issue 11 are only comparable while it stays the same.
"""

from __future__ import annotations

import json

import pytest

from benchmarks.corpus import (
    LANGUAGES,
    corpus_stats,
    make_answer,
    make_markdown_messages,
    openai_stream_body,
    sentinel,
    split_deltas,
    stream_answer,
)

PINNED_SHAPE = {"chars": 136_003, "bytes": 139_730, "headings": 15, "code_blocks": 23, "code_lines": 749,
                "tables": 13, "table_rows": 97, "list_items": 713, "quote_lines": 135, "links": 49,
                "non_ascii": 1_856}


def test_the_20k_answer_has_the_documented_shape() -> None:
    text = stream_answer(20_000)
    assert corpus_stats(text) == PINNED_SHAPE
    assert text == make_answer(11, int(20_000 * 6.8))  # deterministic: same seed, same text
    assert text.endswith(sentinel(11))


def test_every_answer_has_every_construct_even_a_small_one() -> None:
    for seed, size in ((1, 1_360), (2, 1_400), (3, 30_000)):
        text = make_answer(seed, size)
        shape = corpus_stats(text)
        for key in ("headings", "code_blocks", "tables", "list_items", "quote_lines", "non_ascii"):
            assert shape[key] > 0, (seed, key)
        assert "`a \\| b`" in text  # a pipe inside a code span in a table
        assert any(f"```{lang}\n" in text for lang in LANGUAGES)
        assert "\n>   - " in text or "\n> - " in text  # a list inside a quote
        assert any("\u4e00" <= c <= "\u9fff" for c in text)  # CJK
        assert text.endswith(sentinel(seed))
    big = make_answer(4, 60_000)
    assert corpus_stats(big)["links"] >= 10  # a link every few hundred words
    assert {lang for lang in LANGUAGES if f"```{lang}\n" in big} == set(LANGUAGES)


def test_code_blocks_are_5_to_80_lines() -> None:
    lines = stream_answer(20_000).split("\n")
    fences = [i for i, ln in enumerate(lines) if ln.startswith("```")]
    sizes = [b - a - 1 for a, b in zip(fences[::2], fences[1::2], strict=True)]
    assert sizes and min(sizes) >= 5 and max(sizes) <= 80


@pytest.mark.parametrize("n", [1, 200, 20_000])
def test_split_deltas_cuts_exactly_n_pieces_of_1_to_8_characters(n: int) -> None:
    text = stream_answer(n) if n >= 200 else "x"
    deltas = split_deltas(text, n)
    assert len(deltas) == n and "".join(deltas) == text
    assert all(1 <= len(d) <= 8 for d in deltas)
    assert deltas == split_deltas(text, n)  # seeded


def test_split_deltas_cuts_inside_words_syntax_and_grapheme_clusters() -> None:
    text = stream_answer(20_000)
    deltas = split_deltas(text, 20_000)
    joins = [(a, b) for a, b in zip(deltas, deltas[1:], strict=False)]
    assert any(a[-1:].isalpha() and b[:1].isalpha() for a, b in joins)  # inside a word
    assert any(a.endswith("*") and b.startswith("*") for a, b in joins)  # inside "**"
    assert any(a.endswith("`") and b.startswith("`") for a, b in joins)  # inside a fence
    assert any(b[:1] in ("\u200d", "\ufe0f", "\u0301", "\U0001f3fd") or "\U0001f1e9" == a[-1:]
               for a, b in joins)  # inside an emoji ZWJ sequence, a modifier, a flag or an accent


def test_split_deltas_rejects_impossible_sizes() -> None:
    with pytest.raises(ValueError):
        split_deltas("abc", 4)
    with pytest.raises(ValueError):
        split_deltas("x" * 17, 2)


def test_openai_body_carries_the_deltas_in_order() -> None:
    deltas = ["Hé", "llo ", "🇩", "🇪 ", "`a \\| b`", "\n"]
    body = openai_stream_body(deltas, model="m").decode("utf-8")
    events = [json.loads(line[6:]) for line in body.split("\n\n") if line.startswith("data: {")]
    texts = [e["choices"][0]["delta"].get("content") for e in events if e["choices"]]
    assert texts == ["", *deltas, None]
    assert events[-1]["usage"]["completion_tokens"] == len(deltas)
    assert body.endswith("data: [DONE]\n\n")


def test_markdown_messages_alternate_and_are_fresh_objects() -> None:
    first = make_markdown_messages(40)
    second = make_markdown_messages(40)
    assert [m.role for m in first] == ["user", "assistant"] * 20
    assert [m.content for m in first] == [m.content for m in second]
    assert all(a is not b for a, b in zip(first, second, strict=True))
    answers = [m.content for m in first if m.role == "assistant"]
    assert all(corpus_stats(t)["headings"] >= 1 for t in answers)
    assert sum(corpus_stats(t)["code_blocks"] >= 1 for t in answers) >= len(answers) // 2
    assert all(m.usage is not None and m.model for m in first if m.role == "assistant")


def test_the_2000_message_node_has_the_documented_shape() -> None:
    answers = [m.content for m in make_markdown_messages(2_000) if m.role == "assistant"]
    totals: dict[str, int] = {}
    for text in answers:
        for key, value in corpus_stats(text).items():
            totals[key] = totals.get(key, 0) + value
    assert len(answers) == 1_000
    assert (min(map(len, answers)), max(map(len, answers)), totals["chars"]) == (318, 2_498, 1_366_113)
    assert (totals["headings"], totals["code_blocks"], totals["code_lines"], totals["tables"]) == \
        (1_235, 1_056, 5_869, 968)
