"""The fake provider speaks Anthropic Messages: event order, blocks, usage, plain JSON, paginated models."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from fakesse import anthropic_blocks, anthropic_events

from desktop.testing import FakeProvider, ToolCallSpec, Turn

HEADERS = {"x-api-key": "k", "anthropic-version": "2023-06-01"}


def _stream(client: httpx.Client, fp: FakeProvider, **extra: object) -> list[tuple[str, dict[str, Any]]]:
    body = {
        "model": "claude-sonnet-4-5",
        "max_tokens": 1024,
        "stream": True,
        "messages": [{"role": "user", "content": "hi"}],
        **extra,
    }
    r = client.post(fp.anthropic_base_url + "/v1/messages", json=body, headers=HEADERS)
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/event-stream")
    return anthropic_events(r.content)


def test_event_order_thinking_text_tool(fp: FakeProvider, client: httpx.Client) -> None:
    fp.script(
        Turn(
            thinking="Think first.",
            text="Then answer.",
            tool_calls=[ToolCallSpec("get_weather", {"location": "Paris"}, id="toolu_1")],
        )
    )
    events = _stream(client, fp)
    names = [n for n, _ in events]
    assert names[:2] == ["message_start", "ping"]
    assert names[-2:] == ["message_delta", "message_stop"]
    starts = [p for n, p in events if n == "content_block_start"]
    assert [s["content_block"]["type"] for s in starts] == ["thinking", "text", "tool_use"]
    assert [s["index"] for s in starts] == [0, 1, 2]
    assert names.count("content_block_stop") == 3
    # Every delta sits between its block's start and stop.
    open_blocks: set[int] = set()
    for name, p in events:
        if name == "content_block_start":
            open_blocks.add(p["index"])
        elif name == "content_block_delta":
            assert p["index"] in open_blocks
        elif name == "content_block_stop":
            open_blocks.remove(p["index"])
    assert not open_blocks
    blocks = anthropic_blocks(events)
    assert blocks[0]["thinking"] == "Think first." and blocks[0]["signature"]
    thinking_deltas = [
        p["delta"]["type"] for n, p in events if n == "content_block_delta" and p["index"] == 0
    ]
    assert thinking_deltas[-1] == "signature_delta" and set(thinking_deltas[:-1]) == {"thinking_delta"}
    assert blocks[1]["text"] == "Then answer."
    assert blocks[2]["id"] == "toolu_1" and blocks[2]["name"] == "get_weather" and blocks[2]["input"] == {}
    assert json.loads(blocks[2]["partial"]) == {"location": "Paris"}
    fragments = [
        p["delta"]["partial_json"] for n, p in events if n == "content_block_delta" and p["index"] == 2
    ]
    assert fragments[0] == "" and len(fragments) > 3
    delta = events[-2][1]
    assert delta["delta"] == {"stop_reason": "tool_use", "stop_sequence": None}


def test_parallel_tool_use_blocks(fp: FakeProvider, client: httpx.Client) -> None:
    fp.script(Turn(tool_calls=[ToolCallSpec("pelican", {}), ToolCallSpec("pelican", {"n": 2})]))
    blocks = anthropic_blocks(_stream(client, fp))
    assert [b["type"] for b in blocks] == ["tool_use", "tool_use"]
    assert blocks[0]["id"].startswith("toolu_") and blocks[0]["id"] != blocks[1]["id"]
    assert [json.loads(b["partial"]) for b in blocks] == [{}, {"n": 2}]


def test_usage_excludes_cache_from_input(fp: FakeProvider, client: httpx.Client) -> None:
    fp.script(Turn(text="cached", usage={"input": 11, "output": 30, "cache_read": 2048, "cache_write": 512}))
    events = _stream(client, fp)
    start = events[0][1]["message"]
    assert start["model"] == "claude-sonnet-4-5" and start["role"] == "assistant"
    assert start["usage"] == {
        "input_tokens": 11,
        "cache_creation_input_tokens": 512,
        "cache_read_input_tokens": 2048,
        "output_tokens": 1,
    }
    final = events[-2][1]["usage"]
    assert final["output_tokens"] == 30 and final["input_tokens"] == 11
    assert events[-2][1]["delta"]["stop_reason"] == "end_turn"


@pytest.mark.parametrize(
    ("given", "expected"), [("length", "max_tokens"), ("refusal", "refusal"), ("pause_turn", "pause_turn")]
)
def test_stop_reason(fp: FakeProvider, client: httpx.Client, given: str, expected: str) -> None:
    fp.script(Turn(text="x", stop_reason=given))
    assert _stream(client, fp)[-2][1]["delta"]["stop_reason"] == expected


def test_non_streaming_json(fp: FakeProvider, client: httpx.Client) -> None:
    fp.script(
        Turn(
            thinking="t",
            text="plain",
            tool_calls=[ToolCallSpec("f", {"k": 1}, id="toolu_9")],
            usage={"input": 3, "output": 4, "cache_read": 5, "cache_write": 6},
        )
    )
    r = client.post(
        fp.anthropic_base_url + "/v1/messages",
        headers=HEADERS,
        json={"model": "claude-haiku-4-5", "max_tokens": 10, "messages": []},
    )
    assert r.status_code == 200
    body = r.json()
    assert body["type"] == "message" and body["model"] == "claude-haiku-4-5"
    assert [b["type"] for b in body["content"]] == ["thinking", "text", "tool_use"]
    assert body["content"][2] == {"type": "tool_use", "id": "toolu_9", "name": "f", "input": {"k": 1}}
    assert body["stop_reason"] == "tool_use"
    assert body["usage"] == {
        "input_tokens": 3,
        "cache_creation_input_tokens": 6,
        "cache_read_input_tokens": 5,
        "output_tokens": 4,
    }


def test_models_pagination(client: httpx.Client) -> None:
    ids = [f"claude-model-{i}" for i in range(5)]
    with FakeProvider(models=ids) as fp:
        url = fp.anthropic_base_url + "/v1/models"
        first = client.get(url, headers=HEADERS, params={"limit": 2}).json()
        assert [m["id"] for m in first["data"]] == ids[:2]
        assert first["data"][0]["type"] == "model" and first["data"][0]["display_name"]
        assert first["has_more"] is True and first["first_id"] == ids[0] and first["last_id"] == ids[1]
        seen = [m["id"] for m in first["data"]]
        page = first
        while page["has_more"]:
            page = client.get(url, headers=HEADERS, params={"limit": 2, "after_id": page["last_id"]}).json()
            seen += [m["id"] for m in page["data"]]
        assert seen == ids
        assert page["last_id"] == ids[-1]
        whole = client.get(url, headers=HEADERS).json()
        assert [m["id"] for m in whole["data"]] == ids and whole["has_more"] is False
        before = client.get(url, headers=HEADERS, params={"limit": 2, "before_id": ids[3]}).json()
        assert [m["id"] for m in before["data"]] == ids[1:3] and before["has_more"] is True
        bad = client.get(url, headers=HEADERS, params={"limit": "0"})
        assert bad.status_code == 400 and bad.json()["error"]["type"] == "invalid_request_error"
        unknown = client.get(url, headers=HEADERS, params={"after_id": "nope"})
        assert unknown.status_code == 400


def test_echo_reads_tool_result_blocks(fp: FakeProvider, client: httpx.Client) -> None:
    messages = [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "f", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "42"}]},
    ]
    blocks = anthropic_blocks(_stream(client, fp, messages=messages))
    assert blocks == [{"type": "text", "text": "Echo: 42"}]
