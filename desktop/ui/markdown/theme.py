"""The colours rendered Markdown is shown in: :class:`MarkdownTheme` and the document's style sheet.

Light on purpose (no markdown-it, no Pygments): a node derives its theme from its palette before the
window's first paint, long before the renderer is loaded.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["MarkdownTheme", "document_css"]


@dataclass(frozen=True, slots=True)
class MarkdownTheme:
    """Colours used by the rendered HTML (hex strings like ``#1e1f22``).

    Attributes:
        text: Body text colour.
        code_bg: Background of code blocks and inline code.
        code_border: Border colour of code blocks and tables.
        link: Link colour.
        muted: Colour of secondary text (code language labels, quote text).
        mono_family: Monospace font family list for code.
        dark: True on a dark background: code is highlighted with a dark Pygments style.
    """

    text: str = "#1f2328"
    code_bg: str = "#f3f4f6"
    code_border: str = "#d0d7de"
    link: str = "#0969da"
    muted: str = "#656d76"
    mono_family: str = "'JetBrains Mono','Cascadia Code','Menlo','Consolas','DejaVu Sans Mono',monospace"
    dark: bool = False


def document_css(theme: MarkdownTheme) -> str:
    """The default style sheet to install on a ``QTextDocument`` before setting rendered HTML."""
    return (
        f"a {{ color: {theme.link}; text-decoration: none; }}"
        f"code {{ font-family: {theme.mono_family}; background-color: {theme.code_bg}; }}"
        f"pre {{ font-family: {theme.mono_family}; }}"
        f"blockquote {{ color: {theme.muted}; }}"
        "h1 { font-size: x-large; } h2 { font-size: large; } h3 { font-size: medium; }"
        "th { font-weight: 600; }"
    )
