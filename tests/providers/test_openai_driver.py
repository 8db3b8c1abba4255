"""OpenAI-compatible driver: endpoints, request mapping and the wire quirks of docs/PROTOCOLS.md."""

from __future__ import annotations

import json
from typing import Any

import pytest
from provider_support import (
    SECRET,
    MockServer,
    Outcome,
    collect,
    fixture_bytes,
    fixture_json,
    json_reply,
    openai_config,
    outcome_for,
    sse_reply,
)

from desktop.core.chat.types import ChatMessage, ChatToolDef, ToolCall, Usage
from desktop.core.providers import OpenAIDriver, openai_messages, openai_url


def sse(*chunks: Any, done: bool = True) -> bytes:
    body = b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks)
    return body + (b"data: [DONE]\n\n" if done else b"")


def chunk(delta: dict[str, Any] | None = None, finish: str | None = None, **extra: Any) -> dict[str, Any]:
    return {"model": "m-1", "choices": [{"index": 0, "delta": delta or {}, "finish_reason": finish}], **extra}


async def stream(body: bytes, **kw: Any) -> Outcome:
    return await outcome_for(openai_config(**kw), [body])


async def _noop(args: dict[str, Any]) -> str:
    return ""


TOOL = ChatToolDef("get_capital", "", {"type": "object", "properties": {"country": {"type": "string"}}},
                   False, _noop)


@pytest.mark.parametrize(("base", "url"), [
    ("https://api.openai.com/v1", "https://api.openai.com/v1/chat/completions"),
    ("https://api.openai.com/v1/", "https://api.openai.com/v1/chat/completions"),
    ("https://openrouter.ai/api/v1", "https://openrouter.ai/api/v1/chat/completions"),
    ("https://generativelanguage.googleapis.com/v1beta/openai",
     "https://generativelanguage.googleapis.com/v1beta/openai/chat/completions"),
    ("http://localhost:11434", "http://localhost:11434/v1/chat/completions"),
    ("https://api.deepseek.com", "https://api.deepseek.com/v1/chat/completions"),
    ("https://example.com/vendor", "https://example.com/vendor/v1/chat/completions"),
    ("", "https://api.openai.com/v1/chat/completions"),
])
def test_endpoint_version_segment_rule(base: str, url: str) -> None:
    assert openai_url(base, "chat/completions") == url


@pytest.mark.anyio
async def test_request_body_headers_and_mapping() -> None:
    server = MockServer(sse_reply(sse(chunk({"content": "hi"}, "stop"))))
    messages = [
        ChatMessage("s", "system", "Be terse.", 0),
        ChatMessage("u", "user", "Hi", 0),
        ChatMessage("n", "note", "local only", 0),
        ChatMessage("a0", "assistant", "", 0),
        ChatMessage("a", "assistant", "Hello", 0),
    ]
    await collect(openai_config(), server, messages=messages, tools=[TOOL], system="You are helpful.")
    request = server.requests[0]
    assert str(request.url) == "https://api.test/v1/chat/completions"
    assert request.headers["authorization"] == f"Bearer {SECRET}"
    body = server.bodies()[0]
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert body["messages"] == [
        {"role": "system", "content": "You are helpful.\n\nBe terse."},
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello"},
    ]
    assert body["tools"] == [{"type": "function", "function": {
        "name": "get_capital", "description": "", "parameters": TOOL.schema}}]


@pytest.mark.anyio
async def test_keyless_server_gets_no_authorization_header() -> None:
    server = MockServer(sse_reply(sse(chunk({"content": "hi"}, "stop"))))
    await collect(openai_config(api_key=None, base_url="http://localhost:11434"), server)
    assert "authorization" not in server.requests[0].headers
    assert "tools" not in server.bodies()[0]


