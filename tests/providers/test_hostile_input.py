"""Hostile servers (issue 9): lone surrogates, endless and gzip-bomb bodies, blank floods, key leaks."""

from __future__ import annotations

import asyncio
import json
import tracemalloc
import zlib
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import pytest
from provider_support import (
    SECRET,
    MockServer,
    anthropic_config,
    collect,
    instant_policy,
    json_reply,
    openai_config,
    outcome_for,
    sse_reply,
)

from desktop.core.chat import Conversation, apply_event, serialize_conversation
from desktop.core.chat.types import ChatError, ChatMessage, ProviderConfig
from desktop.core.providers import OpenAIDriver, list_models
from desktop.core.providers._body import MODEL_LIST_LIMIT

LONE = "\\ud83d"  # a high surrogate escape cut from an emoji, as JSON text
PAIR = "\\ud83d\\ude00"  # a valid pair: 😀
MiB = 1024 * 1024


def sse(obj: Any, event: str | None = None) -> bytes:
    # json.dumps would escape our backslashes: build the data line by hand from raw JSON text.
    text = obj if isinstance(obj, str) else json.dumps(obj)
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {text}\n\n".encode()


def assert_valid_unicode(*texts: str | None) -> None:
    for text in texts:
        if text is not None:
            text.encode("utf-8")  # raises on a lone surrogate


def saved(events: list[Any]) -> Conversation:
    conv = Conversation("c-1", [ChatMessage("u1", "user", "Hello", 0)], 1)
    for event in events:
        apply_event(conv, event)
    serialize_conversation(conv).encode("utf-8")
    return conv


# -- lone surrogates ----------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_openai_lone_surrogates_become_replacement_characters() -> None:
    pieces = [
        sse(f'{{"model":"gpt-{LONE}","choices":[{{"index":0,"delta":{{"role":"assistant",'
            f'"reasoning_content":"think {LONE}"}}}}]}}'),
        sse(f'{{"choices":[{{"index":0,"delta":{{"content":"cut {LONE} and whole {PAIR}"}}}}]}}'),
        sse(f'{{"choices":[{{"index":0,"delta":{{"tool_calls":[{{"index":0,"id":"c1","type":"function",'
            f'"function":{{"name":"read_{LONE}","arguments":"{{\\"path\\": \\"a{LONE}\\"'
            f'"}}}}]}}}}]}}'),
        sse('{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"}"}}]}}]}'),
        sse(f'{{"model":"gpt-{LONE}","choices":[{{"index":0,"delta":{{}},"finish_reason":"tool_calls"}}]}}'),
        sse(f'{{"model":"gpt-{LONE}","choices":[],"usage":{{"prompt_tokens":3,"completion_tokens":4}}}}'),
        b"data: [DONE]\n\n",
    ]
    out = await outcome_for(openai_config(), pieces)
    assert out.error is None
    assert out.text == "cut \ufffd and whole \U0001F600"
    assert out.thinking == "think \ufffd"
    assert out.model == "gpt-\ufffd"
    ((call_id, name, args),) = out.calls
    assert name == "read_\ufffd" and json.loads(args) == {"path": "a\ufffd"}
    assert_valid_unicode(out.text, out.thinking, out.model, name, args)
    conv = saved(out.events)
    assert conv.messages[1].content == out.text


@pytest.mark.anyio
async def test_openai_error_after_200_with_a_lone_surrogate() -> None:
    body = f'{{"error":{{"message":"bad {LONE} thing","type":"x"}}}}'
    out = await outcome_for(openai_config(), [sse(body)])
    assert out.error is not None and out.error.message == "x: bad \ufffd thing"


