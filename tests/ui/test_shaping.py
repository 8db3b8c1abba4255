"""Text laid out without OpenType shaping only where nothing is lost (``desktop.ui.markdown.shaping``).

``PreferNoShaping`` makes Latin layout ~30 % faster, but Qt then shapes nothing: Arabic letters lose
their joined forms and a combining accent is drawn after its letter. The checks compare the glyphs
Qt produces with those of a layout that shapes (the reader sees glyphs, not a font flag).
"""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtGui import QFont, QTextLayout

from desktop.ui.markdown.shaping import layout_font, needs_shaping
from desktop.ui.markdown.textflow import TextFlowView
from desktop.ui.markdown.theme import MarkdownTheme
from desktop.ui.markdown.view import MarkdownView

ARABIC = "مرحبا بالعالم"
WORD = ARABIC.split()[0]
COMBINING = "cafe\u0301 de\u0301ja\u0300"  # accents as combining marks, not precomposed letters
NO_SHAPING = QFont.StyleStrategy.PreferNoShaping


def glyphs(layout: QTextLayout) -> list[tuple[str, list[int]]]:
    """(font family, glyph indexes) of each glyph run of each line of ``layout``."""
    runs = (run for i in range(layout.lineCount()) for run in layout.lineAt(i).glyphRuns())
    return [(run.rawFont().familyName(), list(run.glyphIndexes())) for run in runs]


def shaped_glyphs(text: str, font: QFont) -> list[tuple[str, list[int]]]:
    """The glyphs of one line of ``text`` laid out with shaping."""
    layout = QTextLayout(text, layout_font(font, shaped=True))
    layout.beginLayout()
    layout.createLine().setLineWidth(10_000)
    layout.endLayout()
    return glyphs(layout)


def shows(runs: list[tuple[str, list[int]]], text: str, font: QFont) -> bool:
    """True when ``runs`` hold the glyphs a shaping layout of ``text`` produces, in one run."""
    (_family, want), = shaped_glyphs(text, font)
    return any(
        got[i : i + len(want)] == want for _f, got in runs for i in range(len(got) - len(want) + 1)
    )


@pytest.mark.parametrize("text", [
    "plain ASCII, code() and [links](x)",
    "café, naïve, Ærøskøbing, ß, Łódź",
    "em dash — “curly quotes” ‘single’ … • bullets, 5 € → ≤ ≥ ∞ ─┼─ ▶",
    "中文字符，一个渲染块。キャッシュ 한국어 ＡＢＣ",
    "Привет, мир; Καλημέρα κόσμε; Tiếng Việt có dấu",
    "",
])
def test_text_that_needs_no_shaping(text: str) -> None:
    assert not needs_shaping(text)


@pytest.mark.parametrize("text", [
    ARABIC,
    "שלום",
    "नमस्ते",
    COMBINING,
    "👍🏽 🇩🇪 👩\u200d💻 ⚠\ufe0f",
    "a\u200db",  # zero-width joiner
    "x\u202ey",  # bidirectional override
    "か\u3099",  # combining voiced sound mark
    "\u0418\u0483",  # a Cyrillic combining titlo
])
def test_text_that_needs_shaping(text: str) -> None:
    assert needs_shaping(text)


def test_layout_font_sets_and_clears_only_the_shaping_flag(qapp: Any) -> None:
    font = QFont("DejaVu Sans", 13)
    fast = layout_font(font, shaped=False)
    assert fast.styleStrategy() & NO_SHAPING
    back = layout_font(fast, shaped=True)
    assert not back.styleStrategy() & NO_SHAPING
    assert (back.family(), back.pointSize()) == (font.family(), font.pointSize())


def flow(qtbot: Any, text: str) -> TextFlowView:
    view = TextFlowView()
    qtbot.addWidget(view)
    view.resize(600, 50)
    view.show()
    view.set_text(text)
    return view


def test_text_flow_lays_latin_out_without_shaping(qtbot: Any) -> None:
    view = flow(qtbot, "Plain words " * 50)
    assert view.layout_font().styleStrategy() & NO_SHAPING


def test_the_glyph_check_tells_shaped_from_unshaped_text(qapp: Any) -> None:
    for word in (WORD, COMBINING):
        layout = QTextLayout(word, layout_font(QFont(), shaped=False))
        layout.beginLayout()
        layout.createLine().setLineWidth(10_000)
        layout.endLayout()
        assert not shows(glyphs(layout), word, QFont())


@pytest.mark.parametrize("text", [ARABIC, COMBINING])
def test_text_flow_shapes_text_that_needs_it(qtbot: Any, text: str) -> None:
    view = flow(qtbot, text)
    assert shows(glyphs(view._chunks[0].layout), text.split()[0], view.font())


def test_text_flow_lays_everything_out_again_when_a_streamed_text_starts_needing_shaping(qtbot: Any) -> None:
    latin = "Streamed words that wrap over several lines of the view. " * 12
    view = flow(qtbot, latin)
    view.set_text(latin + ARABIC)
    assert not view.layout_font().styleStrategy() & NO_SHAPING
    assert all(not chunk.layout.font().styleStrategy() & NO_SHAPING for chunk in view._chunks)
    assert shows(glyphs(view._chunks[-1].layout), WORD, view.font())
    view.set_text("Latin again")  # replaced, not grown: decided from the new text alone
    assert view.layout_font().styleStrategy() & NO_SHAPING


def markdown_view(qtbot: Any, markdown: str) -> MarkdownView:
    view = MarkdownView()
    qtbot.addWidget(view)
    view.resize(600, 50)
    view.show()
    view.set_markdown(markdown, MarkdownTheme())
    return view


def test_markdown_view_lays_latin_out_without_shaping(qtbot: Any) -> None:
    view = markdown_view(qtbot, "A **bold** answer — with `code` and “quotes”.")
    assert view.document().defaultFont().styleStrategy() & NO_SHAPING


def test_markdown_view_shapes_arabic(qtbot: Any) -> None:
    view = markdown_view(qtbot, ARABIC)
    doc = view.document()
    assert not doc.defaultFont().styleStrategy() & NO_SHAPING
    block = doc.begin()
    runs = []
    while block.isValid():
        runs += glyphs(block.layout())
        block = block.next()
    assert shows(runs, WORD, doc.defaultFont())
    view.set_markdown("Latin only, shown next in the same view.", MarkdownTheme())
    assert doc.defaultFont().styleStrategy() & NO_SHAPING