@pytest.mark.anyio
async def test_follow_up_request_matches_the_recorded_turn2_shape() -> None:
    turn1 = await outcome_for(openai_config(), [fixture_bytes("openai_chat_tool_call_turn1.sse")])
    recorded = fixture_json("openai_chat_tool_call_turn2.request.json")
    [(call_id, name, args)] = turn1.calls
    call = ToolCall(call_id, name, args, result="London", status="done")
    history = [
        ChatMessage("u", "user", recorded["messages"][0]["content"], 0),
        ChatMessage("a", "assistant", turn1.text, 0, tool_calls=[call]),
        ChatMessage("t", "tool", "London", 0, tool_calls=[call.copy()]),
    ]
    server = MockServer(sse_reply(sse(chunk({"content": "The capital of the UK is London."}, "stop"))))
    await collect(openai_config(), server, messages=history, tools=[TOOL], model="gpt-4o-mini")
    body = server.bodies()[0]
    assert body["messages"] == recorded["messages"]
    assert body["stream_options"] == recorded["stream_options"]
    assert [t["function"]["name"] for t in body["tools"]] == ["get_capital"]
    assert body["tools"][0]["type"] == "function"


@pytest.mark.anyio
async def test_deepseek_replays_reasoning_content_on_tool_call_turns_only() -> None:
    call = ToolCall("c1", "f", "{}", result="r", status="done")
    history = [
        ChatMessage("u", "user", "q", 0),
        ChatMessage("a", "assistant", "", 0, thinking="I should call f", tool_calls=[call]),
        ChatMessage("t", "tool", "r", 0, tool_calls=[call]),
        ChatMessage("a2", "assistant", "done", 0, thinking="easy"),
    ]
    deepseek = openai_messages(history, replay_reasoning=True)
    assert deepseek[1]["reasoning_content"] == "I should call f"
    assert deepseek[1]["content"] is None
    assert "reasoning_content" not in deepseek[3]
    assert "reasoning_content" not in openai_messages(history)[1]
    server = MockServer(sse_reply(sse(chunk({"content": "x"}, "stop"))))
    await collect(openai_config(base_url="https://api.deepseek.com"), server, messages=history)
    assert server.bodies()[0]["messages"][1]["reasoning_content"] == "I should call f"


@pytest.mark.anyio
async def test_usage_on_finish_chunk_and_later_null_finish_does_not_erase_stop() -> None:
    usage = {"prompt_tokens": 100, "completion_tokens": 20, "prompt_tokens_details": {"cached_tokens": 60},
             "completion_tokens_details": {"reasoning_tokens": 5}}
    out = await stream(sse(chunk({"content": "a"}), chunk({}, "stop", usage=usage),
                           chunk({"content": ""}, None), done=False))
    assert out.error is None and out.text == "a"
    assert out.usage == Usage(40, 20, cache_read_tokens=60, reasoning_tokens=5)
    assert out.model == "m-1"


@pytest.mark.anyio
async def test_stream_without_finish_or_done_is_a_network_error_after_the_text() -> None:
    out = await stream(sse(chunk({"content": "partial "}), chunk({"content": "answer"}), done=False))
    assert out.text == "partial answer"
    assert out.error is not None and out.error.kind == "network"
    assert out.error.message == "stream ended before the response was complete"


@pytest.mark.anyio
async def test_done_without_finish_reason_is_complete() -> None:
    out = await stream(sse(chunk({"content": "ok"})))
    assert out.error is None and out.text == "ok"


@pytest.mark.anyio
async def test_length_and_content_filter_notices() -> None:
    notices = (await stream(sse(chunk({"content": "a"}, "length")))).notices
    assert notices == ["response truncated: max_tokens"]
    notices = (await stream(sse(chunk({"content": "a"}, "content_filter")))).notices
    assert len(notices) == 1 and "content filter" in notices[0]


