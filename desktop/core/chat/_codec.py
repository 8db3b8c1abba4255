"""Persistence of conversations (format v2; v1 loads): message and conversation codecs.

Private module of :mod:`desktop.core.chat.conversation` (import the public names from there).
Encoding never fails on text that is not valid Unicode: a lone UTF-16 surrogate (which the UTF-8
codec refuses) is written as U+FFFD.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, cast

from ._appliers import Conversation, is_valid_role, new_id, now_ms
from ._quoted import BIG, quoted, repair_surrogates
from .types import ROLES, TOOL_STATUSES, ChatMessage, Role, ToolCall, Usage

__all__ = [
    "FORMAT_VERSION",
    "message_to_dict",
    "message_from_dict",
    "conversation_to_json",
    "conversation_from_dict",
    "deserialize_conversation",
    "repair_surrogates",
]

FORMAT_VERSION = 2

_JSON = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


_KNOWN_MESSAGE_KEYS = frozenset(
    {"id", "role", "content", "ts", "model", "thinking", "thinkingBlocks", "toolCalls", "usage", "stopped"}
)


def _usage_to_dict(usage: Usage) -> dict[str, int]:
    return {
        "inputTokens": usage.input_tokens,
        "outputTokens": usage.output_tokens,
        "cacheReadTokens": usage.cache_read_tokens,
        "cacheWriteTokens": usage.cache_write_tokens,
        "reasoningTokens": usage.reasoning_tokens,
    }


def _call_to_dict(call: ToolCall) -> dict[str, Any]:
    out: dict[str, Any] = {"id": call.id, "name": call.name, "argsJson": call.args_json}
    if call.result is not None:
        out["result"] = call.result
    out["isError"] = call.is_error
    out["status"] = call.status
    if call.images is not None:
        out["images"] = [dict(image) for image in call.images]
    return out


def message_to_dict(msg: ChatMessage) -> dict[str, Any]:
    """Return the persisted (camelCase, ``None`` fields omitted) form of a message.

    Unknown fields kept in ``msg.extra`` are written back verbatim (they never override a known
    field). The result is what format v2 and the project's ``.jsonl`` history archive store.
    """
    out: dict[str, Any] = {"id": msg.id, "role": msg.role, "content": msg.content, "ts": msg.ts}
    if msg.model is not None:
        out["model"] = msg.model
    if msg.thinking is not None:
        out["thinking"] = msg.thinking
    if msg.thinking_blocks is not None:
        out["thinkingBlocks"] = msg.thinking_blocks
    if msg.tool_calls is not None:
        out["toolCalls"] = [_call_to_dict(c) for c in msg.tool_calls]
    if msg.usage is not None:
        out["usage"] = _usage_to_dict(msg.usage)
    out["stopped"] = msg.stopped
    if msg.extra:
        for key, value in msg.extra.items():
            if key not in out and key not in _KNOWN_MESSAGE_KEYS:
                out[key] = value
    return out


def _type_name(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _as_int(value: object) -> int | None:
    """``value`` as an int when it is an integer (an integral float counts), else None."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    return None


def _where(index: int | None) -> str:
    return f"message {index}" if index is not None else "message"


def _usage_from_dict(value: object, where: str) -> Usage:
    if not isinstance(value, dict):
        raise TypeError(f"{where}: 'usage' must be an object, got {_type_name(value)}")
    counts: dict[str, int] = {}
    for key, attr, required in (
        ("inputTokens", "input_tokens", True),
        ("outputTokens", "output_tokens", True),
        ("cacheReadTokens", "cache_read_tokens", False),
        ("cacheWriteTokens", "cache_write_tokens", False),
        ("reasoningTokens", "reasoning_tokens", False),
    ):
        raw = value.get(key)
        if raw is None:
            if required:
                raise TypeError(f"{where}: 'usage.{key}' is missing")
            continue
        number = _as_int(raw)
        if number is None or number < 0:
            raise TypeError(f"{where}: 'usage.{key}' must be a non-negative integer, got {raw!r}")
        counts[attr] = number
    return Usage(**counts)


