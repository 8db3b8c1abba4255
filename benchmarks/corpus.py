"""A deterministic corpus of Markdown-rich answers shaped like real model output, and token-like deltas.

What real answers contain, and what every streaming and opening benchmark now uses (DESIGN.md §7):
headings, paragraphs of varying length with inline code, emphasis and links (one every few hundred
words), nested bullet and ordered lists (also inside block quotes), fenced code blocks of 5–80 lines
in python, typescript, rust, sql, bash and json, GFM tables (some with pipes inside code spans),
horizontal rules, CJK paragraphs and emoji (including ZWJ sequences, skin-tone modifiers, flags and
combining accents, so deltas split grapheme clusters).

* :func:`make_answer` builds one answer of about ``target_chars`` characters from a seed; the first
  blocks of every answer are one of each kind, so even a small answer (≥ 1.4 KB) exercises every
  construct, and every answer ends with the :func:`sentinel` line, which the benchmarks look for in
  the rendered text.
* :func:`stream_answer` is the answer streamed by the node benchmarks: ``n`` deltas ≈ ``7 × n`` bytes.
* :func:`split_deltas` cuts a text into exactly ``n`` deltas of 1–8 characters, like a token stream:
  cuts fall inside words, inside Markdown syntax (```` ``` ````, ``**``, ``|``) and between the code
  points of one grapheme cluster.
* :func:`openai_stream_body` renders deltas as the SSE body of an OpenAI chat completion stream
  (served as is by ``FakeProvider`` through ``Turn.raw_body``).
* :func:`make_markdown_messages` builds a conversation of user questions and Markdown-rich answers.

Everything is a pure function of its arguments (``random.Random(seed)``, no clock, no global state).
"""

from __future__ import annotations

import dataclasses
import functools
import json
import logging
import random
import re
from collections.abc import Callable

from desktop.core.chat.types import ChatMessage, Usage

log = logging.getLogger(__name__)

__all__ = [
    "LANGUAGES",
    "BLOCK_KINDS",
    "make_answer",
    "stream_answer",
    "split_deltas",
    "sentinel",
    "openai_stream_body",
    "make_markdown_messages",
    "corpus_stats",
]

#: Fence languages of the code blocks, in the order the first blocks use them.
LANGUAGES = ("python", "typescript", "rust", "sql", "bash", "json")
#: Block kinds; every answer starts with one of each (in this order), then draws at random.
BLOCK_KINDS = ("heading", "paragraph", "list", "code", "table", "quote", "cjk", "rule")

_WORDS = (
    "the request returns a stream of events that the client decodes incrementally while the user "
    "waits for each answer so latency matters more than throughput when a model writes long code "
    "blocks tables and lists every renderer should keep the layout stable and avoid work that grows "
    "with the length of the conversation instead of what is visible on screen a cache keyed by the "
    "block text lets complete blocks render once the open tail changes with every delta and costs a "
    "little each frame configuration files environment variables and command line flags decide which "
    "provider answers retries back off exponentially with jitter timeouts cancel the request cleanly "
    "memory stays bounded because older messages are archived to disk and loaded on demand"
).split()
_TERMS = ("asyncio.timeout", "QTextDocument", "split_for_cap", "httpx.AsyncClient", "--smoke-test",
          "max_tokens", "Vec<u8>", "SELECT *", "npm ci", "O(n log n)", "__init__", "Promise.all")
_CJK = (
    "流式输出需要逐块渲染，已完成的块只渲染一次。",
    "这个函数返回一个迭代器，调用者可以在收到每个事件时更新界面。",
    "表格和代码块是模型回答中最常见的结构。",
    "長い会話でも画面に見えている部分だけを描画すれば十分に速い。",
    "キャッシュはブロックの本文をキーにしています。",
    "스트리밍 중에도 입력창은 즉시 반응해야 합니다。",
)
_EMOJI = ("🙂", "🚀", "✅", "⚠️", "👍🏽", "👩‍💻", "🇩🇪", "🎉", "🔥", "📦", "café", "naïve", "e\u0301t\u00e9")
_ITEM = re.compile(r"^[ >]*(?:[-*]|\d+\.) ")
_LINK_WORDS = 250  # a link every ~250 words of prose


def sentinel(seed: int) -> str:
    """The closing line of the answer built from ``seed`` (plain words: it survives any renderer)."""
    return f"End of answer number {seed:05d}."


