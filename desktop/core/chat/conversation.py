"""One chat session's message list: streaming appliers, slash commands, persistence and the history cap.

Everything here is pure Python with no I/O. ``apply_event`` is the one function that turns stream
events into messages; the chat loop applies every event it broadcasts with it, so a UI that applies
the same events, in order, to the messages it sent ends with exactly the loop's messages.
"""

from __future__ import annotations

import json
import json.encoder
import logging
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias, cast, get_args

from .types import (
    ROLES,
    TOOL_STATUSES,
    ChatEvent,
    ChatMessage,
    Delta,
    Done,
    Notice,
    Role,
    Thinking,
    ToolCall,
    ToolCallFinished,
    ToolCallRequested,
    Usage,
    UsageReport,
)

log = logging.getLogger(__name__)

__all__ = [
    "Conversation",
    "SlashCommand",
    "SlashCommandName",
    "SLASH_COMMANDS",
    "DEFAULT_MAX_BYTES",
    "FORMAT_VERSION",
    "new_id",
    "now_ms",
    "create_conversation",
    "append_message",
    "append_delta",
    "append_thinking",
    "set_usage",
    "mark_stopped",
    "append_note",
    "apply_event",
    "find_message",
    "is_valid_role",
    "detect_slash_command",
    "message_to_dict",
    "message_from_dict",
    "serialize_conversation",
    "conversation_to_json",
    "deserialize_conversation",
    "split_for_cap",
    "cap_conversation_messages",
]

SlashCommandName: TypeAlias = Literal["clear", "model", "system", "cost", "help"]
SLASH_COMMANDS: frozenset[str] = frozenset(get_args(SlashCommandName))
DEFAULT_MAX_BYTES = 200 * 1024
FORMAT_VERSION = 2

_JSON = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def new_id(prefix: str = "m") -> str:
    """Return a fresh, practically unique id such as ``m-3f2a9c0d1e4b5a6c``."""
    return f"{prefix}-{uuid.uuid4().hex[:16]}"


def now_ms() -> int:
    """Current time in epoch milliseconds."""
    return time.time_ns() // 1_000_000


@dataclass(slots=True)
class Conversation:
    """One chat session.

    Attributes:
        id: Stable conversation id (persisted by format v2).
        messages: The messages, oldest first. Appliers mutate this list and its messages in place.
        created_at: Creation time, epoch milliseconds.
    """

    id: str
    messages: list[ChatMessage] = field(default_factory=list)
    created_at: int = 0


@dataclass(frozen=True, slots=True)
class SlashCommand:
    """A detected slash command; ``arg`` is the rest of the line, stripped (``""`` when missing)."""

    name: SlashCommandName
    arg: str = ""


def create_conversation() -> Conversation:
    """Return a new, empty conversation with a fresh id and the current time."""
    return Conversation(id=new_id("c"), messages=[], created_at=now_ms())


def is_valid_role(role: object) -> bool:
    """True when ``role`` is one of user, assistant, system, tool, note."""
    return isinstance(role, str) and role in ROLES


# ---------------------------------------------------------------------------------------------
# Appliers


def find_message(conv: Conversation, message_id: str) -> ChatMessage | None:
    """Return the message with ``message_id``, or None.

    The newest message is checked first, so the streaming case (events for the message being
    written) costs O(1); otherwise the list is scanned from the end.
    """
    messages = conv.messages
    if messages:
        last = messages[-1]
        if last.id == message_id:
            return last
        for i in range(len(messages) - 2, -1, -1):
            msg = messages[i]
            if msg.id == message_id:
                return msg
    return None


def _ensure_assistant(conv: Conversation, message_id: str) -> ChatMessage:
    """Return the message ``message_id``, creating a placeholder assistant message when unknown.

    An empty ``message_id`` (an event no loop has stamped) means "the message being written": the
    newest message when it is an assistant message, else a new placeholder with a fresh id.
    """
    messages = conv.messages
    if messages:
        last = messages[-1]
        if last.id == message_id or (not message_id and last.role == "assistant"):
            return last
    if message_id:
        msg = find_message(conv, message_id)
        if msg is not None:
            return msg
    msg = ChatMessage(id=message_id or new_id(), role="assistant", content="", ts=now_ms())
    messages.append(msg)
    return msg