def _call_from_dict(value: object, where: str) -> ToolCall:
    if not isinstance(value, dict):
        raise TypeError(f"{where} must be an object, got {_type_name(value)}")
    for key in ("id", "name", "argsJson"):
        if not isinstance(value.get(key), str):
            raise TypeError(f"{where}: '{key}' must be a string, got {_type_name(value.get(key))}")
    result = value.get("result")
    if result is not None and not isinstance(result, str):
        raise TypeError(f"{where}: 'result' must be a string or null, got {_type_name(result)}")
    is_error = value.get("isError", False)
    if not isinstance(is_error, bool):
        raise TypeError(f"{where}: 'isError' must be a boolean, got {_type_name(is_error)}")
    status = value.get("status", "done" if result is not None else "running")
    if status not in TOOL_STATUSES:
        raise TypeError(f"{where}: 'status' must be one of {sorted(TOOL_STATUSES)}, got {status!r}")
    raw_images = value.get("images")
    images: list[dict[str, str]] | None = None
    if raw_images is not None:
        if not isinstance(raw_images, list):
            raise TypeError(f"{where}: 'images' must be an array, got {_type_name(raw_images)}")
        images = []
        for j, image in enumerate(raw_images):
            if not (isinstance(image, dict) and isinstance(image.get("mime"), str)
                    and isinstance(image.get("data"), str)):
                raise TypeError(f"{where}: 'images[{j}]' must be an object with string 'mime' and 'data'")
            images.append({"mime": image["mime"], "data": image["data"]})
    return ToolCall(value["id"], value["name"], value["argsJson"], result, is_error, status, images)


def message_from_dict(data: object, index: int | None = None) -> ChatMessage:
    """Build a message from its persisted form (v1 or v2), validating every field.

    Unknown keys go to ``extra`` so they round-trip.

    Args:
        data: The decoded JSON object.
        index: The message's position, used in error messages.

    Raises:
        TypeError: A field is missing or has the wrong shape; the message names the field and index.
    """
    where = _where(index)
    if not isinstance(data, dict):
        raise TypeError(f"{where} must be an object, got {_type_name(data)}")
    msg_id = data.get("id")
    if not isinstance(msg_id, str) or not msg_id:
        raise TypeError(f"{where}: 'id' must be a non-empty string, got {msg_id!r}")
    raw_role = data.get("role")
    if not is_valid_role(raw_role):
        raise TypeError(f"{where}: 'role' must be one of {sorted(ROLES)}, got {raw_role!r}")
    role = cast(Role, raw_role)
    content = data.get("content")
    if not isinstance(content, str):
        raise TypeError(f"{where}: 'content' must be a string, got {_type_name(content)}")
    ts = _as_int(data.get("ts"))
    if ts is None:
        raise TypeError(f"{where}: 'ts' must be an integer (epoch milliseconds), got {data.get('ts')!r}")
    model = data.get("model")
    if model is not None and not isinstance(model, str):
        raise TypeError(f"{where}: 'model' must be a string or null, got {_type_name(model)}")
    thinking = data.get("thinking")
    if thinking is not None and not isinstance(thinking, str):
        raise TypeError(f"{where}: 'thinking' must be a string or null, got {_type_name(thinking)}")
    blocks = data.get("thinkingBlocks")
    if blocks is not None:
        if not isinstance(blocks, list):
            raise TypeError(f"{where}: 'thinkingBlocks' must be an array, got {_type_name(blocks)}")
        for j, block in enumerate(blocks):
            if not isinstance(block, dict) or not isinstance(block.get("type"), str):
                raise TypeError(f"{where}: 'thinkingBlocks[{j}]' must be an object with a string 'type'")
    raw_calls = data.get("toolCalls")
    calls: list[ToolCall] | None = None
    if raw_calls is not None:
        if not isinstance(raw_calls, list):
            raise TypeError(f"{where}: 'toolCalls' must be an array, got {_type_name(raw_calls)}")
        calls = [_call_from_dict(c, f"{where}: 'toolCalls[{j}]'") for j, c in enumerate(raw_calls)]
    raw_usage = data.get("usage")
    usage = _usage_from_dict(raw_usage, where) if raw_usage is not None else None
    stopped = data.get("stopped", False)
    if stopped is None:
        stopped = False
    if not isinstance(stopped, bool):
        raise TypeError(f"{where}: 'stopped' must be a boolean, got {_type_name(stopped)}")
    extra = {k: v for k, v in data.items() if k not in _KNOWN_MESSAGE_KEYS}
    return ChatMessage(
        id=msg_id,
        role=role,
        content=content,
        ts=ts,
        thinking=thinking,
        thinking_blocks=[dict(b) for b in blocks] if blocks is not None else None,
        tool_calls=calls,
        usage=usage,
        model=model,
        stopped=stopped,
        extra=extra,
    )


