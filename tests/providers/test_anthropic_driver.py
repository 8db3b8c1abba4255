"""Anthropic driver: endpoint, headers, request mapping (recorded turn-2 shapes) and stream events."""

from __future__ import annotations

import json
from typing import Any

import pytest
from provider_support import (
    SECRET,
    MockServer,
    Outcome,
    anthropic_config,
    collect,
    fixture_bytes,
    fixture_json,
    outcome_for,
    sse_reply,
)

from desktop.core.chat.types import ChatMessage, ChatToolDef, ToolCall, Usage
from desktop.core.providers import anthropic_messages, anthropic_url


def ev(kind: str, **data: Any) -> bytes:
    return f"event: {kind}\ndata: {json.dumps({'type': kind, **data})}\n\n".encode()


START_USAGE = {"input_tokens": 10, "cache_read_input_tokens": 100, "cache_creation_input_tokens": 5,
               "output_tokens": 1}
START = ev("message_start", message={"id": "msg_1", "model": "claude-x", "usage": START_USAGE})


def text_block(index: int, text: str) -> bytes:
    return (ev("content_block_start", index=index, content_block={"type": "text", "text": ""})
            + ev("content_block_delta", index=index, delta={"type": "text_delta", "text": text})
            + ev("content_block_stop", index=index))


def end(stop: str = "end_turn", **usage: Any) -> bytes:
    delta = ev("message_delta", delta={"stop_reason": stop}, usage={"output_tokens": 7, **usage})
    return delta + ev("message_stop")


async def stream(body: bytes, **kw: Any) -> Outcome:
    return await outcome_for(anthropic_config(**kw), [body])


async def _noop(args: dict[str, Any]) -> str:
    return ""


@pytest.mark.parametrize(("base", "url"), [
    ("https://api.anthropic.com", "https://api.anthropic.com/v1/messages"),
    ("https://api.anthropic.com/", "https://api.anthropic.com/v1/messages"),
    ("https://api.anthropic.com/v1", "https://api.anthropic.com/v1/messages"),
    ("https://proxy.example/anthropic/v1/", "https://proxy.example/anthropic/v1/messages"),
    ("", "https://api.anthropic.com/v1/messages"),
])
def test_endpoint_never_doubles_v1(base: str, url: str) -> None:
    assert anthropic_url(base, "messages") == url


@pytest.mark.anyio
async def test_request_headers_and_body() -> None:
    server = MockServer(sse_reply(START + text_block(0, "hi") + end()))
    tool = ChatToolDef("now", "Current time", {"type": "object", "properties": {}}, False, _noop)
    messages = [ChatMessage("s", "system", "Be terse.", 0), ChatMessage("u", "user", "Hi", 0),
                ChatMessage("n", "note", "local", 0)]
    await collect(anthropic_config(max_tokens=4096, thinking_budget=2048), server, messages=messages,
                  tools=[tool], system="You help.", model="claude-x")
    request = server.requests[0]
    assert str(request.url) == "https://api.anthropic.test/v1/messages"
    assert request.headers["x-api-key"] == SECRET
    assert request.headers["anthropic-version"] == "2023-06-01"
    assert request.headers["content-type"] == "application/json"
    assert "authorization" not in request.headers
    cached = {"cache_control": {"type": "ephemeral"}}  # prompt caching is on by default
    assert server.bodies()[0] == {
        "model": "claude-x", "max_tokens": 4096, "stream": True,
        "system": [{"type": "text", "text": "You help.\n\nBe terse.", **cached}],
        "messages": [{"role": "user", "content": [{"type": "text", "text": "Hi", **cached}]}],
        "tools": [{"name": "now", "description": "Current time", "input_schema": tool.schema, **cached}],
        "thinking": {"type": "enabled", "budget_tokens": 2048},
    }


