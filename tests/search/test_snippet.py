"""Snippets: plain text around a match with spans to highlight (never markup); ``match_spans``."""

from __future__ import annotations

from desktop.core.search import Snippet, make_snippet, match_spans, parse_query


def _marked(s: Snippet) -> list[str]:
    return [s.text[a:b] for a, b in s.spans]


def test_the_match_is_marked_in_a_window_around_it() -> None:
    body = "intro " * 100 + "the retry policy backs off\n\n  exponentially " + "tail " * 100
    s = make_snippet(body, parse_query("retry exponentially"))
    assert _marked(s) == ["retry", "exponentially"]
    assert s.text.startswith("…") and s.text.endswith("…")
    assert "\n" not in s.text and "  " not in s.text  # whitespace runs collapsed
    assert len(s.text) < 200


def test_phrases_prefixes_accents_cjk_and_camel_parts_are_marked() -> None:
    assert _marked(make_snippet("Wir fragen Herrn Müller.", parse_query("muller"))) == ["Müller"]
    phrase = make_snippet("a long retry policy here", parse_query('"retry policy"'))
    assert _marked(phrase) == ["retry policy"]
    assert _marked(make_snippet("Streaming streams", parse_query("stre", as_you_type=True))) == [
        "Streaming", "streams"]
    assert _marked(make_snippet("流式输出需要逐块渲染。", parse_query("渲染"))) == ["渲染"]
    assert _marked(make_snippet("use QTextDocument here", parse_query("document"))) == ["Document"]
    assert _marked(make_snippet("call parse_document()", parse_query("parse_document"))) == ["parse_document"]


def test_untrusted_text_stays_plain_text() -> None:
    body = '<img src=x onerror="alert(1)"> <b>retry</b> &amp;'
    s = make_snippet(body, parse_query("retry"))
    assert s.text == body  # the caller escapes; nothing is interpreted or added
    assert _marked(s) == ["retry"]


def test_no_match_shows_the_start_and_no_span() -> None:
    s = make_snippet("just some text " * 30, parse_query("absent"))
    assert s.spans == () and s.text.startswith("just some text") and s.text.endswith("…")
    assert make_snippet("short", ()) == Snippet("short", ())


def test_match_spans_for_find_in_a_conversation() -> None:
    text = "Retry, retry again: the RETRY policy."
    assert [text[a:b] for a, b in match_spans(text, "retry")] == ["Retry", "retry", "RETRY"]
    assert [text[a:b] for a, b in match_spans(text, '"retry policy"')] == ["RETRY policy"]
    assert match_spans(text, 'NEAR( "') == []