def conversation_to_json(conv: Conversation) -> str:
    """The v2 JSON text of ``conv`` with every message, for callers that applied the cap already
    (the project store trims and archives first, so measuring again would only cost time).

    Lone surrogates in any string are written as U+FFFD, so the text always encodes as UTF-8.
    """
    return _encode_conversation(conv, conv.messages)


def _encode_conversation(conv: Conversation, messages: Sequence[ChatMessage]) -> str:
    head = _JSON.encode({"v": FORMAT_VERSION, "id": conv.id, "createdAt": conv.created_at})
    body = ",".join(message_json(m) for m in messages)
    return f'{repair_surrogates(head[:-1])},"messages":[{body}]}}'


def message_json(msg: ChatMessage) -> str:
    """``message_to_dict(msg)`` as compact JSON (non-ASCII kept, lone surrogates as U+FFFD).

    The literals of long texts (an answer, its thinking) come from ``_quoted``'s cache: the same
    text is escaped once, not again by every save (see that module); the small members around them
    are encoded together, in order.
    """
    parts: list[str] = []
    small: dict[str, Any] = {}
    for key, value in message_to_dict(msg).items():
        if isinstance(value, str) and len(value) >= BIG:
            if small:
                parts.append(repair_surrogates(_JSON.encode(small)[1:-1]))
                small = {}
            parts.append(f"{quoted(key)}:{quoted(value, (msg.id, key))}")
        else:
            small[key] = value
    if small:
        parts.append(repair_surrogates(_JSON.encode(small)[1:-1]))
    return "{" + ",".join(parts) + "}"


def deserialize_conversation(text: str | bytes) -> Conversation:
    """Load a conversation written by ``serialize_conversation`` (v2) or by the original app (v1).

    v1 (``{"v": 1, "messages": [...]}``) gets a fresh id and ``createdAt``.

    Raises:
        TypeError: Invalid JSON, not an object, a missing or unknown ``v``, ``messages`` not an
            array, or a malformed message (the message names the field and the message index).
    """
    try:
        data = json.loads(text)
    except (ValueError, UnicodeDecodeError) as err:
        raise TypeError(f"conversation is not valid JSON: {err}") from None
    return conversation_from_dict(data)


def conversation_from_dict(obj: object) -> Conversation:
    """Build a conversation from its decoded JSON form (what ``json.loads`` of the v1/v2 text gives).

    The dict-level twin of ``deserialize_conversation``, for callers that parsed a larger document
    (the project store) and must not encode a part of it again only to parse it once more.

    Raises:
        TypeError: Not an object, a missing or unknown ``v``, ``messages`` not an array, or a
            malformed message (the message names the field and the message index).
    """
    data = obj
    if not isinstance(data, dict):
        raise TypeError(f"conversation must be a JSON object, got {_type_name(data)}")
    version = data.get("v")
    if "v" not in data:
        raise TypeError("conversation has no version field 'v'")
    if not _is_int(version) or version not in (1, 2):
        raise TypeError(f"unknown conversation format version v={version!r} (supported: 1, 2)")
    raw_messages = data.get("messages")
    if not isinstance(raw_messages, list):
        raise TypeError(f"conversation 'messages' must be an array, got {_type_name(raw_messages)}")
    messages = [message_from_dict(m, i) for i, m in enumerate(raw_messages)]
    if version == 1:
        return Conversation(id=new_id("c"), messages=messages, created_at=now_ms())
    conv_id = data.get("id")
    if not isinstance(conv_id, str) or not conv_id:
        raise TypeError(f"conversation 'id' must be a non-empty string, got {conv_id!r}")
    created_at = _as_int(data.get("createdAt"))
    if created_at is None:
        raise TypeError(f"conversation 'createdAt' must be an integer, got {data.get('createdAt')!r}")
    return Conversation(id=conv_id, messages=messages, created_at=created_at)
