"""Images of tool results in the core: ToolOutput → ToolCallFinished → the tool message's extra["images"].

The loop keeps the valid images (and says which it left out), the event carries them, the applier
stores them once (in the tool message, never on the calls), the replay invariant holds, the v2
codec round-trips them and the history cap counts their bytes.
"""

from __future__ import annotations

import base64
import copy
import json
from typing import Any

import pytest
from core_chat_fakes import ScriptedDriver, replay, without_ts

from desktop.core.chat import (
    ChatLoopHooks,
    ChatMessage,
    ChatToolDef,
    Conversation,
    Delta,
    ToolCall,
    ToolCallFinished,
    ToolCallRequested,
    apply_event,
    run_chat_loop,
)
from desktop.core.chat._cap import _message_size
from desktop.core.chat.conversation import (
    deserialize_conversation,
    message_from_dict,
    message_to_dict,
    serialize_conversation,
    split_for_cap,
)
from desktop.core.chat.types import MAX_TOOL_IMAGE_BYTES, MAX_TOOL_IMAGES, TOOL_IMAGES_KEY, ToolOutput

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(62)).decode()  # 70 bytes decoded
JPEG = base64.b64encode(b"\xff\xd8\xff" + bytes(20)).decode()
USER = ChatMessage("u1", "user", "take a screenshot", 1)


def image_tool(output: str | ToolOutput, name: str = "shot") -> ChatToolDef:
    async def run(args: dict[str, Any]) -> str | ToolOutput:
        return output

    return ChatToolDef(name, "takes a screenshot", {"type": "object"}, False, run)


async def run_loop(
    tools: list[ChatToolDef], calls: list[str]
) -> tuple[list[ChatMessage], list[Any], ScriptedDriver]:
    driver = ScriptedDriver(
        [[ToolCallRequested(ToolCall(f"c{i}", name, "{}")) for i, name in enumerate(calls)], [Delta("seen")]]
    )
    events: list[Any] = []

    async def approve(call: ToolCall) -> Any:
        return "approve"

    start = [USER]
    messages = list(start)
    result = await run_chat_loop(driver, "m", messages, tools, ChatLoopHooks(events.append, approve))
    assert result.stop_reason == "end_turn"
    # the invariant (DESIGN §2.1): applying every broadcast event gives exactly the loop's messages
    assert without_ts(replay(start, events)) == without_ts(result.messages)
    return result.messages, events, driver


@pytest.mark.anyio
async def test_a_tool_output_puts_its_images_on_the_event_and_once_in_the_tool_message() -> None:
    output = ToolOutput("[image: image/png, 70 bytes]\nthe screen", ({"mime": "image/png", "data": PNG},))
    messages, events, driver = await run_loop([image_tool(output)], ["shot"])
    [finished] = [e for e in events if isinstance(e, ToolCallFinished)]
    assert finished.call.images == [{"mime": "image/png", "data": PNG}]
    assert finished.call.result == "[image: image/png, 70 bytes]\nthe screen"
    assert finished.call.status == "done"
    assistant, tool = messages[1], messages[2]
    assert tool.role == "tool" and tool.content == output.text
    assert tool.extra == {TOOL_IMAGES_KEY: [{"mime": "image/png", "data": PNG}]}
    # stored once: neither the assistant's call nor the tool message's copy holds them
    assert assistant.tool_calls is not None and assistant.tool_calls[0].images is None
    assert tool.tool_calls is not None and tool.tool_calls[0].images is None
    # the next request carries the tool message with its images
    sent = driver.calls[1].messages
    assert sent[2].extra[TOOL_IMAGES_KEY] == [{"mime": "image/png", "data": PNG}]
    # events never share mutable state with the conversation
    assert finished.call.images is not None
    finished.call.images[0]["data"] = "changed"
    assert tool.extra[TOOL_IMAGES_KEY][0]["data"] == PNG


@pytest.mark.anyio
async def test_plain_string_results_carry_no_images() -> None:
    messages, events, _ = await run_loop([image_tool("just text")], ["shot"])
    [finished] = [e for e in events if isinstance(e, ToolCallFinished)]
    assert finished.call.images is None
    assert messages[2].content == "just text" and TOOL_IMAGES_KEY not in messages[2].extra
    assert "images" not in message_to_dict(messages[2])
    assert "images" not in message_to_dict(messages[2])["toolCalls"][0]


