"""An MCP tool's image reaches the model end to end: stdio test server → McpManager → chat runtime →
the provider driver → the loopback fake provider.

In Anthropic mode the second request's ``tool_result`` carries the image block; in OpenAI mode the
tool message is the text description only. The final messages keep the image once (the tool
message's ``images``) and survive a save and load.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from mcp_helpers import PATIENCE_S, stdio_server
from mcp_types import AudioContent, CallToolResult, ImageContent, TextContent

from desktop.core.chat import ChatEvent, ChatMessage, ChatRuntimeDeps, ChatSendRequest, create_chat_runtime
from desktop.core.chat.conversation import Conversation, deserialize_conversation, serialize_conversation
from desktop.core.chat.types import (
    MAX_TOOL_IMAGE_BYTES,
    MAX_TOOL_IMAGES,
    TOOL_IMAGES_KEY,
    ApiKind,
    ProviderConfig,
    ToolCallFinished,
    ToolOutput,
)
from desktop.core.mcp import McpManager, convert_result
from desktop.core.providers import driver_for
from desktop.testing import FakeProvider, ToolCallSpec, Turn

pytestmark = pytest.mark.anyio

PNG_1PX = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
DESCRIBED = "[image: image/png, 70 bytes]\na red pixel"
KEY = "sk-fake-images-000000"
TOOL = "mcp__local__image"


@pytest.fixture()
def fake() -> Iterator[FakeProvider]:
    with FakeProvider(api_key=KEY) as server:
        yield server


async def send(
    fake: FakeProvider, api: ApiKind
) -> tuple[list[dict[str, Any]], list[ChatMessage], list[ChatEvent]]:
    """One runtime send whose model calls the image tool once; the chat request bodies and the messages."""
    base = fake.anthropic_base_url if api == "anthropic" else fake.openai_base_url
    config = ProviderConfig(id="fake", name="Fake", api=api, base_url=base, api_key=KEY, model="fake-model")
    fake.script(
        Turn(tool_calls=[ToolCallSpec(TOOL, {}, id="toolu_img1")]),
        Turn(text="A red pixel."),
    )
    manager = McpManager({"local": stdio_server(approval="never")})
    events: list[ChatEvent] = []
    try:
        manager.start()
        statuses = await manager.wait_ready(PATIENCE_S)
        assert statuses["local"].state == "ready", statuses["local"]
        async with httpx.AsyncClient() as client:
            runtime = create_chat_runtime(ChatRuntimeDeps(
                resolve_provider=lambda _req: config,
                broadcast=lambda _node, event: events.append(event),
                tools_for=lambda _req: manager.tools(),
                driver_for=lambda cfg: driver_for(cfg, client),
            ))
            result = await runtime.send(ChatSendRequest("n1", [ChatMessage("u1", "user", "Show me", 1)]))
            await runtime.aclose()
    finally:
        await manager.aclose()
    assert result.ok, result.error
    bodies = [r.json for r in fake.requests if r.method == "POST" and isinstance(r.json, dict)]
    assert len(bodies) == 2
    return bodies, result.messages, events


async def test_the_manager_returns_a_tool_output_for_an_image_result() -> None:
    manager = McpManager({"local": stdio_server()})
    try:
        manager.start()
        await manager.wait_ready(PATIENCE_S)
        output = await manager.run(TOOL, {})
        assert output == ToolOutput(DESCRIBED, ({"mime": "image/png", "data": PNG_1PX},))
        assert await manager.run("mcp__local__echo", {"text": "hi"}) == "hi"  # text results stay str
    finally:
        await manager.aclose()


async def test_anthropic_gets_the_image_in_the_tool_result(fake: FakeProvider) -> None:
    bodies, messages, events = await send(fake, "anthropic")
    second = bodies[1]
    assert second["messages"][-1] == {"role": "user", "content": [{
        "type": "tool_result", "tool_use_id": "toolu_img1",
        "content": [
            {"type": "text", "text": DESCRIBED},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG_1PX}},
        ],
        "cache_control": {"type": "ephemeral"},
    }]}
    assert base64.b64decode(PNG_1PX).startswith(b"\x89PNG")
    [finished] = [e for e in events if isinstance(e, ToolCallFinished)]
    assert finished.call.images == [{"mime": "image/png", "data": PNG_1PX}]
    tool = next(m for m in messages if m.role == "tool")
    assert tool.content == DESCRIBED
    assert tool.extra == {TOOL_IMAGES_KEY: [{"mime": "image/png", "data": PNG_1PX}]}
    assert messages[-1].content == "A red pixel."
    # saved and loaded, the next request would send the same image again
    loaded = deserialize_conversation(serialize_conversation(Conversation("c", messages, 0)))
    assert loaded.messages == messages


async def test_openai_gets_the_text_description_only(fake: FakeProvider) -> None:
    bodies, messages, _ = await send(fake, "openai")
    tool_messages = [m for m in bodies[1]["messages"] if m["role"] == "tool"]
    assert tool_messages == [{"role": "tool", "tool_call_id": "toolu_img1", "content": DESCRIBED}]
    assert PNG_1PX not in str(bodies[1])
    # the conversation still keeps the image (for the card, and for a later Anthropic request)
    tool = next(m for m in messages if m.role == "tool")
    assert tool.extra[TOOL_IMAGES_KEY] == [{"mime": "image/png", "data": PNG_1PX}]


def test_model_output_sends_only_valid_images_within_the_limits() -> None:
    png = base64.b64encode(b"\x89PNG" + bytes(96)).decode()
    huge = base64.b64encode(bytes(MAX_TOOL_IMAGE_BYTES + 1)).decode()
    content = [
        ImageContent(type="image", data=png, mime_type="image/png"),
        AudioContent(type="audio", data=base64.b64encode(b"abc").decode(), mime_type="audio/wav"),
        ImageContent(type="image", data="!!not base64!!", mime_type="image/jpeg"),
        ImageContent(type="image", data=huge, mime_type="image/png"),
    ]
    content += [ImageContent(type="image", data=png, mime_type="image/gif")] * MAX_TOOL_IMAGES
    result = convert_result("s", "t", CallToolResult(content=content))
    output = result.model_output()
    assert isinstance(output, ToolOutput) and output.text == result.text
    assert f"[image: image/png, {MAX_TOOL_IMAGE_BYTES + 1} bytes]" in output.text  # described, not sent
    assert "[audio: audio/wav, 3 bytes]" in output.text
    assert len(output.images) == MAX_TOOL_IMAGES
    assert output.images[0] == {"mime": "image/png", "data": png}
    assert all(i == {"mime": "image/gif", "data": png} for i in output.images[1:])
    text_only = convert_result("s", "t", CallToolResult(content=[TextContent(type="text", text="x")]))
    assert text_only.model_output() == "x"
