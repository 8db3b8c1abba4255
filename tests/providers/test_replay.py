"""A saved history with an unanswered tool call still replays as a valid request (both APIs)."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from desktop.core.chat.types import ChatMessage, ProviderConfig, ToolCall
from desktop.core.providers import driver_for
from desktop.core.providers._replay import INTERRUPTED_RESULT, answered_history
from desktop.core.providers.anthropic import anthropic_messages
from desktop.core.providers.openai import openai_messages
from desktop.testing import FakeProvider, Turn


def _call(call_id: str, status: str = "awaiting_approval", result: str | None = None) -> ToolCall:
    return ToolCall(call_id, "write_file", '{"path": "a.txt", "content": "x"}', result,
                    status in ("error", "denied", "skipped"), status)  # type: ignore[arg-type]


def _interrupted_history() -> list[ChatMessage]:
    """What project.json holds after the app closed while a write_file card waited."""
    return [
        ChatMessage("u1", "user", "save a note", 1),
        ChatMessage("a1", "assistant", "Saving it.", 2, tool_calls=[_call("c1", "done", "wrote 1 bytes"),
                                                                    _call("c2")]),
        ChatMessage("t1", "tool", "wrote 1 bytes", 3, tool_calls=[_call("c1", "done", "wrote 1 bytes")]),
        ChatMessage("n1", "note", "a local note", 4),
        ChatMessage("u2", "user", "are you there?", 5),
    ]


def test_well_formed_history_is_unchanged() -> None:
    history = _interrupted_history()
    history.insert(3, ChatMessage("t2", "tool", "wrote 1 bytes", 3, tool_calls=[_call("c2", "done", "ok")]))
    assert answered_history(history) == history


def test_missing_result_is_synthesised_right_after_its_turn() -> None:
    out = answered_history(_interrupted_history())
    assert [m.id for m in out] == ["u1", "a1", "t1", "n1", "replay-c2", "u2"]  # notes are never sent
    synthesised = out[4]
    assert synthesised.role == "tool" and synthesised.content == INTERRUPTED_RESULT
    assert synthesised.tool_calls is not None and synthesised.tool_calls[0].is_error


def test_a_finished_call_whose_tool_message_is_missing_keeps_its_result() -> None:
    history = [
        ChatMessage("u1", "user", "go", 1),
        ChatMessage("a1", "assistant", "", 2, tool_calls=[_call("c1", "done", "42")]),
        ChatMessage("u2", "user", "and?", 3),
    ]
    out = answered_history(history)
    assert out[2].content == "42" and out[2].tool_calls is not None and not out[2].tool_calls[0].is_error


def test_orphan_tool_message_is_not_sent() -> None:
    history = [
        ChatMessage("u1", "user", "go", 1),
        ChatMessage("t9", "tool", "stray", 2, tool_calls=[_call("c9", "done", "stray")]),
        ChatMessage("a1", "assistant", "hello", 3),
    ]
    assert [m.id for m in answered_history(history)] == ["u1", "a1"]
    assert [m["role"] for m in openai_messages(history)] == ["user", "assistant"]


def test_openai_request_answers_every_call() -> None:
    wire = openai_messages(_interrupted_history())
    assert [m["role"] for m in wire] == ["user", "assistant", "tool", "tool", "user"]
    assert [m.get("tool_call_id") for m in wire[2:4]] == ["c1", "c2"]
    assert wire[3]["content"] == INTERRUPTED_RESULT


def test_anthropic_request_answers_every_call_before_the_text() -> None:
    wire = anthropic_messages(_interrupted_history())
    assert [t["role"] for t in wire] == ["user", "assistant", "user"]
    blocks = wire[2]["content"]
    assert [b["type"] for b in blocks] == ["tool_result", "tool_result", "text"]
    assert [b["tool_use_id"] for b in blocks[:2]] == ["c1", "c2"]
    assert blocks[1]["is_error"] is True and blocks[1]["content"] == INTERRUPTED_RESULT


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeProvider]:
    with FakeProvider() as server:
        yield server


@pytest.mark.parametrize("api", ["openai", "anthropic"])
@pytest.mark.anyio
async def test_interrupted_history_sends_over_the_wire(fake: FakeProvider, api: str) -> None:
    base = fake.openai_base_url if api == "openai" else fake.anthropic_base_url
    cfg = ProviderConfig("f", "Fake", api, base)  # type: ignore[arg-type]
    fake.clear_requests()
    fake.script(Turn(text="yes"))

    async def go() -> str:
        async with httpx.AsyncClient() as client:
            text = ""
            async for event in driver_for(cfg, client).stream(model="m", messages=_interrupted_history(),
                                                              tools=[]):
                text += getattr(event, "text", "") or ""
            return text

    assert await go() == "yes"
    body = fake.requests[-1].json
    sent = body["messages"]
    if api == "openai":
        assert [m["role"] for m in sent] == ["user", "assistant", "tool", "tool", "user"]
    else:
        assert [b["tool_use_id"] for b in sent[2]["content"][:2]] == ["c1", "c2"]
