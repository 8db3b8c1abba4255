"""The streaming appliers: the one place that turns chat events into messages.

Private module of :mod:`desktop.core.chat.conversation` (import the public names from there).
``apply_event`` is the one function that turns stream events into messages; the chat loop applies
every event it broadcasts with it, so a UI that applies the same events, in order, to the messages
it sent ends with exactly the loop's messages.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field

from .types import (
    ROLES,
    TOOL_IMAGES_KEY,
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

__all__ = [
    "Conversation",
    "new_id",
    "now_ms",
    "create_conversation",
    "is_valid_role",
    "find_message",
    "append_message",
    "append_note",
    "append_delta",
    "append_thinking",
    "set_usage",
    "mark_stopped",
    "apply_event",
]


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
    """Copy ``source``'s outcome onto the assistant's copy ``target`` (images stay with the tool message)."""
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
    stored = call.copy()
    stored.images = None  # kept once, in extra (the persisted "images" key of the tool message)
    tool_msg.tool_calls = [stored]
    if call.images:
        tool_msg.extra[TOOL_IMAGES_KEY] = [dict(image) for image in call.images]
    else:
        tool_msg.extra.pop(TOOL_IMAGES_KEY, None)


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
      ``tool`` message ``event.message_id`` holding the result and a copy of the call; the call's
      images go to the tool message's ``extra["images"]`` (and nowhere else, so they count once).
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
