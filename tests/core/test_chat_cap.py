"""The history cap (D8, D9 pieces): real UTF-8 bytes, each message measured once, whole exchanges."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from desktop.core.chat import (
    ChatMessage,
    Conversation,
    ToolCall,
    Usage,
    _cap,
    cap_conversation_messages,
    deserialize_conversation,
    message_from_dict,
    message_to_dict,
    serialize_conversation,
    split_for_cap,
)
from desktop.core.chat._cap import _message_size


def array_bytes(messages: list[ChatMessage]) -> int:
    text = json.dumps([message_to_dict(m) for m in messages], separators=(",", ":"), ensure_ascii=False)
    return len(text.encode("utf-8"))


def msg(i: int, role: str, content: str = "x") -> ChatMessage:
    return ChatMessage(f"m{i}", role, content, 1764547200000 + i)  # type: ignore[arg-type]


def exchange_conversation(n_exchanges: int, body: str = "hello there") -> list[ChatMessage]:
    out = [msg(0, "system", "be brief")]
    for k in range(n_exchanges):
        out.append(msg(len(out), "user", f"{body} {k}"))
        assistant = msg(len(out), "assistant", f"{body} answer {k}")
        assistant.tool_calls = [ToolCall(f"c{k}", "ls", "{}", result="a", status="done")]
        assistant.usage = Usage(100, 20)
        out.append(assistant)
        tool = msg(len(out), "tool", "a")
        tool.tool_calls = [ToolCall(f"c{k}", "ls", "{}", result="a", status="done")]
        out.append(tool)
        out.append(msg(len(out), "assistant", "done"))
    return out


def test_d8_fits_returns_everything_at_the_exact_byte_boundary() -> None:
    messages = exchange_conversation(3)
    size = array_bytes(messages)
    assert cap_conversation_messages(messages, size) == messages
    assert len(cap_conversation_messages(messages, size - 1)) < len(messages)


def test_d8_measures_utf8_bytes_not_code_units() -> None:
    # 3-byte characters: the UTF-16 length fits the budget, the real bytes do not
    messages = [msg(0, "user", "€" * 1000), msg(1, "assistant", "ok"), msg(2, "user", "€" * 1000)]
    utf16_length = len(json.dumps([message_to_dict(m) for m in messages], ensure_ascii=False))
    assert array_bytes(messages) > utf16_length + 1000
    kept = cap_conversation_messages(messages, utf16_length + 10)
    assert kept == messages[2:]


def test_d8_drops_whole_oldest_exchanges_and_leaves_no_orphan_tool_result() -> None:
    messages = exchange_conversation(10)
    budget = array_bytes(messages) // 2
    kept, dropped = split_for_cap(messages, budget)
    assert kept[0] is messages[0] and kept[0].role == "system"
    assert kept[1].role == "user"  # an exchange starts the kept part: no orphan tool message
    assert array_bytes(kept) <= budget
    assert kept + dropped != messages and sorted(kept + dropped, key=lambda m: m.ts) == messages
    assert dropped == messages[1 : 1 + len(dropped)]  # the oldest, in order
    assert len(dropped) % 4 == 0  # whole exchanges of four messages
    # greedy: keeping one more exchange would not have fit
    assert array_bytes([messages[0], *messages[1 + len(dropped) - 4 :]]) > budget


def test_d8_always_keeps_the_leading_system_message_and_the_newest_exchange() -> None:
    messages = exchange_conversation(5, body="y" * 500)
    kept = cap_conversation_messages(messages, 10)
    assert kept == [messages[0], *messages[-4:]]


def test_d8_non_system_messages_before_the_first_user_go_first() -> None:
    messages = [
        msg(0, "system", "s"),
        msg(1, "assistant", "greeting " * 20),
        msg(2, "note", "n"),
        msg(3, "system", "second system"),
        msg(4, "user", "q1"),
        msg(5, "assistant", "a1"),
        msg(6, "user", "q2"),
        msg(7, "assistant", "a2"),
    ]
    budget = array_bytes(messages) - 10
    kept, dropped = split_for_cap(messages, budget)
    assert dropped == [messages[1], messages[2]]
    assert kept == [messages[0], messages[3], *messages[4:]]


def test_d8_a_conversation_without_user_messages_is_returned_whole() -> None:
    messages = [msg(0, "system", "s" * 100), msg(1, "assistant", "a" * 100), msg(2, "note", "n")]
    assert cap_conversation_messages(messages, 10) == messages


def test_d8_serialize_applies_the_cap() -> None:
    messages = exchange_conversation(50)
    conv = Conversation("c", messages, 1)
    text = serialize_conversation(conv, max_bytes=2000)
    loaded = deserialize_conversation(text)
    assert loaded.messages == cap_conversation_messages(messages, 2000)
    assert len(json.dumps(json.loads(text)["messages"], separators=(",", ":")).encode()) <= 2000


def test_d9_split_returns_dropped_messages_that_archive_losslessly() -> None:
    messages = exchange_conversation(6)
    kept, dropped = split_for_cap(messages, array_bytes(messages) // 3)
    assert dropped and len(kept) + len(dropped) == len(messages)
    lines = [json.dumps(message_to_dict(m), ensure_ascii=False) for m in dropped]  # .jsonl archive lines
    assert [message_from_dict(json.loads(line)) for line in lines] == dropped


texts = st.text(st.characters(codec="utf-8"), max_size=40) | st.sampled_from(
    ["", '"\\\n\t\x00\x7f\u2028', "é€😀"]
)
long_texts = st.text(st.characters(codec="utf-8"), min_size=512, max_size=900)  # kept by ``_quoted``
ints = st.integers(min_value=0, max_value=10**15)
calls_st = st.builds(ToolCall, id=texts, name=texts, args_json=texts, result=st.none() | texts)
messages_st = st.builds(
    ChatMessage,
    id=texts.filter(bool),
    role=st.sampled_from(["user", "assistant", "system", "tool", "note"]),
    content=texts | long_texts,
    ts=ints,
    thinking=st.none() | texts | long_texts,
    thinking_blocks=st.none()
    | st.lists(st.fixed_dictionaries({"type": texts, "thinking": texts}), max_size=2),
    tool_calls=st.none() | st.lists(calls_st, max_size=2),
    usage=st.none() | st.builds(Usage, ints, ints, ints, ints, ints),
    model=st.none() | texts,
    stopped=st.booleans(),
    extra=st.dictionaries(texts, st.none() | texts | ints | st.lists(ints, max_size=2), max_size=2),
)


@settings(max_examples=200, deadline=None)
@given(messages_st)
def test_d8_fast_size_equals_the_real_encoding(message: ChatMessage) -> None:
    assert _message_size(message) == array_bytes([message]) - 2


@settings(max_examples=100, deadline=None)
@given(st.lists(messages_st, max_size=12), st.integers(min_value=0, max_value=3000))
def test_d8_cap_properties(messages: list[ChatMessage], budget: int) -> None:
    kept, dropped = split_for_cap(messages, budget)
    assert len(kept) + len(dropped) == len(messages)
    assert {id(m) for m in kept} | {id(m) for m in dropped} == {id(m) for m in messages}
    users = [i for i, m in enumerate(messages) if m.role == "user"]
    if array_bytes(messages) <= budget or not users:
        assert kept == messages and not dropped
        return
    # system messages before the first user and the whole newest exchange always survive, and
    # after that head the kept part starts with an exchange (a user message)
    head = [m for m in messages[: users[0]] if m.role == "system"]
    newest = messages[users[-1] :]
    assert all(a is b for a, b in zip(kept[: len(head)], head, strict=True))
    assert all(a is b for a, b in zip(kept[-len(newest) :], newest, strict=True))
    assert kept[len(head)].role == "user"
    if array_bytes(kept) > budget:
        assert len(kept) == len(head) + len(newest)


def make_history(n: int) -> list[ChatMessage]:
    out = [msg(0, "system", "You are a helpful assistant.")]
    for i in range(1, n):
        role = "user" if i % 2 else "assistant"
        m = msg(i, role, ('Streaming text with ünïcödé and "quotes"\n' * 4) if i % 3 else "short")
        if role == "assistant":
            m.usage = Usage(1200, 300, cache_read_tokens=800)
            m.model = "claude-sonnet-4-6"
        out.append(m)
    return out


def test_d8_the_cap_of_10000_messages_measures_each_message_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Linear by construction: one size measurement per message whatever the history's length, and
    the drops are sums over those sizes (the time is benchmarks/cap.py's: cap.10k ≤ 50 ms, cap.linear)."""
    measured: list[str] = []

    def counting_size(m: ChatMessage) -> int:
        measured.append(m.id)
        return _message_size(m)

    monkeypatch.setattr(_cap, "_message_size", counting_size)
    for n in (5_000, 10_000, 20_000):
        messages = make_history(n)
        total = array_bytes(messages)
        measured.clear()
        kept = cap_conversation_messages(messages, total // 2)  # about half the exchanges must go
        assert sorted(measured) == sorted(m.id for m in messages)  # each one once, none twice
        assert array_bytes(kept) <= total // 2 and len(kept) < n