@pytest.mark.anyio
async def test_thinking_turn2_matches_recording() -> None:
    turn1 = await outcome_for(anthropic_config(), [fixture_bytes("anthropic_thinking_tool_use_turn1.sse")])
    recorded = fixture_json("anthropic_thinking_tool_use_turn2.request.json")
    [(call_id, name, args)] = turn1.calls
    call = ToolCall(call_id, name, args, result="0.32a0", status="done")
    blocks = [{"type": "thinking", "thinking": turn1.thinking, "signature": turn1.signatures[0]}]
    history = [
        ChatMessage("u", "user", recorded["messages"][0]["content"][0]["text"], 0),
        ChatMessage("a", "assistant", turn1.text, 0, thinking=turn1.thinking, thinking_blocks=blocks,
                    tool_calls=[call]),
        ChatMessage("t", "tool", "0.32a0", 0, tool_calls=[call.copy()]),
    ]
    assert anthropic_messages(history) == recorded["messages"]


@pytest.mark.anyio
async def test_parallel_turn2_matches_recording() -> None:
    turn1 = await outcome_for(anthropic_config(), [fixture_bytes("anthropic_parallel_tool_use.sse")])
    recorded = fixture_json("anthropic_parallel_tool_use_turn2.request.json")
    calls = [ToolCall(i, n, a, status="done") for i, n, a in turn1.calls]
    history = [
        ChatMessage("u", "user", "Two names for a pet pelican", 0),
        ChatMessage("a", "assistant", turn1.text, 0, tool_calls=calls),
        # results finished in the opposite order: still sent in call order
        ChatMessage("t2", "tool", "Sammy", 0, tool_calls=[calls[1]]),
        ChatMessage("t1", "tool", "Charles", 0, tool_calls=[calls[0]]),
    ]
    expected = recorded["messages"]
    # llm-anthropic adds a {"type": "text", "text": " "} block to the assistant turn; the API doesn't need it.
    expected[1]["content"] = [b for b in expected[1]["content"] if b["type"] != "text"]
    assert anthropic_messages(history) == expected


def test_mapping_merges_turns_drops_empty_and_unsigned_thinking() -> None:
    call = ToolCall("t1", "f", '{"a": 1}', result="boom", is_error=True, status="error")
    history = [
        ChatMessage("u1", "user", "one", 0),
        ChatMessage("u2", "user", "two", 0),
        ChatMessage("a0", "assistant", "", 0),  # empty: dropped
        ChatMessage("a1", "assistant", "", 0, thinking="unsigned", tool_calls=[call],
                    thinking_blocks=[{"type": "thinking", "thinking": "unsigned", "signature": ""},
                                     {"type": "redacted_thinking", "data": "ENC"}]),
        ChatMessage("t", "tool", "boom", 0, tool_calls=[call]),
        ChatMessage("u3", "user", "and now?", 0),
    ]
    assert anthropic_messages(history) == [
        {"role": "user", "content": [{"type": "text", "text": "one"}, {"type": "text", "text": "two"}]},
        {"role": "assistant", "content": [{"type": "redacted_thinking", "data": "ENC"},
                                          {"type": "tool_use", "id": "t1", "name": "f", "input": {"a": 1}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "boom", "is_error": True},
            {"type": "text", "text": "and now?"}]},
    ]


@pytest.mark.anyio
async def test_usage_cache_not_added_and_message_delta_overrides() -> None:
    out = await stream(START + text_block(0, "hi") + end(input_tokens=12, cache_read_input_tokens=90))
    assert out.usage == Usage(12, 7, cache_read_tokens=90, cache_write_tokens=5)
    assert out.model == "claude-x"


@pytest.mark.anyio
async def test_text_blocks_and_tool_use_yielded_at_block_stop() -> None:
    tool = (ev("content_block_start", index=1, content_block={"type": "tool_use", "id": "tu", "name": "f",
                                                                 "input": {}})
            + ev("content_block_delta", index=1, delta={"type": "input_json_delta", "partial_json": ""})
            + ev("content_block_delta", index=1, delta={"type": "input_json_delta", "partial_json": '{"q": '})
            + ev("content_block_delta", index=1, delta={"type": "input_json_delta", "partial_json": '"x"}'})
            + ev("content_block_stop", index=1))
    out = await stream(START + text_block(0, "Looking.") + tool + ev("ping") + end("tool_use"))
    kinds = [type(e).__name__ for e in out.events]
    assert kinds == ["UsageReport", "Delta", "ToolCallRequested", "UsageReport"]
    assert out.calls == [("tu", "f", '{"q": "x"}')]


