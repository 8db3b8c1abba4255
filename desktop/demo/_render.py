"""Render scripted turns into the bytes of both provider protocols.

Streams are rendered as a list of ``Event`` (the bytes of one SSE event plus whether it carries a
token, for drip timing). Hot deltas are built from string templates, not ``json.dumps`` of whole
dicts, so a 20k-event body renders in a few tens of milliseconds.
"""

from __future__ import annotations

import base64
import hashlib
import json
import time
from dataclasses import dataclass
from typing import Any, Literal

from desktop.demo._spec import Turn, huge_text

Protocol = Literal["openai", "anthropic"]

__all__ = [
    "Protocol",
    "Event",
    "RenderContext",
    "render_stream",
    "render_json",
    "error_body",
    "error_event",
    "malformed_event",
    "anthropic_models",
    "openai_models",
    "stop_reason_for",
    "usage_for",
    "default_error_type",
]

_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode

_ANTHROPIC_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    408: "timeout_error",
    409: "conflict_error",
    413: "request_too_large",
    422: "invalid_request_error",
    429: "rate_limit_error",
    500: "api_error",
    502: "api_error",
    503: "api_error",
    504: "timeout_error",
    529: "overloaded_error",
}
_DEFAULT_MESSAGES = {
    "invalid_request_error": "Invalid request",
    "authentication_error": "invalid x-api-key",
    "billing_error": "Your credit balance is too low",
    "permission_error": "Your API key does not have permission to use the specified resource.",
    "not_found_error": "Not found",
    "timeout_error": "Request timed out",
    "conflict_error": "Conflict",
    "request_too_large": "Request exceeds the maximum allowed number of bytes.",
    "rate_limit_error": "Number of request tokens has exceeded your per-minute rate limit",
    "api_error": "Internal server error",
    "overloaded_error": "Overloaded",
}
_OPENAI_CODES = {
    401: "invalid_api_key",
    404: "model_not_found",
    429: "rate_limit_exceeded",
}
# Stop reason translation between the protocols (the other protocol's name is accepted).
_TO_OPENAI = {
    "end_turn": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "refusal": "content_filter",
}
_TO_ANTHROPIC = {v: k for k, v in _TO_OPENAI.items()}


@dataclass(frozen=True, slots=True)
class Event:
    """One SSE event: its bytes, and True when it carries a text/thinking token (drip pacing)."""

    data: bytes
    token: bool = False


@dataclass
class RenderContext:
    """What a rendering needs besides the turn.

    Attributes:
        model: The model id to report.
        include_usage: OpenAI only: the request asked for ``stream_options.include_usage``.
        seq: A per-response sequence number (message ids, generated tool call ids).
        request_bytes: Size of the request body, for default usage numbers.
    """

    model: str
    include_usage: bool = False
    seq: int = 0
    request_bytes: int = 0


def default_error_type(status: int) -> str:
    """The Anthropic-style error type for an HTTP status."""
    if status in _ANTHROPIC_ERROR_TYPES:
        return _ANTHROPIC_ERROR_TYPES[status]
    if status >= 500:
        return "api_error"
    return "invalid_request_error"


def error_body(
    protocol: Protocol,
    status: int,
    *,
    error_type: str | None = None,
    message: str | None = None,
    request_id: str = "req_fake",
) -> bytes:
    """A provider-shaped JSON error body for an HTTP error."""
    etype = error_type or default_error_type(status)
    msg = message or _DEFAULT_MESSAGES.get(etype, "Error")
    if protocol == "anthropic":
        obj: dict[str, Any] = {
            "type": "error",
            "error": {"type": etype, "message": msg},
            "request_id": request_id,
        }
    else:
        if message is None and status == 401:
            msg = "Incorrect API key provided."
        obj = {"error": {"message": msg, "type": etype, "param": None, "code": _OPENAI_CODES.get(status)}}
    return _dumps(obj).encode()


def error_event(protocol: Protocol, error_type: str, message: str, request_id: str = "req_fake") -> bytes:
    """The SSE event of an error after HTTP 200 (no finish marker follows it)."""
    if protocol == "anthropic":
        payload = {
            "type": "error",
            "error": {"type": error_type, "message": message},
            "request_id": request_id,
        }
        return b"event: error\ndata: " + _dumps(payload).encode() + b"\n\n"
    body = {"error": {"message": message, "type": error_type, "param": None, "code": None}}
    return b"data: " + _dumps(body).encode() + b"\n\n"


