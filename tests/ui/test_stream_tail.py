# ruff: noqa: F811 - pytest fixtures imported from test_chat_node_support are parameters here
"""While an answer streams, its open Markdown block shows no raw syntax (issue 25 item 7).

The text arrives in small deltas from the loopback provider and goes through the real node and
transcript; every frame's text of the answer is recorded and checked.
"""

from __future__ import annotations

from typing import Any

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
    assert display_text("```py\nx = **y**") == "x = **y**"  # inside a fence: as it is
    assert display_text("x = **y**", in_fence=True) == "x = **y**"