def append_message(
    conv: Conversation, role: Role, content: str, *, message_id: str | None = None
) -> ChatMessage:
    """Append a fully formed message and return it.

    Args:
        conv: The conversation.
        role: One of user, assistant, system, tool, note.
        content: The text.
        message_id: The id to use; a fresh one when omitted.

    Raises:
        ValueError: ``role`` is not a valid role.
    """
    if not is_valid_role(role):
        raise ValueError(f"invalid role {role!r}: expected one of {sorted(ROLES)}")
    msg = ChatMessage(id=message_id or new_id(), role=role, content=content, ts=now_ms())
    conv.messages.append(msg)
    return msg


def append_note(conv: Conversation, text: str, *, message_id: str | None = None) -> ChatMessage:
    """Append a local ``note`` (persisted, shown, never sent to a provider) and return it."""
    return append_message(conv, "note", text, message_id=message_id)


def append_delta(conv: Conversation, message_id: str, text: str) -> ChatMessage:
    """Append streamed text to the assistant message ``message_id`` (created when unknown)."""
    msg = _ensure_assistant(conv, message_id)
    msg.content = _grow(msg, "content", text)
    return msg


def _grow(msg: ChatMessage, field: str, text: str) -> str:
    """``getattr(msg, field) + text``, in amortised O(len(text)) when nobody else holds the string.

    ``msg.content += text`` copies the whole message on every delta (the attribute keeps a reference,
    so CPython cannot grow the string in place): 100k tokens into a 400 KB answer cost ~5 s. Taking
    the string out of the message first leaves the local variable as its only owner, and CPython's
    in-place concatenation then usually just extends the buffer (~30 ms for the same answer).
    """
    current: str = getattr(msg, field) or ""
    setattr(msg, field, "")
    current += text
    return current


def append_thinking(
    conv: Conversation,
    message_id: str,
    text: str,
    signature: str | None = None,
    redacted_data: str | None = None,
) -> ChatMessage:
    """Append reasoning to the assistant message ``message_id`` (created when unknown).

    ``thinking`` collects the readable text. ``thinking_blocks`` keeps the provider's blocks in
    order: consecutive text extends the open ``{"type": "thinking", "thinking", "signature"}``
    block (open = no signature yet), a ``signature`` closes it, and ``redacted_data`` appends a
    ``{"type": "redacted_thinking", "data"}`` block.
    """
    msg = _ensure_assistant(conv, message_id)
    blocks = msg.thinking_blocks
    if text or signature is not None:
        if text:
            msg.thinking = _grow(msg, "thinking", text)
        if blocks is None:
            blocks = msg.thinking_blocks = []
        last = blocks[-1] if blocks else None
        if last is not None and last.get("type") == "thinking" and last.get("signature") is None:
            if text:
                last["thinking"] = str(last.get("thinking") or "") + text
            if signature is not None:
                last["signature"] = signature
        else:
            blocks.append({"type": "thinking", "thinking": text, "signature": signature})
    if redacted_data is not None:
        if blocks is None:
            blocks = msg.thinking_blocks = []
        blocks.append({"type": "redacted_thinking", "data": redacted_data})
    return msg


def set_usage(conv: Conversation, message_id: str, usage: Usage, model: str | None = None) -> ChatMessage:
    """Stamp ``usage`` (and ``model`` when given) on the assistant message ``message_id``."""
    msg = _ensure_assistant(conv, message_id)
    msg.usage = usage
    if model:
        msg.model = model
    return msg


def mark_stopped(conv: Conversation, message_id: str) -> ChatMessage:
    """Mark the message ``message_id`` as cut short (created as a placeholder when unknown)."""
    msg = _ensure_assistant(conv, message_id)
    msg.stopped = True
    return msg


