"""What needs a scripted transport: connection failures, error texts, retry-after parsing, key secrecy in
transport errors, the shared client, model lists.

Retries on HTTP errors, 401s, stalls and closing a response on stop or cancel run over a real socket
against the loopback fake provider instead (test_against_fake_server.py), where a leaked connection
would show in the client's pool.
"""

from __future__ import annotations

import email.utils
import json
import time
from typing import Any

import httpx
import pytest
from provider_support import (
    SECRET,
    MockServer,
    Reply,
    anthropic_config,
    collect,
    instant_policy,
    json_reply,
    openai_config,
    sse_reply,
)

from desktop.core.chat.types import ChatError, ProviderConfig
from desktop.core.providers import RetryPolicy, aclose_shared_client, driver_for, list_models, shared_client
from desktop.core.providers._http import error_from_http, parse_retry_after

OK_OPENAI = (b'data: {"choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}]}\n\n'
             b"data: [DONE]\n\n")


# -- connection failures (a transport that raises) ----------------------------------------------


@pytest.mark.anyio
async def test_connection_error_is_retried() -> None:
    policy, sleeps = instant_policy()
    server = MockServer(Reply(raise_exc=httpx.ConnectError("connection refused")), sse_reply(OK_OPENAI))
    out = await collect(openai_config(), server, retry=policy)
    assert out.error is None and out.text == "ok" and len(sleeps.delays) == 1


@pytest.mark.anyio
async def test_connection_error_every_time_is_a_network_error() -> None:
    server = MockServer(Reply(raise_exc=httpx.ConnectError("connection refused")))
    out = await collect(openai_config(), server)
    assert out.error is not None and out.error.kind == "network" and "connection refused" in out.error.message
    assert len(server.requests) == 3


