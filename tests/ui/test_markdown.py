"""The Markdown renderer (markdown-it-py to Qt rich text): structure, escaping, no resource loads.

What the reader sees is checked on a real ``MarkdownView``: its document's plain text and the
hrefs of its anchors (``test_md_corpus.py`` holds the corpus of edge cases and realistic answers).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PySide6.QtCore import QUrl
from PySide6.QtGui import QTextDocument
from work_count import python_lines

from desktop.ui.markdown.parser import MAX_NESTING
from desktop.ui.markdown.render import render_markdown
from desktop.ui.markdown.rich_text import safe_link
from desktop.ui.markdown.theme import MarkdownTheme
from desktop.ui.markdown.view import MarkdownView


def plain(html_text: str) -> str:
    doc = QTextDocument()
    doc.setHtml(html_text)
    return doc.toPlainText()


def shown_view(qapp: Any, src: str) -> MarkdownView:
    view = MarkdownView()
    view.set_markdown(src, MarkdownTheme())
    return view


def test_headings_lists_code_tables_links(qapp: Any) -> None:
    src = (
        "# Title\n\nSome **bold**, *it*, ~~gone~~ and `x < y`.\n\n"
        "- one\n- two\n  - nested\n\n1. first\n2. second\n\n"
        "| a | b |\n|:--|--:|\n| 1 | 2 |\n\n"
        "```python\nif a < b:\n    pass\n```\n\n> quoted\n\n[docs](https://example.com/x) https://foo.org/y."
    )
    out = render_markdown(src)
    assert "<h1>Title</h1>" in out
    assert "<b>bold</b>" in out and "<i>it</i>" in out and "<s>gone</s>" in out
    assert "<code>x &lt; y</code>" in out
    assert out.count("<ul") == 2 and "<ol" in out
    assert "<th align='left'>a</th>" in out and "<td align='right'>2</td>" in out
    assert "<blockquote>" in out
    assert '<a href="https://example.com/x">docs</a>' in out
    assert '<a href="https://foo.org/y">https://foo.org/y</a>.' in out
    text = plain(out)
    for piece in ("Title", "bold", "x < y", "nested", "second", "if a < b:\n    pass", "quoted", "docs"):
        assert piece in text
    view = shown_view(qapp, src)
    assert view.document().toPlainText() == text
    assert view.document().begin().blockFormat().headingLevel() == 1
    assert "**" not in text and "~~" not in text and "```" not in text and "|:--" not in text


def test_untrusted_html_is_escaped_and_images_become_links(qapp: Any) -> None:
    src = '<img src="http://evil/x.png"> <script>alert(1)</script>\n\n![cat](http://evil/cat.png) ![f](file:///etc/passwd)'
    out = render_markdown(src)
    assert "<img" not in out and "<script" not in out
    assert "url(" not in out
    assert "&lt;img" in out
    assert '<a href="http://evil/cat.png">[image: cat]</a>' in out
    assert "file:" not in out  # a non-web link is not made clickable
    assert "[image: f]" in plain(out)
    assert "<img src=\"http://evil/x.png\"> <script>alert(1)</script>" in plain(out)  # shown as text


@pytest.mark.parametrize(
    "url, ok",
    [
        ("https://a.b/c", True),
        ("http://x", True),
        ("mailto:a@b.c", True),
        ("javascript:alert(1)", False),
        ("file:///etc/passwd", False),
        ("data:text/html,x", False),
        ('https://a"onmouseover=', False),
    ],
)
def test_safe_link(url: str, ok: bool) -> None:
    assert (safe_link(url) is not None) is ok


def test_javascript_link_is_plain_text() -> None:
    out = render_markdown("[click](javascript:alert(1))")
    assert "<a " not in out and "click" in out
    assert "javascript" not in plain(out)  # the reader sees the link text, not raw Markdown


def test_unclosed_fence_and_code_keep_markdown_literal() -> None:
    out = render_markdown("```\n**not bold** <b>\n")
    assert "<b>not" not in out
    assert "**not bold** &lt;b&gt;" in out


def test_markdown_view_loads_no_resources(qapp: Any, tmp_path: Path) -> None:
    view = MarkdownView()
    view.set_markdown("![x](file:///etc/hostname) [a](https://example.com)", MarkdownTheme())
    for url in ("file:///etc/hostname", "https://example.com/x.png"):
        assert not view.loadResource(2, QUrl(url))
    # Even raw HTML with an image (never produced by the renderer) reads no file.
    target = tmp_path / "secret.txt"
    target.write_text("secret")
    view.setHtml(f"<img src='{QUrl.fromLocalFile(str(target)).toString()}'>")
    view.document().adjustSize()
    assert not view.document().resource(2, QUrl.fromLocalFile(str(target)))
    view.deleteLater()


def test_large_input_is_linear() -> None:
    """Ten times the input, ten times the work: counted in Python lines executed, not timed (the time
    is benchmarks/hot_paths.py's markdown.linear row)."""
    block = "## Section\n\nSome *text* with `code` and a [link](https://x.y).\n\n- a\n- b\n\n"
    block += "```\ncode\n```\n\n"
    render_markdown(block)  # first-use work (caches, lazy imports) is not the render's
    small = python_lines(lambda: render_markdown(block * 20))
    big = python_lines(lambda: render_markdown(block * 200))
    assert 9.0 < big / small < 11.0, (small, big)


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab <>&\"'`*_~#-|[]()!\n:/.1\\")), max_size=120))
def test_any_input_renders_escaped(text: str) -> None:
    out = render_markdown(text)
    # No tag other than the renderer's own subset can appear.
    tags = set(re.findall(r"</?([a-zA-Z0-9]+)", out))
    assert tags <= {"p", "br", "b", "i", "s", "code", "pre", "a", "h1", "h2", "h3", "h4", "h5", "h6", "ul",
                    "ol", "li", "table", "tr", "td", "th", "blockquote", "hr", "span"}
    assert "<img" not in out and "url(" not in out
    assert "\ue000" not in out and "\ue001" not in out


