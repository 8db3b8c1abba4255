"""The context meter's reading: the last reply's tokens against the model's context window."""

from __future__ import annotations

from desktop.core.chat.types import ChatMessage, Usage
from desktop.core.usage import context_use, context_window


def _answer(i: int, usage: Usage, model: str | None) -> list[ChatMessage]:
    return [ChatMessage(id=f"u{i}", role="user", content=f"q{i}", ts=0),
            ChatMessage(id=f"a{i}", role="assistant", content=f"a{i}", ts=0, usage=usage, model=model)]


def test_context_use_reads_the_last_reply_with_usage() -> None:
    window = context_window("gpt-4o")
    assert window == 128_000
    last = Usage(20_000, 1_000, cache_read_tokens=10_000)
    msgs = [*_answer(1, Usage(1000, 10), "gpt-4o"), *_answer(2, last, "gpt-4o")]
    use = context_use(msgs)
    assert use is not None and use.used == 31_000 and use.window == window and use.model == "gpt-4o"
    assert context_use(msgs[:1]) is None  # no reply yet
    assert context_use(_answer(3, Usage(10, 10), "no-such-model-xyz")) is None  # unknown window: no bar
    assert context_use(_answer(4, Usage(10, 10), None), "gpt-4o") is not None  # the node's model
