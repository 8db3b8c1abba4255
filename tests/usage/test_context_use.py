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


def test_the_context_lengths_a_local_server_reported_beat_the_tables() -> None:
    known = {"llama3.2:latest": 131_072, "qwen3:8b": 40_960}
    assert context_window("llama3.2:latest") is None  # no table knows a local model's window
    assert context_window("llama3.2:latest", known) == 131_072
    assert context_window("llama3.2", known) == 131_072  # Ollama's implied ":latest" tag
    assert context_window("QWEN3:8B", known) == 40_960
    assert context_window("gpt-4o", {"gpt-4o": 8192}) == 8192  # what the server says wins
    assert context_window("gpt-4o", {"other": 8192}) == 128_000
    use = context_use(_answer(1, Usage(60_000, 5_536), "llama3.2:latest"), known=known)
    assert use is not None and (use.used, use.window) == (65_536, 131_072) and use.fraction == 0.5