def test_retry_after_formats() -> None:
    now = time.time()
    date = email.utils.formatdate(now + 30, usegmt=True)
    assert parse_retry_after({"retry-after": "2.5"}) == 2.5
    assert parse_retry_after({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    assert 28 <= (parse_retry_after({"retry-after": date}, now=now) or 0) <= 31
    assert parse_retry_after({"retry-after": "soon"}) is None
    assert parse_retry_after({}) is None


def test_backoff_jitter_and_cap() -> None:
    policy = RetryPolicy(random=lambda: 1.0, jitter=0.25, max_retries=10)
    assert policy.backoff(0) == pytest.approx(0.375)
    assert policy.delay_for(9, None) == pytest.approx(8.0 * 0.75)
    assert RetryPolicy().delay_for(2, None) is None


# -- error formats --------------------------------------------------------------------------------


@pytest.mark.parametrize(("status", "body", "message", "kind"), [
    (401, {"error": {"message": "Incorrect API key provided.", "type": "invalid_request_error",
                     "code": "invalid_api_key"}},
     "401 invalid_request_error: Incorrect API key provided.", "auth"),
    (404, {"type": "error", "error": {"type": "not_found_error", "message": "model: x"}},
     "404 not_found_error: model: x", "not_found"),
    (400, {"error": {"code": 400, "message": "bad thing", "metadata": {}}}, "400 bad thing", "bad_request"),
    (404, {"error": "model 'llama9' not found"}, "404 model 'llama9' not found", "not_found"),
    (500, b"<html>Internal Server Error</html>", "500 <html>Internal Server Error</html>", "server"),
    (503, b"x" * 500, "503 " + "x" * 200, "server"),
    (413, {"type": "error", "error": {"type": "request_too_large", "message": "too big"}},
     "413 request_too_large: too big", "bad_request"),
    (429, {"error": {"message": "Rate limit", "type": None, "code": "rate_limit_exceeded"}},
     "429 rate_limit_exceeded: Rate limit", "rate_limit"),
])
def test_http_error_messages(status: int, body: Any, message: str, kind: str) -> None:
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    err = error_from_http(status, raw, provider="p")
    assert (err.message, err.status, err.kind, str(err)) == (message, status, kind, message)


def test_empty_error_body_uses_reason_phrase() -> None:
    assert error_from_http(502, b"", provider="p", reason="Bad Gateway").message == "502 Bad Gateway"


# -- the key stays secret ---------------------------------------------------------------------------


@pytest.mark.anyio
async def test_key_in_a_transport_error_is_scrubbed() -> None:
    server = MockServer(Reply(raise_exc=httpx.ConnectError(f"proxy said {SECRET}")))
    out = await collect(anthropic_config(), server)
    assert out.error is not None and SECRET not in out.error.message


def test_key_not_in_driver_or_config_repr() -> None:
    for config in (openai_config(), anthropic_config()):
        assert SECRET not in repr(config)
        assert SECRET not in repr(driver_for(config))


# -- driver_for, the shared client, list_models -------------------------------------------------------


def test_driver_for_picks_by_api_and_rejects_unknown() -> None:
    from desktop.core.providers import AnthropicDriver, OpenAIDriver

    assert isinstance(driver_for(openai_config()), OpenAIDriver)
    assert isinstance(driver_for(anthropic_config()), AnthropicDriver)
    with pytest.raises(ValueError):
        driver_for(ProviderConfig("x", "X", "gemini", "https://x"))  # type: ignore[arg-type]


@pytest.mark.anyio
async def test_shared_client_is_lazy_reused_and_closable() -> None:
    async def scenario() -> None:
        client = shared_client()
        assert shared_client() is client
        await aclose_shared_client()
        assert client.is_closed
        again = shared_client()
        assert again is not client
        await aclose_shared_client()

    await scenario()


@pytest.mark.anyio
async def test_list_models_openai() -> None:
    server = MockServer(json_reply(200, {"object": "list", "data": [{"id": "gpt-4o"}, {"id": "o3"}]}))

    async def scenario() -> list[str]:
        async with server.client() as client:
            return await list_models(openai_config(base_url="http://localhost:11434"), client)

    assert await scenario() == ["gpt-4o", "o3"]
    request = server.requests[0]
    assert str(request.url) == "http://localhost:11434/v1/models"
    assert request.headers["authorization"] == f"Bearer {SECRET}"


@pytest.mark.anyio
async def test_list_models_anthropic_paginates() -> None:
    pages = [
        {"data": [{"id": "claude-a"}, {"id": "claude-b"}], "has_more": True, "last_id": "claude-b"},
        {"data": [{"id": "claude-c"}], "has_more": False, "last_id": "claude-c"},
    ]
    server = MockServer(*(json_reply(200, p) for p in pages))

    async def scenario() -> list[str]:
        async with server.client() as client:
            return await list_models(anthropic_config(), client)

    assert await scenario() == ["claude-a", "claude-b", "claude-c"]
    first, second = server.requests
    assert first.url.path == "/v1/models" and "after_id" not in first.url.params
    assert second.url.params["after_id"] == "claude-b"
    assert second.headers["x-api-key"] == SECRET and second.headers["anthropic-version"] == "2023-06-01"


@pytest.mark.anyio
async def test_list_models_errors_are_chat_errors_without_the_key() -> None:
    body = {"type": "error", "error": {"type": "authentication_error", "message": f"bad key {SECRET}"}}
    server = MockServer(json_reply(401, body))

    async def scenario() -> None:
        async with server.client() as client:
            with pytest.raises(ChatError) as info:
                await list_models(anthropic_config(), client)
        assert info.value.kind == "auth" and SECRET not in info.value.message
        assert info.value.message == "401 authentication_error: bad key [redacted]"

    await scenario()


@pytest.mark.anyio
async def test_list_models_retries_on_503() -> None:
    policy, sleeps = instant_policy()
    server = MockServer(json_reply(503, b"busy"), json_reply(200, {"data": [{"id": "m"}]}))

    async def scenario() -> list[str]:
        async with server.client() as client:
            return await list_models(openai_config(), client, retry=policy)

    assert await scenario() == ["m"] and len(sleeps.delays) == 1