def _find_call(conv: Conversation, call_id: str, first: ChatMessage | None) -> ToolCall | None:
    """Find the assistant's copy of call ``call_id``: in ``first``, then anywhere, newest first."""
    if first is not None and first.tool_calls:
        for call in first.tool_calls:
            if call.id == call_id:
                return call
    for i in range(len(conv.messages) - 1, -1, -1):
        msg = conv.messages[i]
        if msg is first or msg.role != "assistant" or not msg.tool_calls:
            continue
        for call in msg.tool_calls:
            if call.id == call_id:
                return call
    return None


def _update_call(target: ToolCall, source: ToolCall) -> None:
    target.name = source.name
    target.args_json = source.args_json
    target.result = source.result
    target.is_error = source.is_error
    target.status = source.status


def _apply_tool_requested(conv: Conversation, event: ToolCallRequested) -> None:
    target = find_message(conv, event.message_id) if event.message_id else None
    existing = _find_call(conv, event.call.id, target)
    if existing is not None:
        _update_call(existing, event.call)
        return
    msg = target if target is not None else _ensure_assistant(conv, event.message_id)
    if msg.tool_calls is None:
        msg.tool_calls = []
    msg.tool_calls.append(event.call.copy())


def _apply_tool_finished(conv: Conversation, event: ToolCallFinished) -> None:
    call = event.call
    existing = _find_call(conv, call.id, None)
    if existing is not None:
        _update_call(existing, call)
    content = call.result if call.result is not None else ""
    tool_msg = find_message(conv, event.message_id) if event.message_id else None
    if tool_msg is None:
        tool_msg = append_message(conv, "tool", content, message_id=event.message_id or None)
    else:
        tool_msg.content = content
    tool_msg.tool_calls = [call.copy()]


def _apply_notice(conv: Conversation, event: Notice) -> None:
    note = find_message(conv, event.message_id) if event.message_id else None
    if note is None:
        append_note(conv, event.text, message_id=event.message_id or None)
    else:
        note.content = event.text


def apply_event(conv: Conversation, event: ChatEvent) -> None:
    """Apply one stream event to the conversation (the one applier the UI calls).

    - ``Delta``, ``Thinking``, ``UsageReport``: grow the assistant message ``event.message_id``
      (a placeholder assistant message is created for an unknown id).
    - ``ToolCallRequested``: upsert the call by call id across the whole conversation; a new call
      goes onto the assistant message ``event.message_id``.
    - ``ToolCallFinished``: update the assistant's copy of the call by id and add (or update) the
      ``tool`` message ``event.message_id`` holding the result and a copy of the call.
    - ``Notice``: add (or update) the ``note`` message ``event.message_id``.
    - ``Done("stopped" | "error")``: mark ``event.message_id`` stopped when it is not empty.

    Upserts make re-applying ``ToolCallRequested``, ``ToolCallFinished`` and ``Notice`` harmless.
    Events never share mutable objects with the conversation (calls are copied).
    """
    if isinstance(event, Delta):
        append_delta(conv, event.message_id, event.text)
    elif isinstance(event, Thinking):
        append_thinking(conv, event.message_id, event.text, event.signature, event.redacted_data)
    elif isinstance(event, UsageReport):
        set_usage(conv, event.message_id, event.usage, event.model)
    elif isinstance(event, ToolCallRequested):
        _apply_tool_requested(conv, event)
    elif isinstance(event, ToolCallFinished):
        _apply_tool_finished(conv, event)
    elif isinstance(event, Notice):
        _apply_notice(conv, event)
    elif isinstance(event, Done):
        if event.reason in ("stopped", "error") and event.message_id:
            mark_stopped(conv, event.message_id)
    else:  # pragma: no cover - the union is closed; keep a clear failure for a foreign object
        raise TypeError(f"not a chat event: {type(event).__name__}")


# ---------------------------------------------------------------------------------------------
# Slash commands


