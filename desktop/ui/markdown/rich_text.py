"""The pieces of Qt rich text that rendered Markdown is made of: safe links, inline markup, code blocks.

Model output is untrusted text: only http(s)/mailto links become anchors (:func:`safe_link`), an image
becomes a link showing its alt text (never an ``<img>``), and everything else is escaped. Bare URLs
become links (GFM's autolink extension); footnote references and inline notes are raised where they
are written. ``desktop.ui.markdown.render`` puts these pieces together, block by block.
"""

from __future__ import annotations

import html
import re

from markdown_it.token import Token

from desktop.ui.markdown.theme import MarkdownTheme

__all__ = ["code_block_html", "footnote_mark", "inline_html", "render_plain", "safe_link"]

_SAFE_SCHEMES = ("http://", "https://", "mailto:")


def safe_link(url: str) -> str | None:
    """Return ``url`` when it may become a clickable link (http, https, mailto), else None."""
    u = url.strip()
    low = u.lower()
    if low.startswith(_SAFE_SCHEMES) and not any(c in u for c in ' "<>\n\r\t'):
        return u
    return None


def render_plain(text: str) -> str:
    """Escape plain text as Qt rich text, keeping line breaks and runs of spaces."""
    return "<p style='white-space:pre-wrap'>" + html.escape(text) + "</p>"


def code_block_html(pre: str, lang: str, theme: MarkdownTheme, part: str = "whole") -> str:
    """A code block as Qt rich text: ``pre`` (from ``highlight_code``) in a framed cell, under a
    label line (the language, or "code") that leaves room for the view's Copy button.

    Args:
        pre: The ``<pre>`` of the code (or of one piece of it).
        lang: The fence's language ("" for none).
        theme: Colours.
        part: ``"whole"``; or, for a long block shown as pieces, ``"first"`` (label, top border),
            ``"middle"`` (sides only) or ``"last"`` (bottom border): stacked without gaps they
            read as one block.
    """
    if part == "whole":
        style = f"margin:2px 0 8px 0; color:{theme.muted}; font-size:small"
        label = f"<p style='{style}'>{html.escape(lang or 'code')}</p>"
        return (
            f"<table width='100%' cellspacing='0' cellpadding='8' border='0' "
            f"style='background-color:{theme.code_bg}; margin-top:6px; margin-bottom:6px; "
            f"border:1px solid {theme.code_border}'><tr><td>{label}{pre}</td></tr></table>"
        )
    line = f"1px solid {theme.code_border}"
    sides = [f"border-left:{line}", f"border-right:{line}", f"background-color:{theme.code_bg}"]
    label = ""
    if part == "first":
        sides += [f"border-top:{line}", "padding-bottom:0px"]
        style = f"margin:2px 0 8px 0; color:{theme.muted}; font-size:small"
        label = f"<p style='{style}'>{html.escape(lang or 'code')}</p>"
    elif part == "last":
        sides += [f"border-bottom:{line}", "padding-top:0px"]
    else:
        sides += ["padding-top:0px", "padding-bottom:0px"]
    margins = {"first": "margin-top:6px; margin-bottom:0px", "last": "margin-top:0px; margin-bottom:6px"}
    return (
        f"<table width='100%' cellspacing='0' cellpadding='8' border='0' "
        f"style='{margins.get(part, 'margin:0px')}; border-collapse:collapse'>"
        f"<tr><td style='{'; '.join(sides)}'>{label}{pre}</td></tr></table>"
    )


_BARE_URL = re.compile(
    r"(?<![\w/=\"'])https?://[^\s<>()\[\]]*[^\s<>()\[\].,;:!?'\"*_~]"
    r"|(?<![\w/=\"'.@-])www\.[A-Za-z0-9-]+\.[^\s<>()\[\]]*[^\s<>()\[\].,;:!?'\"*_~]"
)
"""A bare URL in text (GFM's autolink extension): ``http(s)://…``, or ``www.`` followed by a domain
(linked to ``http://`` as GitHub does); trailing punctuation stays text."""
_SIMPLE_TAGS = {
    "em_open": "<i>",
    "em_close": "</i>",
    "strong_open": "<b>",
    "strong_close": "</b>",
    "s_open": "<s>",
    "s_close": "</s>",
}


def _anchor_open(url: str) -> str | None:
    target = safe_link(url)
    return None if target is None else f'<a href="{html.escape(target, quote=True)}">'


def _text(content: str, in_link: bool) -> str:
    if in_link or ("://" not in content and "www." not in content):
        return html.escape(content, quote=False)
    out: list[str] = []
    pos = 0
    for m in _BARE_URL.finditer(content):
        url = m.group(0)
        href = url if "://" in url[:8] else "http://" + url
        out.append(html.escape(content[pos : m.start()], quote=False))
        out.append(f'<a href="{html.escape(href, quote=True)}">{html.escape(url, quote=False)}</a>')
        pos = m.end()
    out.append(html.escape(content[pos:], quote=False))
    return "".join(out)


def footnote_mark(tok: Token) -> str:
    """A footnote reference or definition label, raised: ``[label]``."""
    return "<sup>[" + html.escape(str((tok.meta or {}).get("label", "")), quote=False) + "]</sup>"


def inline_html(children: list[Token]) -> str:
    """The Qt rich text of an ``inline`` token's children (text, emphasis, code, links, notes...)."""
    out: list[str] = []
    links: list[bool] = []  # per open link: whether an anchor was emitted
    for tok in children:
        kind = tok.type
        if kind == "text":
            out.append(_text(tok.content, bool(links)))
        elif kind in ("softbreak", "hardbreak"):
            out.append("<br/>")
        elif kind in ("code_inline", "math_inline", "math_inline_double"):
            out.append("<code>" + html.escape(tok.content, quote=False) + "</code>")
        elif kind in _SIMPLE_TAGS:
            out.append(_SIMPLE_TAGS[kind])
        elif kind == "footnote_ref":
            out.append(footnote_mark(tok))
        elif kind == "inline_note":  # ^[note]: shown where it is written, raised like a reference
            out.append("<sup>[" + inline_html(tok.children or []) + "]</sup>")
        elif kind == "link_open":
            opener = _anchor_open(str(tok.attrs.get("href", "")))
            links.append(opener is not None)
            if opener is not None:
                out.append(opener)
        elif kind == "link_close":
            if links and links.pop():
                out.append("</a>")
        elif kind == "image":
            label = html.escape(f"[image: {tok.content or 'image'}]", quote=False)
            opener = None if links else _anchor_open(str(tok.attrs.get("src", "")))
            out.append(label if opener is None else f"{opener}{label}</a>")
        elif kind == "html_inline":
            if "task-list-item-checkbox" in tok.content:  # only the task-list plugin makes these
                out.append("☑" if "checked" in tok.content else "☐")
            else:
                out.append(html.escape(tok.content, quote=False))
        else:
            out.append(html.escape(tok.content, quote=False))
    return "".join(out)
