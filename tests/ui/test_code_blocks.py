"""Code blocks: Pygments highlighting from the fence's language, theme-following colours, Copy."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QGuiApplication, QPalette, QTextDocument
from PySide6.QtWidgets import QToolButton

from desktop.core.chat.types import ChatMessage
from desktop.ui.markdown.code import highlight_code
from desktop.ui.markdown.render import render_markdown_blocks
from desktop.ui.markdown.theme import MarkdownTheme
from desktop.ui.markdown.view import MarkdownView
from desktop.ui.node.style import markdown_theme, node_colors
from desktop.ui.transcript.answer import AssistantMessageView

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
    view = AssistantMessageView(msg, theme=theme or MarkdownTheme(), meta_text=lambda m, live: "")
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
    assert highlight_code("def f(): pass", "py", dark=True) in block.html
    assert highlight_code("def f(): pass", "py", dark=False) not in block.html


def test_each_code_block_has_a_copy_button_that_copies_exactly_the_code(qtbot: Any) -> None:
    md = (
        f"Intro.\n\n```python\n{PY}\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n"
        "- item\n\n  ```\n  nested in a list\n  ```\n\n~~~\nplain <b>\n~~~\n"
    )
    view = assistant_view(qtbot, md)
    buttons = view.findChildren(QToolButton, "copyCodeButton")
    assert len(buttons) == 3 and all(b.isVisible() and b.text() == "Copy" for b in buttons)
    clipboard = QGuiApplication.clipboard()
    copied = []
    for button in sorted(buttons, key=lambda b: b.mapTo(view, b.rect().topLeft()).y()):
        clipboard.setText("before")
        qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
        copied.append(clipboard.text())
    assert copied == [PY, "nested in a list", "plain <b>"]
    # Each button sits on its own code block: inside the view, right-aligned, under the block's top.
    seg = view.body.segments[0]
    assert isinstance(seg, MarkdownView)
    for button in seg.copy_buttons:
        code = seg.code_for(button)
        first_line = code.split("\n")[0]
        cursor = seg.document().find(first_line)
        line_top = seg.cursorRect(cursor).top()
        assert button.geometry().center().y() < line_top  # on the label line above the code
        assert button.geometry().right() <= seg.viewport().width()
        assert button.geometry().left() > seg.viewport().width() // 2
    text = view.toPlainText()
    assert "python\n" + PY in text and "code\nplain <b>" in text  # language (or "code") above the code


def test_copy_buttons_follow_streamed_and_replaced_content(qtbot: Any) -> None:
    msg = ChatMessage(id="a1", role="assistant", content="", ts=0)
    view = AssistantMessageView(msg, theme=MarkdownTheme(), meta_text=lambda m, live: "")
    qtbot.addWidget(view)
    view.resize(600, 400)
    view.show()
    text = "One:\n\n```js\nlet a = 1;\n```\n\nTwo:\n\n```js\nlet b = 2;\n```\n"
    for end in range(1, len(text) + 1):
        msg.content = text[:end]
        view.sync(msg, live=True)
    view.sync(msg, live=False)
    while view.rendering():  # the frames after Done (the transcript schedules them)
        view.sync(msg, live=False)

    def visible() -> list[QToolButton]:
        return [b for b in view.findChildren(QToolButton, "copyCodeButton") if b.isVisible()]

    qtbot.waitUntil(lambda: len(visible()) == 2)
    buttons = visible()
    assert all(0 < b.x() < view.width() for b in buttons)
    codes = sorted(seg.code_for(b) for seg in view.body.segments if isinstance(seg, MarkdownView)
                   for b in seg.copy_buttons)
    assert len(buttons) == 2 and codes == ["let a = 1;", "let b = 2;"]


def test_a_5000_line_block_is_highlighted_whole(qapp: Any) -> None:
    """Every line coloured, the text kept exactly (the time is benchmarks/hot_paths.py's code.highlight
    row, against Pygments' own HTML formatter)."""
    code = "\n".join(f"def f{i}(x):\n    return x * {i}  # line {i}" for i in range(2500))
    pre = highlight_code(code, "python", dark=False)
    assert pre.count("<span") > 5000
    doc = QTextDocument()
    doc.setHtml(pre)
    assert doc.toPlainText() == code


def test_blank_first_and_last_lines_of_a_code_block_are_kept(qapp: Any) -> None:
    # Qt's HTML reader drops one newline after <pre> and one before </pre>.
    for code in ("\nfirst line blank", "last line blank\n", "\n\nboth\n\n"):
        for lang in ("", "python"):
            doc = QTextDocument()
            doc.setHtml(highlight_code(code, lang, dark=False))
            assert doc.toPlainText() == code


def long_code(lines: int) -> str:
    out: list[str] = []
    for i in range(lines // 5):
        out += [f"def f{i}(x):", f'    """Doc {i}."""', f"    y = x * {i}  # step {i}", "    return y", ""]
    return "\n".join(out[:lines])


def test_a_long_code_block_is_shown_as_pieces_that_read_as_one_block(qtbot: Any) -> None:
    from desktop.ui.markdown.render import CODE_PIECE_LINES

    code = long_code(CODE_PIECE_LINES * 3 + 40)
    blocks = render_markdown_blocks(f"```python\n{code}\n```\n", MarkdownTheme(), spans=False)
    assert len(blocks) == 4 and [b.joined for b in blocks] == [False, True, True, True]
    assert "\n".join(b.code or "" for b in blocks) == code  # whole lines, in order, nothing lost
    assert all((b.code or "").count("\n") < CODE_PIECE_LINES for b in blocks)
    assert [b.copies for b in blocks] == [(code,), (None,), (None,), (None,)]

    view = assistant_view(qtbot, f"Intro.\n\n```python\n{code}\n```\n\nAfter.")
    segs = view.body.segments
    pieces = [s for s in segs if isinstance(s, MarkdownView) and "f0(" not in s.toPlainText()
              and "Intro" not in s.toPlainText() and "After" not in s.toPlainText()]
    assert len(segs) == 6 and len(pieces) == 3
    # A piece at a time is laid out: its lines, the label, the empty lines around its table.
    assert all(s.document().blockCount() <= CODE_PIECE_LINES + 3 for s in segs)
    assert "python\n" + code in view.toPlainText()  # the reader sees the code once, whole
    buttons = [b for b in view.findChildren(QToolButton, "copyCodeButton") if b.isVisible()]
    assert len(buttons) == 1  # one Copy for the block, on its first piece: it copies all of it
    clipboard = QGuiApplication.clipboard()
    clipboard.setText("before")
    qtbot.mouseClick(buttons[0], Qt.MouseButton.LeftButton)
    assert clipboard.text() == code
    last = segs[4]
    assert isinstance(last, MarkdownView)
    qtbot.waitUntil(lambda: not last.colourer.busy, timeout=10000)  # every piece is coloured
    block = last.document().findBlock(last.document().find("return y").position())
    formats = block.layout().formats()
    assert formats and any(f.format.foreground().color().name() != "#000000" for f in formats)


def test_a_long_code_block_streams_in_pieces_within_the_frame_budget(qtbot: Any, monkeypatch: Any) -> None:
    from desktop.ui.markdown import stream as message_body
    from desktop.ui.markdown.render import CODE_PIECE_LINES

    monkeypatch.setattr(message_body, "RENDER_BUDGET", 0.0)  # a unit of work per update
    code = long_code(CODE_PIECE_LINES * 4)
    text = f"Intro.\n\n```python\n{code}\n```\n\nAfter."
    msg = ChatMessage(id="a1", role="assistant", content="", ts=0)
    view = AssistantMessageView(msg, theme=MarkdownTheme(), meta_text=lambda m, live: "")
    qtbot.addWidget(view)
    view.resize(600, 400)
    view.show()
    for end in range(0, len(text), 2000):
        msg.content = text[:end]
        view.sync(msg, live=True)
    msg.content = text
    updates = 0
    view.sync(msg, live=False)
    while view.rendering():
        before = len(view.body.segments)
        view.sync(msg, live=False)
        updates += 1
        assert len(view.body.segments) - before <= 1  # one piece shown per update at most
    assert updates >= 4
    assert "python\n" + code in view.toPlainText() and view.toPlainText().rstrip().endswith("After.")


def test_pieces_are_cut_between_top_level_statements_not_inside_a_docstring() -> None:
    from desktop.ui.markdown.code import code_pieces

    body = ["    x = 1"] * 60
    doc = ['    """Summary.', "", "    More text after a blank line.", '    """']
    func = ["def f():", *doc, *body, ""]
    code = "\n".join(func * 4)
    pieces = code_pieces(code, 100)
    assert "\n".join(pieces) == code
    for piece in pieces[1:]:
        assert piece.startswith("def f():")  # never inside the docstring's blank line


def test_a_code_block_lexed_to_the_end_is_not_lexed_again(monkeypatch: Any) -> None:
    from desktop.ui.markdown import code as md_code

    real = md_code.lexer_for
    lexed: list[str] = []

    class Counting:
        def __init__(self, lexer: Any) -> None:
            self.lexer = lexer

        def get_tokens(self, code: str) -> Any:
            lexed.append(code)
            return self.lexer.get_tokens(code)

    monkeypatch.setattr(md_code, "lexer_for", lambda lang: Counting(real(lang)))
    code = "def kept(x):\n    return x  # lexed once, shown twice\n"
    first = md_code.styled_tokens(code, "python", dark=False)
    assert first is not None
    half = [next(first) for _ in range(3)]  # a view dropped before the end keeps nothing
    again = md_code.styled_tokens(code, "python", dark=False)
    assert again is not None and len(lexed) == 2
    tokens = list(again)
    assert tokens[:3] == half and "".join(text for text, _ in tokens) == code
    third = md_code.styled_tokens(code, "python", dark=False)
    assert third is not None and list(third) == tokens and len(lexed) == 2  # kept: not lexed again
    dark = md_code.styled_tokens(code, "python", dark=True)
    assert dark is not None and list(dark) and len(lexed) == 3  # another style is another entry
