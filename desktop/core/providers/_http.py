"""HTTP plumbing shared by the drivers: retry policy, error parsing, key scrubbing, the shared client.

Nothing here knows a provider's stream format; see ``_base.py`` for the request/stream loop.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import logging
import random
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx

from desktop.core.chat.types import ChatError, ErrorKind, error_kind_for_status
from desktop.core.redact import has_control_characters, scrub_secrets

from ._json import loads

log = logging.getLogger(__name__)

__all__ = [
    "RetryPolicy",
    "CONNECT_TIMEOUT",
    "DEFAULT_STREAM_TIMEOUT",
    "ERROR_BODY_LIMIT",
    "is_retryable_status",
    "parse_retry_after",
    "error_from_http",
    "error_from_payload",
    "transport_error",
    "scrub",
    "check_api_key",
    "scrub_error",
    "shared_client",
    "aclose_shared_client",
]

CONNECT_TIMEOUT = 10.0
DEFAULT_STREAM_TIMEOUT = 60.0
#: At most this many bytes of an error body are read.
ERROR_BODY_LIMIT = 64 * 1024
#: A non-JSON error body contributes this many characters to the message.
RAW_BODY_CHARS = 200

_TYPE_KINDS: dict[str, ErrorKind] = {
    "authentication_error": "auth",
    "permission_error": "auth",
    "invalid_api_key": "auth",
    "not_found_error": "not_found",
    "invalid_request_error": "bad_request",
    "request_too_large": "bad_request",
    "rate_limit_error": "rate_limit",
    "rate_limit_exceeded": "rate_limit",
    "insufficient_quota": "rate_limit",
    "api_error": "server",
    "server_error": "server",
    "overloaded_error": "overloaded",
}


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """When and how long to wait before retrying a failed request.

    Only failures that happen before any text, thinking or tool call reached the caller are
    retried: 408/409/429/5xx/529 answers, connection failures and retryable mid-stream errors.

    Attributes:
        max_retries: Retries after the first attempt.
        base_delay: First backoff delay in seconds; doubles per retry.
        max_delay: Cap of a computed backoff delay.
        max_retry_after: A server-requested wait (``retry-after``) longer than this is not
            honoured: the error is reported at once instead of blocking the user for minutes.
        jitter: Fraction of the backoff delay removed at random (0 = no jitter).
        sleep: The coroutine used to wait; tests inject an instant one.
        random: Source of jitter in [0, 1).
    """

    max_retries: int = 2
    base_delay: float = 0.5
    max_delay: float = 8.0
    max_retry_after: float = 60.0
    jitter: float = 0.25
    sleep: Callable[[float], Awaitable[None]] = field(default=asyncio.sleep)
    random: Callable[[], float] = field(default=random.random)

    def backoff(self, retry: int) -> float:
        """The computed delay before retry number ``retry`` (0-based), jitter applied."""
        delay = min(self.base_delay * (2.0**retry), self.max_delay)
        return delay * (1.0 - self.jitter * self.random())

    def delay_for(self, retry: int, retry_after: float | None) -> float | None:
        """Seconds to wait before retry number ``retry``, or None when no retry should happen."""
        if retry >= self.max_retries:
            return None
        if retry_after is not None:
            if retry_after > self.max_retry_after:
                return None
            return max(retry_after, 0.0)
        return self.backoff(retry)


def is_retryable_status(status: int) -> bool:
    """True for 408, 409, 429, 529 and every other 5xx."""
    return status in (408, 409, 429) or 500 <= status <= 599


def parse_retry_after(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """Seconds the server asks us to wait, from ``retry-after-ms`` or ``retry-after``.

    ``retry-after`` may be a number of seconds or an HTTP date. Unparseable values give None.
    """
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return max(float(ms) / 1000.0, 0.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    value = value.strip()
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:  # pragma: no cover - older Pythons returned None
        return None
    current = time.time() if now is None else now
    return max(when.timestamp() - current, 0.0)


def _kind(status: int | None, err_type: str | None) -> ErrorKind:
    if err_type == "overloaded_error":
        return "overloaded"
    if status is not None:
        kind = error_kind_for_status(status)
        if kind != "unknown":
            return kind
    if err_type and err_type in _TYPE_KINDS:
        return _TYPE_KINDS[err_type]
    return error_kind_for_status(status)


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value.strip()
    return json.dumps(value, ensure_ascii=False)


def _describe(err: Any) -> tuple[str | None, str, int | None]:
    """(type label, message, embedded numeric code) of an ``error`` value."""
    if isinstance(err, dict):
        label = err.get("type")
        code = err.get("code")
        if not (isinstance(label, str) and label):
            label = code if isinstance(code, str) and code else None
        numeric: int | None = None
        for key in ("code", "status_code", "status"):
            candidate = err.get(key)
            if isinstance(candidate, int) and not isinstance(candidate, bool):
                numeric = candidate
                break
        return label, _text(err.get("message")), numeric
    return None, _text(err), None


def error_from_payload(
    payload: Any, *, provider: str | None
) -> ChatError:
    """A ``ChatError`` for an error reported inside a stream after HTTP 200.

    ``payload`` is the decoded data of the event (a dict with an ``error`` key, or the error
    itself). The message reads ``"overloaded_error: Overloaded"``; an embedded numeric code
    becomes ``status``.
    """
    err = payload.get("error", payload) if isinstance(payload, dict) else payload
    label, message, numeric = _describe(err)
    if not message:
        message = _text(err)[:RAW_BODY_CHARS] or "the provider reported an error"
    text = f"{label}: {message}" if label else message
    kind = _kind(numeric, label)
    if kind == "unknown":
        kind = "server"
    return ChatError(text, provider=provider, status=numeric, kind=kind)


def error_from_http(status: int, body: bytes, *, provider: str | None, reason: str = "") -> ChatError:
    """A ``ChatError`` for a non-2xx answer, e.g. ``"401 authentication_error: invalid x-api-key"``.

    JSON bodies in the OpenAI (``{"error": {"message", "type", "code"}}``), Anthropic
    (``{"type": "error", "error": {...}}``), OpenRouter (integer ``code``) and Ollama
    (``{"error": "text"}``) shapes are understood; any other body contributes its first 200
    characters.
    """
    raw = body.decode("utf-8", errors="replace")
    label: str | None = None
    message = ""
    try:
        payload = loads(raw)
    except ValueError:
        payload = None
    if isinstance(payload, dict):
        if "error" in payload and payload["error"]:
            label, message, _ = _describe(payload["error"])
        elif isinstance(payload.get("message"), str):
            message = payload["message"].strip()
        elif isinstance(payload.get("detail"), str):
            message = payload["detail"].strip()
    if not message and not label:
        message = raw.strip()[:RAW_BODY_CHARS] or reason
    head = f"{status} {label}" if label else str(status)
    text = f"{head}: {message}" if label and message else f"{head} {message}".rstrip()
    return ChatError(text, provider=provider, status=status, kind=_kind(status, label))


def transport_error(exc: BaseException, *, provider: str | None) -> ChatError:
    """A ``network`` ``ChatError`` for an httpx transport failure."""
    detail = str(exc).strip()
    name = type(exc).__name__
    if isinstance(exc, httpx.ConnectTimeout):
        text = "network error: connection timed out"
    elif isinstance(exc, httpx.ConnectError):
        text = f"network error: cannot connect ({detail})" if detail else "network error: cannot connect"
    else:
        text = f"network error: {name}: {detail}" if detail else f"network error: {name}"
    return ChatError(text, provider=provider, kind="network")


def scrub(text: str, secret: str | None) -> str:
    """Replace ``secret`` in ``text``, and any run of 8+ characters copied from it (see
    :func:`desktop.core.redact.scrub_secrets`): servers echo keys truncated at either end."""
    return scrub_secrets(text, (secret,))


def check_api_key(api_key: str | None, *, provider: str | None) -> None:
    """Refuse a key that cannot be sent in an HTTP header, without ever echoing it.

    httpx would refuse it too, but its "illegal header value" error quotes the value.

    Raises:
        ChatError: ``kind="auth"``: the key holds a control character (a line break, a tab) or a
            character that is not ASCII.
    """
    if not api_key:
        return
    if has_control_characters(api_key):
        raise ChatError(
            "the API key contains control characters (a line break or tab pasted with it?); "
            "enter the key again in Settings",
            provider=provider, kind="auth",
        )
    if not api_key.isascii():
        raise ChatError(
            "the API key contains characters that are not ASCII; enter the key again in Settings",
            provider=provider, kind="auth",
        )


def scrub_error(err: ChatError, secret: str | None) -> ChatError:
    """Return ``err``, or a copy without the key when its message contains it."""
    clean = scrub(err.message, secret)
    if clean == err.message:
        return err
    return ChatError(clean, provider=err.provider, status=err.status, kind=err.kind)


# ---------------------------------------------------------------------------------------------
# The shared client


_shared: httpx.AsyncClient | None = None


def shared_client() -> httpx.AsyncClient:
    """The app-wide ``httpx.AsyncClient``, created on first use."""
    global _shared
    if _shared is None or _shared.is_closed:
        _shared = httpx.AsyncClient(
            timeout=httpx.Timeout(DEFAULT_STREAM_TIMEOUT, connect=CONNECT_TIMEOUT),
            limits=httpx.Limits(max_connections=64, max_keepalive_connections=16),
            follow_redirects=False,
        )
    return _shared


async def aclose_shared_client() -> None:
    """Close the shared client (at app exit); a later :func:`shared_client` makes a new one."""
    global _shared
    client, _shared = _shared, None
    if client is not None and not client.is_closed:
        await client.aclose()
