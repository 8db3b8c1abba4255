"""What a reader sees of CommonMark edge cases and realistic answers: the plain text and the links
of a real ``MarkdownView`` (never the HTML string)."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import QUrl
from PySide6.QtGui import QTextCharFormat

from desktop.ui.markdown.theme import MarkdownTheme
from desktop.ui.markdown.view import MarkdownView


def shown(src: str) -> tuple[str, list[tuple[str, str]], MarkdownView]:
    """Plain text, ``(anchor text, href)`` pairs and the view showing ``src``."""
    view = MarkdownView()
    view.set_markdown(src, MarkdownTheme())
    doc = view.document()
    links: list[tuple[str, str]] = []
    last_end = -1
    block = doc.begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            frag = it.fragment()
            fmt = frag.charFormat()
            if fmt.isAnchor():
                if links and links[-1][1] == fmt.anchorHref() and frag.position() == last_end:
                    links[-1] = (links[-1][0] + frag.text(), links[-1][1])  # one link, several formats
                else:
                    links.append((frag.text(), fmt.anchorHref()))
                last_end = frag.position() + frag.length()
            it += 1
        block = block.next()
    return doc.toPlainText(), links, view


def lines(text: str) -> list[str]:
    return [line for line in text.split("\n") if line.strip()]


def test_setext_headings_show_no_underline(qapp: Any) -> None:
    text, _, view = shown("Title\n=====\n\nSub title\n---\n\nbody text")
    assert lines(text) == ["Title", "Sub title", "body text"]
    levels = []
    block = view.document().begin()
    while block.isValid():
        levels.append(block.blockFormat().headingLevel())
        block = block.next()
    assert levels[:3] == [1, 2, 0]


def test_reference_links_resolve(qapp: Any) -> None:
    src = (
        "See [the docs][1] and [Guide], or [missing][nope].\n\n"
        "[1]: https://a.example/docs\n[guide]: <https://a.example/g> 'T'"
    )
    text, links, _ = shown(src)
    assert lines(text) == ["See the docs and Guide, or [missing][nope]."]
    assert links == [("the docs", "https://a.example/docs"), ("Guide", "https://a.example/g")]


def test_entities_and_backslash_escapes(qapp: Any) -> None:
    text, _, _ = shown(r"&amp; &copy; &#169; &#x41; &lt;b&gt; &nosuch; \*not em\* \_x\_ \# \[y\] \\ \`z\`")
    assert lines(text) == [r"& © © A <b> &nosuch; *not em* _x_ # [y] \ `z`"]


def test_nested_lists_in_quotes(qapp: Any) -> None:
    text, _, view = shown("> Quote:\n> - a\n>   - b\n>     1. c\n> - d\n\nafter")
    assert lines(text) == ["Quote:", "a", "b", "c", "d", "after"]
    indents = {}
    block = view.document().begin()
    while block.isValid():
        if block.textList() is not None:
            indents[block.text()] = block.textList().format().indent()
        block = block.next()
    assert indents["a"] < indents["b"] < indents["c"] and indents["d"] == indents["a"]


def test_table_with_pipes_in_code_spans_and_alignment(qapp: Any) -> None:
    text, _, view = shown("| op | meaning |\n|:---|---:|\n| `a \\| b` | either |\n| `x` | **one** |")
    assert lines(text) == ["op", "meaning", "a | b", "either", "x", "one"]
    assert "---" not in text and "`" not in text
    cursor = view.document().find("either")
    assert cursor.currentTable() is not None


def test_task_lists(qapp: Any) -> None:
    text, _, _ = shown("- [ ] write tests\n- [x] ship it\n- [ ]not a task")
    assert lines(text) == ["☐ write tests", "☑ ship it", "[ ]not a task"]


def test_hard_and_soft_breaks(qapp: Any) -> None:
    text, _, _ = shown("two spaces  \nbackslash\\\nsoft\nbreak")
    assert lines(text) == ["two spaces", "backslash", "soft", "break"]


def test_fenced_code_with_longer_fences_and_tildes(qapp: Any) -> None:
    text, _, _ = shown("````markdown\n```python\nprint(1)\n```\n````\n\n~~~\n~~~ not the end\n~~~")
    assert lines(text) == ["markdown", "```python", "print(1)", "```", "code", "~~~ not the end"]


def test_tex_between_dollars_is_shown_as_code_and_prices_stay_text(qapp: Any) -> None:
    src = ("With $a_1 * b_2 * c$ and $$E=mc^2$$ inline; it costs $5 and $10, or $ 3 $.\n\n"
           "$$\n\\sum_{i=1}^{n} x_i * y_i\n$$\n\nAfter.")
    text, _, view = shown(src)
    # Markdown inside the dollars is left alone (no emphasis eats the asterisks or underscores).
    assert lines(text) == ["With a_1 * b_2 * c and E=mc^2 inline; it costs $5 and $10, or $ 3 $.",
                           "latex", "\\sum_{i=1}^{n} x_i * y_i", "After."]
    cursor = view.document().find("a_1 * b_2")
    assert "Mono" in cursor.charFormat().fontFamilies()[0] or cursor.charFormat().fontFixedPitch()
    assert [view.code_for(b) for b in view.copy_buttons] == ["\\sum_{i=1}^{n} x_i * y_i"]


def test_tex_between_brackets_is_shown_as_code(qapp: Any) -> None:
    src = ("So \\(a_1 * b_2 * c\\) holds, and [a link](https://x.example) stays.\n\n"
           "\\[\nx_1 * y_1 = z\n\\]\n\nEnd.")
    text, links, view = shown(src)
    assert lines(text) == ["So a_1 * b_2 * c holds, and a link stays.", "latex", "x_1 * y_1 = z", "End."]
    assert links == [("a link", "https://x.example")]
    assert [view.code_for(b) for b in view.copy_buttons] == ["x_1 * y_1 = z"]


def test_display_maths_right_under_a_line_of_text(qapp: Any) -> None:
    """Models put display maths straight under the sentence introducing it; it reads as a block
    (like a fence, it ends the paragraph), whichever delimiters, and the text after it goes on."""
    src = ("The energy is:\n\\[\nE = mc^2\n\\]\nwhere c is the speed of light.\n"
           "And the sum:\n$$\n\\sum_i x_i\n$$\nDone; prices like $5 and $10 stay text.")
    text, _, view = shown(src)
    assert lines(text) == ["The energy is:", "latex", "E = mc^2", "where c is the speed of light.",
                           "And the sum:", "latex", "\\sum_i x_i", "Done; prices like $5 and $10 stay text."]
    assert [view.code_for(b) for b in view.copy_buttons] == ["E = mc^2", "\\sum_i x_i"]
    # A line starting with $$ that never closes is text, and the paragraph goes on.
    text, _, _ = shown("Costs:\n$$ is what it costs\nno maths here")
    assert lines(text) == ["Costs:", "$$ is what it costs", "no maths here"]


def test_footnotes_show_their_labels_where_they_are(qapp: Any) -> None:
    src = (
        "A claim.[^1] Another[^note], and `[^x]` in code.\n\n"
        "[^1]: The source: https://a.example/paper\n"
        "[^note]: A longer note\n    on two lines.\n\n"
        "[^2]:\n    - a list in a note\n\n"
        "[^3]: https://b.example/only\n"
    )
    text, links, _ = shown(src)
    assert lines(text) == [
        "A claim.[1] Another[note], and [^x] in code.",
        "[1] The source: https://a.example/paper",
        "[note] A longer note",
        "on two lines.",
        "[2]",
        "a list in a note",
        "[3] https://b.example/only",  # without footnotes, a link reference definition: not shown at all
    ]
    assert [href for _text, href in links] == ["https://a.example/paper", "https://b.example/only"]


def test_inline_footnotes_show_their_text_where_they_are(qapp: Any) -> None:
    src = ("Water boils at 100 °C^[at sea level, see [the table](https://c.example/t)] and more^[a *second*"
           " note ^[nested]].\n\nNo note: x^2, ^ [spaced], `^[code]` and ^[unclosed")
    text, links, view = shown(src)
    assert lines(text) == [
        "Water boils at 100 °C[at sea level, see the table] and more[a second note [nested]].",
        "No note: x^2, ^ [spaced], ^[code] and ^[unclosed",
    ]
    assert links == [("the table", "https://c.example/t")]
    cursor = view.document().find("at sea level")
    assert cursor.charFormat().verticalAlignment() == QTextCharFormat.VerticalAlignment.AlignSuperScript


def test_images_become_links_showing_alt_text_and_load_nothing(qapp: Any) -> None:
    text, links, view = shown("![a cat](https://x.example/cat.png) ![](http://x.example/y.png) ![local](file:///etc/hostname)")
    assert lines(text) == ["[image: a cat] [image: image] [image: local]"]
    assert links == [("[image: a cat]", "https://x.example/cat.png"), ("[image: image]", "http://x.example/y.png")]
    assert not view.loadResource(2, QUrl("https://x.example/cat.png"))


def test_raw_html_is_shown_as_text(qapp: Any) -> None:
    src = (
        "Inline <b>bold?</b> <script>alert(1)</script>\n\n"
        "<div>\nblock <i>html</i>\n</div>\n\n<!-- comment -->"
    )
    text, links, _ = shown(src)
    assert lines(text) == [
        "Inline <b>bold?</b> <script>alert(1)</script>",
        "<div>",
        "block <i>html</i>",
        "</div>",
        "<!-- comment -->",
    ]
    assert links == []


def test_links_autolinks_and_bare_urls(qapp: Any) -> None:
    src = (
        "A [link](https://a.example/x_(y)) <https://b.example> https://c.example/p?q=1. "
        "[bad](javascript:alert(1))"
    )
    text, links, _ = shown(src)
    assert lines(text) == ["A link https://b.example https://c.example/p?q=1. bad"]
    assert links == [("link", "https://a.example/x_(y)"), ("https://b.example", "https://b.example"),
                     ("https://c.example/p?q=1", "https://c.example/p?q=1")]


def test_www_links_without_a_scheme_link_to_http(qapp: Any) -> None:
    text, links, _ = shown("See www.example.com/docs, or mail me@www.example.org; not xwww.a.b.")
    assert lines(text) == ["See www.example.com/docs, or mail me@www.example.org; not xwww.a.b."]
    assert links == [("www.example.com/docs", "http://www.example.com/docs")]


REALISTIC = """## Setting up the project

