"""Data types of the chat core: messages, usage, tool calls, stream events and errors.

Everything here is plain Python with no I/O. Events are frozen dataclasses; drivers leave
``message_id`` empty and the tool loop (``run_chat_loop``) stamps it on every event it forwards
(the runtime only stamps the final ``Done`` of a stopped or failed run).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeAlias, get_args

__all__ = [
    "Role",
    "ToolStatus",
    "DoneReason",
    "ApiKind",
    "ErrorKind",
    "Usage",
    "ToolCall",
    "ToolOutput",
    "MAX_TOOL_IMAGE_BYTES",
    "MAX_TOOL_IMAGES",
    "TOOL_IMAGES_KEY",
    "ChatMessage",
    "Delta",
    "Thinking",
    "UsageReport",
    "ToolCallRequested",
    "ToolCallFinished",
    "Notice",
    "Done",
    "ChatEvent",
    "ChatError",
    "ChatDriver",
    "ChatToolDef",
    "ProviderConfig",
    "ROLES",
    "TOOL_STATUSES",
    "DONE_REASONS",
    "error_kind_for_status",
]

Role: TypeAlias = Literal["user", "assistant", "system", "tool", "note"]
ToolStatus: TypeAlias = Literal["awaiting_approval", "running", "done", "error", "denied", "skipped"]
DoneReason: TypeAlias = Literal["end_turn", "stopped", "error", "max_iterations", "denied"]
ApiKind: TypeAlias = Literal["openai", "anthropic"]
ErrorKind: TypeAlias = Literal[
    "auth", "not_found", "bad_request", "rate_limit", "overloaded", "server", "network", "protocol", "unknown"
]

ROLES: frozenset[str] = frozenset(get_args(Role))
TOOL_STATUSES: frozenset[str] = frozenset(get_args(ToolStatus))
DONE_REASONS: frozenset[str] = frozenset(get_args(DoneReason))


@dataclass(frozen=True, slots=True)
class Usage:
    """Token usage of one model response.

    Attributes:
        input_tokens: Uncached input tokens only (drivers subtract cache reads for OpenAI).
        output_tokens: All output tokens, reasoning included.
        cache_read_tokens: Input tokens served from the prompt cache.
        cache_write_tokens: Input tokens written to the prompt cache.
        reasoning_tokens: The part of ``output_tokens`` spent on reasoning.
    """

    input_tokens: int
    output_tokens: int
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0

    @property
    def total_input_tokens(self) -> int:
        """All input tokens: uncached plus cache reads and writes."""
        return self.input_tokens + self.cache_read_tokens + self.cache_write_tokens

    @property
    def total_tokens(self) -> int:
        """All input and output tokens."""
        return self.total_input_tokens + self.output_tokens


@dataclass(slots=True)
class ToolCall:
    """One tool call requested by the model, and its outcome once known.

    Attributes:
        id: The provider's call id (``call_...`` or ``toolu_...``).
        name: The tool name.
        args_json: The arguments as a JSON text, exactly as assembled from the stream.
        result: The tool's result text (or error text) once finished.
        is_error: True when ``result`` is an error (error, denied, skipped).
        status: One of ``TOOL_STATUSES``.
        images: Images of a finished call's result, ``{"mime": ..., "data": <base64>}`` each, carried
            by ``ToolCallFinished`` (the applier keeps them once, in the ``tool`` message's
            ``extra["images"]``); None when the result has none.
    """

    id: str
    name: str
    args_json: str
    result: str | None = None
    is_error: bool = False
    status: ToolStatus = "running"
    images: list[dict[str, str]] | None = None

    def copy(self) -> ToolCall:
        """Return an independent copy (events must not share mutable calls)."""
        images = [dict(image) for image in self.images] if self.images is not None else None
        return ToolCall(self.id, self.name, self.args_json, self.result, self.is_error, self.status, images)

    def args(self) -> dict[str, Any]:
        """Parse ``args_json``; empty text means ``{}``.

        Raises:
            ValueError: The text is not a JSON object.
        """
        text = self.args_json.strip()
        if not text:
            return {}
        value = json.loads(text)
        if not isinstance(value, dict):
            raise ValueError("tool arguments must be a JSON object")
        return value


#: Largest decoded image a tool result sends to the model: 3.75 MiB, so its base64 text stays within
#: the 5 MB Anthropic accepts per image. A larger image is only described in the result text.
MAX_TOOL_IMAGE_BYTES = 5 * 1024 * 1024 * 3 // 4
#: At most this many images of one tool result go to the model; the rest are only described.
MAX_TOOL_IMAGES = 8
#: The ``ChatMessage.extra`` key (so the persisted message key) holding a ``tool`` message's result
#: images, ``[{"mime": "image/png", "data": <base64>}, ...]``. Read it as untrusted (a saved file).
TOOL_IMAGES_KEY = "images"


@dataclass(frozen=True, slots=True)
class ToolOutput:
    """The richer result a tool's ``run`` may return instead of a plain ``str``: text plus images.

    The text must describe every image (``[image: image/png, 1234 bytes]``): it is all a provider
    that takes no images in tool results sees. The loop keeps the images that are valid base64,
    at most ``MAX_TOOL_IMAGE_BYTES`` decoded, ``MAX_TOOL_IMAGES`` of them.

    Attributes:
        text: The result text for the model.
        images: ``{"mime": "image/png", "data": <base64>}`` per image, in order.
    """

    text: str
    images: tuple[dict[str, str], ...] = ()


@dataclass(slots=True)
class ChatMessage:
    """One message of a conversation (mutable: streaming appliers grow it in place).

    Attributes:
        id: Stable message id.
        role: One of ``ROLES``.
        content: The text (for ``tool`` messages: the tool result).
        ts: Creation time, epoch milliseconds.
        thinking: Readable reasoning text, if any.
        thinking_blocks: The provider's exact reasoning blocks in order, for verbatim replay.
        tool_calls: Calls made by an assistant message, or the finished call of a ``tool`` message.
        usage: Usage of the response that produced this assistant message.
        model: The model id that produced it.
        stopped: True when the response was cut short (stop or error).
        extra: Unknown persisted fields, kept verbatim for round-trips.
    """

    id: str
    role: Role
    content: str
    ts: int
    thinking: str | None = None
    thinking_blocks: list[dict[str, Any]] | None = None
    tool_calls: list[ToolCall] | None = None
    usage: Usage | None = None
    model: str | None = None
    stopped: bool = False
    extra: dict[str, Any] = field(default_factory=dict)


# ---------------------------------------------------------------------------------------------
# Stream events. Every event has a keyword-only ``message_id`` as its last field.


@dataclass(frozen=True, slots=True)
class Delta:
    """A piece of assistant text."""

    text: str
    message_id: str = field(default="", kw_only=True)


@dataclass(frozen=True, slots=True)
class Thinking:
    """A piece of reasoning.

    A thinking block streams as text events and ends with an event carrying its
    ``signature`` (Anthropic). A redacted block is one event carrying ``redacted_data``.
    """

    text: str
    signature: str | None = None
    redacted_data: str | None = None
    message_id: str = field(default="", kw_only=True)


@dataclass(frozen=True, slots=True)
class UsageReport:
    """Usage of the current response; may come several times, the last one wins."""

    usage: Usage
    model: str | None = None
    message_id: str = field(default="", kw_only=True)


@dataclass(frozen=True, slots=True)
class ToolCallRequested:
    """The model asked for a tool call (status ``running`` or ``awaiting_approval``)."""

    call: ToolCall
    message_id: str = field(default="", kw_only=True)


@dataclass(frozen=True, slots=True)
class ToolCallFinished:
    """A tool call ended; ``message_id`` is the new ``tool`` message holding the result."""

    call: ToolCall
    message_id: str = field(default="", kw_only=True)


@dataclass(frozen=True, slots=True)
class Notice:
    """A local note for the user (truncation, iteration limit...); ``message_id`` is a new note."""

    text: str
    message_id: str = field(default="", kw_only=True)


@dataclass(frozen=True, slots=True)
class Done:
    """The run ended. Only the runtime emits it, exactly once per started send."""

    reason: DoneReason
    error: str | None = None
    message_id: str = field(default="", kw_only=True)


ChatEvent: TypeAlias = Delta | Thinking | UsageReport | ToolCallRequested | ToolCallFinished | Notice | Done


# ---------------------------------------------------------------------------------------------
# Errors


def error_kind_for_status(status: int | None) -> ErrorKind:
    """Map an HTTP status (or an embedded numeric error code) to an error kind."""
    if status is None:
        return "unknown"
    if status in (401, 403):
        return "auth"
    if status == 404:
        return "not_found"
    if status in (400, 413, 422):
        return "bad_request"
    if status in (409, 429):
        return "rate_limit"
    if status == 529:
        return "overloaded"
    if status == 408:
        return "network"
    if 500 <= status <= 599:
        return "server"
    return "unknown"


class ChatError(Exception):
    """A readable provider or transport failure.

    ``str(err) == err.message``. The message never contains an API key.

    Attributes:
        message: Human-readable text, e.g. ``"401 authentication_error: invalid x-api-key"``.
        provider: The provider id or name, when known.
        status: HTTP status, or a numeric code embedded in a mid-stream error, else None.
        kind: One of ``auth``, ``not_found``, ``bad_request``, ``rate_limit``, ``overloaded``,
            ``server``, ``network``, ``protocol``, ``unknown``.
    """

    def __init__(
        self,
        message: str,
        *,
        provider: str | None = None,
        status: int | None = None,
        kind: ErrorKind | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.provider = provider
        self.status = status
        self.kind: ErrorKind = kind if kind is not None else error_kind_for_status(status)

    def __str__(self) -> str:
        return self.message

    def __repr__(self) -> str:
        return (
            f"ChatError({self.message!r}, provider={self.provider!r}, "
            f"status={self.status!r}, kind={self.kind!r})"
        )


# ---------------------------------------------------------------------------------------------
# Seams: drivers, tools, provider configuration


class ChatDriver(Protocol):
    """A provider adapter: streams one model response as events.

    It yields ``Delta``, ``Thinking``, ``UsageReport``, ``ToolCallRequested`` (one per complete
    call, status ``running``) and ``Notice``; it ends by returning or raises ``ChatError``; it
    never yields ``Done``. Cancellation closes the HTTP response promptly.
    """

    def stream(
        self,
        *,
        model: str,
        messages: Sequence[ChatMessage],
        tools: Sequence[ChatToolDef],
        system: str | None = None,
    ) -> AsyncIterator[ChatEvent]: ...


@dataclass(frozen=True, slots=True)
class ChatToolDef:
    """A tool offered to the model.

    Attributes:
        name: Tool name as sent to the provider.
        description: What it does, for the model.
        schema: JSON schema of the arguments object.
        needs_approval: True when the user must approve every call (anything that changes things).
        run: ``async (args) -> str`` (or a ``ToolOutput`` when the result has images); raising
            makes the call an ``error``.
        interruptible: True when cancelling ``run`` stops the work cleanly (an MCP call: the server
            is told to cancel), so a stop does not wait for it; False for work in a thread that
            cannot be interrupted (a stop then gives it a moment to finish and records its outcome).
    """

    name: str
    description: str
    schema: dict[str, Any]
    needs_approval: bool
    run: Callable[[dict[str, Any]], Awaitable[str | ToolOutput]]
    interruptible: bool = False


@dataclass(slots=True)
class ProviderConfig:
    """Everything a driver needs to reach one provider.

    Attributes:
        id: Provider id from settings (``openai``, ``anthropic``, ``ollama``...).
        name: Display name.
        api: ``openai`` (Chat Completions compatible) or ``anthropic`` (Messages).
        base_url: API base URL.
        api_key: The key, or None for keyless local servers. Never shown in repr.
        model: Default model id.
        max_tokens: Output budget (Anthropic requires it).
        thinking_budget: Turns on Anthropic extended thinking with this many tokens.
        prompt_caching: Anthropic only: mark prompt cache breakpoints (tools, system prompt, last
            user message) so repeated prefixes are read from the cache. OpenAI-compatible servers
            cache on their own and ignore it.
    """

    id: str
    name: str
    api: ApiKind
    base_url: str
    api_key: str | None = field(default=None, repr=False)
    model: str | None = None
    max_tokens: int = 8192
    thinking_budget: int | None = None
    prompt_caching: bool = True
