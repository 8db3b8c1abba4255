"""Script objects of the loopback provider: turns, tool calls, faults and recorded requests."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = [
    "ToolCallSpec",
    "Fault",
    "FaultKind",
    "Turn",
    "RecordedRequest",
    "Responder",
    "huge_text",
    "last_user_text",
]

FaultKind = Literal["http", "midstream_error", "drop", "stall", "malformed", "huge_chunk"]

_HUGE_SEED = "The quick brown fox jumps over the lazy dog. "


def huge_text(size: int) -> str:
    """The deterministic ASCII text a ``Fault.huge_chunk(size)`` delta carries (exactly ``size`` chars)."""
    reps = size // len(_HUGE_SEED) + 1
    return (_HUGE_SEED * reps)[:size]


@dataclass
class ToolCallSpec:
    """One tool call the fake model makes.

    Attributes:
        name: Tool name.
        args: The arguments: a dict (sent as compact JSON) or raw JSON text (may be invalid on purpose).
        id: The call id; generated (``toolu_fake…`` / ``call_fake…``) when None.
    """

    name: str
    args: dict[str, Any] | str
    id: str | None = None


@dataclass
class Fault:
    """A failure the loopback provider injects into one response. Build it with the classmethods.

    ``after_events`` counts SSE events already sent (role chunk / ``message_start`` and ``ping``
    included) before the fault strikes.
    """

    kind: FaultKind
    status: int = 200
    body: bytes | str | dict[str, Any] | None = None
    retry_after: str | float | None = None
    retry_after_ms: int | None = None
    after_events: int = 0
    error_type: str | None = None
    message: str | None = None
    seconds: float = 0.0
    size: int = 0
    clean_eof: bool = False

    @classmethod
    def http(
        cls,
        status: int,
        *,
        body: bytes | str | dict[str, Any] | None = None,
        retry_after: str | float | None = None,
        retry_after_ms: int | None = None,
        error_type: str | None = None,
        message: str | None = None,
    ) -> Fault:
        """Answer with an HTTP error instead of a stream.

        Args:
            status: The HTTP status.
            body: None for a provider-shaped error body per protocol; a dict is sent as JSON; str/bytes
                are sent verbatim (e.g. an HTML error page of a proxy).
            retry_after: Value of the ``retry-after`` header (seconds or an HTTP date).
            retry_after_ms: Value of the ``retry-after-ms`` header.
            error_type: Overrides the error type of the default body (else chosen by status).
            message: Overrides the message of the default body.
        """
        return cls(
            "http",
            status=status,
            body=body,
            retry_after=retry_after,
            retry_after_ms=retry_after_ms,
            error_type=error_type,
            message=message,
        )

    @classmethod
    def midstream_error(
        cls, after_events: int, *, error_type: str = "overloaded_error", message: str = "Overloaded"
    ) -> Fault:
        """After HTTP 200 and ``after_events`` events, send an error event and end the body."""
        return cls("midstream_error", after_events=after_events, error_type=error_type, message=message)

    @classmethod
    def drop(cls, after_events: int, *, clean_eof: bool = False) -> Fault:
        """Close the connection after ``after_events`` events, without the finish marker.

        Args:
            after_events: Events sent before the drop.
            clean_eof: False (default) aborts the socket mid-body (the client sees an incomplete chunked
                body); True ends the HTTP body properly, so only the protocol's finish marker is missing.
        """
        return cls("drop", after_events=after_events, clean_eof=clean_eof)

    @classmethod
    def stall(cls, after_events: int, seconds: float = 30.0) -> Fault:
        """Send nothing for ``seconds`` after ``after_events`` events (socket stays open), then go on."""
        return cls("stall", after_events=after_events, seconds=seconds)

    @classmethod
    def malformed(cls, after_events: int) -> Fault:
        """Insert a ``data:`` line with invalid JSON after ``after_events`` events (the stream goes on)."""
        return cls("malformed", after_events=after_events)

    @classmethod
    def huge_chunk(cls, size: int = 1_000_000) -> Fault:
        """Append one text delta of ``size`` characters (``huge_text(size)``) to the turn's text."""
        return cls("huge_chunk", size=size)


@dataclass
class Turn:
    """One scripted model response.

    Attributes:
        text: The answer text, streamed in deltas of ``chunk_chars`` characters.
        thinking: Reasoning text (Anthropic thinking block / OpenAI ``reasoning_content``).
        tool_calls: Tool calls made after the text.
        usage: Token counts with keys ``input`` (uncached), ``output`` (reasoning included),
            ``cache_read``, ``cache_write``, ``reasoning``; rendered in each protocol's own shape.
            None derives rough counts from the request and the answer.
        stop_reason: Explicit stop reason; names of the other protocol are translated
            (``end_turn``↔``stop``, ``tool_use``↔``tool_calls``, ``max_tokens``↔``length``,
            ``refusal``↔``content_filter``). None: ``tool_use``/``tool_calls`` when there are tool calls,
            else ``end_turn``/``stop``.
        chunk_chars: Size of each text/thinking delta (tool arguments use the same size).
        tokens_per_second: Slow drip: each text/thinking delta counts as one token. None = no delay.
        fault: A failure to inject.
        raw_body: Serve exactly these bytes (a recorded fixture) as the 200 body.
        delay_first_byte: Seconds to wait before the status line.
        model: The model id the response reports (default: the requested one).
    """

    text: str = ""
    thinking: str = ""
    tool_calls: list[ToolCallSpec] = field(default_factory=list)
    usage: dict[str, int] | None = None
    stop_reason: str | None = None
    chunk_chars: int = 4
    tokens_per_second: float | None = None
    fault: Fault | None = None
    raw_body: bytes | None = None
    delay_first_byte: float = 0.0
    model: str | None = None
    # Cache of rendered stream bodies, keyed by (protocol, model, include_usage); filled by fast_turn
    # and by the server for turns without delays, so a Turn reused across requests renders once.
    _rendered: dict[tuple[str, str, bool], bytes] = field(default_factory=dict, repr=False, compare=False)


@dataclass
class RecordedRequest:
    """One HTTP request the loopback provider received.

    Attributes:
        method: ``GET``/``POST``...
        path: The path without the query string.
        headers: Header names lower-cased (the last value wins for repeated names).
        body: The raw body bytes.
        json: The body parsed as JSON, or None when empty or not JSON.
        query: Query parameters (last value wins).
    """

    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    json: Any | None
    query: dict[str, str] = field(default_factory=dict)


Responder = Callable[[RecordedRequest], Turn]
"""Builds the turn that answers a chat request when the script queue is empty."""


def _text_of(content: Any) -> str:
    """The readable text of a message ``content`` (string, or a list of text/tool_result parts)."""
    if isinstance(content, str):
        return content
    parts: list[str] = []
    if isinstance(content, list):
        for part in content:
            if not isinstance(part, dict):
                continue
            if part.get("type") == "text" and isinstance(part.get("text"), str):
                parts.append(part["text"])
            elif part.get("type") == "tool_result":
                parts.append(_text_of(part.get("content", "")))
    return "\n".join(parts)


def last_user_text(request: RecordedRequest) -> str:
    """The text of the last ``user`` (or OpenAI ``tool``) message of a chat request, or ``""``."""
    body = request.json if isinstance(request.json, dict) else {}
    messages = body.get("messages")
    if not isinstance(messages, list):
        return ""
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") in ("user", "tool"):
            return _text_of(message.get("content", ""))
    return ""