class _Writer:
    """Builds the blocks of one answer from one random generator."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.words_since_link = 0
        self.lang = 0

    # -- inline text

    def _word(self) -> str:
        return self.rng.choice(_WORDS)

    def sentence(self, words: int | None = None) -> str:
        rng = self.rng
        n = words if words is not None else rng.randint(6, 24)
        out: list[str] = []
        for i in range(n):
            roll = rng.random()
            if roll < 0.05:
                out.append(f"`{rng.choice(_TERMS)}`")
            elif roll < 0.08:
                out.append(f"**{self._word()} {self._word()}**")
            elif roll < 0.11:
                out.append(f"*{self._word()}*")
            elif roll < 0.12:
                out.append(rng.choice(_EMOJI))
            else:
                out.append(self._word())
            self.words_since_link += 1
            if self.words_since_link >= _LINK_WORDS and i < n - 1:
                self.words_since_link = 0
                slug = "-".join(self._word() for _ in range(2))
                label = f"{self._word()} {self._word()}"
                out.append(f"[{label}](https://docs.example.com/{slug}#{rng.randint(1, 99)})")
        text = " ".join(out)
        return text[:1].upper() + text[1:] + rng.choice((".", ".", ".", ":", "?", "!"))

    def paragraph(self, sentences: int | None = None) -> str:
        n = sentences if sentences is not None else self.rng.choice((1, 2, 3, 4, 6, 9, 14))
        return " ".join(self.sentence() for _ in range(n))

    # -- blocks

    def heading(self) -> str:
        level = self.rng.choice(("#", "##", "##", "###", "###", "####"))
        return f"{level} {self.sentence(self.rng.randint(2, 6)).rstrip('.:?!')}"

    def bullet_list(self, indent: str = "") -> str:
        rng = self.rng
        ordered = rng.random() < 0.35
        lines: list[str] = []
        for i in range(rng.randint(2, 6)):
            marker = f"{i + 1}." if ordered else rng.choice(("-", "*", "-"))
            lines.append(f"{indent}{marker} {self.sentence(rng.randint(4, 16))}")
            if rng.random() < 0.35 and len(indent) < 6:
                lines.append(self.bullet_list(indent + " " * (len(marker) + 1)))
        return "\n".join(lines)

    def code(self) -> str:
        rng = self.rng
        lang = LANGUAGES[self.lang % len(LANGUAGES)] if self.lang < len(LANGUAGES) else rng.choice(LANGUAGES)
        self.lang += 1
        n = rng.choice((5, 8, 12, 18, 25, 40, 60, 80))
        body = _CODE[lang](rng, n)
        return f"```{lang}\n{body}\n```"

    def table(self) -> str:
        rng = self.rng
        cols = rng.randint(3, 5)
        rows = rng.randint(3, 12)
        head = [self._word().capitalize() for _ in range(cols)]
        lines = ["| " + " | ".join(head) + " |", "|" + "|".join(rng.choice(("---", ":---", "---:", ":---:"))
                                                             for _ in range(cols)) + "|"]
        for r in range(rows):
            cells: list[str] = []
            for c in range(cols):
                roll = rng.random()
                if roll < 0.12:
                    cells.append(f"`a \\| b` ({r})")  # a pipe inside a code span, escaped as GFM requires
                elif roll < 0.25:
                    cells.append(f"`{rng.choice(_TERMS)}`")
                elif roll < 0.45:
                    cells.append(f"{rng.randint(0, 99_999):,}")
                elif roll < 0.5:
                    cells.append(rng.choice(_EMOJI))
                else:
                    cells.append(" ".join(self._word() for _ in range(rng.randint(1, 4 if c else 2))))
            lines.append("| " + " | ".join(cells) + " |")
        return "\n".join(lines)

    def quote(self) -> str:
        inner = [self.paragraph(self.rng.randint(1, 3))]
        if self.rng.random() < 0.7:
            inner.append(self.bullet_list())
        quoted = ["\n".join("> " + ln if ln else ">" for ln in block.split("\n")) for block in inner]
        return "\n>\n".join(quoted)

    def cjk(self) -> str:
        rng = self.rng
        return "".join(rng.choice(_CJK) for _ in range(rng.randint(2, 6))) + " " + rng.choice(_EMOJI)

    def rule(self) -> str:
        return "---"

    def compact(self, kind: str) -> str:
        """A small block of ``kind`` (the one-of-each opening of every answer)."""
        rng = self.rng
        if kind == "paragraph":
            return self.paragraph(2)
        if kind == "list":
            return (f"- {self.sentence(5)}\n  1. {self.sentence(4)}\n     - {self.sentence(3)}\n"
                    f"- {self.sentence(6)}")
        if kind == "code":
            lang = LANGUAGES[self.lang % len(LANGUAGES)]
            self.lang += 1
            return f"```{lang}\n{_CODE[lang](rng, 5)}\n```"
        if kind == "table":
            return (f"| Name | Value | Note |\n|---|---:|:---|\n| `a \\| b` | {rng.randint(1, 999):,} | "
                    f"{self.sentence(2)} |\n| **{self._word()}** | {rng.randint(1, 999)} | "
                    f"{rng.choice(_EMOJI)} |")
        if kind == "quote":
            return f"> {self.sentence(6)}\n>\n> - {self.sentence(3)}\n>   - {self.sentence(3)}"
        if kind == "cjk":
            return rng.choice(_CJK) + rng.choice(_CJK) + " " + rng.choice(_EMOJI)
        return self.block(kind)

    def block(self, kind: str) -> str:
        make: dict[str, Callable[[], str]] = {
            "heading": self.heading, "paragraph": self.paragraph, "list": self.bullet_list, "code": self.code,
            "table": self.table, "quote": self.quote, "cjk": self.cjk, "rule": self.rule,
        }
        return make[kind]()


_KIND_WEIGHTS = {"heading": 10, "paragraph": 34, "list": 16, "code": 14, "table": 7, "quote": 6, "cjk": 9,
                 "rule": 4}


def make_answer(seed: int, target_chars: int) -> str:
    """One Markdown answer of about ``target_chars`` characters (a little more, never much less).

    Every answer starts with small blocks of each kind of :data:`BLOCK_KINDS` in turn (about 1.2 KB
    for all of them; a shorter answer has the first few), then draws blocks at random; a drawn block
    that would overshoot the target by more than 10 % is replaced by a paragraph that fills the rest.
    The last line is :func:`sentinel` (``seed``).
    """
    rng = random.Random(seed)
    writer = _Writer(rng)
    end = sentinel(seed)
    budget = max(0, target_chars - len(end) - 2)
    blocks: list[str] = []
    size = 0
    kinds = list(BLOCK_KINDS)
    weights = list(_KIND_WEIGHTS.values())
    order = list(_KIND_WEIGHTS)
    i = 0
    while size < budget:
        opening = i < len(kinds)
        kind = kinds[i] if opening else rng.choices(order, weights)[0]
        i += 1
        block = writer.compact(kind) if opening else writer.block(kind)
        room = budget - size
        if not opening and len(block) + 2 > room * 1.1 + 40:
            words = writer.paragraph(12).split(" ")
            cut: list[str] = []
            used = 0
            for w in words:
                if used + len(w) + 1 > room:
                    break
                cut.append(w)
                used += len(w) + 1
            block = " ".join(cut or ["Done."])
        blocks.append(block)
        size += len(block) + 2
    blocks.append(end)
    return "\n\n".join(blocks)


@functools.lru_cache(maxsize=8)
def stream_answer(n_deltas: int, seed: int = 11) -> str:
    """The answer the node benchmarks stream in ``n_deltas`` deltas: about ``7 × n_deltas`` bytes."""
    text = make_answer(seed, int(n_deltas * 6.8))
    if not n_deltas <= len(text) <= 8 * n_deltas:
        raise ValueError(f"{len(text)} characters cannot be cut into {n_deltas} deltas of 1–8 characters")
    return text


def split_deltas(text: str, n: int, seed: int = 7) -> list[str]:
    """Cut ``text`` into exactly ``n`` non-empty deltas of 1–8 characters (code points), like tokens.

    The sizes are random (seeded) around the mean ``len(text) / n``; cuts fall anywhere: inside words,
    Markdown markers and grapheme clusters (a ZWJ emoji may arrive in three deltas).

    Raises:
        ValueError: ``text`` is shorter than ``n`` or longer than ``8 × n`` characters.
    """
    length = len(text)
    if n < 1 or not n <= length <= 8 * n:
        raise ValueError(f"cannot cut {length} characters into {n} deltas of 1–8 characters")
    rng = random.Random(seed)
    sizes = [1] * n
    extra = length - n
    # Spread the extra characters: random deltas grow by one until they hit 8 (fast enough for 20k).
    open_slots = list(range(n))
    while extra > 0:
        k = rng.randrange(len(open_slots))
        slot = open_slots[k]
        grow = min(extra, rng.randint(1, 4), 8 - sizes[slot])
        sizes[slot] += grow
        extra -= grow
        if sizes[slot] >= 8:
            open_slots[k] = open_slots[-1]
            open_slots.pop()
    out: list[str] = []
    pos = 0
    for size in sizes:
        out.append(text[pos : pos + size])
        pos += size
    return out


def openai_stream_body(deltas: list[str], *, model: str = "fake-fast") -> bytes:
    """The SSE body of an OpenAI chat completion stream carrying ``deltas`` (with a usage chunk)."""
    head = ('data: {"id":"chatcmpl-corpus","object":"chat.completion.chunk","created":1764547200,"model":'
            + json.dumps(model) + ',"choices":[{"index":0,"delta":')
    tail = ',"logprobs":null,"finish_reason":null}]}\n\n'
    parts = [head + '{"role":"assistant","content":""}' + tail]
    parts += [head + '{"content":' + json.dumps(d, ensure_ascii=False) + "}" + tail for d in deltas]
    parts.append(head + '{},"logprobs":null,"finish_reason":"stop"}]}\n\n')
    usage = {"prompt_tokens": 12, "completion_tokens": len(deltas), "total_tokens": 12 + len(deltas)}
    parts.append('data: {"id":"chatcmpl-corpus","object":"chat.completion.chunk","created":1764547200,'
                 '"model":' + json.dumps(model) + ',"choices":[],"usage":' + json.dumps(usage) + "}\n\n")
    parts.append("data: [DONE]\n\n")
    return "".join(parts).encode("utf-8")


_QUESTIONS = (
    "How do I stream a chat completion and show it as it arrives?",
    "Compare these two approaches in a table, with code for each.",
    "Write a migration for the usage table and explain the indexes.",
    "Why does the window freeze at the end of a long answer?",
    "Explain the retry policy step by step, with an example config.",
    "列出三种优化长对话渲染的方法。",
)


def make_markdown_messages(n: int, *, seed: int = 3, mean_chars: int = 1_200) -> list[ChatMessage]:
    """``n`` messages alternating a short user question and a Markdown-rich answer (ids ``m0``…).

    Answer sizes vary from ``mean_chars / 4`` to ``2 × mean_chars`` (seeded); assistant messages carry
    usage and a model like real ones. The texts are generated once per arguments (cached); each call
    returns new message objects.
    """
    return [dataclasses.replace(m) for m in _markdown_messages(n, seed, mean_chars)]


@functools.lru_cache(maxsize=4)
def _markdown_messages(n: int, seed: int, mean_chars: int) -> tuple[ChatMessage, ...]:
    rng = random.Random(seed)
    out: list[ChatMessage] = []
    ts = 1_764_547_200_000
    for i in range(n):
        if i % 2 == 0:
            out.append(ChatMessage(f"m{i}", "user", _QUESTIONS[(i // 2) % len(_QUESTIONS)], ts + i))
        else:
            size = rng.randint(mean_chars // 4, 2 * mean_chars)
            text = make_answer(seed * 100_003 + i, size)
            usage = Usage(input_tokens=200 + i % 97, output_tokens=size // 4, cache_read_tokens=64)
            out.append(ChatMessage(f"m{i}", "assistant", text, ts + i, usage=usage, model="gpt-4o-mini"))
    return tuple(out)


def corpus_stats(text: str) -> dict[str, int]:
    """The shape of a text: characters, UTF-8 bytes, and counts of headings, fenced code blocks (and
    their lines), table rows, list items, quote lines, links and non-ASCII characters."""
    lines = text.split("\n")
    fences = [i for i, ln in enumerate(lines) if ln.startswith("```")]
    code_lines = sum(b - a - 1 for a, b in zip(fences[::2], fences[1::2], strict=False))
    in_code: set[int] = set()
    for a, b in zip(fences[::2], fences[1::2], strict=False):
        in_code.update(range(a, b + 1))
    prose = [ln for i, ln in enumerate(lines) if i not in in_code]
    return {
        "chars": len(text),
        "bytes": len(text.encode("utf-8")),
        "headings": sum(ln.startswith("#") for ln in prose),
        "code_blocks": len(fences) // 2,
        "code_lines": code_lines,
        "tables": sum(ln.startswith("|---") or ln.startswith("|:--") for ln in prose),
        "table_rows": sum(ln.startswith("| ") for ln in prose),
        "list_items": sum(bool(_ITEM.match(ln)) for ln in prose),
        "quote_lines": sum(ln.startswith(">") for ln in prose),
        "links": text.count("](https://"),
        "non_ascii": sum(ord(c) > 127 for c in text),
    }


# -- code generators (plausible, not necessarily compilable; what matters is the shape)


def _py(rng: random.Random, n: int) -> str:
    out = ["import asyncio", "", "", f"async def fetch_{rng.randint(1, 99)}(client, url: str) -> dict:"]
    while len(out) < n:
        out.append(rng.choice((
            "    async with asyncio.timeout(30):",
            "        resp = await client.get(url, headers={\"accept\": \"application/json\"})",
            "    if resp.status_code != 200:  # retry later",
            "        raise RuntimeError(f\"HTTP {resp.status_code}: {resp.text[:200]}\")",
            "    data = {k: v for k, v in resp.json().items() if v is not None}",
            "    for i, item in enumerate(data.get('items', [])):",
            "        print(f'{i:>4} {item[\"name\"]!r}')",
            "    return data",
        )))
    return "\n".join(out[:n])


def _ts(rng: random.Random, n: int) -> str:
    out = ["interface Message {", "  id: string;", "  role: 'user' | 'assistant';", "}"]
    while len(out) < n:
        out.append(rng.choice((
            "export async function send(msg: Message): Promise<Response> {",
            "  const res = await fetch(`/api/chat/${msg.id}`, { method: 'POST' });",
            "  if (!res.ok) throw new Error(`status ${res.status}`);",
            "  const items = messages.filter((m) => m.role === 'assistant' && m.id !== '');",
            "  return res;",
            "}",
            "type Delta = { text: string } | { done: true };",
        )))
    return "\n".join(out[:n])


def _rs(rng: random.Random, n: int) -> str:
    out = ["use std::collections::HashMap;", "", "fn main() -> Result<(), Box<dyn std::error::Error>> {"]
    while len(out) < n:
        out.append(rng.choice((
            "    let mut counts: HashMap<&str, usize> = HashMap::new();",
            "    for word in text.split_whitespace() { *counts.entry(word).or_insert(0) += 1; }",
            "    let bytes: Vec<u8> = std::fs::read(\"input.txt\")?;",
            "    println!(\"{} words, {} bytes\", counts.len(), bytes.len());",
            "    if bytes.is_empty() { return Ok(()); }",
            "    match counts.get(\"the\") { Some(n) => println!(\"{n}\"), None => {} }",
        )))
    out.append("}")
    return "\n".join(out[-n:] if len(out) > n else out)


def _sql(rng: random.Random, n: int) -> str:
    out = ["CREATE TABLE IF NOT EXISTS usage ("]
    while len(out) < n:
        out.append(rng.choice((
            "    id INTEGER PRIMARY KEY,",
            "    model TEXT NOT NULL,",
            "    input_tokens INTEGER NOT NULL DEFAULT 0,",
            "SELECT model, SUM(input_tokens) AS total FROM usage WHERE ts >= '2026-11-01' GROUP BY model;",
            "CREATE INDEX idx_usage_ts ON usage (ts);",
            "UPDATE usage SET cost = input_tokens * 0.0000025 WHERE cost IS NULL;",
        )))
    return "\n".join(out[:n])


def _sh(rng: random.Random, n: int) -> str:
    out = ["#!/usr/bin/env bash", "set -euo pipefail"]
    while len(out) < n:
        out.append(rng.choice((
            "python -m venv .venv && .venv/bin/pip install -e '.[test]'",
            "for f in data/*.json; do jq -r '.items[] | .name' \"$f\"; done | sort | uniq -c",
            "export QT_QPA_PLATFORM=offscreen",
            "grep -rn 'TODO' src/ || echo \"no TODOs\"",
            "curl -sS -H \"Authorization: Bearer $TOKEN\" https://api.example.com/v1/models",
            "if [[ -z \"${CI:-}\" ]]; then make run; fi",
        )))
    return "\n".join(out[:n])


def _json(rng: random.Random, n: int) -> str:
    out = ["{"]
    k = 0
    while len(out) < n - 1:
        k += 1
        out.append(rng.choice((
            f'  "key_{k}": "value with \\"quotes\\" and ünïcode",',
            f'  "count_{k}": {rng.randint(0, 10_000)},',
            f'  "enabled_{k}": true,',
            f'  "list_{k}": [1, 2, 3, null],',
        )))
    out.append('  "end": null')
    out.append("}")
    return "\n".join(out[:n] if len(out) > n else out)


_CODE: dict[str, Callable[[random.Random, int], str]] = {
    "python": _py, "typescript": _ts, "rust": _rs, "sql": _sql, "bash": _sh, "json": _json,
}