def detect_slash_command(text: str) -> SlashCommand | None:
    """Detect ``/clear``, ``/model ID``, ``/system TEXT``, ``/cost`` or ``/help``.

    Surrounding whitespace is ignored and the command word is case-insensitive. ``arg`` is the
    rest of the text, stripped, ``""`` when missing (a bare ``/model`` is the command; the caller
    shows its usage). No leading slash or an unknown word returns None. Only detects.
    """
    stripped = text.strip()
    if not stripped.startswith("/"):
        return None
    body = stripped[1:]
    parts = body.split(maxsplit=1)
    if not parts or body[0].isspace():  # "/" alone, or "/ clear"
        return None
    word = parts[0].lower()
    if word not in SLASH_COMMANDS:
        return None
    arg = parts[1].strip() if len(parts) > 1 else ""
    return SlashCommand(name=cast(SlashCommandName, word), arg=arg)


# ---------------------------------------------------------------------------------------------
# Persistence (format v2; v1 loads)

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
    return ToolCall(value["id"], value["name"], value["argsJson"], result, is_error, status)


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


def _encoded_size(text: str) -> int:
    """UTF-8 byte length of ``text`` (no copy for ASCII text; lone surrogates count 3 bytes)."""
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


_quote = json.encoder.encode_basestring  # the C escaper when available: ensure_ascii=False rules


def _str_size(text: str) -> int:
    """Bytes of ``text`` as a JSON string literal (quotes and escapes included)."""
    return _encoded_size(_quote(text))


# Bytes of the fixed parts of a message object: '{"id":,"role":,"content":,"ts":,"stopped":}'.
_MSG_FIXED = len('{"id":,"role":,"content":,"ts":,"stopped":}')
_KEY_SIZES = {key: len(key) + 4 for key in _KNOWN_MESSAGE_KEYS}  # ',"key":'
_USAGE_FIXED = len(
    '{"inputTokens":,"outputTokens":,"cacheReadTokens":,"cacheWriteTokens":,"reasoningTokens":}'
)


_ROLE_SIZES = {role: len(role) + 2 for role in ROLES}
_small_str_sizes: dict[str, int] = {}  # ids repeat little, models a lot: cache model-sized strings


def _cached_str_size(text: str) -> int:
    size = _small_str_sizes.get(text)
    if size is None:
        size = _str_size(text)
        if len(_small_str_sizes) < 4096:
            _small_str_sizes[text] = size
    return size


def _message_size(msg: ChatMessage) -> int:
    """UTF-8 size of ``_JSON.encode(message_to_dict(msg))``, computed without building the text.

    The common fields are measured directly (one C escape per string); nested structures, which
    are rare, are encoded. A property test pins the equality with the real encoding.
    """
    quoted = _quote(msg.content)
    size = (
        _MSG_FIXED
        + _str_size(msg.id)
        + _ROLE_SIZES[msg.role]
        + (len(quoted) if quoted.isascii() else len(quoted.encode("utf-8", "surrogatepass")))
        + len(str(msg.ts))
        + (4 if msg.stopped else 5)
    )
    if msg.model is not None:
        size += _KEY_SIZES["model"] + _cached_str_size(msg.model)
    if msg.thinking is not None:
        size += _KEY_SIZES["thinking"] + _str_size(msg.thinking)
    if msg.thinking_blocks is not None:
        size += _KEY_SIZES["thinkingBlocks"] + _encoded_size(_JSON.encode(msg.thinking_blocks))
    if msg.tool_calls is not None:
        size += _KEY_SIZES["toolCalls"] + _encoded_size(
            _JSON.encode([_call_to_dict(c) for c in msg.tool_calls])
        )
    usage = msg.usage
    if usage is not None:
        size += (
            _KEY_SIZES["usage"]
            + _USAGE_FIXED
            + len(str(usage.input_tokens))
            + len(str(usage.output_tokens))
            + len(str(usage.cache_read_tokens))
            + len(str(usage.cache_write_tokens))
            + len(str(usage.reasoning_tokens))
        )
    if msg.extra:
        for key, value in msg.extra.items():
            if key not in _KNOWN_MESSAGE_KEYS:
                size += 2 + _str_size(key) + _encoded_size(_JSON.encode(value))
    return size


