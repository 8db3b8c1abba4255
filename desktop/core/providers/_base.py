"""The request/stream loop shared by both drivers: retries, status handling, SSE, stall timeout.

A driver subclass builds the request and supplies a :class:`StreamParser`, a synchronous
object that turns decoded SSE events into chat events. Keeping the parser synchronous means
the loop below is the only async generator between the socket and the caller.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import AsyncIterator, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, contextmanager
from typing import Any

import httpx

from desktop.core.attachments import (
    AttachmentSource,
    ResolvedAttachments,
    WirePart,
    has_attachments,
    unresolved_attachments,
)
from desktop.core.chat.types import (
    ChatError,
    ChatEvent,
    ChatMessage,
    ChatToolDef,
    Delta,
    Notice,
    ProviderConfig,
    Thinking,
)
from desktop.core.cpu_state import clear_upper_state

from ._body import ACCEPT_ENCODING, BodyDecodeError, iter_body, read_limited
from ._http import (
    CONNECT_TIMEOUT,
    DEFAULT_STREAM_TIMEOUT,
    ERROR_BODY_LIMIT,
    RetryPolicy,
    check_api_key,
    error_from_http,
    error_from_payload,
    is_retryable_status,
    parse_retry_after,
    scrub_error,
    shared_client,
    transport_error,
)
from ._json import loads
from ._local import local_server_error
from ._sse import MAX_EVENT_CHARS, MAX_LINE_CHARS, SSEDecoder, SSEError, SSEEvent
from ._stall import StallGuard

log = logging.getLogger(__name__)

__all__ = ["StreamParser", "StreamingDriver", "coalesce"]

# Mid-stream error kinds worth another attempt when nothing reached the caller yet.
_RETRYABLE_KINDS = frozenset({"overloaded", "server", "rate_limit", "network"})

SLICE_SECONDS = 0.002
"""How long, in all, several open streams may decode before each of them has handed out what it
has and yielded to the event loop once: each of 2 streams decodes 1 ms at a time, each of 8 0.25 ms.
A fast stream delivers 64 KB reads (~500 events, ~4 ms to decode); on a GUI event loop running
several streams, decoding whole reads back to back would hold up timers, input and painting for
tens of milliseconds."""
SOLE_SLICE_SECONDS = 0.004
"""The slice of a stream decoding alone (the usual case: one node answering). Each yield costs a
pass of the GUI loop, and the decoding loses its warm caches to what runs in between: 4 ms slices
halve the passes (a 150 ms stream into a node: -2.6 % in interleaved runs) and still leave input
and painting the loop within a quarter of a frame."""
MIN_SLICE_SECONDS = 0.00025
_streams_reading = 0  # streams of this process between their first and last read (one event loop)
_SLICE_CHECK = 16  # events between clock reads
_PIECE_BYTES = 8192  # a big read is framed this much at a time, so a slice never frames 64 KB at once


def _slice_seconds() -> float:
    if _streams_reading <= 1:
        return SOLE_SLICE_SECONDS
    return max(MIN_SLICE_SECONDS, SLICE_SECONDS / _streams_reading)


@contextmanager
def _reading() -> Iterator[None]:
    """Count a stream as reading while inside (its slices shrink as more streams read)."""
    global _streams_reading
    _streams_reading += 1
    try:
        yield
    finally:
        _streams_reading -= 1


def _decode_pieces(decoder: SSEDecoder, chunk: bytes) -> Iterator[list[SSEEvent]]:
    """The events of ``chunk``, framed piece by piece (lazily: a slice frames only what it handles)."""
    if len(chunk) <= _PIECE_BYTES:
        yield decoder.feed(chunk)
        return
    view = memoryview(chunk)
    for start in range(0, len(chunk), _PIECE_BYTES):
        yield decoder.feed(bytes(view[start : start + _PIECE_BYTES]))


def coalesce(events: list[ChatEvent]) -> list[ChatEvent]:
    """Merge runs of adjacent ``Delta`` events, and of adjacent plain ``Thinking`` text events, into one.

    The events of one network read are handed out together, so a fast stream (hundreds of tiny
    deltas per read) reaches the loop, the runtime and the UI as one event per read instead of one
    per token: every consumer pays its per-event cost once. The text and the order of everything else
    are unchanged; a ``Thinking`` event carrying a signature or redacted data is never merged.
    """
    merged: list[ChatEvent] = []
    texts: list[str] = []
    run_kind: type[Delta] | type[Thinking] = Delta
    for event in events:
        kind: type[Delta] | type[Thinking]
        if isinstance(event, Delta):
            kind = Delta
        elif isinstance(event, Thinking) and event.signature is None and event.redacted_data is None:
            kind = Thinking
        else:
            if texts:
                merged.append(_joined(run_kind, texts))
                texts = []
            merged.append(event)
            continue
        if texts and kind is not run_kind:
            merged.append(_joined(run_kind, texts))
            texts = []
        run_kind = kind
        texts.append(event.text)
    if texts:
        merged.append(_joined(run_kind, texts))
    return merged


def _joined(kind: type[Delta] | type[Thinking], texts: list[str]) -> ChatEvent:
    text = texts[0] if len(texts) == 1 else "".join(texts)
    return Delta(text) if kind is Delta else Thinking(text)


class StreamParser:
    """Turns SSE events of one response into chat events (synchronous, no I/O).

    Attributes:
        out: Events produced so far and not yet handed out; the loop drains it.
        visible: True once a Delta, Thinking or ToolCallRequested has been produced.
        finished: True once the response is complete; the loop stops reading.
    """

    __slots__ = ("out", "visible", "finished")

    def __init__(self) -> None:
        self.out: list[ChatEvent] = []
        self.visible = False
        self.finished = False

    def handle(self, event: SSEEvent) -> None:
        """Process one SSE event, appending to ``out``; raise ``ChatError`` for a reported error."""
        raise NotImplementedError

    def end_of_body(self) -> None:
        """The body ended: finish up or raise ``ChatError`` for a truncated response."""
        raise NotImplementedError


class _Retry(Exception):
    """Internal: the attempt failed in a way that may be retried."""

    def __init__(self, error: ChatError, retry_after: float | None = None) -> None:
        super().__init__(error.message)
        self.error = error
        self.retry_after = retry_after


class _Again(Exception):
    """Internal: repeat the request at once with a changed body (not counted as a retry)."""


class StreamingDriver:
    """Base of the provider drivers: one streamed HTTP request per ``stream`` call.

    Args:
        config: The provider to talk to.
        client: The ``httpx.AsyncClient`` to use; None uses the shared client.
        retry: Retry policy (default: 2 retries, 0.5 s backoff doubling up to 8 s).
        stream_timeout: Seconds without any byte after which a stream fails with a
            ``network`` error.
        max_event_chars: The largest server-sent event (its data, in characters) accepted; a
            larger one ends the stream with a ``protocol`` error after the text received so far.
        attachments: Reads the files of the user messages' attachment references at send time
            (the project's ``AttachmentResolver``); without one, each attachment is sent as a note
            saying it was not available.
    """

    def __init__(
        self,
        config: ProviderConfig,
        *,
        client: httpx.AsyncClient | None = None,
        retry: RetryPolicy | None = None,
        stream_timeout: float = DEFAULT_STREAM_TIMEOUT,
        max_event_chars: int = MAX_EVENT_CHARS,
        attachments: AttachmentSource | None = None,
    ) -> None:
        self.config = config
        self._client = client
        self.retry = retry if retry is not None else RetryPolicy()
        self.stream_timeout = stream_timeout
        self.max_event_chars = max_event_chars
        self.attachments = attachments
        self._told: set[str] = set()  # attachment notices already given by this driver (one run)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(provider={self.config.id!r}, base_url={self.config.base_url!r})"

    # -- subclass hooks ---------------------------------------------------------------------

    def endpoint(self) -> str:
        """The streaming endpoint URL."""
        raise NotImplementedError

    def headers(self) -> dict[str, str]:
        """Request headers, credentials included."""
        raise NotImplementedError

    def build_body(
        self,
        *,
        model: str,
        messages: Sequence[ChatMessage],
        tools: Sequence[ChatToolDef],
        system: str | None,
        attachments: Mapping[str, Sequence[WirePart]] | None = None,
    ) -> dict[str, Any]:
        """The JSON request body; ``attachments`` are the user messages' attachment parts by id."""
        raise NotImplementedError

    def new_parser(self, model: str) -> StreamParser:
        """A fresh parser for one response."""
        raise NotImplementedError

    def adjust_after_error(self, status: int, body_text: str, body: dict[str, Any]) -> bool:
        """Change ``body`` after an error answer and return True to resend it at once."""
        return False

    # -- the loop -----------------------------------------------------------------------------

    @property
    def client(self) -> httpx.AsyncClient:
        """The HTTP client in use."""
        return self._client if self._client is not None else shared_client()

    def _error(self, err: ChatError) -> ChatError:
        return scrub_error(err, self.config.api_key)

    def _transport_error(self, exc: BaseException) -> ChatError:
        """A transport failure; one to a local server that is not running says how to start it."""
        return local_server_error(transport_error(exc, provider=self.config.id), self.config.base_url)

    async def stream(
        self,
        *,
        model: str,
        messages: Sequence[ChatMessage],
        tools: Sequence[ChatToolDef],
        system: str | None = None,
    ) -> AsyncIterator[ChatEvent]:
        """Stream one model response as chat events (see ``ChatDriver``).

        Raises:
            ChatError: The provider or the transport failed; events already yielded stay valid.
        """
        check_api_key(self.config.api_key, provider=self.config.id)
        resolved = await self._attachment_parts(model, messages)
        for notice in resolved.notices:
            if notice not in self._told:  # once per run, not once per model call of its tool loop
                self._told.add(notice)
                yield Notice(notice)
        body = self.build_body(model=model, messages=messages, tools=tools, system=system,
                               attachments=resolved.parts)
        retries = 0
        while True:
            parser = self.new_parser(model)
            # One generator only, on purpose: the events are yielded right here, so closing or
            # cancelling this generator exits ``client.stream`` and closes the response at once.
            # The stall timeout: one timer per stream (``_stall``), not httpx's per socket read.
            guard = StallGuard(self.stream_timeout)
            try:
                try:
                    guard.reading()  # the request, the response's head and an error's body: one wait
                    async with self._open(body) as response:
                        # Like httpx's own iterators, the body reader is not closed explicitly:
                        # leaving the block closes the response. When a consumer drops this
                        # generator unfinished, an awaited close of the reader here would suspend
                        # inside the garbage collector's finaliser (httpcore's cleanup awaits).
                        raw = iter_body(response)
                        await self._check_status(response, body)
                        guard.idle()
                        out = parser.out
                        limit = self.max_event_chars
                        decoder = SSEDecoder(max_line_chars=min(limit, MAX_LINE_CHARS), max_event_chars=limit)
                        chunks = raw.__aiter__()
                        handle = parser.handle
                        with _reading():
                            while True:
                                batches: Iterable[list[SSEEvent]]
                                guard.reading()
                                try:
                                    chunk = await chunks.__anext__()
                                except StopAsyncIteration:
                                    batches = (decoder.flush(),)
                                    at_end = True
                                else:
                                    batches = _decode_pieces(decoder, chunk)
                                    at_end = False
                                guard.idle()
                                failure: ChatError | None = None
                                try:
                                    # What ran while this waited (a paint) may have left the CPU in
                                    # a state that slows decoding by ~15 % (``desktop.core.cpu_state``).
                                    clear_upper_state()
                                    started = time.perf_counter()
                                    handled = 0
                                    slice_s = _slice_seconds()
                                    for events in batches:
                                        for sse in events:
                                            handle(sse)
                                            if parser.finished:
                                                break
                                            handled += 1
                                            if (
                                                handled % _SLICE_CHECK == 0
                                                and out
                                                and time.perf_counter() - started >= slice_s
                                            ):
                                                # Hand out what this slice produced and let the loop run.
                                                for event in coalesce(out) if len(out) > 1 else out:
                                                    yield event
                                                out.clear()
                                                await asyncio.sleep(0)
                                                clear_upper_state()
                                                started = time.perf_counter()
                                                slice_s = _slice_seconds()
                                        if parser.finished:
                                            break
                                    if at_end and not parser.finished:
                                        parser.end_of_body()
                                except ChatError as reported:
                                    failure = reported
                                except SSEError as exc:
                                    failure = ChatError(f"malformed event stream: {exc}",
                                                        provider=self.config.id, kind="protocol")
                                except Exception as bug:  # a shape the parser did not expect
                                    log.warning("could not decode a %s stream event", self.config.id,
                                                exc_info=bug)
                                    failure = ChatError(
                                        f"could not decode the provider's stream ({type(bug).__name__})",
                                        provider=self.config.id, kind="protocol")
                                if out:
                                    for event in coalesce(out) if len(out) > 1 else out:
                                        yield event
                                    out.clear()
                                if failure is not None:
                                    if not parser.visible and failure.kind in _RETRYABLE_KINDS:
                                        raise _Retry(failure)
                                    raise failure
                                if parser.finished or at_end:
                                    return
                except asyncio.CancelledError:
                    if guard.expired():
                        raise self._stalled() from None
                    raise
                except httpx.TimeoutException as exc:
                    if isinstance(exc, httpx.ConnectTimeout | httpx.PoolTimeout):
                        raise _Retry(self._transport_error(exc)) from None
                    raise self._stalled() from None
                except httpx.TransportError as exc:
                    raise _Retry(self._transport_error(exc)) from None
                except (SSEError, BodyDecodeError) as exc:
                    raise ChatError(
                        f"malformed event stream: {exc}", provider=self.config.id, kind="protocol"
                    ) from None
                finally:
                    guard.close()
            except _Again:
                continue
            except _Retry as retry:
                final = self._error(retry.error)
                delay = None if parser.visible else self.retry.delay_for(retries, retry.retry_after)
                if delay is None:
                    raise final from None
                retries += 1
                log.info(
                    "%s: %s; retry %d/%d in %.2f s",
                    self.config.id, final.message, retries, self.retry.max_retries, delay,
                )
                await self.retry.sleep(delay)
            except ChatError as fatal:
                raise self._error(fatal) from None

    async def _attachment_parts(self, model: str, messages: Sequence[ChatMessage]) -> ResolvedAttachments:
        """The attachment parts of ``messages`` (a failing resolver costs the parts, not the send)."""
        if not has_attachments(messages):
            return ResolvedAttachments()
        if self.attachments is None:
            log.warning("%s: attachments without a store to read them from: sent as notes", self.config.id)
            return unresolved_attachments(messages)
        try:
            return await self.attachments.resolve(messages, api=self.config.api, model=model)
        except Exception as bug:
            log.error("attachments could not be resolved", exc_info=bug)
            unresolved = unresolved_attachments(messages)
            text = f"Attachments were not sent: they could not be read ({type(bug).__name__})."
            return ResolvedAttachments(unresolved.parts, (text,))

    def _open(self, body: dict[str, Any]) -> AbstractAsyncContextManager[httpx.Response]:
        content = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        # No read timeout: ``stream`` times the waits with its StallGuard (httpx's would put a
        # deadline, a loop timer, on every socket read).
        timeout = httpx.Timeout(self.stream_timeout, connect=CONNECT_TIMEOUT, read=None)
        headers = {"accept-encoding": ACCEPT_ENCODING, **self.headers()}
        return self.client.stream("POST", self.endpoint(), content=content, headers=headers, timeout=timeout)

    def _stalled(self) -> ChatError:
        return ChatError(
            f"network error: no data from the server for {self.stream_timeout:g} s",
            provider=self.config.id, kind="network",
        )

    async def _check_status(self, response: httpx.Response, body: dict[str, Any]) -> None:
        """Raise for an error answer (``_Again`` / ``_Retry`` / ``ChatError``) or a non-stream body."""
        provider = self.config.id
        status = response.status_code
        if status >= 300:
            raw = await _read_limited(response)
            if status < 500 and self.adjust_after_error(status, raw.decode("utf-8", "replace"), body):
                raise _Again
            err = error_from_http(status, raw, provider=provider, reason=response.reason_phrase)
            if is_retryable_status(status):
                raise _Retry(err, parse_retry_after(response.headers))
            raise err
        ctype = response.headers.get("content-type", "")
        if "json" in ctype and "event-stream" not in ctype:
            raise await _json_instead_of_stream(response, provider)


async def _read_limited(response: httpx.Response) -> bytes:
    """At most ``ERROR_BODY_LIMIT`` decoded bytes of a response body (a corrupt one reads as empty)."""
    try:
        return (await read_limited(response, ERROR_BODY_LIMIT))[0]
    except BodyDecodeError as exc:
        log.info("unreadable error body: %s", exc)
        return b""


async def _json_instead_of_stream(response: httpx.Response, provider: str) -> ChatError:
    """The error to raise when a 2xx answer is JSON instead of an event stream."""
    raw = await _read_limited(response)
    try:
        payload = loads(raw)
    except ValueError:
        payload = None
    if isinstance(payload, dict) and payload.get("error"):
        return error_from_payload(payload, provider=provider)
    snippet = raw.decode("utf-8", "replace").strip()[:200]
    return ChatError(
        f"the server answered with JSON instead of an event stream: {snippet}",
        provider=provider, kind="protocol",
    )