@pytest.mark.anyio
async def test_length_drops_an_unfinished_tool_call() -> None:
    out = await stream(sse(
        chunk({"tool_calls": [{"index": 0, "id": "c1", "type": "function",
                               "function": {"name": "ok", "arguments": "{}"}}]}),
        chunk({"tool_calls": [{"index": 1, "id": "c2", "type": "function",
                               "function": {"name": "cut", "arguments": '{"path": "a'}}]}),
        chunk({}, "length"),
    ))
    assert out.calls == [("c1", "ok", "{}")]
    assert out.notices == ["response truncated: max_tokens"]


@pytest.mark.anyio
async def test_length_drops_a_call_cut_off_before_its_arguments() -> None:
    # "" would default to "{}" and parse: a write_file with no arguments must still never run.
    out = await stream(sse(
        chunk({"tool_calls": [{"index": 0, "id": "c1", "type": "function",
                               "function": {"name": "write_file", "arguments": ""}}]}),
        chunk({}, "length"),
    ))
    assert out.calls == []
    assert out.notices == ["response truncated: max_tokens"]


@pytest.mark.anyio
async def test_invalid_tool_json_is_not_yielded_and_is_reported() -> None:
    bad = {"index": 0, "id": "c1", "function": {"name": "f", "arguments": "{x"}}
    out = await stream(sse(chunk({"tool_calls": [bad]}), chunk({}, "tool_calls")))
    assert out.calls == []
    assert out.notices and "f" in out.notices[0]


@pytest.mark.anyio
async def test_tool_call_quirks_new_id_at_same_index_missing_index_empty_name() -> None:
    out = await stream(sse(
        # Ollama: several calls at index 0, told apart by their ids
        chunk({"tool_calls": [{"index": 0, "id": "a",
                               "function": {"name": "one", "arguments": '{"x": 1}'}}]}),
        chunk({"tool_calls": [{"index": 0, "id": "b", "function": {"name": "two", "arguments": "{}"}}]}),
        # LM Studio: continuation with name "" must not erase the name
        chunk({"tool_calls": [{"index": 1, "id": "c", "function": {"name": "three", "arguments": '{"y"'}}]}),
        chunk({"tool_calls": [{"index": 1, "function": {"name": "", "arguments": ": 2}"}}]}),
        # no index at all
        chunk({"tool_calls": [{"id": "d", "function": {"name": "four", "arguments": '{"z":'}}]}),
        chunk({"tool_calls": [{"function": {"arguments": " 3}"}}]}),
        chunk({}, "tool_calls"),
    ))
    assert out.calls == [("a", "one", '{"x": 1}'), ("b", "two", "{}"), ("c", "three", '{"y": 2}'),
                         ("d", "four", '{"z": 3}')]


@pytest.mark.anyio
async def test_whole_call_in_one_chunk_and_empty_arguments() -> None:
    call = {"index": 0, "id": "g", "type": "function", "function": {"name": "now", "arguments": ""}}
    out = await stream(sse(chunk({"tool_calls": [call]}, "tool_calls")))
    assert out.calls == [("g", "now", "{}")]


