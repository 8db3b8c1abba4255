"""Anthropic prompt caching: cache_control breakpoints in the request bodies the driver sends.

Checked against the recorded request shapes of tests/fixtures/streams/*.request.json: with caching
the request is the recorded one plus ``cache_control`` keys (and the system prompt as a text block
list), at most four of them, never on a thinking block or an empty text block.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from provider_support import (
    FIXTURES,
    MockServer,
    anthropic_config,
    collect,
    fixture_bytes,
    fixture_json,
    openai_config,
    outcome_for,
    sse_reply,
)

from desktop.core.chat.types import ChatMessage, ChatToolDef, ToolCall
from desktop.core.providers._cache import (
    EPHEMERAL,
    MAX_BREAKPOINTS,
    add_cache_breakpoints,
    count_breakpoints,
)

MARK = {"cache_control": {"type": "ephemeral"}}
ANTHROPIC_REQUESTS = sorted(p.name for p in FIXTURES.glob("anthropic_*.request.json"))


def ev(kind: str, **data: Any) -> bytes:
    return f"event: {kind}\ndata: {json.dumps({'type': kind, **data})}\n\n".encode()


REPLY = (
    ev("message_start", message={"id": "msg_1", "model": "claude-x", "usage": {"input_tokens": 3}})
    + ev("content_block_start", index=0, content_block={"type": "text", "text": ""})
    + ev("content_block_delta", index=0, delta={"type": "text_delta", "text": "ok"})
    + ev("content_block_stop", index=0)
    + ev("message_delta", delta={"stop_reason": "end_turn"}, usage={"output_tokens": 1})
    + ev("message_stop")
)


async def _noop(args: dict[str, Any]) -> str:
    return ""


def tool(name: str, description: str = "", schema: dict[str, Any] | None = None) -> ChatToolDef:
    return ChatToolDef(name, description, schema or {"type": "object", "properties": {}}, False, _noop)


async def sent_body(
    *, messages: list[ChatMessage], tools: list[ChatToolDef] | None = None, system: str | None = None,
    model: str = "claude-x", **config: Any,
) -> dict[str, Any]:
    """The JSON body the Anthropic driver really sends (over httpx) for this request."""
    server = MockServer(sse_reply(REPLY))
    out = await collect(anthropic_config(**config), server, messages=messages, tools=tools or [],
                        system=system, model=model)
    assert out.error is None and out.text == "ok"
    [body] = server.bodies()
    return body


def marked_blocks(body: dict[str, Any]) -> list[tuple[str, int, int]]:
    """Where the breakpoints are: ("tools", i, -1), ("system", i, -1), ("messages", i, j)."""
    where: list[tuple[str, int, int]] = []
    for i, t in enumerate(body.get("tools") or []):
        if "cache_control" in t:
            where.append(("tools", i, -1))
    system = body.get("system")
    if isinstance(system, list):
        for i, b in enumerate(system):
            if "cache_control" in b:
                where.append(("system", i, -1))
    for i, m in enumerate(body.get("messages") or []):
        assert "cache_control" not in m, "a message itself cannot carry cache_control"
        content = m.get("content")
        if isinstance(content, list):
            for j, b in enumerate(content):
                if "cache_control" in b:
                    where.append(("messages", i, j))
    return where


def assert_valid_for_anthropic(body: dict[str, Any]) -> None:
    """What the Messages API requires of cache_control (and of the blocks we touch)."""
    assert count_breakpoints(body) == len(marked_blocks(body)) <= MAX_BREAKPOINTS
    text = json.dumps(body)
    assert text.count('"cache_control"') == len(marked_blocks(body)), "cache_control somewhere unexpected"
    blocks = list(body.get("tools") or [])
    if isinstance(body.get("system"), list):
        for b in body["system"]:
            assert b["type"] == "text" and isinstance(b["text"], str) and b["text"].strip()
            assert set(b) <= {"type", "text", "cache_control"}
        blocks += body["system"]
    for m in body["messages"]:
        if isinstance(m["content"], list):
            blocks += m["content"]
    for b in blocks:
        if "cache_control" not in b:
            continue
        assert b["cache_control"] == {"type": "ephemeral"}
        assert b.get("type") not in ("thinking", "redacted_thinking")
        if b.get("type") == "text":
            assert b["text"].strip(), "an empty text block cannot carry cache_control"


def without_cache(body: dict[str, Any]) -> dict[str, Any]:
    """``body`` with every cache_control removed (and a one-block system list back to a string)."""
    out = copy.deepcopy(body)
    for t in out.get("tools") or []:
        t.pop("cache_control", None)
    if isinstance(out.get("system"), list):
        for b in out["system"]:
            b.pop("cache_control", None)
        if len(out["system"]) == 1:
            out["system"] = out["system"][0]["text"]
    for m in out.get("messages") or []:
        if isinstance(m["content"], list):
            for b in m["content"]:
                b.pop("cache_control", None)
    return out


# -- (a)-(e): the bodies the driver sends ---------------------------------------------------------


@pytest.mark.anyio
async def test_a_plain_chat_marks_the_last_user_block_only() -> None:
    body = await sent_body(messages=[ChatMessage("u", "user", "Hi", 0)], max_tokens=1024)
    assert body == {
        "model": "claude-x", "max_tokens": 1024, "stream": True,
        "messages": [{"role": "user", "content": [{"type": "text", "text": "Hi", **MARK}]}],
    }
    assert_valid_for_anthropic(body)


@pytest.mark.anyio
async def test_a_longer_chat_marks_only_the_newest_user_turn() -> None:
    history = [ChatMessage("u1", "user", "one", 0), ChatMessage("a1", "assistant", "uno", 0),
               ChatMessage("u2", "user", "two", 0), ChatMessage("u3", "user", "three", 0)]
    body = await sent_body(messages=history)
    assert marked_blocks(body) == [("messages", 2, 1)]
    assert body["messages"][2]["content"] == [{"type": "text", "text": "two"},
                                              {"type": "text", "text": "three", **MARK}]
    assert body["messages"][0]["content"] == [{"type": "text", "text": "one"}]
    assert body["messages"][1]["content"] == [{"type": "text", "text": "uno"}]
    assert_valid_for_anthropic(body)


@pytest.mark.anyio
async def test_b_tools_mark_the_last_definition_and_the_last_user_block() -> None:
    schema = {"type": "object", "properties": {"q": {"type": "string"}}}
    body = await sent_body(messages=[ChatMessage("u", "user", "Look it up", 0)],
                           tools=[tool("first", "One", schema), tool("second", "Two")])
    assert body["tools"] == [
        {"name": "first", "description": "One", "input_schema": schema},
        {"name": "second", "description": "Two", "input_schema": {"type": "object", "properties": {}},
         **MARK},
    ]
    assert marked_blocks(body) == [("tools", 1, -1), ("messages", 0, 0)]
    assert_valid_for_anthropic(body)


@pytest.mark.anyio
async def test_c_system_prompt_is_one_marked_text_block() -> None:
    now = tool("now", "Current time")
    messages = [ChatMessage("s", "system", "Be terse.", 0), ChatMessage("u", "user", "Hi", 0),
                ChatMessage("n", "note", "local", 0)]
    body = await sent_body(messages=messages, tools=[now], system="You help.", max_tokens=4096,
                           thinking_budget=2048)
    # The body the driver sent before caching (test_anthropic_driver), with the breakpoints added.
    assert body == {
        "model": "claude-x", "max_tokens": 4096, "stream": True,
        "system": [{"type": "text", "text": "You help.\n\nBe terse.", **MARK}],
        "messages": [{"role": "user", "content": [{"type": "text", "text": "Hi", **MARK}]}],
        "tools": [{"name": "now", "description": "Current time", "input_schema": now.schema, **MARK}],
        "thinking": {"type": "enabled", "budget_tokens": 2048},
    }
    assert marked_blocks(body) == [("tools", 0, -1), ("system", 0, -1), ("messages", 0, 0)]
    assert_valid_for_anthropic(body)


@pytest.mark.anyio
async def test_c_blank_system_prompt_stays_out() -> None:
    body = await sent_body(messages=[ChatMessage("u", "user", "Hi", 0)], system="   ")
    assert "system" not in body
    assert marked_blocks(body) == [("messages", 0, 0)]


@pytest.mark.anyio
async def test_d_thinking_and_tool_result_match_the_recorded_turn2_plus_breakpoints() -> None:
    recorded = fixture_json("anthropic_thinking_tool_use_turn2.request.json")
    turn1 = await outcome_for(anthropic_config(), [fixture_bytes("anthropic_thinking_tool_use_turn1.sse")])
    [(call_id, name, args)] = turn1.calls
    call = ToolCall(call_id, name, args, result="0.32a0", status="done")
    blocks = [{"type": "thinking", "thinking": turn1.thinking, "signature": turn1.signatures[0]}]
    history = [
        ChatMessage("u", "user", recorded["messages"][0]["content"][0]["text"], 0),
        ChatMessage("a", "assistant", turn1.text, 0, thinking=turn1.thinking, thinking_blocks=blocks,
                    tool_calls=[call]),
        ChatMessage("t", "tool", "0.32a0", 0, tool_calls=[call.copy()]),
    ]
    [rec_tool] = recorded["tools"]
    fixed = tool(rec_tool["name"], rec_tool["description"], rec_tool["input_schema"])
    body = await sent_body(messages=history, tools=[fixed], model=recorded["model"],
                           max_tokens=recorded["max_tokens"], thinking_budget=1024)

    expected = copy.deepcopy(recorded["messages"])
    expected[2]["content"][0].update(MARK)  # the tool_result: the last block of the last user turn
    assert body["messages"] == expected
    assert body["messages"][1]["content"][0] == recorded["messages"][1]["content"][0]  # thinking verbatim
    assert body["tools"] == [{**rec_tool, **MARK}]
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 1024}
    assert marked_blocks(body) == [("tools", 0, -1), ("messages", 2, 0)]
    assert_valid_for_anthropic(body)
    # Apart from the breakpoints, the fields the recording has are sent as recorded.
    plain = without_cache(body)
    for key in ("messages", "model", "max_tokens", "tools", "stream"):
        assert plain[key] == recorded[key]


@pytest.mark.anyio
async def test_d_parallel_results_mark_only_the_last_result() -> None:
    recorded = fixture_json("anthropic_parallel_tool_use_turn2.request.json")
    turn1 = await outcome_for(anthropic_config(), [fixture_bytes("anthropic_parallel_tool_use.sse")])
    calls = [ToolCall(i, n, a, status="done") for i, n, a in turn1.calls]
    history = [
        ChatMessage("u", "user", "Two names for a pet pelican", 0),
        ChatMessage("a", "assistant", turn1.text, 0, tool_calls=calls),
        ChatMessage("t2", "tool", "Sammy", 0, tool_calls=[calls[1]]),
        ChatMessage("t1", "tool", "Charles", 0, tool_calls=[calls[0]]),
    ]
    body = await sent_body(messages=history, tools=[tool("pelican_name_generator")])
    expected = copy.deepcopy(recorded["messages"])
    expected[1]["content"] = [b for b in expected[1]["content"] if b["type"] != "text"]  # llm-anthropic's " "
    expected[2]["content"][1].update(MARK)
    assert body["messages"] == expected
    assert marked_blocks(body) == [("tools", 0, -1), ("messages", 2, 1)]
    assert_valid_for_anthropic(body)


@pytest.mark.anyio
async def test_d_thinking_with_a_user_question_after_tool_results() -> None:
    call = ToolCall("toolu_1", "f", "{}", result="r", status="done")
    history = [
        ChatMessage("u", "user", "go", 0),
        ChatMessage("a", "assistant", "", 0, tool_calls=[call],
                    thinking_blocks=[{"type": "thinking", "thinking": "hm", "signature": "sig"},
                                     {"type": "redacted_thinking", "data": "ENC"}]),
        ChatMessage("t", "tool", "r", 0, tool_calls=[call.copy()]),
        ChatMessage("u2", "user", "and then?", 0),
    ]
    body = await sent_body(messages=history, tools=[tool("f")], system="S", thinking_budget=1024)
    assert body["messages"][2]["content"] == [
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": "r"},
        {"type": "text", "text": "and then?", **MARK},
    ]
    assert body["messages"][1]["content"][:2] == [
        {"type": "thinking", "thinking": "hm", "signature": "sig"},
        {"type": "redacted_thinking", "data": "ENC"},
    ]
    assert len(marked_blocks(body)) == 3
    assert_valid_for_anthropic(body)


@pytest.mark.anyio
async def test_e_caching_off_sends_the_body_without_any_breakpoint() -> None:
    now = tool("now", "Current time")
    messages = [ChatMessage("s", "system", "Be terse.", 0), ChatMessage("u", "user", "Hi", 0)]
    body = await sent_body(messages=messages, tools=[now], system="You help.", max_tokens=4096,
                           thinking_budget=2048, prompt_caching=False)
    assert body == {
        "model": "claude-x", "max_tokens": 4096, "stream": True, "system": "You help.\n\nBe terse.",
        "messages": [{"role": "user", "content": [{"type": "text", "text": "Hi"}]}],
        "tools": [{"name": "now", "description": "Current time", "input_schema": now.schema}],
        "thinking": {"type": "enabled", "budget_tokens": 2048},
    }
    assert "cache_control" not in json.dumps(body)
    on = await sent_body(messages=messages, tools=[now], system="You help.", max_tokens=4096,
                         thinking_budget=2048)
    assert without_cache(on) == body


@pytest.mark.anyio
async def test_openai_compatible_requests_carry_no_cache_control() -> None:
    server = MockServer(sse_reply(fixture_bytes("openai_chat_text_usage.sse")))
    out = await collect(openai_config(), server, messages=[ChatMessage("u", "user", "Hi", 0)],
                        tools=[tool("now")], system="You help.")
    assert out.error is None
    assert "cache_control" not in server.requests[0].content.decode()


# -- the helper on the recorded request shapes ----------------------------------------------------


@pytest.mark.parametrize("name", ANTHROPIC_REQUESTS)
def test_recorded_requests_with_breakpoints_stay_the_recorded_requests(name: str) -> None:
    recorded = fixture_json(name)
    before = copy.deepcopy(recorded)
    body = add_cache_breakpoints(recorded)
    assert recorded == before, "the input body is not changed"
    assert_valid_for_anthropic(body)
    last_user = max(i for i, m in enumerate(body["messages"]) if m["role"] == "user")
    last_block = len(body["messages"][last_user]["content"]) - 1
    assert marked_blocks(body) == [("tools", len(body["tools"]) - 1, -1), ("messages", last_user, last_block)]
    assert body["messages"][last_user]["content"][last_block]["type"] == "tool_result"
    assert without_cache(body) == recorded  # same fields otherwise
    assert add_cache_breakpoints(body) == body  # a second pass adds nothing


def test_string_system_and_content_become_marked_text_blocks() -> None:
    body = {"model": "m", "max_tokens": 5, "system": "Sys",
            "messages": [{"role": "user", "content": "Hello"}]}
    out = add_cache_breakpoints(body)
    assert out["system"] == [{"type": "text", "text": "Sys", **MARK}]
    assert out["messages"] == [{"role": "user", "content": [{"type": "text", "text": "Hello", **MARK}]}]
    assert body["system"] == "Sys" and body["messages"][0]["content"] == "Hello"
    assert without_cache(out) == {**body, "messages": [{"role": "user",
                                                        "content": [{"type": "text", "text": "Hello"}]}]}


def test_blank_blocks_and_thinking_are_never_marked() -> None:
    body = {"messages": [
        {"role": "user", "content": [{"type": "text", "text": "real"}, {"type": "text", "text": " "}]},
        {"role": "assistant", "content": [{"type": "thinking", "thinking": "t", "signature": "s"}]},
    ], "system": [{"type": "text", "text": ""}]}
    out = add_cache_breakpoints(body)
    # The blank block is passed over for the one before it; the assistant turn is not the user's.
    assert out["messages"][0]["content"] == [{"type": "text", "text": "real", **MARK},
                                             {"type": "text", "text": " "}]
    assert out["messages"][1] == body["messages"][1]
    assert out["system"] == body["system"]
    assert add_cache_breakpoints({"messages": [{"role": "user", "content": "  "}]}) == {
        "messages": [{"role": "user", "content": "  "}]}


def test_an_empty_tool_result_is_passed_over() -> None:
    results = [{"type": "tool_result", "tool_use_id": "a", "content": "A"},
               {"type": "tool_result", "tool_use_id": "b", "content": ""}]
    out = add_cache_breakpoints({"messages": [{"role": "user", "content": results}]})
    assert out["messages"][0]["content"] == [{**results[0], **MARK}, results[1]]
    only_empty = {"messages": [{"role": "user", "content": [{**results[1], "content": []}]}]}
    assert add_cache_breakpoints(only_empty) == only_empty
    blocks = [{"type": "tool_result", "tool_use_id": "c", "content": [{"type": "text", "text": "x"}]}]
    assert add_cache_breakpoints({"messages": [{"role": "user", "content": blocks}]})["messages"][0][
        "content"] == [{**blocks[0], **MARK}]


def test_never_more_than_four_breakpoints() -> None:
    def user(text: str, marked: bool = False) -> dict[str, Any]:
        block: dict[str, Any] = {"type": "text", "text": text}
        if marked:
            block["cache_control"] = dict(EPHEMERAL)
        return {"role": "user", "content": [block]}

    def assistant(text: str) -> dict[str, Any]:
        return {"role": "assistant", "content": [{"type": "text", "text": text}]}

    tools = [{"name": "a", "input_schema": {}}, {"name": "b", "input_schema": {}}]
    # Two marks already there: tools and system get the two left; the last user block gets none.
    body = {"tools": tools, "system": "S",
            "messages": [user("1", True), assistant("x"), user("2", True), assistant("y"), user("3")]}
    out = add_cache_breakpoints(body)
    assert count_breakpoints(out) == MAX_BREAKPOINTS
    assert marked_blocks(out) == [("tools", 1, -1), ("system", 0, -1), ("messages", 0, 0), ("messages", 2, 0)]
    # Four already: nothing added, nothing changed.
    full = {**body, "messages": [user("1", True), assistant("x"), user("2", True), assistant("y"),
                                 user("3", True), assistant("z"), user("4", True), assistant("w"), user("5")]}
    assert add_cache_breakpoints(full) == full
    # Three already: only the tools get one.
    three = {**body, "messages": full["messages"][2:]}
    out3 = add_cache_breakpoints(three)
    assert marked_blocks(out3)[0] == ("tools", 1, -1) and count_breakpoints(out3) == 4
    assert out3["system"] == "S"


def test_an_already_marked_place_is_not_marked_twice() -> None:
    body = {"tools": [{"name": "a", **MARK}], "system": [{"type": "text", "text": "S", **MARK}],
            "messages": [{"role": "user", "content": [{"type": "text", "text": "q", **MARK}]}]}
    assert add_cache_breakpoints(body) == body
    assert count_breakpoints(body) == 3


def test_the_last_user_message_is_marked_even_before_an_assistant_prefill() -> None:
    body = {"messages": [{"role": "user", "content": "q"},
                         {"role": "assistant", "content": [{"type": "text", "text": "Sure:"}]}]}
    out = add_cache_breakpoints(body)
    assert marked_blocks(out) == [("messages", 0, 0)]