@pytest.mark.parametrize(
    ("src", "tag"),
    [(">" * 700 + " boom", "<blockquote>"), ("- " * 400 + "x", "<ul"), ("1. " * 300 + "y", "<ol"),
     ("> - " * 300 + "z", "<blockquote>")],
)
def test_deep_nesting_is_capped(src: str, tag: str) -> None:
    out = render_markdown(src)  # raised RecursionError before the depth cap
    assert 0 < out.count("<blockquote>") + out.count("<ul") + out.count("<ol") <= MAX_NESTING
    assert out.count(tag) >= 5
    # The markers past the cap stay visible as text, and the innermost text still renders.
    assert any(w in out for w in ("boom", "x", "y", "z"))
    assert any(m in out for m in ("&gt;&gt;", "- - ", "1. 1. ", "&gt; - "))


def test_nesting_below_the_cap_still_nests() -> None:
    out = render_markdown("> > > deep\n\n- a\n  - b\n    - c")
    assert out.count("<blockquote>") == 3 and out.count("<ul") == 3


@pytest.mark.parametrize(("opener", "count"), [("**a ", 20000), ("*a ", 20000), ("_a ", 20000),
                                              ("~~a ", 20000), ("[a](", 8000), ("![a](", 8000),
                                              ("<http://a", 8000)])
def test_unclosed_inline_openers_render_in_linear_work(opener: str, count: int) -> None:
    # Each took 8-37 s before (quadratic rescans): twice the openers must be twice the work, counted
    # in Python lines executed (the time is benchmarks/hot_paths.py's markdown.openers row).
    render_markdown(opener * 10)  # first-use work is not the render's
    once = python_lines(lambda: render_markdown(opener * 500))
    twice = python_lines(lambda: render_markdown(opener * 1000))
    assert 1.8 < twice / once < 2.2, (once, twice)
    out = render_markdown(opener * count)
    assert "<b>" not in out and "<i>" not in out and "<s>" not in out and "<a href=\"a" not in out


def test_emphasis_pairs_like_commonmark() -> None:
    out = render_markdown("**a __b** c__ *x* _y_ ~~z~~ a*b*c a_b_c 2 * 3 * 4")
    assert "<b>a __b</b> c__" in out
    assert "<i>x</i> <i>y</i> <s>z</s>" in out
    assert "a<i>b</i>c a_b_c 2 * 3 * 4" in out  # CommonMark: * works inside words, _ does not


def test_code_span_inside_link_text() -> None:
    out = render_markdown("[`code` here](https://x.org) and [`a<b`](https://y.org)")
    assert '<a href="https://x.org"><code>code</code> here</a>' in out
    assert '<a href="https://y.org"><code>a&lt;b</code></a>' in out


def test_link_url_with_parentheses() -> None:
    out = render_markdown("[w](https://en.wikipedia.org/wiki/A_(b)) [j](javascript:alert(1))")
    assert '<a href="https://en.wikipedia.org/wiki/A_(b)">w</a>' in out
    assert 'href="javascript' not in out


def test_a_renderer_failure_falls_back_to_escaped_plain_text(monkeypatch: Any, caplog: Any) -> None:
    import desktop.ui.markdown.render as md

    def broken(self: Any, tokens: Any) -> Any:
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(md._Renderer, "blocks", broken)
    with caplog.at_level("ERROR", logger="desktop.ui.markdown.render"):
        blocks = md.render_markdown_blocks("**bold** <img src=x>")
    assert len(blocks) == 1 and "&lt;img src=x&gt;" in blocks[0].html and "<img" not in blocks[0].html
    assert "plain text" in caplog.text


def test_copying_a_selection_keeps_list_markers_and_table_columns(qapp: Any) -> None:
    from PySide6.QtGui import QGuiApplication, QTextCursor

    src = ("Intro &amp; more\n\n- one\n- two\n  - nested **b**\n\n3. third\n4. fourth\n\n"
           "| name | value |\n|---|---|\n| a | `1 \\| 2` |\n\nThe end.")
    view = shown_view(qapp, src)
    view.selectAll()
    view.copy()
    clipboard = QGuiApplication.clipboard()
    assert clipboard.text() == ("Intro & more\n• one\n• two\n  • nested b\n3. third\n4. fourth\n"
                                "name\tvalue\na\t1 | 2\n\nThe end.")  # the block after a table: empty
    assert "<" in (clipboard.mimeData().html() or "")  # the rich text is still offered
    # A selection starting inside an item: no marker for the cut item, markers for whole ones.
    doc = view.document()
    start = doc.find("ne").selectionStart()  # inside "one"
    end = doc.find("third").position()
    cursor = QTextCursor(doc)
    cursor.setPosition(start)
    cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
    view.setTextCursor(cursor)
    view.copy()
    assert clipboard.text() == "ne\n• two\n  • nested b\n3. third"
