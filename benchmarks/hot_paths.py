"""Costs the unit tests used to time (issue 31): each is now a row here, against a baseline of the same run.

* ``cpu.clear_upper_state``: one call of ``desktop.core.cpu_state.clear_upper_state`` (it runs at
  every decoding slice of a stream), in µs, against a call of an empty Python function. Budget
  ≤ 25 µs a call (a 150 ms stream has ~100 slices).
* ``apply.delta_history``: 20,000 stream deltas applied (``apply_event``) to a conversation of
  50,000 messages, against the same deltas into an empty conversation. Constant time per delta
  ⇒ ≈ 1×; budget ≤ 1.5×. (The test counts the list reads: tests/core/test_chat_conversation.py.)
* ``providers.blank_deltas``: an OpenAI stream of 200,000 whitespace-only deltas before the first
  text, per delta, against the per-delta time of 100,000 (in-process ``httpx.MockTransport``: the
  decoder, not the socket). Linear ⇒ ≈ 1×; budget ≤ 1.5× (the quadratic version took 7–15 s).
* ``markdown.linear``: ``render_markdown`` of 500 Markdown blocks, per block, against the per-block
  time of 50 blocks. Budget ≤ 1.5×.
* ``markdown.openers``: the seven unclosed-opener inputs (``**a ``, ``[a](``…, 8,000–20,000 each),
  per opener, against the per-opener time of half as many. Budget ≤ 1.5× (each took 8–37 s when the
  rescans were quadratic).
* ``code.highlight``: ``highlight_code`` of a 5,000-line Python block against Pygments' own
  ``highlight(…, HtmlFormatter(nowrap=True))`` of the same code. Budget ≤ 1.5×.

Sizes shrink in the smoke run (``Settings.smoke``); every figure is in milliseconds except the first.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

import httpx

from benchmarks._harness import Budget, Row, Settings, paired, timed
from desktop.core.chat.conversation import Conversation, apply_event
from desktop.core.chat.types import ChatMessage, Delta, ProviderConfig
from desktop.core.cpu_state import clear_upper_state
from desktop.core.providers import driver_for

log = logging.getLogger(__name__)

__all__ = ["run", "OPENERS", "MARKDOWN_BLOCK", "blank_stream", "python_code"]

MARKDOWN_BLOCK = ("## Section\n\nSome *text* with `code` and a [link](https://x.y).\n\n- a\n- b\n\n"
                  "```\ncode\n```\n\n")
OPENERS = (("**a ", 20_000), ("*a ", 20_000), ("_a ", 20_000), ("~~a ", 20_000), ("[a](", 8_000),
           ("![a](", 8_000), ("<http://a", 8_000))
"""The unclosed inline openers of tests/ui/test_markdown.py and how many of each the full run renders."""


def _per_call_us(fn: Callable[[], object], calls: int) -> float:
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - start) / calls * 1e6


def _nothing() -> None:
    return None


def _deltas_ms(history: int, deltas: int) -> float:
    messages = [ChatMessage(f"m{i}", "user" if i % 2 else "assistant", "x", i) for i in range(history)]
    conv = Conversation("c-bench", messages, 1_764_547_200_000)

    def work() -> None:
        for _ in range(deltas):
            apply_event(conv, Delta("ab", message_id="new"))

    return timed(work)


def blank_stream(n: int) -> bytes:
    """An OpenAI stream body: a role chunk, ``n`` whitespace-only deltas, then "end"."""
    blank = b'data: {"choices":[{"index":0,"delta":{"content":" "}}]}\n\n'
    return (b'data: {"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}\n\n' + blank * n
            + b'data: {"choices":[{"index":0,"delta":{"content":"end"},"finish_reason":"stop"}]}\n\n')


def _blank_ms(body: bytes, n: int) -> float:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body)

    async def scenario() -> str:
        config = ProviderConfig("bench", "Bench", "openai", "https://bench.test/v1", "k" * 20)
        async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
            driver = driver_for(config, client)
            text = ""
            messages = [ChatMessage("u", "user", "x", 0)]
            async for event in driver.stream(model="m", messages=messages, tools=[]):
                if type(event) is Delta:
                    text += event.text
            return text

    start = time.perf_counter()
    text = asyncio.run(scenario())
    ms = (time.perf_counter() - start) * 1000.0
    if text != " " * n + "end":
        raise RuntimeError(f"the blank stream decoded to {len(text)} characters, expected {n + 3}")
    return ms


def python_code(lines: int) -> str:
    """``lines`` lines of Python (pairs of a ``def`` and a ``return`` with a comment)."""
    return "\n".join(f"def f{i}(x):\n    return x * {i}  # line {i}" for i in range(lines // 2))


def run(settings: Settings) -> list[Row]:
    """The rows of the module docstring."""
    from pygments import highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import PythonLexer

    from desktop.ui.markdown.code import highlight_code
    from desktop.ui.markdown.render import render_markdown

    tiny = settings.smoke
    runs, warmup = settings.runs, settings.warmup
    rows: list[Row] = []

    calls = 200 if tiny else 2_000
    ours, base = paired(lambda: _per_call_us(clear_upper_state, calls), lambda: _per_call_us(_nothing, calls),
                        runs, warmup=warmup)
    rows.append(Row("cpu.clear_upper_state", f"clear_upper_state(), one call (mean of {calls:,})", "µs",
                    ours, "an empty Python function call", base, Budget.at_most(25, "µs")))

    history, deltas = (500, 200) if tiny else (50_000, 20_000)
    ours, base = paired(lambda: _deltas_ms(history, deltas), lambda: _deltas_ms(0, deltas), runs,
                        warmup=warmup)
    rows.append(Row("apply.delta_history", f"apply_event: {deltas:,} deltas onto {history:,} messages", "ms",
                    ours, "the same deltas onto an empty conversation", base, Budget.ratio(1.5)))

    n = 2_000 if tiny else 100_000
    small, big = blank_stream(n), blank_stream(2 * n)
    ours, base = paired(lambda: _blank_ms(big, 2 * n) / 2, lambda: _blank_ms(small, n), runs, warmup=warmup)
    rows.append(Row("providers.blank_deltas", f"OpenAI stream of {2 * n:,} blank deltas, per {n:,}", "ms",
                    ours, f"the stream of {n:,}", base, Budget.ratio(1.5)))

    blocks = 5 if tiny else 50
    render_markdown(MARKDOWN_BLOCK)  # first-use work (caches) is not the render's
    ours, base = paired(lambda: timed(lambda: render_markdown(MARKDOWN_BLOCK * blocks * 10)) / 10,
                        lambda: timed(lambda: render_markdown(MARKDOWN_BLOCK * blocks)), runs, warmup=warmup)
    rows.append(Row("markdown.linear", f"render_markdown, {blocks * 10:,} blocks, per {blocks:,}", "ms", ours,
                    f"{blocks:,} blocks", base, Budget.ratio(1.5)))

    scale = 100 if tiny else 1

    def openers_ms(factor: int) -> float:
        return sum(timed(lambda o=opener, c=count: render_markdown(o * (c // scale // factor)))
                   for opener, count in OPENERS)

    ours, base = paired(lambda: openers_ms(1) / 2, lambda: openers_ms(2), runs, warmup=warmup)
    rows.append(Row("markdown.openers", "render_markdown, 7 unclosed-opener inputs (8k–20k each), halved",
                    "ms", ours, "inputs half as long", base, Budget.ratio(1.5)))

    code = python_code(500 if tiny else 5_000)
    lexer, formatter = PythonLexer(), HtmlFormatter(nowrap=True)
    ours, base = paired(lambda: timed(lambda: highlight_code(code, "python", dark=False)),
                        lambda: timed(lambda: highlight(code, lexer, formatter)), runs, warmup=warmup)
    rows.append(Row("code.highlight", f"highlight_code, {code.count(chr(10)) + 1:,} lines of Python", "ms",
                    ours, "pygments.highlight + HtmlFormatter", base, Budget.ratio(1.5)))
    return rows
