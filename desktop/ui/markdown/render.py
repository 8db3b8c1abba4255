"""Safe Markdown to Qt rich text for model output, on markdown-it-py (no Qt needed).

Model output is untrusted text. It is parsed by markdown-it-py (``desktop.ui.markdown.parser``:
CommonMark with GFM tables, strikethrough and task lists; raw HTML off, so any ``<tag>`` in the
input is shown as text) and the tokens are turned into the HTML subset Qt's rich-text engine
understands. Nothing emitted can load a resource: there is never an ``<img>`` (an image becomes a
link showing its alt text) nor a CSS ``url()``, and only http(s)/mailto links become anchors. The
view decides what a click does.

Chat-specific choices: a soft line break is shown as a line break (models use single newlines
deliberately), bare ``http(s)://`` URLs become links, a fenced code block is highlighted by
Pygments (``desktop.ui.markdown.code``), TeX (``$…$``, ``$$…$$``, ``\\(…\\)``, ``\\[…\\]``) is shown as
code (display maths may start right under a line of text), footnote references, definitions and
inline notes (``^[…]``) are shown where they are written, and nesting deeper than ``MAX_NESTING``
levels as literal text instead of being dropped.

``render_markdown_blocks`` splits the result into top-level blocks; ``render_tokens`` finishes the
block-level parse of one block (``parser.block_parse``) that the streaming pipeline
(``desktop.ui.markdown.stream``) already did. The links, the inline markup and the code blocks'
frames are in ``rich_text.py``; the colours in ``theme.py``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from markdown_it.rules_core import StateCore
from markdown_it.token import Token

from desktop.ui.markdown.code import code_pieces, highlight_code
from desktop.ui.markdown.parser import PARSER
from desktop.ui.markdown.rich_text import code_block_html, footnote_mark, inline_html, render_plain
from desktop.ui.markdown.theme import MarkdownTheme

log = logging.getLogger(__name__)

__all__ = [
    "MarkdownBlock",
    "render_markdown",
    "render_markdown_blocks",
    "render_tokens",
    "CODE_PIECE_LINES",
]

CODE_PIECE_LINES = 150
"""A top-level code block longer than this (lines) is shown as stacked pieces of at most this many
lines: laying one piece out costs a few milliseconds, a 5,000-line block at once ~90 ms."""

_PLAIN_CHILDREN = frozenset({"text", "softbreak", "hardbreak"})
"""The inline token types of a paragraph without markup (``MarkdownBlock.plain``)."""


@dataclass(frozen=True, slots=True)
class MarkdownBlock:
    """One top-level block of rendered Markdown.

    Attributes:
        html: The block's Qt rich-text HTML (``render_markdown`` is the concatenation of all blocks).
        plain: For a paragraph without any inline markup: its text as shown (line breaks as
            ``\\n``), so a view may show it as plain text; None for every other block.
        code: For a code block: the raw code (no fence, no trailing newline); None otherwise.
        lang: For a code block: the language of its info string ("" when none).
        tables: One entry per ``<table>`` of ``html``, in document order: the raw code of a code
            block (shown as a one-cell table), None for a Markdown table. A view uses it to put a
            Copy button on each code block.
        langs: One entry per entry of ``tables``: the language a view colours that code block with
            (``highlight_runs``) when the HTML holds it uncoloured (``spans=False``); "" for none.
        joined: The block continues the one before it without a gap: a piece of a long code block
            after the first (``CODE_PIECE_LINES``).
        copies: When set, one entry per entry of ``tables``: what that table's Copy button copies
            (None: no button). A long code block's first piece copies the whole block; the later
            pieces have no button. Empty: the entries of ``tables``.
    """

    html: str
    plain: str | None = None
    code: str | None = None
    lang: str = ""
    tables: tuple[str | None, ...] = ()
    langs: tuple[str, ...] = ()
    joined: bool = False
    copies: tuple[str | None, ...] = ()




class _Renderer:
    """Renders a flat token list (markdown-it's) into Qt rich text, without recursion."""

    def __init__(self, theme: MarkdownTheme, highlight: bool, spans: bool = True) -> None:
        self.theme = theme
        self.highlight = highlight
        self.spans = spans

    def code(self, tok: Token) -> MarkdownBlock:
        code = tok.content[:-1] if tok.content.endswith("\n") else tok.content
        lang = tok.info.strip().split(maxsplit=1)[0] if tok.info.strip() else ""
        pre = highlight_code(code, lang if self.highlight and self.spans else "", self.theme.dark)
        html_ = code_block_html(pre, lang, self.theme)
        colour = lang if self.highlight and not self.spans else ""
        return MarkdownBlock(html_, code=code, lang=lang, tables=(code,), langs=(colour,))

    def code_pieces(self, tok: Token) -> list[MarkdownBlock]:
        """A top-level code block: one block, or pieces of ``CODE_PIECE_LINES`` when it is longer
        (a view lays out one piece at a time, so a long block never costs one long frame)."""
        whole = self.code(tok)
        code = whole.code or ""
        pieces = code_pieces(code, CODE_PIECE_LINES)
        if len(pieces) == 1:
            return [whole]
        out: list[MarkdownBlock] = []
        colour = whole.langs[0]
        for i, piece in enumerate(pieces):
            part = "first" if i == 0 else "last" if i == len(pieces) - 1 else "middle"
            pre = highlight_code(piece, whole.lang if self.highlight and self.spans else "", self.theme.dark)
            out.append(MarkdownBlock(
                code_block_html(pre, whole.lang, self.theme, part), code=piece, lang=whole.lang,
                tables=(piece,), langs=(colour,), joined=i > 0, copies=(code if i == 0 else None,),
            ))
        return out

    def open_tag(self, tok: Token) -> str:  # noqa: C901 - one branch per token kind reads best
        kind = tok.type
        if kind == "paragraph_open":
            return "" if tok.hidden else "<p>"
        if kind == "paragraph_close":
            return "" if tok.hidden else "</p>"
        if kind in ("heading_open", "heading_close", "blockquote_open", "blockquote_close", "tr_open",
                    "tr_close", "list_item_close"):
            return f"<{'/' if tok.nesting < 0 else ''}{tok.tag}>"
        if kind == "list_item_open":
            return "<li>"
        if kind == "bullet_list_open":
            return "<ul style='margin-top:2px; margin-bottom:2px'>"
        if kind == "ordered_list_open":
            start = tok.attrs.get("start")
            attr = f" start='{int(start)}'" if start is not None and int(start) != 1 else ""
            return f"<ol{attr} style='margin-top:2px; margin-bottom:2px'>"
        if kind in ("bullet_list_close", "ordered_list_close"):
            return f"</{tok.tag}>"
        if kind == "hr":
            return "<hr/>"
        if kind == "table_open":
            return (
                "<table cellspacing='0' cellpadding='5' border='1' style='border-collapse:collapse; "
                f"border-color:{self.theme.code_border}; margin-top:6px; margin-bottom:6px'>"
            )
        if kind == "table_close":
            return "</table>"
        if kind in ("th_open", "td_open"):
            style = str(tok.attrs.get("style", ""))
            align = style.removeprefix("text-align:") if style.startswith("text-align:") else ""
            return f"<{tok.tag} align='{align}'>" if align in ("left", "right", "center") else f"<{tok.tag}>"
        if kind in ("th_close", "td_close"):
            return f"</{tok.tag}>"
        return ""  # thead/tbody: Qt needs neither

    def blocks(self, tokens: list[Token]) -> list[MarkdownBlock]:
        """One ``MarkdownBlock`` per top-level block of ``tokens``."""
        out: list[MarkdownBlock] = []
        parts: list[str] = []
        tables: list[str | None] = []
        langs: list[str] = []
        plain: str | None = None
        for i, tok in enumerate(tokens):
            kind = tok.type
            if kind.startswith("math_block"):  # $$ or \[ ... \] (with a label or number): LaTeX code
                tok = Token("fence", "code", 0, content=tok.content.strip("\n") + "\n", info="latex",
                            level=tok.level, map=tok.map)
                kind = "fence"
            if kind in ("fence", "code_block"):
                if tok.level == 0:
                    out.extend(self.code_pieces(tok))
                    continue
                block = self.code(tok)
                parts.append(block.html)
                tables.append(block.code)
                langs.extend(block.langs)
            elif kind == "inline":
                children = tok.children or []
                if i >= 2 and tokens[i - 2].type == "footnote_reference_open":  # a definition: mark first
                    parts.append(footnote_mark(tokens[i - 2]) + " ")
                parts.append(inline_html(children))
                if tok.level == 1 and tokens[i - 1].type == "paragraph_open" and all(
                    c.type in _PLAIN_CHILDREN for c in children
                ) and "://" not in tok.content:
                    plain = "".join(c.content if c.type == "text" else "\n" for c in children)
            else:
                if kind == "table_open":
                    tables.append(None)
                    langs.append("")
                elif kind == "footnote_reference_open" and tokens[i + 1].type != "paragraph_open":
                    parts.append(f"<p>{footnote_mark(tok)}</p>")  # a definition opening with a list, code...
                parts.append(self.open_tag(tok))
            if tok.level == 0 and tok.nesting <= 0:
                out.append(MarkdownBlock("".join(parts), plain, tables=tuple(tables), langs=tuple(langs)))
                parts, tables, langs, plain = [], [], [], None
        if parts:
            out.append(MarkdownBlock("".join(parts), plain, tables=tuple(tables), langs=tuple(langs)))
        return out


def render_markdown(
    text: str, theme: MarkdownTheme | None = None, *, references: dict[str, Any] | None = None
) -> str:
    """Convert Markdown ``text`` to the Qt rich-text HTML subset.

    Args:
        text: Untrusted Markdown (model output).
        theme: Colours; the light default when None.
        references: Link reference definitions known from elsewhere (see ``render_markdown_blocks``).

    Returns:
        An HTML fragment. It contains no ``<img>``, no ``url(...)`` and no active content, and
        every character of ``text`` outside recognised syntax is escaped.
    """
    return "".join(b.html for b in render_markdown_blocks(text, theme, references=references))


def render_markdown_blocks(
    text: str,
    theme: MarkdownTheme | None = None,
    *,
    references: dict[str, Any] | None = None,
    highlight: bool = True,
    spans: bool = True,
) -> list[MarkdownBlock]:
    """``render_markdown`` split into its top-level blocks (paragraphs, lists, code blocks...).

    A view can show a long paragraph without inline markup as plain text (``MarkdownBlock.plain``),
    a code block with its own widget (``MarkdownBlock.code``) and the rest as rich text: the result
    reads the same as the whole HTML.

    Args:
        text: Untrusted Markdown.
        theme: Colours; the light default when None.
        references: Link reference definitions known from elsewhere (a streamed message's earlier
            blocks): ``label -> {"href", "title"}`` as markdown-it keeps them. Not modified.
        highlight: False to show code blocks without syntax colours (a code block still streaming).
        spans: with ``highlight``: True puts the colours in the HTML (a ``<span>`` per token); False
            leaves the code uncoloured in the HTML and names its language in ``MarkdownBlock.langs``
            so the view colours it with text formats (``MarkdownView``), which Qt handles about ten
            times faster than parsing the spans.

    Returns:
        The blocks in order; a failure of the renderer yields one escaped plain-text block.
    """
    return _render(text, lambda env: PARSER.parse(text, env), theme, references, highlight, spans)


def _render(
    source: str,
    parse: Callable[[dict[str, Any]], list[Token]],
    theme: MarkdownTheme | None,
    references: dict[str, Any] | None,
    highlight: bool,
    spans: bool,
) -> list[MarkdownBlock]:
    """The blocks of ``parse(env)``'s tokens; a failure shows ``source`` as escaped plain text."""
    env: dict[str, Any] = {"references": dict(references)} if references else {}
    try:
        return _Renderer(theme or MarkdownTheme(), highlight, spans).blocks(parse(env))
    except Exception:  # untrusted input must never break the transcript: show it as text instead
        log.exception("Markdown rendering failed; showing %d characters as plain text", len(source))
        return [MarkdownBlock(render_plain(source))]


_AFTER_BLOCK = [
    rule.fn for rule in PARSER.core.ruler.__rules__
    if rule.enabled and rule.name not in ("normalize", "block")
]
"""markdown-it's core rules that run after the block parse (inline parsing, text joining, task lists)."""


def render_tokens(
    tokens: list[Token],
    source: str,
    theme: MarkdownTheme | None = None,
    *,
    references: dict[str, Any] | None = None,
    highlight: bool = True,
    spans: bool = True,
) -> list[MarkdownBlock]:
    """``render_markdown_blocks(source, ...)`` from the block-level tokens ``block_parse`` gave for it.

    A streamed answer's blocks were already parsed at block level to find where they end; this
    finishes that parse (inline content, task lists) instead of parsing the block again. Source
    that markdown-it would normalise first (``\\r``, NUL) is parsed again from ``source``.

    Args:
        tokens: one top-level block's tokens from ``block_parse`` (used up: they are completed in
            place).
        source: that block's Markdown source.
        theme: Colours; the light default when None.
        references: Link reference definitions known so far. Not modified.
        highlight: as in ``render_markdown_blocks``.
        spans: as in ``render_markdown_blocks``.

    Returns:
        The same blocks as ``render_markdown_blocks(source, ...)``.
    """
    if "\r" in source or "\0" in source:
        return render_markdown_blocks(source, theme, references=references, highlight=highlight, spans=spans)

    def finish(env: dict[str, Any]) -> list[Token]:
        state = StateCore("", PARSER, env)
        state.tokens = tokens
        for rule in _AFTER_BLOCK:
            rule(state)
        return state.tokens

    return _render(source, finish, theme, references, highlight, spans)