@pytest.mark.anyio
async def test_anthropic_lone_surrogates_become_replacement_characters() -> None:
    pieces = [
        sse(f'{{"type":"message_start","message":{{"model":"claude-{LONE}","usage":{{"input_tokens":1}}}}}}',
            "message_start"),
        sse('{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}',
            "content_block_start"),
        sse(f'{{"type":"content_block_delta","index":0,"delta":{{"type":"thinking_delta",'
            f'"thinking":"hmm {LONE}"}}}}', "content_block_delta"),
        sse('{"type":"content_block_stop","index":0}', "content_block_stop"),
        sse(f'{{"type":"content_block_delta","index":1,"delta":{{"type":"text_delta",'
            f'"text":"x {LONE} y {PAIR}"}}}}', "content_block_delta"),
        sse(f'{{"type":"content_block_start","index":2,"content_block":{{"type":"tool_use","id":"t1",'
            f'"name":"write_{LONE}","input":{{}}}}}}', "content_block_start"),
        sse('{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta",'
            '"partial_json":"{\\"path\\": \\"\\\\ud83d"}}', "content_block_delta"),
        sse('{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta",'
            '"partial_json":"\\"}"}}', "content_block_delta"),
        sse('{"type":"content_block_stop","index":2}', "content_block_stop"),
        sse('{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":5}}',
            "message_delta"),
        sse('{"type":"message_stop"}', "message_stop"),
    ]
    out = await outcome_for(anthropic_config(), pieces)
    assert out.error is None
    assert out.text == "x \ufffd y \U0001F600"
    assert out.thinking == "hmm \ufffd"
    assert out.model == "claude-\ufffd"
    ((_, name, args),) = out.calls
    assert name == "write_\ufffd"
    assert json.loads(args) == {"path": "\ufffd"}  # the tool never decodes a lone surrogate
    saved(out.events)


@pytest.mark.anyio
async def test_anthropic_error_event_with_a_lone_surrogate() -> None:
    body = f'{{"type":"error","error":{{"type":"overloaded_error","message":"busy {LONE}"}}}}'
    out = await outcome_for(anthropic_config(), [sse(body, "error")])
    assert out.error is not None and out.error.message == "overloaded_error: busy \ufffd"


@pytest.mark.anyio
async def test_http_error_body_and_model_ids_with_lone_surrogates() -> None:
    raw = f'{{"error":{{"message":"no {LONE}","type":"invalid_request_error"}}}}'.encode()
    out = await collect(openai_config(), MockServer(json_reply(400, raw)))
    assert out.error is not None and out.error.message == "400 invalid_request_error: no \ufffd"
    server = MockServer(json_reply(200, f'{{"data":[{{"id":"m-{LONE}"}},{{"id":"ok"}}]}}'.encode()))

    async def scenario() -> list[str]:
        async with server.client() as client:
            return await list_models(openai_config(), client)

    assert await scenario() == ["m-\ufffd", "ok"]


# -- bounds: endless events and bodies, plain and gzip ------------------------------------------------


class EndlessStream(httpx.AsyncByteStream):
    """A body that never ends: ``head`` once, then ``piece`` forever; counts what was sent."""

    def __init__(self, head: bytes, piece: bytes) -> None:
        self.head = head
        self.piece = piece
        self.sent = 0
        self.closed = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        yield self.head
        while True:
            self.sent += len(self.piece)
            yield self.piece
            await asyncio.sleep(0)

    async def aclose(self) -> None:
        self.closed = True


