"""Automatic node titles from the first user message (issue 25 #6)."""

from __future__ import annotations

from desktop.core.titles import MAX_TITLE_CHARS, auto_title, default_title, is_default_title


def test_default_titles_are_recognised() -> None:
    assert [default_title(i) for i in range(3)] == ["Chat", "Chat 2", "Chat 3"]
    assert all(is_default_title(default_title(i)) for i in range(50))
    assert not is_default_title("Chat about Rust")
    assert not is_default_title("Tour of Chat Nodes")
    assert not is_default_title("Chat 0")


def test_the_first_words_on_one_line() -> None:
    assert auto_title("how do I sort a list of tuples by the second item?") == "How do I sort a list…"
    assert auto_title("  Fix   this\n\nplease ") == "Fix this please"
    assert auto_title("**Explain** `asyncio` [event loops](https://x.y)") == "Explain asyncio event loops"
    assert auto_title("```python\nprint(1)\n```\nwhy?") == "Why?"
    assert auto_title("# Heading\n- item") == "Heading item"


def test_nothing_usable_gives_an_empty_title() -> None:
    assert auto_title("") == ""
    assert auto_title("```\ncode only\n```") == ""
    assert auto_title("\u200b\x07 -- **") == ""


def test_long_words_are_cut_with_an_ellipsis() -> None:
    title = auto_title("Supercalifragilisticexpialidocious " * 3)
    assert len(title) <= MAX_TITLE_CHARS + 1 and title.endswith("…")
    assert auto_title("a" * 100) == "A" + "a" * (MAX_TITLE_CHARS - 1) + "…"
