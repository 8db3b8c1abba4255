"""Helpers for the provider tests: fixture loading, MockTransport servers, event summaries."""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpcore
import httpx

from desktop.core.chat.types import (
    ChatError,
    ChatEvent,
    ChatMessage,
    ChatToolDef,
    Delta,
    Notice,
    ProviderConfig,
    Thinking,
    ToolCallRequested,
    Usage,
    UsageReport,
)
from desktop.core.providers import RetryPolicy, driver_for

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "streams"
SECRET = "sk-test-SECRET-0123456789abcdefXYZ"

def fixture_bytes(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def fixture_json(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text("utf-8"))


def openai_config(**kw: Any) -> ProviderConfig:
    args: dict[str, Any] = {"id": "openai", "name": "OpenAI", "api": "openai",
                            "base_url": "https://api.test/v1", "api_key": SECRET}
    args.update(kw)
    return ProviderConfig(**args)


def anthropic_config(**kw: Any) -> ProviderConfig:
    args: dict[str, Any] = {"id": "anthropic", "name": "Anthropic", "api": "anthropic",
                            "base_url": "https://api.anthropic.test", "api_key": SECRET}
    args.update(kw)
    return ProviderConfig(**args)


class Sleeps:
    """An instant ``sleep`` that records the requested delays."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)


def instant_policy(**kw: Any) -> tuple[RetryPolicy, Sleeps]:
    sleeps = Sleeps()
    return RetryPolicy(sleep=sleeps, random=lambda: 0.0, **kw), sleeps


# ---------------------------------------------------------------------------------------------
# Body splitting


def random_pieces(data: bytes, rng: random.Random, max_piece: int = 64) -> list[bytes]:
    """Cut ``data`` at random offsets (pieces of 1..max_piece bytes)."""
    pieces: list[bytes] = []
    i = 0
    while i < len(data):
        n = rng.randint(1, max_piece)
        pieces.append(data[i:i + n])
        i += n
    return pieces


def cut_at(data: bytes, offsets: Sequence[int]) -> list[bytes]:
    """Cut ``data`` at the given offsets."""
    points = sorted({o for o in offsets if 0 < o < len(data)})
    pieces: list[bytes] = []
    last = 0
    for p in points:
        pieces.append(data[last:p])
        last = p
    pieces.append(data[last:])
    return pieces


def utf8_inner_offsets(data: bytes) -> list[int]:
    """Offsets that fall inside a multi-byte UTF-8 character (after a lead or continuation byte)."""
    return [i for i in range(1, len(data)) if data[i] & 0xC0 == 0x80]


def crlf(data: bytes) -> bytes:
    return data.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")


# ---------------------------------------------------------------------------------------------
# Mock servers


class PieceStream(httpx.AsyncByteStream):
    """A response body served piece by piece; records whether it was closed."""

    def __init__(self, pieces: Sequence[bytes], *, hang_after: bool = False,
                 gate: asyncio.Event | None = None) -> None:
        self.pieces = list(pieces)
        self.hang_after = hang_after
        self.gate = gate
        self.closed = False
        self.sent = 0

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for piece in self.pieces:
            self.sent += 1
            yield piece
        if self.hang_after:
            await asyncio.Event().wait() if self.gate is None else await self.gate.wait()

    async def aclose(self) -> None:
        self.closed = True


@dataclass
class Reply:
    """One scripted answer of the mock server."""

    status: int = 200
    pieces: Sequence[bytes] = ()
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str = "text/event-stream"
    hang_after: bool = False
    raise_exc: Exception | None = None


class MockServer:
    """Answers requests with scripted replies (the last one repeats) and records the requests."""

    def __init__(self, *replies: Reply) -> None:
        self.replies = list(replies)
        self.requests: list[httpx.Request] = []
        self.streams: list[PieceStream] = []

    def handler(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        reply = self.replies[min(len(self.requests) - 1, len(self.replies) - 1)]
        if reply.raise_exc is not None:
            raise reply.raise_exc
        stream = PieceStream(reply.pieces, hang_after=reply.hang_after)
        self.streams.append(stream)
        headers = {"content-type": reply.content_type, **reply.headers}
        return httpx.Response(reply.status, headers=headers, stream=stream)

    def client(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(transport=httpx.MockTransport(self.handler))

    def bodies(self) -> list[dict[str, Any]]:
        return [json.loads(r.content) for r in self.requests]


def sse_reply(pieces: Sequence[bytes] | bytes, **kw: Any) -> Reply:
    if isinstance(pieces, bytes):
        pieces = [pieces]
    return Reply(pieces=pieces, **kw)


def json_reply(status: int, payload: Any, **kw: Any) -> Reply:
    body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    return Reply(status=status, pieces=[body], content_type="application/json", **kw)


# ---------------------------------------------------------------------------------------------
# The client's connection pool (tests over real sockets)


def pooled_connections(client: httpx.AsyncClient) -> list[httpcore.AsyncConnectionInterface]:
    """The connections held by ``client``'s pool right now.

    httpx keeps the httpcore pool of its default transport in private attributes
    (``client._transport._pool``, the same since httpx 0.18); the pool's ``connections`` list is
    httpcore's documented API. The isinstance checks make a future rename fail loudly here instead of
    quietly reporting an empty pool.
    """
    transport = client._transport
    assert isinstance(transport, httpx.AsyncHTTPTransport), type(transport)
    pool = transport._pool
    assert isinstance(pool, httpcore.AsyncConnectionPool), type(pool)
    return pool.connections


def assert_no_connection_in_use(client: httpx.AsyncClient) -> None:
    """No response was left open: every connection still pooled is idle (kept for reuse), none is
    still busy with a body nobody reads (a leaked response keeps its connection active)."""
    busy = [c for c in pooled_connections(client) if not c.is_idle()]
    assert busy == [], busy


# ---------------------------------------------------------------------------------------------
# Running a driver and summarising its output


@dataclass
class Outcome:
    events: list[ChatEvent]
    error: ChatError | None

    @property
    def text(self) -> str:
        return "".join(e.text for e in self.events if isinstance(e, Delta))

    @property
    def thinking(self) -> str:
        return "".join(e.text for e in self.events if isinstance(e, Thinking))

    @property
    def signatures(self) -> list[str]:
        return [e.signature for e in self.events if isinstance(e, Thinking) and e.signature]

    @property
    def redacted(self) -> list[str]:
        return [e.redacted_data for e in self.events if isinstance(e, Thinking) and e.redacted_data]

    @property
    def calls(self) -> list[tuple[str, str, str]]:
        return [(e.call.id, e.call.name, e.call.args_json) for e in self.events
                if isinstance(e, ToolCallRequested)]

    @property
    def usage(self) -> Usage | None:
        reports = [e for e in self.events if isinstance(e, UsageReport)]
        return reports[-1].usage if reports else None

    @property
    def model(self) -> str | None:
        reports = [e for e in self.events if isinstance(e, UsageReport)]
        return reports[-1].model if reports else None

    @property
    def notices(self) -> list[str]:
        return [e.text for e in self.events if isinstance(e, Notice)]

    def summary(self) -> dict[str, Any]:
        err = None if self.error is None else (self.error.message, self.error.status, self.error.kind)
        return {"text": self.text, "thinking": self.thinking, "signatures": self.signatures,
                "redacted": self.redacted, "calls": self.calls, "usage": self.usage,
                "model": self.model, "notices": self.notices, "error": err}


async def collect(
    config: ProviderConfig,
    server: MockServer,
    *,
    messages: Sequence[ChatMessage] = (),
    tools: Sequence[ChatToolDef] = (),
    system: str | None = None,
    model: str = "test-model",
    retry: RetryPolicy | None = None,
    stream_timeout: float | None = None,
    on_event: Callable[[ChatEvent], None] | None = None,
) -> Outcome:
    """Stream one response from the mock server; return the events and the ChatError, if any."""
    if retry is None:
        retry, _ = instant_policy()
    if not messages:
        messages = [ChatMessage(id="u1", role="user", content="Hello", ts=0)]
    events: list[ChatEvent] = []
    error: ChatError | None = None
    async with server.client() as client:
        driver = driver_for(config, client, retry=retry, stream_timeout=stream_timeout)
        try:
            async for event in driver.stream(model=model, messages=messages, tools=tools, system=system):
                events.append(event)
                if on_event is not None:
                    on_event(event)
        except ChatError as exc:
            error = exc
    return Outcome(events, error)


async def outcome_for(config: ProviderConfig, pieces: Sequence[bytes], **kw: Any) -> Outcome:
    """Stream from a ``MockServer`` that answers with the SSE body ``pieces`` (await it in an anyio test)."""
    return await collect(config, MockServer(sse_reply(pieces)), **kw)
