"""Driver selection and model listing."""

from __future__ import annotations

import logging
from typing import Any

import httpx

from desktop.core.attachments import AttachmentSource
from desktop.core.chat.types import ChatDriver, ChatError, ProviderConfig

from ._base import StreamingDriver
from ._body import ACCEPT_ENCODING, MODEL_LIST_LIMIT, BodyDecodeError, read_limited
from ._http import (
    CONNECT_TIMEOUT,
    ERROR_BODY_LIMIT,
    RetryPolicy,
    check_api_key,
    error_from_http,
    is_retryable_status,
    parse_retry_after,
    scrub_error,
    shared_client,
    transport_error,
)
from ._json import loads
from ._local import local_server_error
from .anthropic import AnthropicDriver, anthropic_headers, anthropic_url
from .openai import OpenAIDriver, openai_url

log = logging.getLogger(__name__)

__all__ = ["driver_for", "list_models"]

#: Pages fetched at most from a paginated model list (guards against a server that loops).
MAX_MODEL_PAGES = 50
_LIST_TIMEOUT = httpx.Timeout(30.0, connect=CONNECT_TIMEOUT)


def driver_for(
    config: ProviderConfig,
    client: httpx.AsyncClient | None = None,
    *,
    retry: RetryPolicy | None = None,
    stream_timeout: float | None = None,
    max_event_chars: int | None = None,
    attachments: AttachmentSource | None = None,
) -> ChatDriver:
    """The driver for ``config.api``; with no client it uses the shared ``httpx.AsyncClient``.

    ``stream_timeout`` and ``max_event_chars`` (the largest server-sent event accepted) keep the
    driver's defaults when None. ``attachments`` reads the files of attachment references at send
    time (the project's ``desktop.core.attachments.AttachmentResolver``).

    Raises:
        ValueError: ``config.api`` is neither ``openai`` nor ``anthropic``.
    """
    cls: type[StreamingDriver]
    if config.api == "openai":
        cls = OpenAIDriver
    elif config.api == "anthropic":
        cls = AnthropicDriver
    else:
        raise ValueError(f"unknown provider api {config.api!r} (expected 'openai' or 'anthropic')")
    options: dict[str, Any] = {}
    if stream_timeout is not None:
        options["stream_timeout"] = stream_timeout
    if max_event_chars is not None:
        options["max_event_chars"] = max_event_chars
    return cls(config, client=client, retry=retry, attachments=attachments, **options)


async def list_models(
    config: ProviderConfig,
    client: httpx.AsyncClient | None = None,
    *,
    retry: RetryPolicy | None = None,
    max_bytes: int = MODEL_LIST_LIMIT,
) -> list[str]:
    """Model ids the provider offers (``GET .../models``; Anthropic's list is paginated).

    At most ``max_bytes`` (decompressed) of each page are read; a longer page is an error.

    Raises:
        ChatError: HTTP or transport failure, or an answer that is not a model list.
        ValueError: ``config.api`` is unknown.
    """
    http = client if client is not None else shared_client()
    policy = retry if retry is not None else RetryPolicy()
    try:
        check_api_key(config.api_key, provider=config.id)
        if config.api == "openai":
            headers = {"accept": "application/json"}
            if config.api_key:
                headers["authorization"] = f"Bearer {config.api_key}"
            page = await _get_json(http, openai_url(config.base_url, "models"), headers, {}, config, policy,
                                   max_bytes)
            return _ids(page, config)
        if config.api == "anthropic":
            url = anthropic_url(config.base_url, "models")
            headers = anthropic_headers(config.api_key)
            params: dict[str, str] = {"limit": "1000"}
            ids: list[str] = []
            seen_cursors: set[str] = set()
            for _ in range(MAX_MODEL_PAGES):
                page = await _get_json(http, url, headers, params, config, policy, max_bytes)
                ids += [i for i in _ids(page, config) if i not in ids]
                last = page.get("last_id")
                if not page.get("has_more") or not isinstance(last, str) or not last or last in seen_cursors:
                    break
                seen_cursors.add(last)
                params = {"limit": "1000", "after_id": last}
            return ids
    except ChatError as err:
        raise scrub_error(err, config.api_key) from None
    raise ValueError(f"unknown provider api {config.api!r} (expected 'openai' or 'anthropic')")


def _size(count: int) -> str:
    return f"{count / (1024 * 1024):g} MiB" if count >= 1024 * 1024 else f"{count:,} bytes"


def _ids(page: dict[str, Any], config: ProviderConfig) -> list[str]:
    data = page.get("data")
    if not isinstance(data, list):
        raise ChatError("the model list answer has no 'data' list", provider=config.id, kind="protocol")
    ids: list[str] = []
    for item in data:
        model_id = item.get("id") if isinstance(item, dict) else None
        if isinstance(model_id, str) and model_id and model_id not in ids:
            ids.append(model_id)
    return ids


async def _get_json(
    http: httpx.AsyncClient,
    url: str,
    headers: dict[str, str],
    params: dict[str, str],
    config: ProviderConfig,
    policy: RetryPolicy,
    max_bytes: int,
) -> dict[str, Any]:
    retries = 0
    while True:
        retry_after: float | None = None
        try:
            async with http.stream("GET", url, headers={"accept-encoding": ACCEPT_ENCODING, **headers},
                                   params=params, timeout=_LIST_TIMEOUT) as response:
                status = response.status_code
                limit = max_bytes if status < 300 else ERROR_BODY_LIMIT
                try:
                    body, more = await read_limited(response, limit)
                except BodyDecodeError as exc:
                    raise ChatError(f"the model list could not be read: {exc}", provider=config.id,
                                    kind="protocol") from None
                reason = response.reason_phrase
                retry_after = parse_retry_after(response.headers)
        except httpx.TransportError as exc:
            err = local_server_error(transport_error(exc, provider=config.id), config.base_url)
            retry_after = None
        else:
            if status < 300:
                if more:
                    raise ChatError(
                        f"the model list is larger than {_size(max_bytes)}; not read",
                        provider=config.id, kind="protocol",
                    )
                try:
                    payload = loads(body)
                except ValueError:
                    payload = None
                if not isinstance(payload, dict):
                    snippet = body.decode("utf-8", "replace").strip()[:200]
                    raise ChatError(
                        f"the model list is not JSON: {snippet}", provider=config.id, kind="protocol"
                    )
                return payload
            err = error_from_http(status, body, provider=config.id, reason=reason)
            if not is_retryable_status(status):
                raise err
        delay = policy.delay_for(retries, retry_after)
        if delay is None:
            raise err
        retries += 1
        await policy.sleep(delay)