def malformed_event(protocol: Protocol) -> bytes:
    """A ``data:`` line whose JSON is cut off."""
    if protocol == "anthropic":
        return b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"ty\n\n'
    return b'data: {"id":"chatcmpl-broken","choices":[{"index":0,"delta":{"content":"oops\n\n'


def stop_reason_for(protocol: Protocol, turn: Turn) -> str:
    """The protocol's stop reason for a turn (explicit ones translated across protocols)."""
    if turn.stop_reason is not None:
        table = _TO_OPENAI if protocol == "openai" else _TO_ANTHROPIC
        return table.get(turn.stop_reason, turn.stop_reason)
    if turn.tool_calls:
        return "tool_calls" if protocol == "openai" else "tool_use"
    return "stop" if protocol == "openai" else "end_turn"


def _tokens(chars: int) -> int:
    return (chars + 3) // 4


def _args_text(args: dict[str, Any] | str) -> str:
    return args if isinstance(args, str) else _dumps(args)


def _full_text(turn: Turn) -> str:
    if turn.fault is not None and turn.fault.kind == "huge_chunk":
        return turn.text + huge_text(turn.fault.size)
    return turn.text


def _text_pieces(turn: Turn) -> list[str]:
    """Text deltas: ``chunk_chars`` pieces, plus the single huge delta of a ``huge_chunk`` fault."""
    pieces = _pieces(turn.text, turn.chunk_chars)
    if turn.fault is not None and turn.fault.kind == "huge_chunk":
        pieces.append(huge_text(turn.fault.size))
    return pieces


def usage_for(turn: Turn, ctx: RenderContext) -> dict[str, int]:
    """The turn's usage with every key present (rough defaults when the turn gives none)."""
    given = turn.usage or {}
    args_chars = sum(len(_args_text(c.args)) for c in turn.tool_calls)
    reasoning = given.get("reasoning", _tokens(len(turn.thinking)))
    output = given.get("output", max(1, _tokens(len(_full_text(turn)) + args_chars) + reasoning))
    return {
        "input": given.get("input", max(1, _tokens(ctx.request_bytes))),
        "output": output,
        "cache_read": given.get("cache_read", 0),
        "cache_write": given.get("cache_write", 0),
        "reasoning": reasoning,
    }


def _openai_usage(u: dict[str, int]) -> dict[str, Any]:
    # OpenAI's prompt_tokens INCLUDES cached tokens (there is no cache-write concept: counted as input).
    prompt = u["input"] + u["cache_read"] + u["cache_write"]
    return {
        "prompt_tokens": prompt,
        "completion_tokens": u["output"],
        "total_tokens": prompt + u["output"],
        "prompt_tokens_details": {"cached_tokens": u["cache_read"], "audio_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": u["reasoning"], "audio_tokens": 0},
    }


def _anthropic_usage(u: dict[str, int], *, output: int) -> dict[str, Any]:
    # Anthropic's input_tokens EXCLUDES cache reads and writes.
    return {
        "input_tokens": u["input"],
        "cache_creation_input_tokens": u["cache_write"],
        "cache_read_input_tokens": u["cache_read"],
        "output_tokens": output,
    }


def _pieces(text: str, size: int) -> list[str]:
    size = max(1, size)
    return [text[i : i + size] for i in range(0, len(text), size)]


def _tool_id(protocol: Protocol, ctx: RenderContext, index: int, given: str | None) -> str:
    if given:
        return given
    prefix = "toolu_fake" if protocol == "anthropic" else "call_fake"
    return f"{prefix}{ctx.seq:06d}x{index:02d}"


def _signature(thinking: str) -> str:
    return base64.b64encode(b"fake-signature:" + hashlib.sha256(thinking.encode()).digest()).decode()


def render_stream(protocol: Protocol, turn: Turn, ctx: RenderContext) -> list[Event]:
    """Render a turn as the SSE events of a streaming response (complete, faults aside)."""
    if protocol == "anthropic":
        return _anthropic_stream(turn, ctx)
    return _openai_stream(turn, ctx)


