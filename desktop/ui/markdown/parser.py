"""The markdown-it parser of model output, as ``desktop.ui.markdown.render`` renders it (no Qt needed).

CommonMark with GFM tables, strikethrough and task lists (``mdit-py-plugins`` for the task lists,
TeX and footnotes), raw HTML off, a soft line break kept as a line break. Changes to the plugins'
behaviour, for text as models write it: an inline footnote (``^[note]``) is kept where it is
written; display maths (``$$`` or ``\\[``) may start right under a line of text, ending the
paragraph above like a fence; and content nested deeper than ``MAX_NESTING`` levels stays visible
as literal text instead of being dropped.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.parser_block import ParserBlock
from markdown_it.rules_block import StateBlock
from markdown_it.rules_inline import StateInline
from markdown_it.token import Token
from mdit_py_plugins.dollarmath import dollarmath_plugin
from mdit_py_plugins.footnote import footnote_plugin
from mdit_py_plugins.tasklists import tasklists_plugin
from mdit_py_plugins.texmath import texmath_plugin

log = logging.getLogger(__name__)

__all__ = ["PARSER", "MAX_NESTING", "block_parse", "block_starts", "make_parser"]

MAX_NESTING = 20
"""Deepest nesting of quotes and lists (token levels); deeper content is shown as literal text."""


class _CappedBlockParser(ParserBlock):
    """markdown-it's block parser, except that content nested too deep is kept as literal text.

    markdown-it drops everything past ``maxNesting``; untrusted input must stay visible.
    """

    def tokenize(self, state: StateBlock, startLine: int, endLine: int) -> None:  # noqa: N803 - base names
        """Tokenize ``startLine..endLine``; at the nesting cap, one literal paragraph instead."""
        if state.level < state.md.options.maxNesting:
            super().tokenize(state, startLine, endLine)
            return
        line = state.skipEmptyLines(startLine)
        end = line
        while end < endLine and (state.isEmpty(end) or state.sCount[end] >= state.blkIndent):
            end += 1
        if end <= line:
            return
        text = state.getLines(line, end, state.blkIndent, False).strip("\n")
        token = state.push("paragraph_open", "p", 1)
        token.map = [line, end]
        inline = state.push("inline", "", 0)
        inline.content = text
        inline.map = [line, end]
        inline.children = []
        state.push("paragraph_close", "p", -1)
        state.line = end


_BREAKS = ["paragraph", "reference", "blockquote", "list"]
_BlockRule = Callable[[StateBlock, int, int, bool], bool]


def _dry_run_when_silent(rule: _BlockRule) -> _BlockRule:
    """``rule`` asked only whether it matches (``silent``: may it end a paragraph?) leaves no token
    and no position behind (dollarmath's block rule ignores ``silent`` and would push its block).
    As a paragraph's terminator it is asked at every line: a line not starting with ``$`` or ``\\``
    is answered at once (rendering the corpus answer costs what it did before maths could end a
    paragraph: 59-60 ms at best either way)."""

    def checked(state: StateBlock, start: int, end: int, silent: bool) -> bool:
        first = state.bMarks[start] + state.tShift[start]
        if state.src[first : first + 1] not in ("$", "\\"):  # $$ or \[ opens every maths block
            return False
        if not silent:
            return rule(state, start, end, False)
        line, count = state.line, len(state.tokens)
        try:
            return rule(state, start, end, False)
        finally:
            del state.tokens[count:]
            state.line = line

    return checked


def _inline_note(state: StateInline, silent: bool) -> bool:
    """``^[text]``, an inline footnote: an ``inline_note`` token whose children are the note's inline
    tokens, so the renderer shows the note where it is written (as the footnote rules show a
    definition where it is written; mdit-py-plugins would keep it aside for a list at the end)."""
    start, maximum = state.pos, state.posMax
    if start + 2 >= maximum or state.src[start] != "^" or state.src[start + 1] != "[":
        return False
    end = state.md.helpers.parseLinkLabel(state, start + 1)
    if end < 0:
        return False
    if not silent:
        children: list[Token] = []
        state.md.inline.parse(state.src[start + 2 : end], state.md, state.env, children)
        state.push("inline_note", "", 0).children = children
    state.pos = end + 1
    state.posMax = maximum
    return True


def make_parser() -> MarkdownIt:
    """markdown-it as the renderer reads it: CommonMark, GFM tables, strikethrough and task lists,
    TeX, footnotes; raw HTML off; soft breaks kept; nesting past ``MAX_NESTING`` kept as text."""
    md = MarkdownIt("commonmark", {"html": False, "breaks": True, "maxNesting": MAX_NESTING})
    md.enable(["table", "strikethrough"]).use(tasklists_plugin)
    # TeX is code, not Markdown; "$5 and $10" is no math (no space inside, no digit after the closing $).
    md.use(dollarmath_plugin, allow_space=False, allow_digits=False, double_inline=True)
    md.use(texmath_plugin, delimiters="brackets")  # \( inline \) and \[ block \]
    for rule in md.block.ruler.__rules__:  # display maths right under a line of text, as models
        if rule.name.startswith("math_block"):  # write it: like a fence, it ends the paragraph above
            rule.alt, rule.fn = list(_BREAKS), _dry_run_when_silent(rule.fn)
    md.block.ruler.__cache__ = None  # the rule chains are compiled again, with these
    # Footnotes shown where they are: a reference as [label] raised, a definition in place (a streamed
    # block is rendered before the definitions below it arrive, so nothing waits for them).
    md.use(footnote_plugin, inline=False, move_to_end=False, always_match_refs=True)
    md.inline.ruler.after("image", "inline_note", _inline_note)  # ^[an inline footnote]: its text in place
    # Every destination parses (``javascript:`` too): ``safe_link`` decides what becomes an anchor,
    # so an unsafe link or image still shows its text instead of its raw Markdown.
    md.validateLink = lambda url: True  # type: ignore[method-assign]
    capped = _CappedBlockParser()
    capped.ruler = md.block.ruler
    md.block = capped
    return md


PARSER = make_parser()
"""The parser every render and block split uses (``make_parser()``)."""


def block_starts(src: str, env: dict[str, Any]) -> list[tuple[int, int, str]]:
    """The top-level blocks of ``src`` as ``(first line, character offset, token type)``.

    Only the block structure is parsed (no inline parsing, no rendering).

    Args:
        src: Markdown source (lines separated by ``\\n``).
        env: markdown-it environment; reference definitions found are added to
            ``env["references"]``.

    Returns:
        One entry per top-level block, in order (reference definitions make no block); the type
        is markdown-it's opening token type (``paragraph_open``, ``fence``, ``bullet_list_open``...).
    """
    return block_parse(src, env)[0]


def block_parse(src: str, env: dict[str, Any]) -> tuple[list[tuple[int, int, str]], list[list[Token]]]:
    """``block_starts``, and the block-level tokens of each top-level block (for ``render_tokens``).

    Args:
        src: Markdown source (lines separated by ``\\n``).
        env: markdown-it environment (reference definitions are added to ``env["references"]``).

    Returns:
        The starts (as ``block_starts``) and, per start, the tokens from it to the next start.
    """
    state = StateBlock(src, PARSER, env, [])
    PARSER.block.tokenize(state, 0, state.lineMax)
    out: list[tuple[int, int, str]] = []
    firsts: list[int] = []
    tokens = state.tokens
    for i, tok in enumerate(tokens):
        if tok.level == 0 and tok.nesting >= 0 and tok.map is not None:
            line = tok.map[0]
            out.append((line, state.bMarks[line], tok.type))
            firsts.append(i)
    ends = [*firsts[1:], len(tokens)] if firsts else []
    groups = [tokens[a:b] for a, b in zip(firsts, ends, strict=True)]
    return out, groups