def gzip_endless(prefix: bytes, filler: bytes) -> tuple[bytes, bytes]:
    """(head, block): a gzip stream of ``prefix`` then ``filler`` forever; each block is one
    full-flush deflate block of ~64 MiB of filler in 64-256 KiB on the wire (a gzip bomb)."""
    comp = zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS | 16)
    head = comp.compress(prefix) + comp.flush(zlib.Z_FULL_FLUSH)
    data = filler * (64 * MiB // len(filler))
    block = comp.compress(data) + comp.flush(zlib.Z_FULL_FLUSH)
    again = comp.compress(data) + comp.flush(zlib.Z_FULL_FLUSH)
    assert block == again and len(block) < 256 * 1024  # repeatable after a full flush
    return head, block


def endless_server(status: int, content_type: str, head: bytes, piece: bytes, *, gzip: bool
                   ) -> tuple[Callable[[], httpx.AsyncClient], list[EndlessStream]]:
    streams: list[EndlessStream] = []

    def handler(request: httpx.Request) -> httpx.Response:
        stream = EndlessStream(head, piece)
        streams.append(stream)
        headers = {"content-type": content_type}
        if gzip:
            headers["content-encoding"] = "gzip"
        return httpx.Response(status, headers=headers, stream=stream)

    return (lambda: httpx.AsyncClient(transport=httpx.MockTransport(handler))), streams


async def bounded(coro_factory: Callable[[], Any], *, seconds: float = 120.0) -> tuple[Any, int]:
    """Run the coroutine under a generous time limit (a hang guard: an endless body that is not cut
    off would never end); return (result, tracemalloc peak)."""
    async def guarded() -> Any:
        async with asyncio.timeout(seconds):
            return await coro_factory()

    tracemalloc.start()
    try:
        result = await guarded()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return result, peak


FIRST = b'data: {"choices":[{"index":0,"delta":{"content":"so far"}}]}\n\n'


@pytest.mark.slow
@pytest.mark.parametrize("gzip", [False, True], ids=["plain", "gzip"])
@pytest.mark.parametrize("shape", ["one endless line", "endless data lines"])
@pytest.mark.anyio
async def test_endless_sse_event_is_a_protocol_error_with_bounded_memory(gzip: bool, shape: str) -> None:
    filler = b"x" * 4096 if shape == "one endless line" else b"data: xxxxxxxxxxxxxxx\n" * 200
    prefix = FIRST + b"data: "
    if gzip:
        head, piece = gzip_endless(prefix, filler)
    else:
        head, piece = prefix, filler * 16
    make_client, streams = endless_server(200, "text/event-stream", head, piece, gzip=gzip)

    async def scenario() -> tuple[str, ChatError | None]:
        text = ""
        async with make_client() as client:
            driver = OpenAIDriver(openai_config(), client=client)
            try:
                async for event in driver.stream(model="m", messages=[ChatMessage("u", "user", "x", 0)],
                                                 tools=[]):
                    text += getattr(event, "text", "")
            except ChatError as exc:
                return text, exc
        return text, None

    (text, error), peak = await bounded(scenario)
    assert error is not None and error.kind == "protocol"
    assert "longer than" in error.message
    assert text == "so far"  # the text received before the endless event is kept
    assert peak < 64 * MiB, f"peak {peak / MiB:.1f} MiB"
    assert streams[0].closed


@pytest.mark.anyio
async def test_max_event_size_is_a_driver_argument() -> None:
    big = b'data: {"choices":[{"index":0,"delta":{"content":"' + b"y" * 5000 + b'"}}]}\n\n'
    server = MockServer(sse_reply([FIRST, big]))

    async def scenario() -> ChatError | None:
        async with server.client() as client:
            driver = OpenAIDriver(openai_config(), client=client, max_event_chars=1000)
            try:
                messages = [ChatMessage("u", "user", "x", 0)]
                async for _ in driver.stream(model="m", messages=messages, tools=[]):
                    pass
            except ChatError as exc:
                return exc
        return None

    error = await scenario()
    assert error is not None and error.kind == "protocol" and "1000" in error.message


@pytest.mark.anyio
async def test_model_list_size_cap_is_an_argument() -> None:
    server = MockServer(json_reply(200, {"data": [{"id": f"model-{i}"} for i in range(100)]}))

    async def scenario() -> ChatError:
        async with server.client() as client:
            with pytest.raises(ChatError) as info:
                await list_models(openai_config(), client, max_bytes=500)
            return info.value

    error = await scenario()
    assert error.kind == "protocol" and error.message == "the model list is larger than 500 bytes; not read"


@pytest.mark.slow
@pytest.mark.parametrize("gzip", [False, True], ids=["plain", "gzip"])
@pytest.mark.parametrize("status", [200, 500])
@pytest.mark.anyio
async def test_endless_model_list_or_error_body_is_bounded(gzip: bool, status: int) -> None:
    prefix = b'{"data":[{"id":"'
    filler = b"a" * 4096
    head, piece = gzip_endless(prefix, filler) if gzip else (prefix, filler * 16)
    make_client, streams = endless_server(status, "application/json", head, piece, gzip=gzip)

    async def scenario() -> ChatError | None:
        async with make_client() as client:
            try:
                await list_models(openai_config(), client, retry=instant_policy()[0])
            except ChatError as exc:
                return exc
        return None

    error, peak = await bounded(scenario)
    assert error is not None
    if status == 200:
        assert error.kind == "protocol" and "larger than 4 MiB" in error.message
    else:
        assert error.status == 500
    assert peak < 64 * MiB, f"peak {peak / MiB:.1f} MiB"
    assert all(s.closed for s in streams)
    assert sum(s.sent for s in streams) < 8 * MODEL_LIST_LIMIT * (len(streams) or 1)


# -- linear whitespace --------------------------------------------------------------------------------


def blank_stream(n: int) -> list[bytes]:
    blank = b'data: {"choices":[{"index":0,"delta":{"content":" "}}]}\n\n'
    return ([b'data: {"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}\n\n']
            + [blank * 1000] * (n // 1000)
            + [b'data: {"choices":[{"index":0,"delta":{"content":"end"},"finish_reason":"stop"}]}\n\n'])


@pytest.mark.anyio
async def test_a_flood_of_whitespace_only_deltas_is_kept_whole() -> None:
    """100,000 blank deltas before the first text (the quadratic version took ~7-15 s for 200,000;
    that the cost stays linear is benchmarks/hot_paths.py's providers.blank_deltas row)."""
    out = await outcome_for(openai_config(), blank_stream(100_000))
    assert out.error is None and out.text == " " * 100_000 + "end"


# -- the key ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("make", [openai_config, anthropic_config])
@pytest.mark.anyio
async def test_key_with_a_control_character_is_refused_without_echo(
    make: Callable[..., ProviderConfig],
) -> None:
    key = SECRET[:10] + "\n" + SECRET[10:]
    server = MockServer(sse_reply(b""))
    out = await collect(make(api_key=key), server)
    assert out.error is not None and out.error.kind == "auth"
    assert "control characters" in out.error.message
    assert SECRET[:10] not in out.error.message and SECRET[10:] not in out.error.message
    assert server.requests == []  # never sent

    async def models() -> ChatError:
        async with server.client() as client:
            with pytest.raises(ChatError) as info:
                await list_models(make(api_key=key), client)
            return info.value

    err = await models()
    assert err.kind == "auth" and SECRET[10:] not in err.message


@pytest.mark.anyio
async def test_key_echoed_without_its_first_characters_is_scrubbed() -> None:
    body = {"error": {"message": f"Incorrect API key provided: ...{SECRET[5:]}", "type": "invalid_api_key"}}
    out = await collect(openai_config(), MockServer(json_reply(401, body)))
    assert out.error is not None and SECRET[5:] not in out.error.message
    assert SECRET[-8:] not in out.error.message and "[redacted]" in out.error.message


def test_sse_event_limit_counts_every_data_line_and_resets_per_event() -> None:
    from desktop.core.providers import SSEDecoder, SSEError, driver_for

    decoder = SSEDecoder(max_event_chars=1000)
    ok = decoder.feed(b"data: a\n" * 5 + b"\n" + b"data: b\n" * 5 + b"\n")
    assert [e.data for e in ok] == ["\n".join("a" * 5), "\n".join("b" * 5)]
    with pytest.raises(SSEError, match="longer than 1000"):
        decoder.feed(b"data: x\n" * 20)  # 20 tiny lines: each also costs its bookkeeping
    assert driver_for(openai_config(), max_event_chars=5).max_event_chars == 5  # type: ignore[attr-defined]
