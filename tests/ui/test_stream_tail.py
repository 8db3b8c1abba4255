# ruff: noqa: F811 - pytest fixtures imported from test_chat_node_support are parameters here
"""While an answer streams, its open Markdown block shows no raw syntax (issue 25 item 7).

The text arrives in small deltas from the loopback provider and goes through the real node and
transcript; every frame's text of the answer is recorded and checked.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QPlainTextEdit
from test_chat_node_support import NodeEnv, make_env  # noqa: F401

from desktop.testing import Turn
from desktop.ui.transcript.answer import AssistantMessageView

ANSWER = ("**bold** and - item\n\n# A heading with **strong** text\n\n"
          "- first `code` item\n- second **one**\n\n> quoted *words*\n\nThe end **now**.")


def _answer(env: NodeEnv) -> str:
    views = [v for v in env.node.transcript.views() if isinstance(v, AssistantMessageView)]
    return views[-1].toPlainText() if views else ""


def _raw(text: str) -> list[str]:
    found = [marker for marker in ("**", "`") if marker in text]
    for line in text.split("\n"):
        stripped = line.lstrip()
        found += [m for m in ("# ", "- ", "> ") if stripped.startswith(m)]
    return found


def test_the_open_block_shows_no_raw_markdown(qtbot: Any, make_env: Any) -> None:
    env = make_env()
    env.fake.script(Turn(text=ANSWER, chunk_chars=2, tokens_per_second=120))
    seen: list[str] = []
    env.node.transcript.rendered.connect(lambda: seen.append(_answer(env)))
    box = env.node.findChild(QPlainTextEdit, "chatInput")
    box.setFocus()
    qtbot.keyClicks(box, "Show me Markdown")
    qtbot.keyClick(box, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: env.finished == ["end_turn"] and not env.node.transcript.is_rendering(),
                    timeout=20_000)
    streamed = [t for t in seen if "bold" in t]
    assert len(streamed) > 10  # many frames while it streamed
    bad = [(t, _raw(t)) for t in streamed if _raw(t)]
    assert bad == []
    assert _answer(env).startswith("bold and - item")


def test_display_text_hides_markers_and_holds_back_an_unfinished_one() -> None:
    from desktop.ui.markdown.tail_text import display_text

    assert display_text("**bold** and - item") == "bold and - item"
    assert display_text("- it") == "• it" and display_text("  * nested **x") == "  • nested x"
    assert display_text("# Hea") == "Hea" and display_text("##") == "" and display_text("-") == ""
    assert display_text("> quote *em* `co") == "quote em co"
    assert display_text("a * b") == "a * b"  # not emphasis
    assert display_text("C# ## and > 2") == "C# ## and > 2"  # markers only at the line's start
    assert display_text("```py\nx = **y**") == "x = **y**"  # inside a fence: as it is
    assert display_text("x = **y**", in_fence=True) == "x = **y**"


_PIECES = ["tok ", "word", " ", "  ", "\t", "\n", "\n\n", "*", "**", "_", "__", "`", "``", "~~", "# ", "## ",
           "- ", "* ", "> ", "1. ", "\\", "|", "+", "a_b", "x*y", "---", "```py\n", "```\n", "~~~\n", "é"]


def _random_text(rng: random.Random, size: int) -> str:
    parts: list[str] = []
    while sum(map(len, parts)) < size:
        if rng.random() < 0.02:
            parts.append("tok " * rng.randint(100, 400))  # a long line: the cache cuts it
        else:
            parts.append(rng.choice(_PIECES))
    return "".join(parts)


@pytest.mark.parametrize("seed", range(12))
def test_tail_text_shows_what_display_text_shows_while_the_text_grows(seed: int) -> None:
    from desktop.ui.markdown.tail_text import TailText, display_text

    rng = random.Random(seed)
    text = _random_text(rng, 6000)
    tail = TailText()
    start, fenced = 0, False
    size = 0
    while size < len(text):
        size = min(len(text), size + rng.randint(1, 40))
        if rng.random() < 0.03:  # the tail moves on (a block closed), as ``StreamedBody`` does
            start, fenced = rng.randint(0, size), rng.random() < 0.3
        content = text[:size]
        assert tail.show(content, start, in_fence=fenced) == display_text(content[start:], in_fence=fenced)


def test_tail_text_reads_only_the_new_end_of_a_long_line() -> None:
    from desktop.ui.markdown.tail_text import TailText, display_text

    text = "Intro **bold** " + "tok " * 20_000  # one 80 KB paragraph, streamed four characters at a time
    tail = TailText()
    reads: list[int] = []
    for size in [*range(4, len(text), 4), len(text)]:
        before = tail.read
        shown = tail.show(text[:size], 0)
        reads.append(tail.read - before)
    assert shown == display_text(text)
    assert len(text) > 80_000 and max(reads[-1000:]) < 1000  # not the whole line again per frame
