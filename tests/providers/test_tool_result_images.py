"""Images of tool results on the wire: Anthropic image blocks in ``tool_result``, OpenAI text only
(for a model not known to take images).

The request bodies are the ones the drivers really send over httpx (the MockServer of
provider_support); without images they stay the recorded shapes of tests/fixtures/streams.
"""

from __future__ import annotations

import base64
import copy
import json
from typing import Any

import pytest
from provider_support import (
    MockServer,
    collect,
    fixture_bytes,
    fixture_json,
    openai_config,
    outcome_for,
    sse_reply,
)
from test_anthropic_cache import MARK, assert_valid_for_anthropic, marked_blocks, sent_body, tool
from test_openai_driver import chunk, sse

from desktop.core.chat.types import (
    MAX_TOOL_IMAGE_BYTES,
    MAX_TOOL_IMAGES,
    TOOL_IMAGES_KEY,
    ChatMessage,
    ToolCall,
    ToolStatus,
)
from desktop.core.providers.anthropic import anthropic_messages

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(62)).decode()
GIF = base64.b64encode(b"GIF89a" + bytes(20)).decode()
DESCRIBED = "[image: image/png, 70 bytes]\na red pixel"


def image(mime: str, data: str) -> dict[str, str]:
    return {"mime": mime, "data": data}


def block(mime: str, data: str) -> dict[str, Any]:
    return {"type": "image", "source": {"type": "base64", "media_type": mime, "data": data}}


def history(content: str = DESCRIBED, images: Any = None, *, is_error: bool = False) -> list[ChatMessage]:
    status: ToolStatus = "error" if is_error else "done"
    call = ToolCall("toolu_1", "shot", "{}", content, is_error, status)
    extra = {TOOL_IMAGES_KEY: images} if images is not None else {}
    return [
        ChatMessage("u", "user", "Take a screenshot", 0),
        ChatMessage("a", "assistant", "", 0, tool_calls=[call]),
        ChatMessage("t", "tool", content, 0, tool_calls=[call.copy()], extra=extra),
    ]


def test_anthropic_sends_a_text_block_then_the_image_blocks() -> None:
    turns = anthropic_messages(history(images=[image("image/png", PNG), image("image/gif", GIF)]))
    assert turns[-1] == {"role": "user", "content": [{
        "type": "tool_result", "tool_use_id": "toolu_1",
        "content": [{"type": "text", "text": DESCRIBED}, block("image/png", PNG), block("image/gif", GIF)],
    }]}


def test_anthropic_without_text_sends_only_the_images_and_without_images_a_string() -> None:
    turns = anthropic_messages(history(content="  ", images=[image("IMAGE/JPEG", PNG)]))
    assert turns[-1]["content"][0]["content"] == [block("image/jpeg", PNG)]
    assert anthropic_messages(history())[-1]["content"][0]["content"] == DESCRIBED


@pytest.mark.parametrize(
    "images",
    [
        [image("image/tiff", PNG)],  # a type the API does not take: the text describes it
        [image("image/svg+xml", PNG)],
        [image("image/png", "A" * ((MAX_TOOL_IMAGE_BYTES // 3 + 2) * 4))],  # over the limit
        "not a list",
        [["not", "an", "object"]],
        [{"mime": "image/png"}],
        [{"mime": "image/png", "data": ""}],
        [{"mime": None, "data": PNG}],
    ],
)
def test_anthropic_describes_what_it_cannot_send(images: Any) -> None:
    assert anthropic_messages(history(images=images))[-1]["content"][0]["content"] == DESCRIBED


def test_anthropic_sends_at_most_the_image_limit_and_no_images_on_errors() -> None:
    many = [image("image/png", PNG)] * (MAX_TOOL_IMAGES + 3)
    content = anthropic_messages(history(images=many))[-1]["content"][0]["content"]
    assert content[0]["type"] == "text" and len(content) == 1 + MAX_TOOL_IMAGES
    result = anthropic_messages(history("boom", [image("image/png", PNG)], is_error=True))[-1]["content"][0]
    assert result == {"type": "tool_result", "tool_use_id": "toolu_1", "content": "boom", "is_error": True}


@pytest.mark.anyio
async def test_anthropic_body_with_images_keeps_valid_cache_breakpoints() -> None:
    body = await sent_body(messages=history(images=[image("image/png", PNG)]), tools=[tool("shot")],
                           system="Be brief.")
    result = body["messages"][-1]["content"][0]
    assert result == {
        "type": "tool_result", "tool_use_id": "toolu_1",
        "content": [{"type": "text", "text": DESCRIBED}, block("image/png", PNG)],
        **MARK,
    }
    # tools, system and the tool result (the last block of the last user turn) are marked, nothing else
    assert marked_blocks(body) == [("tools", 0, -1), ("system", 0, -1), ("messages", 2, 0)]
    assert_valid_for_anthropic(body)
    assert json.dumps(result["content"]).count("cache_control") == 0


@pytest.mark.anyio
async def test_anthropic_body_without_caching_carries_the_image_unmarked() -> None:
    body = await sent_body(messages=history(images=[image("image/png", PNG)]), prompt_caching=False)
    assert "cache_control" not in json.dumps(body)
    assert body["messages"][-1]["content"][0]["content"][1] == block("image/png", PNG)


@pytest.mark.anyio
async def test_openai_keeps_the_text_description_and_sends_no_image_to_a_model_not_known_to_see() -> None:
    # A model known to take images gets them after the results (tests/providers/test_attachment_parts.py).
    turn1 = await outcome_for(openai_config(), [fixture_bytes("openai_chat_tool_call_turn1.sse")])
    recorded = fixture_json("openai_chat_tool_call_turn2.request.json")
    [(call_id, name, args)] = turn1.calls
    text = "London\n[image: image/png, 70 bytes]"
    call = ToolCall(call_id, name, args, result=text, status="done")
    messages = [
        ChatMessage("u", "user", recorded["messages"][0]["content"], 0),
        ChatMessage("a", "assistant", turn1.text, 0, tool_calls=[call]),
        ChatMessage("t", "tool", text, 0, tool_calls=[call.copy()],
                    extra={TOOL_IMAGES_KEY: [image("image/png", PNG)]}),
    ]
    server = MockServer(sse_reply(sse(chunk({"content": "London."}, "stop"))))
    await collect(openai_config(), server, messages=messages, tools=[], model="my-local-model")
    body = server.bodies()[0]
    expected = copy.deepcopy(recorded["messages"])
    assert expected[-1]["role"] == "tool"
    expected[-1]["content"] = text
    assert body["messages"] == expected  # the recorded shape; the tool message is its text only
    assert PNG not in json.dumps(body)
