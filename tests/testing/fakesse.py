"""Tiny SSE helpers for the fake provider tests (deliberately independent of the app's decoder)."""

from __future__ import annotations

import json
from typing import Any


def parse_sse(raw: bytes) -> list[tuple[str | None, str]]:
    """Split a body into ``(event name, data)`` pairs; a trailing event without blank line counts."""
    out: list[tuple[str | None, str]] = []
    text = raw.decode("utf-8").replace("\r\n", "\n")
    for block in text.split("\n\n"):
        if not block.strip():
            continue
        name: str | None = None
        data: list[str] = []
        for line in block.split("\n"):
            if line.startswith("event:"):
                name = line[6:].strip()
            elif line.startswith("data:"):
                data.append(line[5:].lstrip(" "))
        out.append((name, "\n".join(data)))
    return out


def openai_chunks(raw: bytes) -> list[Any]:
    """The JSON chunks of an OpenAI stream; the ``[DONE]`` marker is returned as the string."""
    return [d if d == "[DONE]" else json.loads(d) for _, d in parse_sse(raw)]


def anthropic_events(raw: bytes) -> list[tuple[str, dict[str, Any]]]:
    """``(event name, payload)`` pairs of an Anthropic stream."""
    events: list[tuple[str, dict[str, Any]]] = []
    for name, data in parse_sse(raw):
        payload = json.loads(data)
        assert name is not None and name == payload["type"], (name, payload)
        events.append((name, payload))
    return events


def openai_text(chunks: list[Any], field: str = "content") -> str:
    return "".join(
        c["choices"][0]["delta"].get(field) or "" for c in chunks if isinstance(c, dict) and c.get("choices")
    )


def openai_tool_calls(chunks: list[Any]) -> dict[int, dict[str, str]]:
    calls: dict[int, dict[str, str]] = {}
    for c in chunks:
        if not isinstance(c, dict) or not c.get("choices"):
            continue
        for tc in c["choices"][0]["delta"].get("tool_calls") or []:
            call = calls.setdefault(tc["index"], {"id": "", "name": "", "arguments": ""})
            if tc.get("id"):
                call["id"] = tc["id"]
            fn = tc.get("function") or {}
            if fn.get("name"):
                call["name"] = fn["name"]
            call["arguments"] += fn.get("arguments") or ""
    return calls


def anthropic_blocks(events: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    """Assemble content blocks (text, thinking+signature, tool_use with raw ``partial``)."""
    blocks: dict[int, dict[str, Any]] = {}
    for name, p in events:
        if name == "content_block_start":
            block = dict(p["content_block"])
            if block["type"] == "tool_use":
                block["partial"] = ""
            blocks[p["index"]] = block
        elif name == "content_block_delta":
            block = blocks[p["index"]]
            d = p["delta"]
            if d["type"] == "text_delta":
                block["text"] += d["text"]
            elif d["type"] == "thinking_delta":
                block["thinking"] += d["thinking"]
            elif d["type"] == "signature_delta":
                block["signature"] = d["signature"]
            elif d["type"] == "input_json_delta":
                block["partial"] += d["partial_json"]
    return [blocks[i] for i in sorted(blocks)]
