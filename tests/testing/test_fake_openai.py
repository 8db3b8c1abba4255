"""The fake provider speaks OpenAI Chat Completions: streams, tool calls, usage, plain JSON, models."""

from __future__ import annotations

import json

import httpx
from fakesse import openai_chunks, openai_text, openai_tool_calls

from desktop.testing import FakeProvider, ToolCallSpec, Turn


def _stream(client: httpx.Client, fp: FakeProvider, *, include_usage: bool = True, **extra: object) -> bytes:
    body: dict[str, object] = {
        "model": "gpt-4o-mini",
        "stream": True,
        "messages": [{"role": "user", "content": "hi"}],
        **extra,
    }
    if include_usage:
        body["stream_options"] = {"include_usage": True}
    r = client.post(fp.openai_base_url + "/chat/completions", json=body)
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/event-stream")
    return r.content


def test_text_stream_shape_and_usage_with_cache(fp: FakeProvider, client: httpx.Client) -> None:
    fp.script(
        Turn(
            text="Hello, streaming world!",
            chunk_chars=5,
            usage={"input": 100, "output": 20, "cache_read": 300, "cache_write": 7, "reasoning": 4},
        )
    )
    chunks = openai_chunks(_stream(client, fp))
    assert chunks[-1] == "[DONE]"
    assert chunks[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    assert openai_text(chunks) == "Hello, streaming world!"
    content = [c for c in chunks[1:-2] if c["choices"] and c["choices"][0]["delta"].get("content")]
    assert [c["choices"][0]["delta"]["content"] for c in content][:2] == ["Hello", ", str"]
    assert all(c["model"] == "gpt-4o-mini" and c["object"] == "chat.completion.chunk" for c in chunks[:-1])
    finish = chunks[-3]
    assert finish["choices"][0]["finish_reason"] == "stop" and finish["choices"][0]["delta"] == {}
    usage_chunk = chunks[-2]
    assert usage_chunk["choices"] == []
    usage = usage_chunk["usage"]
    # prompt_tokens INCLUDES cached tokens (and cache writes, which OpenAI has no field for).
    assert usage["prompt_tokens"] == 407
    assert usage["prompt_tokens_details"]["cached_tokens"] == 300
    assert usage["completion_tokens"] == 20
    assert usage["completion_tokens_details"]["reasoning_tokens"] == 4
    assert usage["total_tokens"] == 427


def test_usage_chunk_only_when_requested(fp: FakeProvider, client: httpx.Client) -> None:
    fp.script(Turn(text="no usage please"))
    chunks = openai_chunks(_stream(client, fp, include_usage=False))
    assert chunks[-1] == "[DONE]"
    assert all("usage" not in c for c in chunks[:-1])
    assert chunks[-2]["choices"][0]["finish_reason"] == "stop"


def test_reasoning_content_streams_before_text(fp: FakeProvider, client: httpx.Client) -> None:
    fp.script(Turn(thinking="Let me think about it.", text="42"))
    chunks = openai_chunks(_stream(client, fp))
    assert openai_text(chunks, "reasoning_content") == "Let me think about it."
    assert openai_text(chunks) == "42"
    kinds = [next(iter(c["choices"][0]["delta"]), None) for c in chunks[1:-3]]
    assert kinds.index("content") > max(i for i, k in enumerate(kinds) if k == "reasoning_content")


def test_single_tool_call_fragments(fp: FakeProvider, client: httpx.Client) -> None:
    fp.script(
        Turn(
            text="Checking.",
            tool_calls=[ToolCallSpec("get_weather", {"city": "Paris", "units": "c"}, id="call_abc")],
        )
    )
    chunks = openai_chunks(_stream(client, fp))
    calls = openai_tool_calls(chunks)
    assert calls == {
        0: {"id": "call_abc", "name": "get_weather", "arguments": '{"city":"Paris","units":"c"}'}
    }
    opening = next(c for c in chunks[1:-1] if c["choices"] and "tool_calls" in c["choices"][0]["delta"])
    tc = opening["choices"][0]["delta"]["tool_calls"][0]
    assert tc == {
        "index": 0,
        "id": "call_abc",
        "type": "function",
        "function": {"name": "get_weather", "arguments": ""},
    }
    fragments = [c for c in chunks[1:-1] if c["choices"] and "tool_calls" in c["choices"][0]["delta"]][1:]
    assert len(fragments) > 3  # arguments really are split across chunks
    assert all(set(f["choices"][0]["delta"]["tool_calls"][0]) == {"index", "function"} for f in fragments)
    assert chunks[-3]["choices"][0]["finish_reason"] == "tool_calls"


def test_parallel_tool_calls_and_raw_invalid_args(fp: FakeProvider, client: httpx.Client) -> None:
    fp.script(Turn(tool_calls=[ToolCallSpec("a", {"x": 1}), ToolCallSpec("b", '{"broken": ')]))
    chunks = openai_chunks(_stream(client, fp))
    calls = openai_tool_calls(chunks)
    assert [calls[0]["name"], calls[1]["name"]] == ["a", "b"]
    assert json.loads(calls[0]["arguments"]) == {"x": 1}
    assert calls[1]["arguments"] == '{"broken": '
    assert calls[0]["id"].startswith("call_") and calls[0]["id"] != calls[1]["id"]
    assert openai_text(chunks) == ""


def test_stop_reason_translated_from_anthropic_name(fp: FakeProvider, client: httpx.Client) -> None:
    fp.script(Turn(text="cut", stop_reason="max_tokens"), Turn(text="x", stop_reason="content_filter"))
    assert openai_chunks(_stream(client, fp))[-3]["choices"][0]["finish_reason"] == "length"
    assert openai_chunks(_stream(client, fp))[-3]["choices"][0]["finish_reason"] == "content_filter"


def test_turn_model_overrides_requested_model(fp: FakeProvider, client: httpx.Client) -> None:
    fp.script(Turn(text="x", model="gpt-4o-2024-08-06"))
    chunks = openai_chunks(_stream(client, fp))
    assert {c["model"] for c in chunks[:-1]} == {"gpt-4o-2024-08-06"}


def test_non_streaming_json(fp: FakeProvider, client: httpx.Client) -> None:
    fp.script(
        Turn(
            text="plain",
            thinking="hm",
            tool_calls=[ToolCallSpec("f", {"k": "v"}, id="call_1")],
            usage={"input": 5, "output": 6, "cache_read": 2},
        )
    )
    r = client.post(fp.openai_base_url + "/chat/completions", json={"model": "m", "messages": []})
    assert r.status_code == 200 and r.headers["content-type"] == "application/json"
    body = r.json()
    assert body["object"] == "chat.completion"
    choice = body["choices"][0]
    assert choice["finish_reason"] == "tool_calls"
    assert choice["message"]["content"] == "plain"
    assert choice["message"]["reasoning_content"] == "hm"
    assert choice["message"]["tool_calls"] == [
        {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": '{"k":"v"}'}}
    ]
    assert (
        body["usage"]["prompt_tokens"] == 7 and body["usage"]["prompt_tokens_details"]["cached_tokens"] == 2
    )


def test_models_list(client: httpx.Client) -> None:
    with FakeProvider(models=["gpt-4o", "gpt-4o-mini", "o3"]) as fp:
        r = client.get(fp.openai_base_url + "/models", headers={"authorization": "Bearer x"})
    assert r.status_code == 200
    body = r.json()
    assert body["object"] == "list"
    assert [(m["id"], m["object"]) for m in body["data"]] == [
        ("gpt-4o", "model"),
        ("gpt-4o-mini", "model"),
        ("o3", "model"),
    ]


def test_default_echo_turn(fp: FakeProvider, client: httpx.Client) -> None:
    chunks = openai_chunks(
        _stream(client, fp, messages=[{"role": "user", "content": [{"type": "text", "text": "ping me"}]}])
    )
    assert openai_text(chunks) == "Echo: ping me"
    assert chunks[-2]["usage"]["prompt_tokens"] > 0