def _split_indices(messages: Sequence[ChatMessage], sizes: Sequence[int], max_bytes: int) -> tuple[int, int]:
    """Return ``(cut, first_user)``: what survives the cap.

    The kept set is the system messages before ``first_user`` plus every message from ``cut`` on;
    ``cut == 0`` keeps everything. Dropping happens in whole units: first the non-system messages
    before the first user message, then whole exchanges (a user message up to the next user
    message), oldest first; the newest exchange is never dropped. Linear in the number of messages.
    """
    count = len(messages)
    total = sum(sizes) + max(count - 1, 0) + 2
    if total <= max_bytes:
        return 0, 0
    user_starts = [i for i, m in enumerate(messages) if m.role == "user"]
    if not user_starts:
        return 0, 0
    first_user = user_starts[0]
    # Unit 0: the non-system messages before the first user message.
    preamble = [i for i in range(first_user) if messages[i].role != "system"]
    cut = first_user
    if preamble:
        total -= sum(sizes[i] for i in preamble) + len(preamble)
        if total <= max_bytes:
            return cut, first_user
    # Then whole exchanges, oldest first, never the newest one.
    for n in range(len(user_starts) - 1):
        start, end = user_starts[n], user_starts[n + 1]
        total -= sum(sizes[start:end]) + (end - start)
        cut = end
        if total <= max_bytes:
            break
    return cut, first_user


def _split(messages: Sequence[ChatMessage], max_bytes: int) -> tuple[list[ChatMessage], list[ChatMessage]]:
    """Split with each message measured once: (kept, dropped)."""
    sizes = [_message_size(m) for m in messages]
    cut, first_user = _split_indices(messages, sizes, max_bytes)
    if cut == 0:
        return list(messages), []
    head = [i for i in range(first_user) if messages[i].role == "system"]
    head_set = set(head)
    kept = [messages[i] for i in head]
    kept.extend(messages[cut:])
    dropped = [messages[i] for i in range(cut) if i not in head_set]
    return kept, dropped


def split_for_cap(
    messages: Sequence[ChatMessage], max_bytes: int = DEFAULT_MAX_BYTES
) -> tuple[list[ChatMessage], list[ChatMessage]]:
    """Split ``messages`` into (kept, dropped) so the kept ones fit ``max_bytes``.

    The size is the UTF-8 byte length of the compact JSON (``separators=(",", ":")``,
    ``ensure_ascii=False``) of the serialized messages array. Each message is measured once, so
    the cost is linear. Whole oldest exchanges are dropped (a user message and everything up to
    the next user message), after the non-system messages before the first user message; system
    messages before the first user message and the newest exchange are always kept, so the kept
    part may still exceed the budget. A conversation with no user message is returned whole.
    Both lists keep the original order.
    """
    return _split(messages, max_bytes)


def cap_conversation_messages(
    messages: Sequence[ChatMessage], max_bytes: int = DEFAULT_MAX_BYTES
) -> list[ChatMessage]:
    """Return the messages that survive the history cap (see ``split_for_cap``)."""
    return split_for_cap(messages, max_bytes)[0]


def serialize_conversation(conv: Conversation, max_bytes: int = DEFAULT_MAX_BYTES) -> str:
    """Return the v2 JSON text of ``conv`` with its messages capped to ``max_bytes``.

    ``{"v": 2, "id", "createdAt", "messages": [...]}``, compact, non-ASCII kept as UTF-8,
    ``None`` fields omitted, unknown message fields written back verbatim.
    """
    kept, _ = _split(conv.messages, max_bytes)
    return _encode_conversation(conv, kept)


def conversation_to_json(conv: Conversation) -> str:
    """The v2 JSON text of ``conv`` with every message, for callers that applied the cap already
    (the project store trims and archives first, so measuring again would only cost time)."""
    return _encode_conversation(conv, conv.messages)


def _encode_conversation(conv: Conversation, messages: Sequence[ChatMessage]) -> str:
    return _JSON.encode(
        {
            "v": FORMAT_VERSION,
            "id": conv.id,
            "createdAt": conv.created_at,
            "messages": [message_to_dict(m) for m in messages],
        }
    )


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