@pytest.mark.anyio
async def test_unknown_events_blocks_and_deltas_are_tolerated() -> None:
    body = (START + ev("mystery", x=1)
            + ev("content_block_start", index=0, content_block={"type": "server_tool_use", "id": "s"})
            + ev("content_block_delta", index=0, delta={"type": "citations_delta", "citation": {}})
            + ev("content_block_stop", index=0) + text_block(1, "ok") + end())
    out = await stream(body)
    assert out.error is None and out.text == "ok"


@pytest.mark.anyio
async def test_max_tokens_never_yields_the_unfinished_tool_use() -> None:
    body = (START + ev("content_block_start", index=0,
                       content_block={"type": "tool_use", "id": "tu", "name": "write", "input": {}})
            + ev("content_block_delta", index=0,
                 delta={"type": "input_json_delta", "partial_json": '{"a": 1}'})
            + end("max_tokens"))
    out = await stream(body)
    assert out.calls == []  # even though the partial JSON happens to parse
    assert out.notices == ["response truncated: max_tokens"]


@pytest.mark.parametrize(("reason", "word"), [
    ("refusal", "refus"), ("model_context_window_exceeded", "context")])
@pytest.mark.anyio
async def test_stop_reason_notices(reason: str, word: str) -> None:
    out = await stream(START + text_block(0, "x") + end(reason))
    assert len(out.notices) == 1 and word in out.notices[0]


@pytest.mark.anyio
async def test_error_event_after_200() -> None:
    body = START + text_block(0, "partial") + (
        b'event: error\ndata: {"type": "error", "error": {"type": "overloaded_error", '
        b'"message": "Overloaded"}}\n\n')
    out = await stream(body)
    assert out.text == "partial"
    assert out.error is not None
    assert (out.error.message, out.error.kind, out.error.status) == (
        "overloaded_error: Overloaded", "overloaded", None)


@pytest.mark.anyio
async def test_missing_message_delta_is_a_truncated_stream() -> None:
    out = await stream(START + text_block(0, "half"))
    assert out.text == "half"
    assert out.error is not None and out.error.kind == "network"
    assert out.error.message == "stream ended before the response was complete"


@pytest.mark.anyio
async def test_message_delta_without_message_stop_finishes() -> None:
    body = START + text_block(0, "ok") + ev("message_delta", delta={"stop_reason": "end_turn"},
                                            usage={"output_tokens": 2})
    out = await stream(body.rstrip(b"\n"))
    assert out.error is None and out.usage == Usage(10, 2, cache_read_tokens=100, cache_write_tokens=5)


@pytest.mark.anyio
async def test_thinking_signature_and_redacted_events() -> None:
    body = (START + ev("content_block_start", index=0, content_block={"type": "thinking", "thinking": "",
                                                                         "signature": ""})
            + ev("content_block_delta", index=0, delta={"type": "thinking_delta", "thinking": "hmm"})
            + ev("content_block_delta", index=0, delta={"type": "signature_delta", "signature": "SIG"})
            + ev("content_block_stop", index=0)
            + ev("content_block_start", index=1, content_block={"type": "redacted_thinking", "data": "ENC"})
            + ev("content_block_stop", index=1) + text_block(2, "answer") + end())
    out = await stream(body)
    thinking = [e for e in out.events if type(e).__name__ == "Thinking"]
    assert [(t.text, t.signature, t.redacted_data) for t in thinking] == [  # type: ignore[attr-defined]
        ("hmm", None, None), ("", "SIG", None), ("", None, "ENC")]
