"""The offline demo script: showcase turn, approval-gated write_file, confirmation, quoting replies."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx
import pytest
from fakesse import anthropic_blocks, anthropic_events

from desktop.testing import DEMO_MODEL, FakeProvider, demo_responder, start_demo_provider
from desktop.testing.clock import RecordingClock
from desktop.testing.demo import DEMO_NOTE_CONTENT, DEMO_NOTE_PATH

WRITE_TOOL = {"name": "write_file", "description": "write", "input_schema": {"type": "object"}}


def _ask(
    client: httpx.Client, fp: FakeProvider, messages: Sequence[object], tools: bool = True
) -> list[tuple[str, dict[str, Any]]]:
    body = {
        "model": DEMO_MODEL,
        "max_tokens": 4096,
        "stream": True,
        "messages": messages,
        **({"tools": [WRITE_TOOL]} if tools else {}),
    }
    r = client.post(fp.anthropic_base_url + "/v1/messages", json=body, headers={"x-api-key": "none"})
    assert r.status_code == 200
    return anthropic_events(r.content)


def test_demo_conversation_flow(client: httpx.Client) -> None:
    with FakeProvider(responder=demo_responder(tokens_per_second=None)) as fp:
        first = [{"role": "user", "content": "Show me what you can do"}]
        events = _ask(client, fp, first)
        blocks = anthropic_blocks(events)
        assert [b["type"] for b in blocks] == ["thinking", "text", "tool_use"]
        assert blocks[0]["thinking"] and blocks[0]["signature"]
        text = blocks[1]["text"]
        assert text.startswith("# ") and "\n- " in text and "```python" in text and "|---|" in text
        call = blocks[2]
        assert call["name"] == "write_file"
        assert json.loads(call["partial"]) == {"path": DEMO_NOTE_PATH, "content": DEMO_NOTE_CONTENT}
        usage = events[0][1]["message"]["usage"]
        assert usage["cache_read_input_tokens"] > 0 and usage["cache_creation_input_tokens"] > 0
        assert events[0][1]["message"]["model"] == DEMO_MODEL
        assert events[-2][1]["delta"]["stop_reason"] == "tool_use"

        history = first + [
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": text},
                    {
                        "type": "tool_use",
                        "id": call["id"],
                        "name": "write_file",
                        "input": {"path": DEMO_NOTE_PATH},
                    },
                ],
            },
        ]
        approved = history + [
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": call["id"],
                        "content": "wrote 120 bytes to notes/hello.md",
                    }
                ],
            }
        ]
        confirm = anthropic_blocks(_ask(client, fp, approved))
        assert confirm[0]["type"] == "text" and DEMO_NOTE_PATH in confirm[0]["text"]
        denied = history + [
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": call["id"],
                        "content": "denied by user",
                        "is_error": True,
                    }
                ],
            }
        ]
        assert "untouched" in anthropic_blocks(_ask(client, fp, denied))[0]["text"]

        later = approved + [
            {"role": "assistant", "content": "Done!"},
            {"role": "user", "content": "What is **2 + 2**?\nThanks"},
        ]
        reply = anthropic_blocks(_ask(client, fp, later))
        assert len(reply) == 1
        assert "> What is **2 + 2**?\n> Thanks" in reply[0]["text"]


def test_demo_without_tools_offered_makes_no_call(client: httpx.Client) -> None:
    with FakeProvider(responder=demo_responder(tokens_per_second=None)) as fp:
        blocks = anthropic_blocks(_ask(client, fp, [{"role": "user", "content": "hi"}], tools=False))
        assert [b["type"] for b in blocks] == ["thinking", "text"]


def test_start_demo_provider_drips(client: httpx.Client) -> None:
    clock = RecordingClock()  # the waits are recorded, not spent
    fp = start_demo_provider(clock=clock)
    try:
        assert DEMO_MODEL in client.get(fp.base_url + "/v1/models", headers={"x-api-key": "x"}).text
        body = {
            "model": DEMO_MODEL,
            "max_tokens": 100,
            "stream": True,
            "messages": [
                {"role": "user", "content": "a"},
                {"role": "assistant", "content": "b"},
                {"role": "user", "content": "c"},
            ],
        }
        r = client.post(fp.anthropic_base_url + "/v1/messages", json=body)
    finally:
        fp.stop()
    deltas = [p for n, p in anthropic_events(r.content) if n == "content_block_delta"]
    assert len(deltas) > 12
    # One wait of 1/60 s before each text delta: 60 tokens per second.
    assert clock.sleeps == pytest.approx([1 / 60] * len(deltas))


def test_demo_model_is_priced() -> None:
    prices = Path(__file__).resolve().parents[2] / "desktop" / "core" / "chat" / "model_prices.json"
    assert DEMO_MODEL in json.loads(prices.read_text(encoding="utf-8"))