@pytest.mark.anyio
async def test_tool_calls_come_after_text_at_the_end() -> None:
    call = {"index": 0, "id": "c", "function": {"name": "f", "arguments": "{}"}}
    usage = {"choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 2}}
    out = await stream(sse(chunk({"content": "Let me look."}), chunk({"tool_calls": [call]}),
                           chunk({}, "tool_calls"), usage))
    kinds = [type(e).__name__ for e in out.events]
    assert kinds == ["Delta", "UsageReport", "ToolCallRequested"]
    assert out.events[2].call.status == "running"  # type: ignore[attr-defined]


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
@pytest.mark.anyio
async def test_reasoning_fields_become_thinking(field: str) -> None:
    out = await stream(sse(chunk({field: "hmm", "content": None}),
                           chunk({"content": "ok", field: None}, "stop")))
    assert (out.thinking, out.text) == ("hmm", "ok")


@pytest.mark.anyio
async def test_think_tags_split_across_chunks() -> None:
    pieces = ["\n<", "thi", "nk>Let me ", "think</th", "ink", ">\n\nThe ", "answer <think> stays"]
    out = await stream(sse(*[chunk({"content": p}) for p in pieces], chunk({}, "stop")))
    assert out.thinking == "Let me think"
    assert out.text == "The answer <think> stays"


@pytest.mark.anyio
async def test_content_that_merely_starts_with_a_bracket_is_text() -> None:
    out = await stream(sse(chunk({"content": "<"}), chunk({"content": "b>bold</b>"}), chunk({}, "stop")))
    assert (out.text, out.thinking) == ("<b>bold</b>", "")


@pytest.mark.anyio
async def test_unclosed_think_at_end_stays_thinking() -> None:
    out = await stream(sse(chunk({"content": "<think>still going </thi"}), chunk({}, "length")))
    assert out.thinking == "still going </thi" and out.text == ""


@pytest.mark.anyio
async def test_refusal_is_shown_as_text() -> None:
    out = await stream(sse(chunk({"content": None, "refusal": "I can't help with that."}), chunk({}, "stop")))
    assert out.text == "I can't help with that."


@pytest.mark.parametrize("body", [
    b'data: {"error": {"message": "boom", "type": "server_error"}}\n\n',
    b'event: error\ndata: {"error": {"message": "boom", "type": "server_error"}}\n\n',
    b'data: {"choices": [], "error": {"message": "boom", "type": "server_error", "code": 502}}\n\n',
])
@pytest.mark.anyio
async def test_errors_after_200(body: bytes) -> None:
    out = await stream(sse(chunk({"content": "so far"}), done=False) + body + b"data: [DONE]\n\n")
    assert out.text == "so far"
    assert out.error is not None and out.error.message == "server_error: boom"
    assert out.error.kind == "server"


@pytest.mark.anyio
async def test_malformed_chunk_is_a_protocol_error() -> None:
    out = await stream(sse(chunk({"content": "a"}), done=False) + b"data: {not json\n\n")
    assert out.error is not None and out.error.kind == "protocol"
    assert out.text == "a"


@pytest.mark.anyio
async def test_d14_retries_once_without_stream_options_and_remembers() -> None:
    message = "Unrecognized request argument supplied: stream_options"
    rejection = json_reply(400, {"error": {"message": message, "type": "invalid_request_error"}})
    ok = sse_reply(sse(chunk({"content": "fine"}, "stop")))
    server = MockServer(rejection, ok, ok)

    async def scenario() -> list[Outcome]:
        outs = []
        async with server.client() as client:
            driver = OpenAIDriver(openai_config(), client=client)
            for _ in range(2):
                events = [e async for e in driver.stream(
                    model="m", messages=[ChatMessage("u", "user", "x", 0)], tools=[])]
                outs.append(Outcome(events, None))
        return outs

    outs = await scenario()
    assert [o.text for o in outs] == ["fine", "fine"]
    bodies = server.bodies()
    assert len(bodies) == 3
    assert "stream_options" in bodies[0]
    assert "stream_options" not in bodies[1] and "stream_options" not in bodies[2]


@pytest.mark.anyio
async def test_unrelated_400_is_not_retried() -> None:
    server = MockServer(json_reply(400, {"error": {"message": "bad model", "type": "invalid_request_error"}}))
    out = await collect(openai_config(), server)
    assert len(server.requests) == 1
    assert out.error is not None and out.error.message == "400 invalid_request_error: bad model"
    assert out.error.kind == "bad_request"


@pytest.mark.anyio
async def test_an_unexpected_chunk_shape_keeps_the_text_and_is_a_protocol_error() -> None:
    # "delta" as a string: not an error the parser reports, a shape it never expected.
    body = sse(*(chunk({"content": f"part{i} "}) for i in range(5)), {"choices": [{"delta": "oops"}]})
    out = await stream(body)
    assert out.text == "part0 part1 part2 part3 part4 "
    assert out.error is not None and out.error.kind == "protocol"
    assert "could not decode" in out.error.message
