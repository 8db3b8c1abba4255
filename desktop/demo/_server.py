"""A loopback HTTP/1.1 server that speaks the OpenAI and Anthropic chat protocols from scripts.

The server runs its own asyncio loop in a background thread, so it serves sync tests, pytest-qt
tests running a qasync loop, the app's ``--demo`` mode and benchmarks alike. The wire format lives in
``_wire`` (hand-parsed requests, chunked streaming responses, keep-alive between complete responses)
and the chat answers in ``_respond``.

Example::

    with LoopbackProvider() as provider:
        provider.script(Turn(text="Hello!", usage={"input": 10, "output": 3, "cache_read": 5}))
        httpx.post(provider.openai_base_url + "/chat/completions", json={..., "stream": True})
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import itertools
import json
import logging
import threading
from types import TracebackType

from desktop.demo._clock import Clock, LoopClock
from desktop.demo._render import (
    Protocol,
    RenderContext,
    anthropic_models,
    error_body,
    openai_models,
    render_stream,
)
from desktop.demo._respond import write_chat
from desktop.demo._spec import RecordedRequest, Responder, Turn, last_user_text
from desktop.demo._wire import MAX_HEADER_BYTES, BadRequest, read_request, send

log = logging.getLogger(__name__)

__all__ = ["DEFAULT_MODELS", "FakeProvider", "LoopbackProvider"]

DEFAULT_MODELS = ["fake-model-large", "fake-model-small"]


class LoopbackProvider:
    """A scripted stand-in for both provider APIs on ``127.0.0.1`` and a random port.

    Chat requests (either protocol) consume the ``script`` queue one turn each; when it is empty the
    ``responder`` decides, and without one the server echoes the last user message.

    Args:
        responder: Builds the turn for a request when the script queue is empty. Called on the
            server thread; an exception becomes a 500 ``api_error`` response.
        models: Model ids for ``GET /v1/models`` (default ``DEFAULT_MODELS``).
        api_key: When set, requests must carry it (``Authorization: Bearer`` or ``x-api-key``),
            else they get a 401 in the protocol's error shape.
        clock: What drip pacing, stalls and first-byte delays wait on (default: the real clock of
            the server's loop; tests pass one that records the waits, ``desktop.testing.clock``).
    """

    def __init__(
        self,
        *,
        responder: Responder | None = None,
        models: list[str] | None = None,
        api_key: str | None = None,
        clock: Clock | None = None,
    ) -> None:
        self._responder = responder
        self.clock: Clock = clock or LoopClock()
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
        self._writers: set[asyncio.StreamWriter] = set()
        self._connections = 0

    def __repr__(self) -> str:
        state = f"port={self._port}" if self._port else "stopped"
        return f"LoopbackProvider({state}, queued={len(self._queue)}, requests={len(self._requests)})"

    # ------------------------------------------------------------------------------------------
    # Lifecycle

    def start(self) -> LoopbackProvider:
        """Start the server thread and wait until it listens. Returns self."""
        if self._thread is not None:
            raise RuntimeError("LoopbackProvider already started")
        self._ready.clear()
        self._thread = threading.Thread(target=self._run, name="LoopbackProvider", daemon=True)
        self._thread.start()
        if not self._ready.wait(10.0):
            raise RuntimeError("LoopbackProvider did not start within 10 s")
        if self._startup_error is not None:
            self._thread.join()
            self._thread = None
            raise RuntimeError(
                f"LoopbackProvider failed to start: {self._startup_error}"
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
            log.warning("LoopbackProvider thread did not stop within 10 s")
        self._thread = None
        self._loop = None
        self._port = 0

    def __enter__(self) -> LoopbackProvider:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT`` (the server must be started)."""
        if not self._port:
            raise RuntimeError("LoopbackProvider is not running")
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
        renderings: tuple[tuple[Protocol, bool], ...] = (("openai", True), ("anthropic", False))
        for protocol, include_usage in renderings:
            ctx = RenderContext(model=model, include_usage=include_usage)
            events = render_stream(protocol, turn, ctx)
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
                log.exception("LoopbackProvider server thread crashed")

    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop_event = asyncio.Event()
        server = await asyncio.start_server(self._accept, "127.0.0.1", 0, limit=MAX_HEADER_BYTES)
        self._port = server.sockets[0].getsockname()[1]
        log.debug("LoopbackProvider listening on %s", self._port)
        self._ready.set()
        try:
            await self._stop_event.wait()
        finally:
            await self._settle_accepts()
            server.close()  # no await since the check above: nothing new is accepted in between
            handlers = list(self._handlers)
            for task in handlers:
                task.cancel()
            await asyncio.gather(*handlers, return_exceptions=True)
            # A handler cancelled before its first step never runs its ``finally``: close its socket.
            for writer in list(self._writers):
                writer.transport.abort()
            await asyncio.sleep(0)  # the aborts close the sockets in their connection_lost callbacks
            await server.wait_closed()

    async def _settle_accepts(self) -> None:
        """Wait for connections that asyncio accepted but has not attached to the server yet.

        On Python 3.11, closing the server while such a set-up task is pending makes it fail
        (``Server._attach`` asserts) and leaks the accepted socket, so the stop waits for them first.
        """
        current = asyncio.current_task()
        while True:
            setting_up = [t for t in asyncio.all_tasks() if t is not current and t not in self._handlers]
            if not setting_up:
                return
            _done, pending = await asyncio.wait(setting_up, timeout=1.0)
            if pending:
                log.warning("LoopbackProvider: %d connection(s) still setting up at stop", len(pending))
                return

    def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Register a new connection at once (synchronously, on accept) and start its handler."""
        self._writers.add(writer)
        self._connections += 1
        task = asyncio.get_running_loop().create_task(self._on_connection(reader, writer))
        self._handlers.add(task)
        task.add_done_callback(self._handlers.discard)

    async def _on_connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                try:
                    request = await self._read_request(reader)
                except BadRequest as exc:
                    body = json.dumps(
                        {"error": {"message": str(exc), "type": "invalid_request_error"}}
                    ).encode()
                    await send(writer, exc.status, body, keep_alive=False)
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
            log.exception("LoopbackProvider connection handler failed")
        finally:
            writer.close()
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await writer.wait_closed()
            self._writers.discard(writer)

    async def _read_request(self, reader: asyncio.StreamReader) -> RecordedRequest | None:
        request = await read_request(reader)
        if request is not None:
            with self._cond:
                self._requests.append(request)
                self._cond.notify_all()
        return request

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
            return await send(writer, 404, body, keep_alive=keep)
        expected = routes.get(path, "GET")
        if request.method != expected:
            body = error_body(
                protocol,
                405,
                error_type="invalid_request_error",
                message=f"method {request.method} not allowed on {path}",
                request_id=request_id,
            )
            return await send(writer, 405, body, keep_alive=keep, extra={"allow": expected})
        if not self._authorized(request):
            return await send(writer, 401, error_body(protocol, 401, request_id=request_id), keep_alive=keep)
        if path == "/v1/models":
            if protocol == "anthropic":
                status, body = anthropic_models(self.models, request.query)
            else:
                status, body = 200, openai_models(self.models)
            return await send(writer, status, body, keep_alive=keep)
        if path.startswith("/v1/models/"):
            model_id = path[len("/v1/models/") :]
            if model_id not in self.models:
                body = error_body(protocol, 404, message=f"model: {model_id}", request_id=request_id)
                return await send(writer, 404, body, keep_alive=keep)
            obj = (
                {"id": model_id, "type": "model", "display_name": model_id}
                if protocol == "anthropic"
                else {"id": model_id, "object": "model"}
            )
            return await send(writer, 200, json.dumps(obj).encode(), keep_alive=keep)
        if not isinstance(request.json, dict):
            body = error_body(
                protocol, 400, message="request body must be a JSON object", request_id=request_id
            )
            return await send(writer, 400, body, keep_alive=keep)
        try:
            turn = self._next_turn(request)
        except Exception as exc:
            log.exception("LoopbackProvider responder failed")
            body = error_body(protocol, 500, message=f"responder failed: {exc}", request_id=request_id)
            return await send(writer, 500, body, keep_alive=keep)
        seq = next(self._seq)
        return await write_chat(request, protocol, turn, writer, keep, request_id, seq, self.clock)

    def _next_turn(self, request: RecordedRequest) -> Turn:
        with self._cond:
            if self._queue:
                return self._queue.popleft()
        if self._responder is not None:
            return self._responder(request)
        return Turn(text=f"Echo: {last_user_text(request)}")


FakeProvider = LoopbackProvider
"""The name the tests and benchmarks use for ``LoopbackProvider``."""
