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

from desktop.core.chat.types import ChatMessage, ToolCall

log = logging.getLogger(__name__)

__all__ = ["INTERRUPTED_RESULT", "answered_history"]

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