You'll need **Python 3.11+** and a virtual environment. The steps below assume a *POSIX* shell;
see the [official guide](https://docs.python.org/3/library/venv.html) for Windows.

1. Create the environment:
   ```bash
   python -m venv .venv && source .venv/bin/activate
   ```
2. Install the dependencies:
   - `httpx` for HTTP
   - `pytest` for tests
3. Run the checks.

| Tool | Purpose | Speed |
|------|---------|------:|
| ruff | lint    | fast  |
| mypy | types   | slow  |

> **Note:** the cache lives in `~/.cache` — delete it if things get weird.

```python
def fib(n: int) -> int:
    return n if n < 2 else fib(n - 1) + fib(n - 2)
```

That's it — 完成了 🎉.
"""


def test_a_realistic_answer_reads_as_expected(qapp: Any) -> None:
    text, links, _ = shown(REALISTIC)
    assert lines(text) == [
        "Setting up the project",
        "You'll need Python 3.11+ and a virtual environment. The steps below assume a POSIX shell;",
        "see the official guide for Windows.",
        "Create the environment:",
        "bash",
        "python -m venv .venv && source .venv/bin/activate",
        "Install the dependencies:",
        "httpx for HTTP",
        "pytest for tests",
        "Run the checks.",
        "Tool", "Purpose", "Speed", "ruff", "lint", "fast", "mypy", "types", "slow",
        "Note: the cache lives in ~/.cache — delete it if things get weird.",
        "python",
        "def fib(n: int) -> int:",
        "    return n if n < 2 else fib(n - 1) + fib(n - 2)",
        "That's it — 完成了 🎉.",
    ]
    assert links == [("official guide", "https://docs.python.org/3/library/venv.html")]


@pytest.mark.parametrize("src", ["", "   ", "\n\n\n", "#", "-", "```", "> ", "|", "[", "![", "<", "&"])
def test_degenerate_inputs_render(qapp: Any, src: str) -> None:
    text, _, _ = shown(src)
    assert "<" not in text or src == "<"
