"""The chat answer of the loopback provider: a stream or a JSON body, with drip pacing and faults."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from desktop.demo._clock import Clock, LoopClock
from desktop.demo._render import (
    Event,
    Protocol,
    RenderContext,
    error_body,
    error_event,
    malformed_event,
    render_json,
    render_stream,
)
from desktop.demo._spec import Fault, RecordedRequest, Turn
from desktop.demo._wire import chunk, head, send, write_chunked

__all__ = ["write_chat"]

_MIDSTREAM_STATUS = {
    "overloaded_error": 529,
    "rate_limit_error": 429,
    "authentication_error": 401,
    "invalid_request_error": 400,
    "not_found_error": 404,
    "permission_error": 403,
}


async def write_chat(
    request: RecordedRequest,
    protocol: Protocol,
    turn: Turn,
    writer: asyncio.StreamWriter,
    keep: bool,
    request_id: str,
    seq: int,
    clock: Clock | None = None,
) -> bool:
    """Answer a chat request with ``turn``: a stream or a JSON body, with its fault and pacing.

    Args:
        request: The request.
        protocol: The protocol it speaks.
        turn: The scripted answer.
        writer: The connection.
        keep: Whether the connection may stay open after this response.
        request_id: The id the response reports.
        seq: The response's number (generated ids).
        clock: What pacing, stalls and delays wait on (default: the loop's real clock).

    Returns:
        Whether the connection may serve another request.
    """
    clock = clock or LoopClock()
    body: dict[str, Any] = request.json if isinstance(request.json, dict) else {}
    model = turn.model or (body.get("model") if isinstance(body.get("model"), str) else None) or "fake-model"
    stream = body.get("stream") is True
    options = body.get("stream_options")
    include_usage = isinstance(options, dict) and options.get("include_usage") is True
    fault = turn.fault
    if fault is not None and fault.kind == "drop":
        keep = False  # announce the close, so a client never reuses the dropped connection
    if turn.delay_first_byte > 0:
        await clock.sleep(turn.delay_first_byte)
    if fault is not None and fault.kind == "http":
        return await _send_http_fault(writer, protocol, fault, keep, request_id)
    if turn.raw_body is not None:
        ctype = (
            "application/json" if turn.raw_body.lstrip()[:1] == b"{" else "text/event-stream; charset=utf-8"
        )
        return await send(writer, 200, turn.raw_body, keep_alive=keep, content_type=ctype)
    ctx = RenderContext(model=model, include_usage=include_usage, seq=seq, request_bytes=len(request.body))
    if not stream:
        return await _chat_json(writer, protocol, turn, ctx, keep, request_id, clock)
    headers = {
        "content-type": "text/event-stream; charset=utf-8",
        "cache-control": "no-cache",
        "transfer-encoding": "chunked",
        "request-id": request_id,
        "x-request-id": request_id,
    }
    writer.write(head(200, headers, keep))
    if turn.tokens_per_second is None and (fault is None or fault.kind == "huge_chunk"):
        await write_chunked(writer, _rendered(protocol, turn, ctx))
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        return keep
    events = render_stream(protocol, turn, ctx)
    return await _write_events(writer, protocol, events, turn, request_id, clock) and keep


def _rendered(protocol: Protocol, turn: Turn, ctx: RenderContext) -> bytes:
    key = (protocol, ctx.model, ctx.include_usage if protocol == "openai" else False)
    cached = turn._rendered.get(key)
    if cached is not None:
        return cached
    data = b"".join(e.data for e in render_stream(protocol, turn, ctx))
    # Reuse is only safe when nothing in the body depends on the request (usage, generated ids).
    if turn.usage is not None and all(c.id for c in turn.tool_calls):
        turn._rendered[key] = data
    return data


async def _write_events(
    writer: asyncio.StreamWriter,
    protocol: Protocol,
    events: list[Event],
    turn: Turn,
    request_id: str,
    clock: Clock,
) -> bool:
    """Write events one by one with drip pacing and the turn's fault; False when the connection ends."""
    fault = turn.fault
    at = fault.after_events if fault is not None else -1
    interval = 1.0 / turn.tokens_per_second if turn.tokens_per_second else 0.0
    next_at = clock.time()
    for i, event in enumerate([*events, None]):
        if i == at and fault is not None:
            outcome = await _apply_fault(writer, protocol, fault, request_id, clock)
            if outcome == "closed":
                return False
            if outcome == "end":
                break
        if event is None:
            break
        if event.token and interval:
            next_at += interval
            delay = next_at - clock.time()
            if delay > 0:
                await clock.sleep(delay)
            else:
                next_at = clock.time()
        writer.write(chunk(event.data))
        await writer.drain()
    writer.write(b"0\r\n\r\n")
    await writer.drain()
    return True


async def _apply_fault(
    writer: asyncio.StreamWriter, protocol: Protocol, fault: Fault, request_id: str, clock: Clock
) -> str:
    """Inject a fault into a stream: ``continue`` the events, ``end`` the body, or ``closed``."""
    if fault.kind == "midstream_error":
        event = error_event(protocol, fault.error_type or "api_error", fault.message or "Error", request_id)
        writer.write(chunk(event))
        return "end"
    if fault.kind == "drop":
        if fault.clean_eof:
            writer.write(b"0\r\n\r\n")
        await writer.drain()
        writer.close()
        return "closed"
    if fault.kind == "stall":
        await writer.drain()
        await clock.sleep(fault.seconds)
    elif fault.kind == "malformed":
        writer.write(chunk(malformed_event(protocol)))
        await writer.drain()
    return "continue"


async def _chat_json(
    writer: asyncio.StreamWriter,
    protocol: Protocol,
    turn: Turn,
    ctx: RenderContext,
    keep: bool,
    request_id: str,
    clock: Clock,
) -> bool:
    fault = turn.fault
    extra = {"request-id": request_id}
    if fault is not None:
        if fault.kind == "drop":
            writer.close()
            return False
        if fault.kind == "stall":
            await clock.sleep(fault.seconds)
        elif fault.kind == "malformed":
            return await send(writer, 200, b'{"id": "broken", "content": [', keep_alive=keep, extra=extra)
        elif fault.kind == "midstream_error":
            etype = fault.error_type or "api_error"
            status = _MIDSTREAM_STATUS.get(etype, 500)
            body = error_body(
                protocol, status, error_type=etype, message=fault.message, request_id=request_id
            )
            return await send(writer, status, body, keep_alive=keep, extra=extra)
    return await send(writer, 200, render_json(protocol, turn, ctx), keep_alive=keep, extra=extra)


async def _send_http_fault(
    writer: asyncio.StreamWriter, protocol: Protocol, fault: Fault, keep: bool, request_id: str
) -> bool:
    extra = {"request-id": request_id, "x-request-id": request_id}
    if fault.retry_after is not None:
        value = fault.retry_after
        extra["retry-after"] = (
            str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)
        )
    if fault.retry_after_ms is not None:
        extra["retry-after-ms"] = str(fault.retry_after_ms)
    ctype = "application/json"
    if fault.body is None:
        body = error_body(
            protocol,
            fault.status,
            error_type=fault.error_type,
            message=fault.message,
            request_id=request_id,
        )
    elif isinstance(fault.body, dict):
        body = json.dumps(fault.body).encode()
    else:
        body = fault.body.encode() if isinstance(fault.body, str) else fault.body
        if not body.lstrip().startswith((b"{", b"[")):
            ctype = (
                "text/html; charset=utf-8" if body.lstrip().startswith(b"<") else "text/plain; charset=utf-8"
            )
    return await send(writer, fault.status, body, keep_alive=keep, content_type=ctype, extra=extra)
