"""Code blocks: Pygments highlighting from the fence's language, theme-following colours, Copy."""

from __future__ import annotations

import time
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QGuiApplication, QPalette, QTextDocument
from PySide6.QtWidgets import QToolButton

from desktop.core.chat.types import ChatMessage
from desktop.ui.markdown import MarkdownTheme, render_markdown_blocks
from desktop.ui.markdown_view import CodeBlockView
from desktop.ui.md_code import highlight_code
from desktop.ui.message_views import AssistantMessageView
from desktop.ui.node_style import markdown_theme, node_colors

PY = 'def f(x: int) -> str:\n\treturn "<%d>" % x  # 完成 🎉\n\n    \nclass A: pass'


def colours(pre_html: str) -> dict[str, set[str]]:
    """Foreground colour names per word of the document showing ``pre_html``."""
    doc = QTextDocument()
    doc.setHtml(pre_html)
    out: dict[str, set[str]] = {}
    block = doc.begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            frag = it.fragment()
            fmt = frag.charFormat()
            colour = fmt.foreground().color().name() if fmt.hasProperty(fmt.Property.ForegroundBrush) else ""
            for word in frag.text().split():
                out.setdefault(word, set()).add(colour)
            it += 1
        block = block.next()
    return out


def assistant_view(qtbot: Any, content: str, theme: MarkdownTheme | None = None) -> AssistantMessageView:
    msg = ChatMessage(id="a1", role="assistant", content=content, ts=0)
    view = AssistantMessageView(msg, theme=theme or MarkdownTheme(), meta_text=lambda m: "")
    qtbot.addWidget(view)
    view.sync(msg, live=False)
    view.resize(600, 400)
    view.show()
    qtbot.waitExposed(view)
    return view


def test_a_known_language_is_highlighted_and_the_text_is_exactly_the_code(qapp: Any) -> None:
    pre = highlight_code(PY, "python", dark=False)
    doc = QTextDocument()
    doc.setHtml(pre)
    assert doc.toPlainText() == PY
    words = colours(pre)
    assert words["def"] and "" not in words["def"]  # keywords are coloured
    assert len({c for cs in words.values() for c in cs}) >= 3  # several token kinds, several colours


@pytest.mark.parametrize("lang", ["", "nosuchlanguage", "x" * 100])
def test_no_or_unknown_language_is_plain_and_never_guessed(qapp: Any, lang: str) -> None:
    pre = highlight_code(PY, lang, dark=False)
    assert "<span" not in pre
    doc = QTextDocument()
    doc.setHtml(pre)
    assert doc.toPlainText() == PY


def test_colours_follow_the_theme(qapp: Any) -> None:
    light, dark = colours(highlight_code(PY, "py", dark=False)), colours(highlight_code(PY, "py", dark=True))
    assert light["def"] != dark["def"]
    palette = QPalette(QColor("#1e1f22"))
    palette.setColor(QPalette.ColorRole.Base, QColor("#1e1f22"))
    palette.setColor(QPalette.ColorRole.Text, QColor("#e6e6e6"))
    assert markdown_theme(node_colors(palette)).dark
    assert not markdown_theme(node_colors(QPalette(QColor("#f5f5f5")))).dark
    block = render_markdown_blocks("```py\ndef f(): pass\n```", MarkdownTheme(dark=True))[0]
    assert block.code_html == highlight_code("def f(): pass", "py", dark=True)


def test_copy_button_copies_exactly_the_code(qtbot: Any) -> None:
    md = (
        f"Intro.\n\n```python\n{PY}\n```\n\n"
        "- item\n\n  ```\n  nested is not top level\n  ```\n\n~~~\nplain <b>\n~~~\n"
    )
    view = assistant_view(qtbot, md)
    blocks = view.findChildren(CodeBlockView)
    assert [b.lang for b in blocks] == ["python", ""]
    buttons = view.findChildren(QToolButton, "copyCodeButton")
    assert len(buttons) == 2 and all(b.isVisible() for b in buttons)
    clipboard = QGuiApplication.clipboard()
    clipboard.setText("before")
    qtbot.mouseClick(buttons[0], Qt.MouseButton.LeftButton)
    assert clipboard.text() == PY
    qtbot.mouseClick(buttons[1], Qt.MouseButton.LeftButton)
    assert clipboard.text() == "plain <b>"
    assert blocks[0].toPlainText() == "python\n" + PY
    assert "nested is not top level" in view.toPlainText()


def test_a_5000_line_block_is_highlighted_once_in_reasonable_time(qapp: Any) -> None:
    code = "\n".join(f"def f{i}(x):\n    return x * {i}  # line {i}" for i in range(2500))
    t0 = time.perf_counter()
    pre = highlight_code(code, "python", dark=False)
    elapsed = time.perf_counter() - t0
    print(f"highlighting 5,000 lines ({len(code) // 1024} KiB): {elapsed * 1000:.0f} ms")
    assert pre.count("<span") > 5000 and elapsed < 5.0
