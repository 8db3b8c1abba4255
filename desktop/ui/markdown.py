"""A small, safe Markdown to Qt-rich-text converter for model output.

Model output is untrusted text. This renderer escapes every character of the input, emits only
the HTML subset Qt's rich-text engine understands, and never emits ``<img>`` (an image becomes a
link showing its alt text) or any CSS ``url()``: rendering can therefore never load a remote or
local resource. Links are plain anchors; the view decides what a click does.

Supported: ATX headings, fenced code blocks (with language label), indented code blocks,
paragraphs with hard line breaks, block quotes, nested bullet and ordered lists, GitHub tables
(with alignment), horizontal rules, inline code, bold, italic, strikethrough, links, autolinks
and bare ``http(s)://`` URLs. The parser is line based and linear in the input size.
"""

from __future__ import annotations

import bisect
import html
import logging
import re
from dataclasses import dataclass

log = logging.getLogger(__name__)

__all__ = [
    "MarkdownTheme",
    "MarkdownBlock",
    "render_markdown",
    "render_markdown_blocks",
    "render_plain",
    "document_css",
    "safe_link",
]


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
    """

    text: str = "#1f2328"
    code_bg: str = "#f3f4f6"
    code_border: str = "#d0d7de"
    link: str = "#0969da"
    muted: str = "#656d76"
    mono_family: str = "'JetBrains Mono','Cascadia Code','Menlo','Consolas','DejaVu Sans Mono',monospace"


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


# ---------------------------------------------------------------------------------------------
# Inline

_CODE_SPAN = re.compile(r"(`+)(.+?)(?<!`)\1(?!`)", re.S)
_INLINE_TOKEN = re.compile(
    # A link target holds no space and at most one level of balanced parentheses: it can then never
    # run past the next "(" or "<", so a run of unclosed "[a](" openers stays linear.
    r"""
    (?P<img>!\[(?P<img_alt>[^\]\n]*)\]\((?P<img_url>(?:[^()\s]|\([^()\s]*\))*)(?:\s+"[^"\n]*")?\))
  | (?P<link>\[(?P<link_text>(?:[^\[\]\n]|\[[^\[\]\n]*\])+)\]
      \((?P<link_url>(?:[^()\s]|\([^()\s]*\))*)(?:\s+"[^"\n]*")?\))
  | (?P<auto><(?P<auto_url>(?:https?://|mailto:)[^<>\s]+)>)
  | (?P<bare>(?<![\w/=\"'])(?P<bare_url>https?://[^\s<>()\[\]]*[^\s<>()\[\].,;:!?'"*_~]))
  | (?P<esc>\\(?P<esc_ch>[\\`*_{}\[\]()#+\-.!|~>]))
    """,
    re.X,
)
# Emphasis pairs. Each is an (opener, closer) pair of zero-width patterns whose group 1 is the
# delimiter; ``_pair_sub`` pairs every opener with the first closer of the same delimiter after
# at least one character of content. That is exactly what ``delim(?=..)(.+?)(?<=..)delim`` with
# ``re.sub`` yields, but in O(n log n): the regex rescans to the end of the text for every
# opener that never closes (quadratic on ``"**a " * 20000``).
_STRONG = (re.compile(r"(?=(\*\*|__)\S)"), re.compile(r"(?<=\S)(?=(\*\*|__))"), "b")
_EM_STAR = (re.compile(r"(?<![\w*])(?=(\*)[^\s*])"), re.compile(r"(?<=[^\s*])(?=(\*)(?![\w*]))"), "i")
_EM_UNDER = (re.compile(r"(?<![\w_])(?=(_)[^\s_])"), re.compile(r"(?<=[^\s_])(?=(_)(?![\w_]))"), "i")
_STRIKE = (re.compile(r"(?=(~~)\S)"), re.compile(r"(?<=\S)(?=(~~))"), "s")


def _pair_sub(text: str, pair: tuple[re.Pattern[str], re.Pattern[str], str]) -> str:
    """Wrap each opener..closer span of ``text`` in ``pair``'s tag, left to right, non-overlapping."""
    opener, closer, tag = pair
    closes: dict[str, list[int]] = {}
    for m in closer.finditer(text):
        closes.setdefault(m.group(1), []).append(m.start())
    if not closes:
        return text
    out: list[str] = []
    pos = 0
    for m in opener.finditer(text):
        p = m.start()
        if p < pos:
            continue  # inside the span just replaced
        delim = m.group(1)
        cands = closes.get(delim)
        if not cands:
            continue
        k = bisect.bisect_left(cands, p + len(delim) + 1)  # content is at least one character
        if k == len(cands):
            continue
        q = cands[k]
        out.append(text[pos:p])
        out.append(f"<{tag}>{text[p + len(delim) : q]}</{tag}>")
        pos = q + len(delim)
    if not out:
        return text
    out.append(text[pos:])
    return "".join(out)

# Private-use placeholders keep already rendered pieces (code spans, links) out of later passes.
_PH_OPEN, _PH_CLOSE = "\ue000", "\ue001"
_PH_RE = re.compile(_PH_OPEN + r"(\d+)" + _PH_CLOSE)


class _Inline:
    """Renders inline Markdown of one block; placeholders protect finished HTML pieces."""

    def __init__(self) -> None:
        self.pieces: list[str] = []

    def _hold(self, piece: str) -> str:
        self.pieces.append(piece)
        return f"{_PH_OPEN}{len(self.pieces) - 1}{_PH_CLOSE}"

    def render(self, text: str) -> str:
        # Untrusted text must not forge placeholders; nested renders (link text) skip this.
        return self._render(text.replace(_PH_OPEN, "").replace(_PH_CLOSE, ""))

    def _render(self, text: str) -> str:
        text = _CODE_SPAN.sub(lambda m: self._hold(self._code(m.group(2))), text)
        text = _INLINE_TOKEN.sub(self._token, text)
        out = html.escape(text, quote=False)
        for pair in (_STRONG, _EM_STAR, _EM_UNDER, _STRIKE):
            out = _pair_sub(out, pair)
        # Placeholders may nest (a code span inside link text): resolve until none are left.
        for _ in range(4):
            if _PH_OPEN not in out:
                break
            out = _PH_RE.sub(lambda m: self.pieces[int(m.group(1))], out)
        return out

    @staticmethod
    def _code(code: str) -> str:
        body = code.strip() if code.strip() else code
        return "<code>" + html.escape(body) + "</code>"

    def _anchor(self, url: str, label_html: str) -> str:
        target = safe_link(url)
        if target is None:
            return label_html
        return f'<a href="{html.escape(target, quote=True)}">{label_html}</a>'

    def _token(self, m: re.Match[str]) -> str:
        if m.group("img") is not None:
            alt = m.group("img_alt") or "image"
            label = html.escape(f"[image: {alt}]")
            return self._hold(self._anchor(m.group("img_url"), label))
        if m.group("link") is not None:
            sub = _Inline()
            sub.pieces = self.pieces  # share the table so nested code spans resolve
            # The link text may hold placeholders of this render (code spans): keep them.
            return self._hold(self._anchor(m.group("link_url"), sub._render(m.group("link_text"))))
        if m.group("auto") is not None:
            url = m.group("auto_url")
            return self._hold(self._anchor(url, html.escape(url)))
        if m.group("bare") is not None:
            url = m.group("bare_url")
            return self._hold(self._anchor(url, html.escape(url)))
        return self._hold(html.escape(m.group("esc_ch")))


# Anything that can start inline syntax (or is a placeholder): text without it renders as escaped text.
_INLINE_CHARS = ("`", "*", "_", "~", "[", "]", "\\", _PH_OPEN, _PH_CLOSE)


def _is_plain_inline(text: str) -> bool:
    """True when ``text`` holds no inline syntax at all (a few substring scans: fast on long text)."""
    if any(c in text for c in _INLINE_CHARS):
        return False
    if ":" not in text:
        return True
    low = text.lower()
    return "http://" not in low and "https://" not in low and "mailto:" not in low


def _inline(text: str) -> str:
    if _is_plain_inline(text):
        return html.escape(text, quote=False)  # what the full pass yields for such text, much faster
    return _Inline().render(text)


@dataclass(frozen=True, slots=True)
class MarkdownBlock:
    """One top-level block of rendered Markdown.

    Attributes:
        html: The block's Qt rich-text HTML (``render_markdown`` is the concatenation of all blocks).
        plain: For a paragraph without any inline markup: its text as shown (soft and hard line
            breaks as ``\n``), so a view may show it as plain text; None for every other block.
    """

    html: str
    plain: str | None = None


# ---------------------------------------------------------------------------------------------
# Blocks

_FENCE = re.compile(r"^( {0,3})(`{3,}|~{3,})\s*([^`\s]*)[^`]*$")
_HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_HR = re.compile(r"^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$")
_LIST_ITEM = re.compile(r"^( *)([-*+]|\d{1,9}[.)])[ \t]+(.*)$")
_EMPTY_ITEM = re.compile(r"^( *)([-*+]|\d{1,9}[.)])[ \t]*$")
_QUOTE = re.compile(r"^ {0,3}> ?(.*)$")
_TABLE_SEP = re.compile(r"^ *\|? *:?-{1,}:? *(\| *:?-{1,}:? *)*\|? *$")
_TASK = re.compile(r"^\[([ xX])\][ \t]+")
# Block quotes and lists nest by recursion: deeper markers render as literal text, so any input
# renders (``">" * 700`` would otherwise exhaust the interpreter stack).
_MAX_DEPTH = 16


def _split_row(line: str) -> list[str]:
    s = line.strip()
    if s.startswith("|"):
        s = s[1:]
    if s.endswith("|") and not s.endswith("\\|"):
        s = s[:-1]
    cells: list[str] = []
    cur: list[str] = []
    in_code = False
    i = 0
    while i < len(s):
        ch = s[i]
        if ch == "\\" and i + 1 < len(s) and s[i + 1] == "|":
            cur.append("|")
            i += 2
            continue
        if ch == "`":
            in_code = not in_code
        if ch == "|" and not in_code:
            cells.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
        i += 1
    cells.append("".join(cur).strip())
    return cells


class _Renderer:
    def __init__(self, theme: MarkdownTheme) -> None:
        self.theme = theme

    def code_block(self, code: str, lang: str) -> str:
        t = self.theme
        label = ""
        if lang:
            label = (
                f"<p style='margin:0 0 4px 0; color:{t.muted}; font-size:small'>{html.escape(lang)}</p>"
            )
        body = html.escape(code.rstrip("\n")) or "&nbsp;"
        return (
            f"<table width='100%' cellspacing='0' cellpadding='8' border='0' "
            f"style='background-color:{t.code_bg}; margin-top:6px; margin-bottom:6px; "
            f"border:1px solid {t.code_border}'>"
            f"<tr><td>{label}<pre style='margin:0'>{body}</pre></td></tr></table>"
        )

    def table(self, header: list[str], aligns: list[str], rows: list[list[str]]) -> str:
        t = self.theme
        n = len(header)

        def cell(tag: str, text: str, i: int) -> str:
            align = aligns[i] if i < len(aligns) else ""
            attr = f" align='{align}'" if align else ""
            return f"<{tag}{attr}>{_inline(text)}</{tag}>"

        parts = [
            f"<table cellspacing='0' cellpadding='5' border='1' "
            f"style='border-collapse:collapse; border-color:{t.code_border}; margin-top:6px; "
            f"margin-bottom:6px'>",
            "<tr>" + "".join(cell("th", h, i) for i, h in enumerate(header)) + "</tr>",
        ]
        for row in rows:
            padded = (row + [""] * n)[:n]
            parts.append("<tr>" + "".join(cell("td", c, i) for i, c in enumerate(padded)) + "</tr>")
        parts.append("</table>")
        return "".join(parts)

    def blocks(self, lines: list[str], depth: int = 0) -> str:
        return "".join(self.block_list(lines, depth=depth))

    def block_list(  # noqa: C901 - one linear scanner reads best
        self, lines: list[str], plain: dict[int, str] | None = None, depth: int = 0
    ) -> list[str]:
        """The HTML of each top-level block; ``plain[i]`` gets the text of plain paragraph ``i``.

        ``depth`` counts the enclosing quotes and lists; at ``_MAX_DEPTH`` their markers are text.
        """
        nest = depth < _MAX_DEPTH
        out: list[str] = []
        para: list[str] = []
        i = 0
        n = len(lines)

        def flush_para() -> None:
            if para:
                text = "\n".join(p.strip() for p in para)
                if plain is not None and _is_plain_inline(text):
                    plain[len(out)] = text
                    rendered = html.escape(text, quote=False)
                else:
                    rendered = _inline(text)
                # Two trailing spaces or a backslash make a hard break; keep soft breaks as breaks
                # too: chat output uses single newlines deliberately far more often than not.
                rendered = rendered.replace("\n", "<br/>")
                out.append(f"<p>{rendered}</p>")
                para.clear()

        while i < n:
            line = lines[i]
            stripped = line.strip()
            if not stripped:
                flush_para()
                i += 1
                continue
            fence = _FENCE.match(line)
            if fence:
                flush_para()
                marker = fence.group(2)
                lang = fence.group(3)
                indent = len(fence.group(1))
                code: list[str] = []
                i += 1
                while i < n:
                    cur = lines[i]
                    if cur.strip().startswith(marker[0] * len(marker)) and not cur.strip().strip(marker[0]):
                        i += 1
                        break
                    code.append(cur[indent:] if cur[:indent].strip() == "" else cur)
                    i += 1
                out.append(self.code_block("\n".join(code), lang))
                continue
            if not para and line.startswith("    "):
                flush_para()
                code = []
                while i < n and (lines[i].startswith("    ") or not lines[i].strip()):
                    code.append(lines[i][4:])
                    i += 1
                while code and not code[-1].strip():
                    code.pop()
                out.append(self.code_block("\n".join(code), ""))
                continue
            heading = _HEADING.match(line)
            if heading:
                flush_para()
                level = len(heading.group(1))
                out.append(f"<h{level}>{_inline(heading.group(2) or '')}</h{level}>")
                i += 1
                continue
            if _HR.match(line) and not (para and stripped.startswith("-")):
                flush_para()
                out.append("<hr/>")
                i += 1
                continue
            if para and set(stripped) <= {"="} and len(stripped) >= 2:
                text = " ".join(p.strip() for p in para)
                para.clear()
                out.append(f"<h1>{_inline(text)}</h1>")
                i += 1
                continue
            if nest and _QUOTE.match(line):
                flush_para()
                quoted: list[str] = []
                while i < n:
                    qm = _QUOTE.match(lines[i])
                    if qm:
                        quoted.append(qm.group(1))
                    elif lines[i].strip() and quoted and quoted[-1].strip():
                        quoted.append(lines[i])  # lazy continuation
                    else:
                        break
                    i += 1
                out.append(f"<blockquote>{self.blocks(quoted, depth + 1)}</blockquote>")
                continue
            if (
                "|" in line
                and i + 1 < n
                and _TABLE_SEP.match(lines[i + 1])
                and "-" in lines[i + 1]
                and ("|" in lines[i + 1] or line.strip().startswith("|"))
            ):
                header = _split_row(line)
                seps = _split_row(lines[i + 1])
                if len(seps) == len(header):
                    flush_para()
                    aligns = []
                    for s in seps:
                        s = s.strip()
                        if s.startswith(":") and s.endswith(":"):
                            aligns.append("center")
                        elif s.endswith(":"):
                            aligns.append("right")
                        elif s.startswith(":"):
                            aligns.append("left")
                        else:
                            aligns.append("")
                    i += 2
                    rows: list[list[str]] = []
                    while i < n and lines[i].strip() and "|" in lines[i]:
                        rows.append(_split_row(lines[i]))
                        i += 1
                    out.append(self.table(header, aligns, rows))
                    continue
            item = (_LIST_ITEM.match(line) or _EMPTY_ITEM.match(line)) if nest else None
            if item and (not para or not item.group(2)[0].isdigit() or item.group(2).startswith("1")):
                flush_para()
                i = self.list_block(lines, i, out, depth)
                continue
            para.append(line)
            i += 1
        flush_para()
        return out

    def list_block(self, lines: list[str], i: int, out: list[str], depth: int = 0) -> int:
        """Render the list starting at ``lines[i]``; return the index after it."""
        n = len(lines)
        first = _LIST_ITEM.match(lines[i]) or _EMPTY_ITEM.match(lines[i])
        assert first is not None
        base_indent = len(first.group(1))
        ordered = first.group(2)[0].isdigit()
        start = int(first.group(2)[:-1]) if ordered else 1
        items: list[list[str]] = []
        while i < n:
            line = lines[i]
            m = _LIST_ITEM.match(line) or _EMPTY_ITEM.match(line)
            if m and len(m.group(1)) <= base_indent + 1 and m.group(2)[0].isdigit() == ordered:
                content = m.group(3) if m.lastindex and m.lastindex >= 3 else ""
                items.append([content or ""])
                i += 1
                continue
            if m and len(m.group(1)) <= base_indent + 1:
                break  # a different list kind at the same level starts a new list
            if not line.strip():
                # A blank line continues the list only when indented content or another item follows.
                j = i + 1
                while j < n and not lines[j].strip():
                    j += 1
                if j < n and (
                    len(lines[j]) - len(lines[j].lstrip()) > base_indent
                    or (
                        (nm := _LIST_ITEM.match(lines[j])) is not None
                        and len(nm.group(1)) <= base_indent + 1
                        and nm.group(2)[0].isdigit() == ordered
                    )
                ):
                    if items:
                        items[-1].append("")
                    i = j
                    continue
                break
            indent = len(line) - len(line.lstrip())
            if indent > base_indent and items:
                items[-1].append(line[min(indent, base_indent + 2 if not ordered else base_indent + 3) :])
                i += 1
                continue
            if items and not _HEADING.match(line) and not _FENCE.match(line) and not _QUOTE.match(line):
                items[-1].append(line.strip())  # lazy continuation of the item's paragraph
                i += 1
                continue
            break
        tag = "ol" if ordered else "ul"
        attr = f" start='{start}'" if ordered and start != 1 else ""
        parts = [f"<{tag}{attr} style='margin-top:2px; margin-bottom:2px'>"]
        for body in items:
            first_line = body[0]
            task = _TASK.match(first_line)
            prefix = ""
            if task:
                prefix = "☑ " if task.group(1).lower() == "x" else "☐ "
                first_line = first_line[task.end() :]
            inner = self.blocks([first_line, *body[1:]], depth + 1)
            # A single paragraph item renders without the paragraph margins.
            if inner.startswith("<p>") and inner.count("<p>") == 1 and inner.endswith("</p>"):
                inner = inner[3:-4]
            elif inner.startswith("<p>"):
                end = inner.index("</p>")
                inner = inner[3:end] + inner[end + 4 :]
            parts.append(f"<li>{html.escape(prefix)}{inner}</li>")
        parts.append(f"</{tag}>")
        out.append("".join(parts))
        return i


def render_markdown(text: str, theme: MarkdownTheme | None = None) -> str:
    """Convert Markdown ``text`` to the Qt rich-text HTML subset.

    Args:
        text: Untrusted Markdown (model output).
        theme: Colours; the light default when None.

    Returns:
        An HTML fragment. It contains no ``<img>``, no ``url(...)`` and no active content, and
        every character of ``text`` outside recognised syntax is escaped.
    """
    return "".join(b.html for b in render_markdown_blocks(text, theme))


def render_markdown_blocks(text: str, theme: MarkdownTheme | None = None) -> list[MarkdownBlock]:
    """``render_markdown`` split into its top-level blocks (paragraphs, lists, code blocks...).

    A view can show a long paragraph without inline markup as plain text (``MarkdownBlock.plain``)
    and the rest as rich text: the result reads the same as the whole HTML.
    """
    lines = text.replace("\r\n", "\n").replace("\r", "\n").replace("\t", "    ").split("\n")
    plain: dict[int, str] = {}
    try:
        pieces = _Renderer(theme or MarkdownTheme()).block_list(lines, plain)
    except Exception:  # untrusted input must never break the transcript: show it as text instead
        log.exception("Markdown rendering failed; showing %d characters as plain text", len(text))
        return [MarkdownBlock(render_plain(text))]
    return [MarkdownBlock(piece, plain.get(i)) for i, piece in enumerate(pieces)]
