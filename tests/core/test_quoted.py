"""The literals of long texts kept between saves (``desktop.core.chat._quoted``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from desktop.core.chat import _quoted
from desktop.core.chat._cap import _message_size
from desktop.core.chat._codec import message_json
from desktop.core.chat.conversation import (
    Conversation,
    conversation_to_json,
    deserialize_conversation,
    message_to_dict,
)
from desktop.core.chat.types import ChatMessage, ToolCall, Usage


def reference(msg: ChatMessage) -> str:
    """What the codec wrote before the cache: one ``json.dumps``, surrogates replaced after."""
    text = json.dumps(message_to_dict(msg), ensure_ascii=False, separators=(",", ":"))
    return _quoted.repair_surrogates(text)


def answer(text: str, *, mid: str = "a1", thinking: str | None = None) -> ChatMessage:
    msg = ChatMessage(mid, "assistant", text, 1764547200000, thinking=thinking, model="gpt-4o")
    msg.usage = Usage(1200, 800)
    msg.tool_calls = [ToolCall("c1", "read_file", '{"path": "a"}', result="x" * 600, status="done")]
    msg.extra = {"custom": "y" * 700, "n": 3}
    return msg


texts = st.text(st.characters(codec="utf-8"), max_size=30) | st.text(
    st.characters(codec="utf-8"), min_size=_quoted.BIG, max_size=_quoted.BIG + 300)


@settings(max_examples=150, deadline=None)
@given(content=texts, thinking=st.none() | texts, extra=st.dictionaries(texts, texts, max_size=2))
def test_a_message_is_written_as_one_dumps_would_write_it(content: str, thinking: str | None,
                                                          extra: dict[str, str]) -> None:
    msg = ChatMessage("m1", "assistant", content, 5, thinking=thinking, extra=extra)
    assert message_json(msg) == reference(msg)
    assert message_json(msg) == reference(msg)  # from the cache
    assert _message_size(msg) == len(reference(msg).encode("utf-8"))


def test_long_texts_escapes_and_lone_surrogates_are_written_as_before() -> None:
    body = 'Line "one"\n\ttab \\ back \u2028 é€😀 ' * 40 + "\ud83d lone"
    msg = answer(body, thinking="\udc00" + "t" * 900)
    text = message_json(msg)
    assert text == reference(msg)
    assert "\ud83d" not in text and "\ufffd lone" in text
    assert _message_size(msg) == len(text.encode("utf-8"))
    conv = Conversation("c1", [msg, answer("short", mid="a2")], 7)
    back = deserialize_conversation(conv_text := conversation_to_json(conv))
    assert [m.content for m in back.messages] == [body.replace("\ud83d", "\ufffd"), "short"]
    assert json.loads(conv_text)["messages"][0] == json.loads(reference(msg))


def test_a_text_that_changed_under_the_same_message_is_written_anew() -> None:
    msg = answer("partial answer " * 60, mid="grow")
    first = message_json(msg)
    msg.content += " and the rest " * 50  # streamed on after a save
    assert message_json(msg) == reference(msg) != first
    assert _message_size(msg) == len(reference(msg).encode("utf-8"))
    equal_copy = answer("".join(list(msg.content)), mid="grow")  # read again from disk: equal, not the same
    assert equal_copy.content is not msg.content
    assert message_json(equal_copy) == reference(equal_copy)


def test_the_cache_keeps_at_most_its_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_quoted, "MAX_CHARS", 20_000)
    monkeypatch.setattr(_quoted, "_cache", type(_quoted._cache)())
    monkeypatch.setattr(_quoted, "_chars", 0)
    for i in range(100):
        message_json(answer(f"answer {i} " * 200, mid=f"m{i}"))
        assert _quoted._chars <= 20_000
    kept = list(_quoted._cache)
    assert 0 < len(kept) < 20 and ("m99", "content") in kept  # the newest stay, the oldest left
    assert _quoted._chars == sum(len(literal) for _text, literal, _size in _quoted._cache.values())
    message_json(answer("answer 99 " * 200, mid="m99"))  # a hit moves nothing out
    assert list(_quoted._cache)[-1] in {("m99", "content"), ("m99", "custom")}


def test_a_save_keeps_only_the_literals_it_wrote(tmp_path: Path) -> None:
    """The cache holds about what project.json holds: an archived or deleted message's text goes."""
    from desktop.core.store import NodeState, Project, ProjectStore

    def node(nid: str, count: int) -> NodeState:
        msgs = [ChatMessage(f"{nid}-{i}", "user" if i % 2 == 0 else "assistant", f"{nid} {i} " + "z" * 900,
                            1_764_547_200_000 + i) for i in range(count)]
        return NodeState(id=nid, title=nid, conversation=Conversation(f"c-{nid}", msgs))

    store = ProjectStore(tmp_path / "p")
    store.save(Project(nodes=[node("a", 6), node("b", 4)]))
    keys = {key for key in _quoted._cache if key[0][:2] in {"a-", "b-"}}
    assert len(keys) == 10
    store.save(Project(nodes=[node("a", 6)]))  # node b deleted
    assert {key for key in _quoted._cache if key[0][:2] in {"a-", "b-"}} == {
        key for key in keys if key[0].startswith("a-")}
    store.release()
