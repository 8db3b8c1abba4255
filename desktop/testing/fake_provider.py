"""A loopback HTTP/1.1 server that speaks the OpenAI and Anthropic chat protocols from scripts.

The server runs its own asyncio loop in a background thread, so it serves sync tests, pytest-qt
tests running a qasync loop, the app's ``--demo`` mode and benchmarks alike. HTTP is parsed by hand
(request line, headers, ``Content-Length`` or chunked body); streaming responses use chunked
transfer encoding, and connections are kept alive between complete responses.

Example::

    with FakeProvider() as fp:
        fp.script(Turn(text="Hello!", usage={"input": 10, "output": 3, "cache_read": 5}))
        httpx.post(fp.openai_base_url + "/chat/completions", json={..., "stream": True})
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import http
import itertools
import json
import logging
import threading
import time
from collections.abc import Callable
from types import TracebackType
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from desktop.testing._render import (
    Event,
    Protocol,
    RenderContext,
    anthropic_models,
    error_body,
    error_event,
    malformed_event,
    openai_models,
    render_json,
    render_stream,
)
from desktop.testing._spec import Fault, RecordedRequest, Turn

log = logging.getLogger(__name__)

__all__ = ["FakeProvider", "Responder", "last_user_text", "DEFAULT_MODELS"]

Responder = Callable[[RecordedRequest], Turn]

DEFAULT_MODELS = ["fake-model-large", "fake-model-small"]
_MAX_HEADER_BYTES = 64 * 1024
_MAX_BODY_BYTES = 64 * 1024 * 1024
_WRITE_SLICE = 1024 * 1024
_MIDSTREAM_STATUS = {
    "overloaded_error": 529,
    "rate_limit_error": 429,
    "authentication_error": 401,
    "invalid_request_error": 400,
    "not_found_error": 404,
    "permission_error": 403,
}


class _BadRequest(Exception):
    """The bytes on the wire are not an acceptable HTTP request."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def _reason(status: int) -> str:
    if status == 529:
        return "Overloaded"
    try:
        return http.HTTPStatus(status).phrase
    except ValueError:
        return "Unknown"


def _chunk(data: bytes) -> bytes:
    return b"%x\r\n" % len(data) + data + b"\r\n"


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


