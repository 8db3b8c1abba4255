"""Base64 image or audio data never reaches a model as text (issue 26, item 7).

``@modelcontextprotocol/server-filesystem``'s ``read_media_file`` answers an image block and a
``structuredContent`` repeating the same base64; the model used to get that JSON as text (4 KB for
a 3 KB PNG). A real stdio server (tests/mcp/servers/media_server.py) answers the same way: the
repeated structure is dropped, base64 elsewhere in structured content is summarised, and the image
reaches the loopback provider as an image for both APIs.
"""

from __future__ import annotations

import base64
import json
import struct
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp_helpers import SERVERS
from mcp_types import CallToolResult, ImageContent

from desktop.core.chat import ChatEvent, ChatMessage, ChatRuntimeDeps, ChatSendRequest, create_chat_runtime
from desktop.core.chat.types import ApiKind, ProviderConfig, ToolOutput
from desktop.core.mcp import McpManager, convert_result, parse_mcp_server
from desktop.core.providers import driver_for
from desktop.testing import FakeProvider, ToolCallSpec, Turn
from desktop.testing.files import make_png

pytestmark = pytest.mark.anyio

KEY = "sk-fake-media-000000"
PNG = make_png(64, 64)
PNG_B64 = base64.b64encode(PNG).decode()


def media_manager() -> McpManager:
    config = parse_mcp_server("media", {"command": sys.executable, "args": [str(SERVERS / "media_server.py")],
                                        "approval": "never"})
    return McpManager({"media": config})


def wav(samples: int = 2000) -> bytes:
    data = bytes(samples * 2)
    header = b"RIFF" + struct.pack("<I", 36 + len(data)) + b"WAVEfmt " + struct.pack(
        "<IHHIIHH", 16, 1, 1, 8000, 16000, 2, 16) + b"data" + struct.pack("<I", len(data))
    return header + data


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    png = tmp_path / "red.png"
    png.write_bytes(PNG)
    sound = tmp_path / "beep.wav"
    sound.write_bytes(wav())
    return {"png": png, "wav": sound}


async def run_tool(name: str, args: dict[str, Any]) -> str | ToolOutput:
    manager = media_manager()
    try:
        manager.start()
        statuses = await manager.wait_ready(timeout=10)
        assert statuses["media"].state == "ready", statuses["media"]
        return await manager.run(f"mcp__media__{name}", args)
    finally:
        await manager.aclose()


async def test_read_media_file_gives_the_model_the_image_not_its_base64(files: dict[str, Path]) -> None:
    output = await run_tool("read_media_file", {"path": str(files["png"])})
    image = {"mime": "image/png", "data": PNG_B64}
    assert output == ToolOutput(f"[image: image/png, {len(PNG)} bytes]", (image,))


async def test_an_audio_file_is_described_in_one_line(files: dict[str, Path]) -> None:
    output = await run_tool("read_media_file", {"path": str(files["wav"])})
    assert output == f"[audio: audio/wav, {len(wav())} bytes]"


async def test_base64_beside_a_media_type_in_structured_content_is_summarised(files: dict[str, Path]) -> None:
    output = await run_tool("describe_photo", {"path": str(files["png"])})
    assert isinstance(output, ToolOutput) and output.images == ({"mime": "image/png", "data": PNG_B64},)
    lines = output.text.split("\n")
    assert lines[:2] == [f"[image: image/png, {len(PNG)} bytes]", "A small red square."]
    assert json.loads(lines[2]) == {
        "caption": "A small red square.",
        "photo": {"mimeType": "image/png",
                  "data": f"[image/png data of {len(PNG)} bytes: the same as the content above]"},
        "tags": ["red", "square"],
    }
    assert PNG_B64 not in output.text


async def test_a_data_url_in_structured_content_is_summarised(files: dict[str, Path]) -> None:
    output = await run_tool("thumbnail", {"path": str(files["png"])})
    assert isinstance(output, str) and PNG_B64 not in output
    assert output.split("\n") == [
        "thumbnail made",
        json.dumps({"thumbnail": f"[image/png data of {len(PNG)} bytes: left out]", "width": 64},
                   separators=(",", ":")),
    ]


@pytest.fixture
def fake() -> Iterator[FakeProvider]:
    with FakeProvider(api_key=KEY) as server:
        yield server


def _where(value: Any, needle: str, path: str = "") -> list[str]:
    """The JSON paths of the strings in ``value`` that contain ``needle``."""
    if isinstance(value, str):
        return [path] if needle in value else []
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in _where(v, needle, f"{path}.{k}")]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in _where(v, needle, f"{path}[{i}]")]
    return []


@pytest.mark.parametrize(("api", "model"), [("anthropic", "claude-sonnet-4-5"), ("openai", "gpt-4o")])
async def test_the_provider_receives_the_image_as_an_image(
    fake: FakeProvider, files: dict[str, Path], api: ApiKind, model: str
) -> None:
    base = fake.anthropic_base_url if api == "anthropic" else fake.openai_base_url
    config = ProviderConfig(id="fake", name="Fake", api=api, base_url=base, api_key=KEY, model=model)
    fake.script(
        Turn(tool_calls=[ToolCallSpec("mcp__media__read_media_file", {"path": str(files["png"])},
                                      id="call_img")]),
        Turn(text="A red square."),
    )
    manager = media_manager()
    events: list[ChatEvent] = []
    try:
        manager.start()
        await manager.wait_ready(timeout=10)
        async with httpx.AsyncClient() as client:
            runtime = create_chat_runtime(ChatRuntimeDeps(
                resolve_provider=lambda _req: config,
                broadcast=lambda _node, event: events.append(event),
                tools_for=lambda _req: manager.tools(),
                driver_for=lambda cfg: driver_for(cfg, client),
            ))
            result = await runtime.send(ChatSendRequest("n1", [ChatMessage("u1", "user", "What is it?", 1)]))
            await runtime.aclose()
    finally:
        await manager.aclose()
    assert result.ok, result.error
    bodies = [r.json for r in fake.requests if r.method == "POST" and isinstance(r.json, dict)]
    second = bodies[1]
    described = f"[image: image/png, {len(PNG)} bytes]"
    if api == "anthropic":
        assert second["messages"][-1]["content"][0]["content"] == [
            {"type": "text", "text": described},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG_B64}},
        ]
        assert _where(second, PNG_B64) == [".messages[2].content[0].content[1].source.data"]
    else:
        tool, images = second["messages"][-2:]
        assert tool == {"role": "tool", "tool_call_id": "call_img", "content": described}
        assert images["role"] == "user"
        assert images["content"][-1] == {"type": "image_url",
                                         "image_url": {"url": f"data:image/png;base64,{PNG_B64}"}}
        last = len(second["messages"]) - 1
        assert _where(second, PNG_B64) == [f".messages[{last}].content[2].image_url.url"]
    assert result.messages[-1].content == "A red square."


def test_structured_content_nested_deeper_than_the_walk_is_left_out() -> None:
    deep: object = {"data": PNG_B64, "mimeType": "image/png"}
    for _ in range(80):
        deep = {"inner": deep}
    result = CallToolResult(content=[ImageContent(type="image", data=PNG_B64, mime_type="image/png")],
                            structured_content={"wrapped": deep, "ok": True})
    converted = convert_result("media", "deep", result)
    assert PNG_B64 not in converted.text and PNG_B64 not in converted.full_text
    assert "[nested too deep: left out]" in converted.text and '"ok":true' in converted.text
