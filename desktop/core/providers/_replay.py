"""Make a conversation safe to replay: every tool call answered, right after the turn that made it.

Both APIs reject a history in which an assistant tool call has no result (OpenAI: "must be followed
by tool messages"; Anthropic: "tool_use ids were found without tool_result blocks"). A saved
conversation can hold such a call: the app was closed, the project switched or the process killed
while a call waited for approval or ran. Rather than leave that node unable to send, the request
builders replay such a call with a result saying it was not run. The conversation itself is not
changed: this is the wire view only.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from desktop.core.chat.types import (
    MAX_TOOL_IMAGE_BYTES,
    MAX_TOOL_IMAGES,
    TOOL_IMAGES_KEY,
    ChatMessage,
    ToolCall,
)

log = logging.getLogger(__name__)

__all__ = ["INTERRUPTED_RESULT", "answered_history", "tool_result_images"]

#: Longest base64 text of an image within ``MAX_TOOL_IMAGE_BYTES`` (padding included).
_MAX_IMAGE_B64 = (MAX_TOOL_IMAGE_BYTES + 2) // 3 * 4


def tool_result_images(message: ChatMessage, mimes: frozenset[str]) -> list[tuple[str, str]]:
    """The result images of a ``tool`` message a provider may get, as ``(mime, base64)`` pairs.

    ``extra["images"]`` comes from a saved file, so it is read as untrusted: an entry that is not an
    object with string ``mime`` and ``data``, whose mime is not in ``mimes``, or whose data is over
    ``MAX_TOOL_IMAGE_BYTES``, is left out (the result text describes every image anyway), and at
    most ``MAX_TOOL_IMAGES`` are returned.
    """
    raw = message.extra.get(TOOL_IMAGES_KEY) if message.extra else None
    if not isinstance(raw, list):
        return []
    out: list[tuple[str, str]] = []
    for image in raw:
        mime = image.get("mime") if isinstance(image, dict) else None
        data = image.get("data") if isinstance(image, dict) else None
        if not (isinstance(mime, str) and isinstance(data, str) and data) or len(out) >= MAX_TOOL_IMAGES:
            log.info("tool message %s: an image was left out (malformed or too many)", message.id)
            continue
        if mime.lower() not in mimes or len(data) > _MAX_IMAGE_B64:
            log.info("tool message %s: a %s image of %d base64 chars is only described", message.id,
                     mime[:100], len(data))
            continue
        out.append((mime.lower(), data))
    return out

INTERRUPTED_RESULT = "not run: the app was interrupted before this call finished"


def answered_history(messages: Sequence[ChatMessage]) -> list[ChatMessage]:
    """Return ``messages`` with every assistant tool call followed by exactly one ``tool`` result.

    Results already present right after the assistant message are kept in place; a missing one is
    synthesised from the assistant's copy of the call (its result when it has one, else
    ``INTERRUPTED_RESULT`` as an error). A ``tool`` message whose call no preceding assistant
    message made (or that answers a call twice) is left out. The common case, a well-formed history,
    costs one pass and returns equal content.
    """
    out: list[ChatMessage] = []
    open_calls: dict[str, ToolCall] = {}  # calls of the latest assistant turn still without a result

    def close_open_calls(ts: int) -> None:
        for call in open_calls.values():
            result = call.result if call.result is not None and call.status in ("done", "error", "denied",
                                                                                "skipped") else None
            is_error = call.is_error if result is not None else True
            content = result if result is not None else INTERRUPTED_RESULT
            done = ToolCall(call.id, call.name, call.args_json, content, is_error,
                            call.status if result is not None else "skipped")
            out.append(ChatMessage(id=f"replay-{call.id}", role="tool", content=content, ts=ts,
                                   tool_calls=[done]))
            log.info("replaying tool call %s (%s) without a saved result", call.id, call.name)
        open_calls.clear()

    for m in messages:
        if m.role == "tool":
            call = m.tool_calls[0] if m.tool_calls else None
            if call is None or call.id not in open_calls:
                log.warning("tool message %s answers no open call; not sent", m.id)
                continue
            del open_calls[call.id]
            out.append(m)
            continue
        if m.role == "note":
            out.append(m)  # never sent, and it must not close the open calls
            continue
        close_open_calls(m.ts)
        out.append(m)
        if m.role == "assistant" and m.tool_calls:
            open_calls = {c.id: c for c in m.tool_calls}
    close_open_calls(out[-1].ts if out else 0)
    return out
