"""Conversation model: appliers, apply_event, slash commands, v1/v2 persistence (seed behaviour, D10)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest

from desktop.core.chat import (
    ChatMessage,
    Conversation,
    Delta,
    Done,
    Notice,
    Thinking,
    ToolCall,
    ToolCallFinished,
    ToolCallRequested,
    Usage,
    UsageReport,
    _appliers,
    append_delta,
    append_message,
    append_note,
    append_thinking,
    apply_event,
    create_conversation,
    deserialize_conversation,
    detect_slash_command,
    is_valid_role,
    mark_stopped,
    message_from_dict,
    message_to_dict,
    serialize_conversation,
    set_usage,
)
from desktop.core.chat.conversation import SlashCommand


def conv_with(*messages: ChatMessage) -> Conversation:
    return Conversation(id="c-1", messages=list(messages), created_at=1764547200000)


# -- creation and appliers -------------------------------------------------------------------------


def test_create_conversation_has_fresh_id_and_time(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_appliers, "now_ms", lambda: 1_764_547_200_123)  # the clock, injected
    a, b = create_conversation(), create_conversation()
    assert a.id != b.id and a.id.startswith("c-")
    assert a.messages == []
    assert a.created_at == b.created_at == 1_764_547_200_123


def test_now_ms_reads_the_wall_clock_in_milliseconds() -> None:
    before = time.time_ns() // 1_000_000
    now = _appliers.now_ms()
    assert isinstance(now, int) and before <= now <= time.time_ns() // 1_000_000


def test_append_message_returns_the_message_and_rejects_bad_roles() -> None:
    conv = create_conversation()
    msg = append_message(conv, "user", "hello")
    assert conv.messages == [msg] and msg.role == "user" and msg.content == "hello" and msg.id
    assert append_message(conv, "system", "s", message_id="sys").id == "sys"
    with pytest.raises(ValueError, match="invalid role 'bot'"):
        append_message(conv, "bot", "x")  # type: ignore[arg-type]


def test_is_valid_role() -> None:
    for role in ("user", "assistant", "system", "tool", "note"):
        assert is_valid_role(role)
    for bad in ("", "User", "bot", None, 3):
        assert not is_valid_role(bad)


def test_seed_appliers_create_a_placeholder_assistant_for_an_unknown_id() -> None:
    conv = create_conversation()
    append_delta(conv, "a1", "Hel")
    append_delta(conv, "a1", "lo")
    assert len(conv.messages) == 1
    msg = conv.messages[0]
    assert (msg.id, msg.role, msg.content) == ("a1", "assistant", "Hello")
    set_usage(create_conversation(), "x", Usage(1, 2))
    other = create_conversation()
    mark_stopped(other, "z")
    assert other.messages[0].role == "assistant" and other.messages[0].stopped


def test_appliers_reach_an_older_message_by_id() -> None:
    conv = conv_with(ChatMessage("a1", "assistant", "x", 1), ChatMessage("u2", "user", "y", 2))
    append_delta(conv, "a1", "z")
    assert conv.messages[0].content == "xz" and len(conv.messages) == 2


def test_set_usage_stamps_usage_and_model() -> None:
    conv = create_conversation()
    set_usage(conv, "a", Usage(10, 5), "gpt-4o")
    set_usage(conv, "a", Usage(11, 6))  # the last one wins; no model keeps the earlier model
    msg = conv.messages[0]
    assert msg.usage == Usage(11, 6) and msg.model == "gpt-4o"


def test_append_thinking_keeps_readable_text_and_blocks_in_order() -> None:
    conv = create_conversation()
    append_thinking(conv, "a", "Let me ")
    append_thinking(conv, "a", "think.")
    append_thinking(conv, "a", "", signature="sig1")
    append_thinking(conv, "a", "", redacted_data="ENC")
    append_thinking(conv, "a", "Second.")
    append_thinking(conv, "a", "", signature="sig2")
    msg = conv.messages[0]
    assert msg.thinking == "Let me think.Second."
    assert msg.thinking_blocks == [
        {"type": "thinking", "thinking": "Let me think.", "signature": "sig1"},
        {"type": "redacted_thinking", "data": "ENC"},
        {"type": "thinking", "thinking": "Second.", "signature": "sig2"},
    ]


def test_append_thinking_unsigned_text_stays_one_open_block() -> None:
    conv = create_conversation()
    for piece in ("a", "b", "c"):
        append_thinking(conv, "m", piece)
    assert conv.messages[0].thinking_blocks == [{"type": "thinking", "thinking": "abc", "signature": None}]


def test_append_note_is_a_note_message() -> None:
    conv = create_conversation()
    note = append_note(conv, "cost: $0.01")
    assert note.role == "note" and conv.messages == [note]


# -- apply_event -----------------------------------------------------------------------------------


def test_apply_event_routes_stream_events() -> None:
    conv = create_conversation()
    apply_event(conv, Delta("Hi", message_id="a"))
    apply_event(conv, Thinking("hmm", message_id="a"))
    apply_event(conv, Thinking("", signature="s", message_id="a"))
    apply_event(conv, UsageReport(Usage(3, 4), "claude-sonnet-4-6", message_id="a"))
    msg = conv.messages[0]
    assert msg.content == "Hi" and msg.thinking == "hmm" and msg.usage == Usage(3, 4)
    assert msg.model == "claude-sonnet-4-6"
    assert msg.thinking_blocks == [{"type": "thinking", "thinking": "hmm", "signature": "s"}]


def test_apply_event_tool_call_requested_upserts_by_call_id() -> None:
    conv = create_conversation()
    call = ToolCall("c1", "read_file", '{"path": "a"}', status="awaiting_approval")
    event = ToolCallRequested(call, message_id="a")
    apply_event(conv, event)
    apply_event(conv, event)  # idempotent
    assert [c.id for c in conv.messages[0].tool_calls or []] == ["c1"]
    # an update for the same call, even stamped with another message id, updates in place
    apply_event(conv, Delta("later", message_id="b"))
    apply_event(conv, ToolCallRequested(ToolCall("c1", "read_file", "{}", status="running"), message_id="b"))
    assert conv.messages[0].tool_calls == [ToolCall("c1", "read_file", "{}", status="running")]
    assert conv.messages[1].tool_calls is None
    # the conversation never shares the event's call object
    assert conv.messages[0].tool_calls[0] is not call
    # an upsert for a known call never creates a placeholder for an unknown message id
    apply_event(conv, ToolCallRequested(ToolCall("c1", "read_file", "{}", status="done"), message_id="zzz"))
    assert [m.id for m in conv.messages] == ["a", "b"] and conv.messages[0].tool_calls[0].status == "done"


def test_apply_event_tool_call_finished_updates_the_call_and_adds_a_tool_message() -> None:
    conv = create_conversation()
    apply_event(conv, ToolCallRequested(ToolCall("c1", "ls", "{}"), message_id="a"))
    finished = ToolCall("c1", "ls", "{}", result="a.txt", status="done")
    apply_event(conv, ToolCallFinished(finished, message_id="t1"))
    apply_event(conv, ToolCallFinished(finished, message_id="t1"))  # idempotent
    assert len(conv.messages) == 2
    assistant, tool = conv.messages
    assert assistant.tool_calls == [finished]
    assert (tool.id, tool.role, tool.content, tool.tool_calls) == ("t1", "tool", "a.txt", [finished])
    assert tool.tool_calls is not None and tool.tool_calls[0] is not finished
    assert tool.tool_calls[0] is not assistant.tool_calls[0]


def test_apply_event_notice_adds_a_note_with_the_event_id() -> None:
    conv = create_conversation()
    apply_event(conv, Notice("response truncated: max_tokens", message_id="n1"))
    apply_event(conv, Notice("response truncated: max_tokens", message_id="n1"))
    assert len(conv.messages) == 1
    assert (conv.messages[0].id, conv.messages[0].role) == ("n1", "note")


@pytest.mark.parametrize("reason", ["stopped", "error"])
def test_apply_event_done_stopped_or_error_marks_the_message(reason: str) -> None:
    conv = create_conversation()
    apply_event(conv, Delta("part", message_id="a"))
    apply_event(conv, Done(reason, message_id="a"))  # type: ignore[arg-type]
    assert conv.messages[0].stopped


def test_apply_event_done_end_turn_or_without_id_marks_nothing() -> None:
    conv = create_conversation()
    apply_event(conv, Delta("x", message_id="a"))
    apply_event(conv, Done("end_turn", message_id="a"))
    apply_event(conv, Done("stopped"))
    assert len(conv.messages) == 1 and not conv.messages[0].stopped


class CountingList(list[ChatMessage]):
    """The conversation's message list, counting every item read (an algorithmic cost, not a time);
    past ``limit`` reads it fails at once instead of letting a quadratic path run for minutes."""

    reads = 0
    limit: int | None = None

    def __getitem__(self, index: Any) -> Any:
        CountingList.reads += 1
        if CountingList.limit is not None and CountingList.reads > CountingList.limit:
            raise AssertionError(f"more than {CountingList.limit} reads of the message list")
        return super().__getitem__(index)

    def __iter__(self) -> Iterator[ChatMessage]:
        for i in range(len(self)):
            yield self[i]


def test_apply_event_delta_is_constant_time_on_a_long_history() -> None:
    history = [ChatMessage(f"m{i}", "user" if i % 2 else "assistant", "x", i) for i in range(50_000)]
    conv = Conversation(id="c-1", messages=CountingList(history), created_at=1764547200000)
    apply_event(conv, Delta("ab", message_id="new"))  # a new id: one scan of the history, then appended
    # Each delta for the message being written looks at the newest message only; a scan of the
    # history per delta would read 10^9 items. (The time it takes is benchmarks/hot_paths.py's.)
    CountingList.reads, CountingList.limit = 0, 2 * 20_000
    try:
        for _ in range(20_000):
            apply_event(conv, Delta("ab", message_id="new"))
    finally:
        CountingList.limit = None
    assert conv.messages[-1].content == "ab" * 20_001 and len(conv.messages) == 50_001


# -- slash commands --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("/clear", SlashCommand("clear", "")),
        ("  /CLEAR  ", SlashCommand("clear", "")),
        ("/model gpt-4o", SlashCommand("model", "gpt-4o")),
        ("/Model   claude-sonnet-4-6  ", SlashCommand("model", "claude-sonnet-4-6")),
        ("/model", SlashCommand("model", "")),
        ("/system You are terse.\nAlways.", SlashCommand("system", "You are terse.\nAlways.")),
        ("/cost", SlashCommand("cost", "")),
        ("/help", SlashCommand("help", "")),
        ("/unknown x", None),
        ("clear", None),
        ("hello /clear", None),
        ("/", None),
        ("", None),
        ("/ clear", None),
    ],
)
def test_detect_slash_command(text: str, expected: SlashCommand | None) -> None:
    assert detect_slash_command(text) == expected


# -- persistence -----------------------------------------------------------------------------------


def full_message() -> ChatMessage:
    return ChatMessage(
        id="m1",
        role="assistant",
        content="Hi",
        ts=1764547201000,
        thinking="...",
        thinking_blocks=[{"type": "thinking", "thinking": "...", "signature": "..."}],
        tool_calls=[ToolCall("c1", "read_file", "{}", result="x", is_error=False, status="done")],
        usage=Usage(10, 5),
        model="claude-sonnet-4-6",
    )


def test_d10_serialize_writes_the_v2_format_keeping_id_and_created_at() -> None:
    text = serialize_conversation(conv_with(full_message()))
    assert json.loads(text) == {
        "v": 2,
        "id": "c-1",
        "createdAt": 1764547200000,
        "messages": [
            {
                "id": "m1",
                "role": "assistant",
                "content": "Hi",
                "ts": 1764547201000,
                "model": "claude-sonnet-4-6",
                "thinking": "...",
                "thinkingBlocks": [{"type": "thinking", "thinking": "...", "signature": "..."}],
                "toolCalls": [
                    {
                        "id": "c1",
                        "name": "read_file",
                        "argsJson": "{}",
                        "result": "x",
                        "isError": False,
                        "status": "done",
                    }
                ],
                "usage": {
                    "inputTokens": 10,
                    "outputTokens": 5,
                    "cacheReadTokens": 0,
                    "cacheWriteTokens": 0,
                    "reasoningTokens": 0,
                },
                "stopped": False,
            }
        ],
    }
    assert ", " not in text and ": " not in text  # compact


def test_serialize_omits_none_fields_and_keeps_unicode() -> None:
    text = serialize_conversation(conv_with(ChatMessage("u", "user", "héllo ✓", 5)))
    assert '"héllo ✓"' in text
    msg = json.loads(text)["messages"][0]
    assert set(msg) == {"id", "role", "content", "ts", "stopped"}


def test_d10_round_trip_keeps_everything_including_unknown_fields() -> None:
    msg = full_message()
    msg.extra = {"pinned": True, "meta": {"x": [1, 2]}}
    msg.stopped = True
    conv = conv_with(msg, ChatMessage("n", "note", "local", 7))
    back = deserialize_conversation(serialize_conversation(conv))
    assert back == conv
    assert json.loads(serialize_conversation(back))["messages"][0]["pinned"] is True


def test_message_dict_helpers_round_trip() -> None:
    msg = full_message()
    assert message_from_dict(json.loads(json.dumps(message_to_dict(msg)))) == msg


def test_extra_never_overrides_known_fields() -> None:
    msg = ChatMessage("u", "user", "real", 1, extra={"content": "fake", "other": 1})
    data = message_to_dict(msg)
    assert data["content"] == "real" and data["other"] == 1


def test_d10_v1_still_loads_with_a_fresh_id() -> None:
    v1 = json.dumps(
        {
            "v": 1,
            "messages": [
                {"id": "a", "role": "user", "content": "hi", "ts": 1},
                {
                    "id": "b",
                    "role": "assistant",
                    "content": "yo",
                    "ts": 2,
                    "usage": {"inputTokens": 3, "outputTokens": 4},
                    "model": "gpt-4o",
                    "customField": "kept",
                },
            ],
        }
    )
    conv = deserialize_conversation(v1)
    assert conv.id.startswith("c-") and conv.created_at > 0
    assert [m.id for m in conv.messages] == ["a", "b"]
    assert conv.messages[1].usage == Usage(3, 4) and conv.messages[1].extra == {"customField": "kept"}
    assert json.loads(serialize_conversation(conv))["messages"][1]["customField"] == "kept"


GOOD = {"id": "a", "role": "user", "content": "hi", "ts": 1}


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "must be a JSON object, got array"),
        ('"text"', "must be a JSON object, got string"),
        ('{"messages": []}', "no version field 'v'"),
        ('{"v": 3, "messages": []}', "unknown conversation format version v=3"),
        ('{"v": "2", "messages": []}', "unknown conversation format version v='2'"),
        ('{"v": true, "messages": []}', "unknown conversation format version v=True"),
        ('{"v": 1, "messages": {}}', "'messages' must be an array, got object"),
        ('{"v": 1}', "'messages' must be an array, got null"),
        ('{"v": 2, "createdAt": 1, "messages": []}', "conversation 'id' must be a non-empty string"),
        ('{"v": 2, "id": "c", "createdAt": "x", "messages": []}', "'createdAt' must be an integer"),
    ],
)
def test_deserialize_rejects_bad_documents_precisely(payload: str, message: str) -> None:
    with pytest.raises(TypeError, match=message):
        deserialize_conversation(payload)


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ("nope", "message 1 must be an object, got string"),
        ({**GOOD, "id": None}, "message 1: 'id' must be a non-empty string"),
        ({**GOOD, "id": ""}, "message 1: 'id' must be a non-empty string"),
        ({**GOOD, "role": "bot"}, "message 1: 'role' must be one of"),
        ({**GOOD, "content": None}, "message 1: 'content' must be a string, got null"),
        ({**GOOD, "ts": "yesterday"}, "message 1: 'ts' must be an integer"),
        ({**GOOD, "ts": True}, "message 1: 'ts' must be an integer"),
        ({**GOOD, "model": 4}, "message 1: 'model' must be a string or null"),
        ({**GOOD, "thinking": []}, "message 1: 'thinking' must be a string or null"),
        ({**GOOD, "thinkingBlocks": {}}, "message 1: 'thinkingBlocks' must be an array"),
        ({**GOOD, "thinkingBlocks": ["x"]}, r"message 1: 'thinkingBlocks\[0\]' must be an object"),
        ({**GOOD, "stopped": "yes"}, "message 1: 'stopped' must be a boolean"),
        ({**GOOD, "usage": 5}, "message 1: 'usage' must be an object, got number"),
        ({**GOOD, "usage": {"outputTokens": 1}}, "message 1: 'usage.inputTokens' is missing"),
        ({**GOOD, "usage": {"inputTokens": -1, "outputTokens": 1}}, "'usage.inputTokens' must be a non-neg"),
        (
            {**GOOD, "usage": {"inputTokens": 1, "outputTokens": "2"}},
            "'usage.outputTokens' must be a",
        ),
        (
            {**GOOD, "usage": {"inputTokens": 1, "outputTokens": 2, "cacheReadTokens": 1.5}},
            "'usage.cacheReadTokens' must be a non-negative integer",
        ),
        ({**GOOD, "toolCalls": {}}, "message 1: 'toolCalls' must be an array, got object"),
        ({**GOOD, "toolCalls": [3]}, r"message 1: 'toolCalls\[0\]' must be an object"),
        (
            {**GOOD, "toolCalls": [{"id": "c", "name": "n"}]},
            r"message 1: 'toolCalls\[0\]': 'argsJson' must be a string, got null",
        ),
        (
            {**GOOD, "toolCalls": [{"id": "c", "name": "n", "argsJson": "{}", "status": "weird"}]},
            r"'toolCalls\[0\]': 'status' must be one of",
        ),
        (
            {**GOOD, "toolCalls": [{"id": "c", "name": "n", "argsJson": "{}", "isError": "no"}]},
            r"'toolCalls\[0\]': 'isError' must be a boolean",
        ),
        (
            {**GOOD, "toolCalls": [{"id": "c", "name": "n", "argsJson": "{}", "result": 1}]},
            r"'toolCalls\[0\]': 'result' must be a string or null",
        ),
    ],
)
def test_deserialize_names_the_bad_field_and_the_message_index(bad: object, message: str) -> None:
    payload = json.dumps({"v": 2, "id": "c", "createdAt": 1, "messages": [GOOD, bad]})
    with pytest.raises(TypeError, match=message):
        deserialize_conversation(payload)


def test_deserialize_accepts_integral_floats_and_missing_optionals() -> None:
    payload = json.dumps({"v": 2, "id": "c", "createdAt": 1.0, "messages": [{**GOOD, "ts": 5.0}]})
    conv = deserialize_conversation(payload)
    assert conv.created_at == 1 and conv.messages[0].ts == 5 and not conv.messages[0].stopped


# -- the public facade, the dict-level loader and unencodable text ------------------------------------


def test_facade_reexports_every_public_name_of_the_split_modules() -> None:
    from desktop.core.chat import _appliers, _cap, _codec, _slash, conversation

    for module in (_appliers, _cap, _codec, _slash):
        for name in module.__all__:
            assert getattr(conversation, name) is getattr(module, name), name
            assert name in conversation.__all__, name


def test_conversation_from_dict_matches_deserialize() -> None:
    from desktop.core.chat.conversation import conversation_from_dict

    conv = conv_with(
        ChatMessage("m-1", "user", "hi", 1),
        ChatMessage("m-2", "assistant", "hello", 2, usage=Usage(3, 4), model="gpt"),
    )
    text = serialize_conversation(conv)
    loaded = conversation_from_dict(json.loads(text))
    assert loaded == deserialize_conversation(text) == conv
    with pytest.raises(TypeError, match="must be a JSON object"):
        conversation_from_dict([1, 2])
    with pytest.raises(TypeError, match="version"):
        conversation_from_dict({"messages": []})
    with pytest.raises(TypeError, match="message 0"):
        conversation_from_dict({"v": 2, "id": "c", "createdAt": 1, "messages": [{"role": "user"}]})


def test_serialize_repairs_lone_surrogates_already_in_memory() -> None:
    from desktop.core.chat.conversation import conversation_to_json

    lone = json.loads('"cut \\ud83d emoji"')  # what a naive decoder keeps from a cut emoji
    assert "\ud83d" in lone
    msg = ChatMessage("m-1", "assistant", lone, 1, thinking=lone, model="m\udc00",
                      tool_calls=[ToolCall("c1", "read_file", '{"path":"\\ud83d"}', result=lone)])
    msg.extra["note"] = {"k\ud800": [lone]}
    conv = conv_with(ChatMessage("m-0", "user", "q", 0), msg)
    for text in (serialize_conversation(conv), conversation_to_json(conv)):
        data = text.encode("utf-8")  # must not raise
        back = deserialize_conversation(data)
        assert back.messages[1].content == "cut \ufffd emoji"
        assert back.messages[1].thinking == "cut \ufffd emoji"
        assert back.messages[1].model == "m\ufffd"
        assert back.messages[1].tool_calls is not None
        assert back.messages[1].tool_calls[0].result == "cut \ufffd emoji"
        assert back.messages[1].extra["note"] == {"k\ufffd": ["cut \ufffd emoji"]}
    # A valid emoji survives untouched.
    conv.messages[1].content = "ok \U0001F600"
    assert "ok \U0001F600" in serialize_conversation(conv)