def _openai_stream(turn: Turn, ctx: RenderContext) -> list[Event]:
    cid = f"chatcmpl-fake{ctx.seq:06d}"
    head = (
        '{"id":'
        + _dumps(cid)
        + ',"object":"chat.completion.chunk","created":'
        + str(int(time.time()))
        + ',"model":'
        + _dumps(ctx.model)
        + ',"choices":[{"index":0,"delta":'
    )
    tail_open = ',"logprobs":null,"finish_reason":null}]}'

    def chunk(delta: str, finish: str = "null") -> bytes:
        tail = tail_open if finish == "null" else ',"logprobs":null,"finish_reason":' + finish + "}]}"
        return ("data: " + head + delta + tail + "\n\n").encode()

    events = [Event(chunk('{"role":"assistant","content":""}'))]
    for piece in _pieces(turn.thinking, turn.chunk_chars):
        events.append(Event(chunk('{"reasoning_content":' + _dumps(piece) + "}"), token=True))
    for piece in _text_pieces(turn):
        events.append(Event(chunk('{"content":' + _dumps(piece) + "}"), token=True))
    for i, call in enumerate(turn.tool_calls):
        opening = {
            "tool_calls": [
                {
                    "index": i,
                    "id": _tool_id("openai", ctx, i, call.id),
                    "type": "function",
                    "function": {"name": call.name, "arguments": ""},
                }
            ]
        }
        events.append(Event(chunk(_dumps(opening))))
        for frag in _pieces(_args_text(call.args), max(turn.chunk_chars, 1)):
            events.append(
                Event(chunk(_dumps({"tool_calls": [{"index": i, "function": {"arguments": frag}}]})))
            )
    events.append(Event(chunk("{}", _dumps(stop_reason_for("openai", turn)))))
    if ctx.include_usage:
        usage = _openai_usage(usage_for(turn, ctx))
        final = {
            "id": cid,
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": ctx.model,
            "choices": [],
            "usage": usage,
        }
        events.append(Event(b"data: " + _dumps(final).encode() + b"\n\n"))
    events.append(Event(b"data: [DONE]\n\n"))
    return events


def _sse(name: str, payload: dict[str, Any]) -> Event:
    return Event(("event: " + name + "\ndata: " + _dumps(payload) + "\n\n").encode())


def _anthropic_stream(turn: Turn, ctx: RenderContext) -> list[Event]:
    usage = usage_for(turn, ctx)
    message: dict[str, Any] = {
        "id": f"msg_fake{ctx.seq:06d}",
        "type": "message",
        "role": "assistant",
        "model": ctx.model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": _anthropic_usage(usage, output=1),
    }
    events = [
        _sse("message_start", {"type": "message_start", "message": message}),
        _sse("ping", {"type": "ping"}),
    ]
    index = 0

    def delta_prefix(i: int) -> str:
        return (
            'event: content_block_delta\ndata: {"type":"content_block_delta","index":' + str(i) + ',"delta":'
        )

    if turn.thinking:
        events.append(
            _sse(
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": {"type": "thinking", "thinking": "", "signature": ""},
                },
            )
        )
        prefix = delta_prefix(index)
        for piece in _pieces(turn.thinking, turn.chunk_chars):
            events.append(
                Event(
                    (prefix + '{"type":"thinking_delta","thinking":' + _dumps(piece) + "}}\n\n").encode(),
                    token=True,
                )
            )
        events.append(
            _sse(
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": index,
                    "delta": {"type": "signature_delta", "signature": _signature(turn.thinking)},
                },
            )
        )
        events.append(_sse("content_block_stop", {"type": "content_block_stop", "index": index}))
        index += 1
    text = _full_text(turn)
    if text:
        events.append(
            _sse(
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": {"type": "text", "text": ""},
                },
            )
        )
        prefix = delta_prefix(index)
        for piece in _text_pieces(turn):
            events.append(
                Event(
                    (prefix + '{"type":"text_delta","text":' + _dumps(piece) + "}}\n\n").encode(), token=True
                )
            )
        events.append(_sse("content_block_stop", {"type": "content_block_stop", "index": index}))
        index += 1
    for i, call in enumerate(turn.tool_calls):
        block = {
            "type": "tool_use",
            "id": _tool_id("anthropic", ctx, i, call.id),
            "name": call.name,
            "input": {},
        }
        events.append(
            _sse(
                "content_block_start", {"type": "content_block_start", "index": index, "content_block": block}
            )
        )
        frags = [""] + _pieces(_args_text(call.args), max(turn.chunk_chars, 1))
        for frag in frags:
            events.append(
                _sse(
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": index,
                        "delta": {"type": "input_json_delta", "partial_json": frag},
                    },
                )
            )
        events.append(_sse("content_block_stop", {"type": "content_block_stop", "index": index}))
        index += 1
    events.append(
        _sse(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop_reason_for("anthropic", turn), "stop_sequence": None},
                "usage": _anthropic_usage(usage, output=usage["output"]),
            },
        )
    )
    events.append(_sse("message_stop", {"type": "message_stop"}))
    return events