class FakeProvider:
    """A scripted fake of both provider APIs on ``127.0.0.1`` and a random port.

    Chat requests (either protocol) consume the ``script`` queue one turn each; when it is empty the
    ``responder`` decides, and without one the server echoes the last user message.

    Args:
        responder: Builds the turn for a request when the script queue is empty. Called on the
            server thread; an exception becomes a 500 ``api_error`` response.
        models: Model ids for ``GET /v1/models`` (default ``DEFAULT_MODELS``).
        api_key: When set, requests must carry it (``Authorization: Bearer`` or ``x-api-key``),
            else they get a 401 in the protocol's error shape.
    """

    def __init__(
        self,
        *,
        responder: Responder | None = None,
        models: list[str] | None = None,
        api_key: str | None = None,
    ) -> None:
        self._responder = responder
        self.models: list[str] = list(models) if models is not None else list(DEFAULT_MODELS)
        self._api_key = api_key
        self._queue: collections.deque[Turn] = collections.deque()
        self._requests: list[RecordedRequest] = []
        self._cond = threading.Condition()
        self._seq = itertools.count(1)
        self._request_seq = itertools.count(1)
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop_event: asyncio.Event | None = None
        self._ready = threading.Event()
        self._startup_error: BaseException | None = None
        self._port = 0
        self._handlers: set[asyncio.Task[None]] = set()
        self._connections = 0

    def __repr__(self) -> str:
        state = f"port={self._port}" if self._port else "stopped"
        return f"FakeProvider({state}, queued={len(self._queue)}, requests={len(self._requests)})"

    # ------------------------------------------------------------------------------------------
    # Lifecycle

    def start(self) -> FakeProvider:
        """Start the server thread and wait until it listens. Returns self."""
        if self._thread is not None:
            raise RuntimeError("FakeProvider already started")
        self._ready.clear()
        self._thread = threading.Thread(target=self._run, name="FakeProvider", daemon=True)
        self._thread.start()
        if not self._ready.wait(10.0):
            raise RuntimeError("FakeProvider did not start within 10 s")
        if self._startup_error is not None:
            self._thread.join()
            self._thread = None
            raise RuntimeError(
                f"FakeProvider failed to start: {self._startup_error}"
            ) from self._startup_error
        return self

    def stop(self) -> None:
        """Close the listener and every connection, then join the server thread. Idempotent."""
        thread, loop, stop_event = self._thread, self._loop, self._stop_event
        if thread is None:
            return
        if loop is not None and stop_event is not None:
            with contextlib.suppress(RuntimeError):  # the loop already ended
                loop.call_soon_threadsafe(stop_event.set)
        thread.join(10.0)
        if thread.is_alive():
            log.warning("FakeProvider thread did not stop within 10 s")
        self._thread = None
        self._loop = None
        self._port = 0

    def __enter__(self) -> FakeProvider:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT`` (the server must be started)."""
        if not self._port:
            raise RuntimeError("FakeProvider is not running")
        return f"http://127.0.0.1:{self._port}"

    @property
    def openai_base_url(self) -> str:
        """Base URL for OpenAI-compatible clients (``…/v1``)."""
        return self.base_url + "/v1"

    @property
    def anthropic_base_url(self) -> str:
        """Base URL for Anthropic clients (they append ``/v1/messages``)."""
        return self.base_url

    # ------------------------------------------------------------------------------------------
    # Scripting and recording

    def script(self, *turns: Turn) -> None:
        """Queue turns; each chat request (either protocol) consumes one, first in first out."""
        with self._cond:
            self._queue.extend(turns)

    @property
    def pending_turns(self) -> int:
        """How many scripted turns are still queued."""
        with self._cond:
            return len(self._queue)

    @property
    def requests(self) -> list[RecordedRequest]:
        """A snapshot of every request received so far, in arrival order."""
        with self._cond:
            return list(self._requests)

    @property
    def connection_count(self) -> int:
        """How many TCP connections the server accepted (keep-alive reuse keeps it low)."""
        return self._connections

    def clear_requests(self) -> None:
        """Forget the recorded requests."""
        with self._cond:
            self._requests.clear()

    def wait_for_requests(self, n: int, timeout: float = 5.0) -> None:
        """Block until at least ``n`` requests were received.

        Raises:
            TimeoutError: Fewer than ``n`` requests arrived within ``timeout`` seconds.
        """
        with self._cond:
            if not self._cond.wait_for(lambda: len(self._requests) >= n, timeout):
                raise TimeoutError(f"expected {n} requests within {timeout} s, got {len(self._requests)}")

    @staticmethod
    def fast_turn(n_events: int, *, model: str = "fake-fast") -> Turn:
        """A benchmark turn: ``n_events`` tiny text deltas, no delays, bytes rendered ahead.

        The body is rendered once per protocol (and per ``include_usage`` for OpenAI) and cached on
        the turn, so scripting the same turn many times costs nothing extra.
        """
        turn = Turn(
            text="tok " * n_events,
            chunk_chars=4,
            model=model,
            usage={"input": 12, "output": n_events, "cache_read": 0, "cache_write": 0, "reasoning": 0},
        )
        for protocol, include_usage in (("openai", True), ("anthropic", False)):
            ctx = RenderContext(model=model, include_usage=include_usage)
            events = render_stream(protocol, turn, ctx)  # type: ignore[arg-type]
            turn._rendered[(protocol, model, include_usage)] = b"".join(e.data for e in events)
        return turn

    # ------------------------------------------------------------------------------------------
    # Server thread

    def _run(self) -> None:
        try:
            asyncio.run(self._main())
        except BaseException as exc:  # noqa: BLE001 - reported to start() or logged
            if not self._ready.is_set():
                self._startup_error = exc
                self._ready.set()
            else:
                log.exception("FakeProvider server thread crashed")

    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop_event = asyncio.Event()
        server = await asyncio.start_server(self._on_connection, "127.0.0.1", 0, limit=_MAX_HEADER_BYTES)
        self._port = server.sockets[0].getsockname()[1]
        log.debug("FakeProvider listening on %s", self._port)
        self._ready.set()
        try:
            await self._stop_event.wait()
        finally:
            server.close()
            handlers = list(self._handlers)
            for task in handlers:
                task.cancel()
            await asyncio.gather(*handlers, return_exceptions=True)
            await server.wait_closed()

    async def _on_connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._handlers.add(task)
        self._connections += 1
        try:
            while True:
                try:
                    request = await self._read_request(reader)
                except _BadRequest as exc:
                    body = json.dumps(
                        {"error": {"message": str(exc), "type": "invalid_request_error"}}
                    ).encode()
                    await self._send(writer, exc.status, body, keep_alive=False)
                    break
                if request is None:
                    break
                if not await self._dispatch(request, writer):
                    break
        except asyncio.CancelledError:
            writer.transport.abort()
        except (ConnectionError, asyncio.IncompleteReadError, TimeoutError):
            pass
        except Exception:
            log.exception("FakeProvider connection handler failed")
        finally:
            writer.close()
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await writer.wait_closed()
            self._handlers.discard(task)

    async def _read_request(self, reader: asyncio.StreamReader) -> RecordedRequest | None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError as exc:
            if exc.partial.strip():
                raise _BadRequest(400, "incomplete request head") from None
            return None
        except asyncio.LimitOverrunError:
            raise _BadRequest(431, "request head too large") from None
        lines = head[:-4].decode("latin-1").split("\r\n")
        parts = lines[0].split(" ")
        if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
            raise _BadRequest(400, f"bad request line: {lines[0][:100]!r}")
        method, target, _version = parts
        headers: dict[str, str] = {}
        for line in lines[1:]:
            name, sep, value = line.partition(":")
            if not sep:
                raise _BadRequest(400, f"bad header line: {line[:100]!r}")
            headers[name.strip().lower()] = value.strip()
        if headers.get("transfer-encoding", "").lower() == "chunked":
            body = await self._read_chunked(reader)
        else:
            try:
                length = int(headers.get("content-length", "0"))
            except ValueError:
                raise _BadRequest(400, "bad content-length") from None
            if length < 0 or length > _MAX_BODY_BYTES:
                raise _BadRequest(413, "request body too large")
            body = await reader.readexactly(length) if length else b""
        parsed: Any | None = None
        if body:
            try:
                parsed = json.loads(body)
            except ValueError:
                parsed = None
        url = urlsplit(target)
        request = RecordedRequest(method.upper(), url.path, headers, body, parsed, dict(parse_qsl(url.query)))
        with self._cond:
            self._requests.append(request)
            self._cond.notify_all()
        return request

    async def _read_chunked(self, reader: asyncio.StreamReader) -> bytes:
        body = bytearray()
        while True:
            size_line = await reader.readuntil(b"\r\n")
            try:
                size = int(size_line.split(b";")[0].strip(), 16)
            except ValueError:
                raise _BadRequest(400, "bad chunk size") from None
            if size == 0:
                while (await reader.readuntil(b"\r\n")) != b"\r\n":  # trailers
                    pass
                return bytes(body)
            body += await reader.readexactly(size)
            await reader.readexactly(2)
            if len(body) > _MAX_BODY_BYTES:
                raise _BadRequest(413, "request body too large")

    # ------------------------------------------------------------------------------------------
    # Routing

    @staticmethod
    def _protocol_of(request: RecordedRequest) -> Protocol:
        if request.path.endswith("/messages"):
            return "anthropic"
        if request.path.endswith("/chat/completions"):
            return "openai"
        if "anthropic-version" in request.headers or "x-api-key" in request.headers:
            return "anthropic"
        return "openai"

    def _authorized(self, request: RecordedRequest) -> bool:
        if self._api_key is None:
            return True
        bearer = request.headers.get("authorization", "")
        if bearer.lower().startswith("bearer ") and bearer[7:].strip() == self._api_key:
            return True
        return request.headers.get("x-api-key") == self._api_key

    async def _dispatch(self, request: RecordedRequest, writer: asyncio.StreamWriter) -> bool:
        """Answer one request; returns whether the connection may serve another."""
        protocol = self._protocol_of(request)
        keep = request.headers.get("connection", "").lower() != "close"
        request_id = f"req_fake{next(self._request_seq):06d}"
        routes = {"/v1/chat/completions": "POST", "/v1/messages": "POST", "/v1/models": "GET"}
        path = request.path.rstrip("/") or "/"
        if path not in routes and not path.startswith("/v1/models/"):
            body = error_body(
                protocol, 404, message=f"no route for {request.method} {request.path}", request_id=request_id
            )
            return await self._send(writer, 404, body, keep_alive=keep)
        expected = routes.get(path, "GET")
        if request.method != expected:
            body = error_body(
                protocol,
                405,
                error_type="invalid_request_error",
                message=f"method {request.method} not allowed on {path}",
                request_id=request_id,
            )
            return await self._send(writer, 405, body, keep_alive=keep, extra={"allow": expected})
        if not self._authorized(request):
            return await self._send(
                writer, 401, error_body(protocol, 401, request_id=request_id), keep_alive=keep
            )
        if path == "/v1/models":
            if protocol == "anthropic":
                status, body = anthropic_models(self.models, request.query)
            else:
                status, body = 200, openai_models(self.models)
            return await self._send(writer, status, body, keep_alive=keep)
        if path.startswith("/v1/models/"):
            model_id = path[len("/v1/models/") :]
            if model_id not in self.models:
                body = error_body(protocol, 404, message=f"model: {model_id}", request_id=request_id)
                return await self._send(writer, 404, body, keep_alive=keep)
            obj = (
                {"id": model_id, "type": "model", "display_name": model_id}
                if protocol == "anthropic"
                else {"id": model_id, "object": "model"}
            )
            return await self._send(writer, 200, json.dumps(obj).encode(), keep_alive=keep)
        if not isinstance(request.json, dict):
            body = error_body(
                protocol, 400, message="request body must be a JSON object", request_id=request_id
            )
            return await self._send(writer, 400, body, keep_alive=keep)
        try:
            turn = self._next_turn(request)
        except Exception as exc:
            log.exception("FakeProvider responder failed")
            body = error_body(protocol, 500, message=f"responder failed: {exc}", request_id=request_id)
            return await self._send(writer, 500, body, keep_alive=keep)
        return await self._chat(request, protocol, turn, writer, keep, request_id)

    def _next_turn(self, request: RecordedRequest) -> Turn:
        with self._cond:
            if self._queue:
                return self._queue.popleft()
        if self._responder is not None:
            return self._responder(request)
        return Turn(text=f"Echo: {last_user_text(request)}")

    # ------------------------------------------------------------------------------------------
    # Chat responses

    async def _chat(
        self,
        request: RecordedRequest,
        protocol: Protocol,
        turn: Turn,
        writer: asyncio.StreamWriter,
        keep: bool,
        request_id: str,
    ) -> bool:
        body: dict[str, Any] = request.json if isinstance(request.json, dict) else {}
        model = (
            turn.model or (body.get("model") if isinstance(body.get("model"), str) else None) or "fake-model"
        )
        stream = body.get("stream") is True
        options = body.get("stream_options")
        include_usage = isinstance(options, dict) and options.get("include_usage") is True
        fault = turn.fault
        if fault is not None and fault.kind == "drop":
            keep = False  # announce the close, so a client never reuses the dropped connection
        if turn.delay_first_byte > 0:
            await asyncio.sleep(turn.delay_first_byte)
        if fault is not None and fault.kind == "http":
            return await self._send_http_fault(writer, protocol, fault, keep, request_id)
        if turn.raw_body is not None:
            ctype = (
                "application/json"
                if turn.raw_body.lstrip()[:1] == b"{"
                else "text/event-stream; charset=utf-8"
            )
            return await self._send(writer, 200, turn.raw_body, keep_alive=keep, content_type=ctype)
        ctx = RenderContext(
            model=model, include_usage=include_usage, seq=next(self._seq), request_bytes=len(request.body)
        )
        if not stream:
            return await self._chat_json(writer, protocol, turn, ctx, keep, request_id)
        headers = {
            "content-type": "text/event-stream; charset=utf-8",
            "cache-control": "no-cache",
            "transfer-encoding": "chunked",
            "request-id": request_id,
            "x-request-id": request_id,
        }
        writer.write(self._head(200, headers, keep))
        if turn.tokens_per_second is None and (fault is None or fault.kind == "huge_chunk"):
            await self._write_fast(writer, self._rendered(protocol, turn, ctx))
            writer.write(b"0\r\n\r\n")
            await writer.drain()
            return keep
        events = render_stream(protocol, turn, ctx)
        return await self._write_events(writer, protocol, events, turn, request_id) and keep

    @staticmethod
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

    @staticmethod
    async def _write_fast(writer: asyncio.StreamWriter, data: bytes) -> None:
        view = memoryview(data)
        for start in range(0, len(view), _WRITE_SLICE):
            piece = view[start : start + _WRITE_SLICE]
            writer.write(b"%x\r\n" % len(piece))
            writer.write(piece)
            writer.write(b"\r\n")
            await writer.drain()

    async def _write_events(
        self,
        writer: asyncio.StreamWriter,
        protocol: Protocol,
        events: list[Event],
        turn: Turn,
        request_id: str,
    ) -> bool:
        """Write events one by one with drip pacing and the turn's fault; False when the connection ends."""
        fault = turn.fault
        at = fault.after_events if fault is not None else -1
        interval = 1.0 / turn.tokens_per_second if turn.tokens_per_second else 0.0
        loop = asyncio.get_running_loop()
        next_at = loop.time()
        for i, event in enumerate([*events, None]):
            if i == at and fault is not None:
                outcome = await self._apply_fault(writer, protocol, fault, request_id)
                if outcome == "closed":
                    return False
                if outcome == "end":
                    break
            if event is None:
                break
            if event.token and interval:
                next_at += interval
                delay = next_at - loop.time()
                if delay > 0:
                    await asyncio.sleep(delay)
                else:
                    next_at = loop.time()
            writer.write(_chunk(event.data))
            await writer.drain()
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        return True

    async def _apply_fault(
        self, writer: asyncio.StreamWriter, protocol: Protocol, fault: Fault, request_id: str
    ) -> str:
        """Inject a fault into a stream: ``continue`` the events, ``end`` the body, or ``closed``."""
        if fault.kind == "midstream_error":
            event = error_event(
                protocol, fault.error_type or "api_error", fault.message or "Error", request_id
            )
            writer.write(_chunk(event))
            return "end"
        if fault.kind == "drop":
            if fault.clean_eof:
                writer.write(b"0\r\n\r\n")
            await writer.drain()
            writer.close()
            return "closed"
        if fault.kind == "stall":
            await writer.drain()
            await asyncio.sleep(fault.seconds)
        elif fault.kind == "malformed":
            writer.write(_chunk(malformed_event(protocol)))
            await writer.drain()
        return "continue"

    async def _chat_json(
        self,
        writer: asyncio.StreamWriter,
        protocol: Protocol,
        turn: Turn,
        ctx: RenderContext,
        keep: bool,
        request_id: str,
    ) -> bool:
        fault = turn.fault
        extra = {"request-id": request_id}
        if fault is not None:
            if fault.kind == "drop":
                writer.close()
                return False
            if fault.kind == "stall":
                await asyncio.sleep(fault.seconds)
            elif fault.kind == "malformed":
                return await self._send(
                    writer, 200, b'{"id": "broken", "content": [', keep_alive=keep, extra=extra
                )
            elif fault.kind == "midstream_error":
                etype = fault.error_type or "api_error"
                status = _MIDSTREAM_STATUS.get(etype, 500)
                body = error_body(
                    protocol, status, error_type=etype, message=fault.message, request_id=request_id
                )
                return await self._send(writer, status, body, keep_alive=keep, extra=extra)
        return await self._send(writer, 200, render_json(protocol, turn, ctx), keep_alive=keep, extra=extra)

    async def _send_http_fault(
        self, writer: asyncio.StreamWriter, protocol: Protocol, fault: Fault, keep: bool, request_id: str
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
                    "text/html; charset=utf-8"
                    if body.lstrip().startswith(b"<")
                    else "text/plain; charset=utf-8"
                )
        return await self._send(writer, fault.status, body, keep_alive=keep, content_type=ctype, extra=extra)

    # ------------------------------------------------------------------------------------------
    # HTTP output

    @staticmethod
    def _head(status: int, headers: dict[str, str], keep_alive: bool) -> bytes:
        date = time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime())
        lines = [f"HTTP/1.1 {status} {_reason(status)}", f"date: {date}", "server: chatnodes-fake"]
        lines += [f"{k}: {v}" for k, v in headers.items()]
        lines.append("connection: keep-alive" if keep_alive else "connection: close")
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")

    async def _send(
        self,
        writer: asyncio.StreamWriter,
        status: int,
        body: bytes,
        *,
        keep_alive: bool,
        content_type: str = "application/json",
        extra: dict[str, str] | None = None,
    ) -> bool:
        headers = {"content-type": content_type, "content-length": str(len(body)), **(extra or {})}
        writer.write(self._head(status, headers, keep_alive) + body)
        await writer.drain()
        return keep_alive
