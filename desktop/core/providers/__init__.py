"""Provider drivers: OpenAI-compatible Chat Completions and Anthropic Messages over httpx.

Public API: :func:`driver_for`, :func:`list_models`, the two driver classes, :class:`RetryPolicy`,
the shared client helpers, the SSE decoder, and the local servers: :func:`probe_local_servers`
(Ollama, LM Studio, llama.cpp, vLLM found by themselves) and :func:`local_server_error` (a readable
"not running" message).
"""

from ._base import StreamingDriver, StreamParser
from ._http import DEFAULT_STREAM_TIMEOUT, RetryPolicy, aclose_shared_client, shared_client
from ._local import (
    LOCAL_SERVER_KINDS,
    PROBE_TIMEOUT,
    LocalServer,
    LocalServerKind,
    local_server_error,
    local_server_hint,
    probe_local_servers,
)
from ._registry import driver_for, list_models
from ._sse import SSEDecoder, SSEError, SSEEvent
from .anthropic import AnthropicDriver, AnthropicStreamParser, anthropic_messages, anthropic_url
from .openai import OpenAIDriver, OpenAIStreamParser, openai_messages, openai_url

__all__ = [
    "driver_for",
    "list_models",
    "OpenAIDriver",
    "AnthropicDriver",
    "StreamingDriver",
    "StreamParser",
    "OpenAIStreamParser",
    "AnthropicStreamParser",
    "RetryPolicy",
    "DEFAULT_STREAM_TIMEOUT",
    "shared_client",
    "aclose_shared_client",
    "SSEDecoder",
    "SSEEvent",
    "SSEError",
    "openai_url",
    "anthropic_url",
    "openai_messages",
    "anthropic_messages",
    "LOCAL_SERVER_KINDS",
    "PROBE_TIMEOUT",
    "LocalServer",
    "LocalServerKind",
    "local_server_error",
    "local_server_hint",
    "probe_local_servers",
]