@pytest.mark.anyio
async def test_invalid_oversized_and_surplus_images_are_left_out_and_said_so() -> None:
    big = "A" * ((MAX_TOOL_IMAGE_BYTES // 3 + 10) * 4)  # valid base64, decodes past the limit
    images: list[dict[str, str]] = [
        {"mime": "image/png", "data": PNG},
        {"mime": "image/png", "data": "!!not base64!!"},
        {"mime": "image/jpeg", "data": big},
        {"mime": "image/png"},  # malformed
    ]
    images += [{"mime": "image/jpeg", "data": JPEG}] * MAX_TOOL_IMAGES
    messages, events, _ = await run_loop([image_tool(ToolOutput("shots", tuple(images)))], ["shot"])
    [finished] = [e for e in events if isinstance(e, ToolCallFinished)]
    kept = finished.call.images
    assert kept is not None and len(kept) == MAX_TOOL_IMAGES
    assert kept[0] == {"mime": "image/png", "data": PNG}
    assert all(i == {"mime": "image/jpeg", "data": JPEG} for i in kept[1:])
    text = messages[2].content
    assert text.startswith("shots\n")
    assert "[image not sent: image/png, invalid base64 data]" in text
    assert f"over {MAX_TOOL_IMAGE_BYTES} bytes]" in text
    assert "[image not sent: malformed]" in text
    assert f"[image not sent: image/jpeg, more than {MAX_TOOL_IMAGES} images]" in text
    assert messages[2].extra[TOOL_IMAGES_KEY] == kept


@pytest.mark.anyio
async def test_a_tool_output_with_only_bad_images_is_plain_text() -> None:
    output = ToolOutput("", ({"mime": "image/png", "data": "%%%"},))
    messages, events, _ = await run_loop([image_tool(output)], ["shot"])
    [finished] = [e for e in events if isinstance(e, ToolCallFinished)]
    assert finished.call.images is None
    assert messages[2].content == "[image not sent: image/png, invalid base64 data]"
    assert TOOL_IMAGES_KEY not in messages[2].extra


def test_reapplying_a_finish_is_harmless_and_a_finish_without_images_removes_them() -> None:
    conv = Conversation("c", [copy.deepcopy(USER)], 0)
    apply_event(conv, ToolCallRequested(ToolCall("c1", "shot", "{}"), message_id="a1"))
    done = ToolCall("c1", "shot", "{}", "shot taken", False, "done", [{"mime": "image/png", "data": PNG}])
    apply_event(conv, ToolCallFinished(done, message_id="t1"))
    apply_event(conv, ToolCallFinished(done, message_id="t1"))
    assert [m.id for m in conv.messages] == ["u1", "a1", "t1"]
    assert conv.messages[2].extra == {TOOL_IMAGES_KEY: [{"mime": "image/png", "data": PNG}]}
    retry = ToolCall("c1", "shot", "{}", "no image now", False, "done")
    apply_event(conv, ToolCallFinished(retry, message_id="t1"))
    assert conv.messages[2].extra == {} and conv.messages[2].content == "no image now"


def test_tool_call_copy_is_deep_for_images() -> None:
    call = ToolCall("c1", "shot", "{}", "r", False, "done", [{"mime": "image/png", "data": PNG}])
    twin = call.copy()
    assert twin == call
    assert twin.images is not None
    twin.images[0]["mime"] = "image/gif"
    assert call.images == [{"mime": "image/png", "data": PNG}]


def test_the_v2_codec_round_trips_tool_message_images_and_call_images() -> None:
    call = ToolCall("c1", "shot", "{}", "[image: image/png, 70 bytes]", False, "done")
    tool = ChatMessage("t1", "tool", "[image: image/png, 70 bytes]", 5, tool_calls=[call],
                       extra={TOOL_IMAGES_KEY: [{"mime": "image/png", "data": PNG}]})
    assistant = ChatMessage("a1", "assistant", "", 4, tool_calls=[call.copy()])
    conv = Conversation("c-1", [USER, assistant, tool], 1)
    data = message_to_dict(tool)
    assert data["images"] == [{"mime": "image/png", "data": PNG}]
    back = deserialize_conversation(serialize_conversation(conv))
    assert back.messages == conv.messages
    # a call that carries images (an event's call, persisted by someone) round-trips too
    with_images = ToolCall("c2", "shot", "{}", "r", False, "done", [{"mime": "image/jpeg", "data": JPEG}])
    msg = ChatMessage("t2", "tool", "r", 6, tool_calls=[with_images])
    encoded = message_to_dict(msg)
    assert encoded["toolCalls"][0]["images"] == [{"mime": "image/jpeg", "data": JPEG}]
    assert message_from_dict(encoded) == msg


@pytest.mark.parametrize(
    "images",
    [
        {"mime": "image/png"},
        ["not an object"],
        [{"mime": 1, "data": PNG}],
        [{"mime": "image/png", "data": None}],
    ],
)
def test_the_codec_rejects_malformed_call_images(images: Any) -> None:
    data = {"id": "t", "role": "tool", "content": "", "ts": 0,
            "toolCalls": [{"id": "c", "name": "n", "argsJson": "{}", "result": "r", "images": images}]}
    with pytest.raises(TypeError, match="images"):
        message_from_dict(data, 3)


def test_the_history_cap_counts_image_bytes() -> None:
    big_png = base64.b64encode(bytes(60_000)).decode()  # 80 KB of base64
    history: list[ChatMessage] = []
    for n in range(3):
        call = ToolCall(f"c{n}", "shot", "{}", "[image]", False, "done")
        history += [
            ChatMessage(f"u{n}", "user", "shot please", n),
            ChatMessage(f"a{n}", "assistant", "", n, tool_calls=[call]),
            ChatMessage(f"t{n}", "tool", "[image]", n, tool_calls=[call.copy()],
                        extra={TOOL_IMAGES_KEY: [{"mime": "image/png", "data": big_png}]}),
        ]
    kept, dropped = split_for_cap(history, 200 * 1024)
    assert [m.id for m in dropped] == ["u0", "a0", "t0"]  # 3 x 80 KB of images: over 200 KB
    assert [m.id for m in kept] == ["u1", "a1", "t1", "u2", "a2", "t2"]
    # the measured size of a message with images (on the tool message or a call) is its real encoded size
    call = ToolCall("c9", "shot", "{}", "r", False, "done", [{"mime": "image/png", "data": big_png}])
    for msg in (history[2], ChatMessage("t9", "tool", "r", 9, tool_calls=[call])):
        assert _message_size(msg) == len(json.dumps(message_to_dict(msg), separators=(",", ":")).encode())