def render_json(protocol: Protocol, turn: Turn, ctx: RenderContext) -> bytes:
    """Render a turn as the JSON body of a non-streaming response."""
    usage = usage_for(turn, ctx)
    text = _full_text(turn)
    if protocol == "anthropic":
        content: list[dict[str, Any]] = []
        if turn.thinking:
            content.append(
                {"type": "thinking", "thinking": turn.thinking, "signature": _signature(turn.thinking)}
            )
        if text:
            content.append({"type": "text", "text": text})
        for i, call in enumerate(turn.tool_calls):
            try:
                args: Any = json.loads(_args_text(call.args)) if _args_text(call.args).strip() else {}
            except ValueError:
                args = {}
            content.append(
                {
                    "type": "tool_use",
                    "id": _tool_id("anthropic", ctx, i, call.id),
                    "name": call.name,
                    "input": args,
                }
            )
        body: dict[str, Any] = {
            "id": f"msg_fake{ctx.seq:06d}",
            "type": "message",
            "role": "assistant",
            "model": ctx.model,
            "content": content,
            "stop_reason": stop_reason_for("anthropic", turn),
            "stop_sequence": None,
            "usage": _anthropic_usage(usage, output=usage["output"]),
        }
        return _dumps(body).encode()
    message: dict[str, Any] = {"role": "assistant", "content": text if text or not turn.tool_calls else None}
    if turn.thinking:
        message["reasoning_content"] = turn.thinking
    if turn.tool_calls:
        message["tool_calls"] = [
            {
                "id": _tool_id("openai", ctx, i, c.id),
                "type": "function",
                "function": {"name": c.name, "arguments": _args_text(c.args)},
            }
            for i, c in enumerate(turn.tool_calls)
        ]
    body = {
        "id": f"chatcmpl-fake{ctx.seq:06d}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": ctx.model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "logprobs": None,
                "finish_reason": stop_reason_for("openai", turn),
            }
        ],
        "usage": _openai_usage(usage),
    }
    return _dumps(body).encode()


def _display_name(model_id: str) -> str:
    return " ".join(part.capitalize() for part in model_id.replace("_", "-").split("-"))


def anthropic_models(models: list[str], query: dict[str, str]) -> tuple[int, bytes]:
    """The Anthropic models page for ``limit``/``after_id``/``before_id`` (status, body)."""
    try:
        limit = int(query.get("limit", "20"))
    except ValueError:
        return 400, error_body("anthropic", 400, message="limit: must be an integer")
    if not 1 <= limit <= 1000:
        return 400, error_body("anthropic", 400, message="limit: must be between 1 and 1000")
    start, end = 0, len(models)
    for key in ("after_id", "before_id"):
        if key in query and query[key] not in models:
            return 400, error_body("anthropic", 400, message=f"{key}: unknown model id")
    if "after_id" in query:
        start = models.index(query["after_id"]) + 1
    if "before_id" in query:
        end = models.index(query["before_id"])
        start = max(start, end - limit)
    page = models[start:end][:limit]
    has_more = (start + len(page) < end) if "before_id" not in query else start > 0
    body = {
        "data": [
            {"id": m, "type": "model", "display_name": _display_name(m), "created_at": "2025-01-01T00:00:00Z"}
            for m in page
        ],
        "has_more": has_more,
        "first_id": page[0] if page else None,
        "last_id": page[-1] if page else None,
    }
    return 200, _dumps(body).encode()


def openai_models(models: list[str]) -> bytes:
    """The OpenAI models list body."""
    return _dumps(
        {
            "object": "list",
            "data": [{"id": m, "object": "model", "created": 1700000000, "owned_by": "fake"} for m in models],
        }
    ).encode()
