"""Driver for the Anthropic Messages API (streaming).

Replays thinking and redacted thinking verbatim with signatures, merges tool results (with their
images) into one user turn in call order, marks prompt cache breakpoints
(``ProviderConfig.prompt_caching``, see ``_cache``), reports cache usage, surfaces
``event: error`` and stop reasons, and never hands out a tool call whose input was cut off.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from typing import Any

from desktop.core.attachments import WirePart
from desktop.core.chat.types import (
    ChatError,
    ChatMessage,
    ChatToolDef,
    Delta,
    Notice,
    Thinking,
    ToolCall,
    ToolCallRequested,
    Usage,
    UsageReport,
)
from desktop.core.usage import model_capabilities

from ._attachment_parts import anthropic_user_blocks
from ._base import StreamingDriver, StreamParser
from ._cache import add_cache_breakpoints
from ._http import error_from_payload
from ._json import clean_arguments, loads
from ._replay import answered_history, tool_result_images
from ._sse import SSEEvent
from .openai import INCOMPLETE_STREAM, TRUNCATED_NOTICE

log = logging.getLogger(__name__)

__all__ = [
    "AnthropicDriver",
    "AnthropicStreamParser",
    "anthropic_url",
    "anthropic_messages",
    "anthropic_tools",
    "add_cache_breakpoints",
    "ANTHROPIC_VERSION",
    "DEFAULT_ANTHROPIC_BASE",
]

DEFAULT_ANTHROPIC_BASE = "https://api.anthropic.com"
ANTHROPIC_VERSION = "2023-06-01"
#: The image types the Messages API takes (in a ``tool_result`` too); others are only described.
ANTHROPIC_IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
REFUSAL_NOTICE = "the model declined to answer (stop_reason: refusal)"
CONTEXT_NOTICE = "response stopped: the model's context window is full"


def anthropic_url(base_url: str | None, path: str) -> str:
    """``{base}/v1/{path}``, never doubling ``/v1`` when the base already ends with it."""
    base = (base_url or DEFAULT_ANTHROPIC_BASE).strip().rstrip("/")
    if base.endswith("/v1"):
        base = base[:-3]
    return f"{base}/v1/{path.lstrip('/')}"


def anthropic_tools(tools: Sequence[ChatToolDef]) -> list[dict[str, Any]]:
    """Tool definitions in the Messages shape."""
    return [{"name": t.name, "description": t.description, "input_schema": t.schema} for t in tools]


def _tool_input(call: ToolCall) -> dict[str, Any]:
    try:
        return call.args()
    except ValueError:
        log.warning("tool call %s has invalid arguments; replayed as {}", call.id)
        return {}


def _assistant_blocks(m: ChatMessage) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for block in m.thinking_blocks or ():
        kind = block.get("type")
        if kind == "thinking":
            signature = block.get("signature")
            if signature:  # unsigned thinking is rejected by the API: never sent
                text = block.get("thinking", "")
                blocks.append({"type": "thinking", "thinking": text, "signature": signature})
        elif kind == "redacted_thinking" and block.get("data"):
            blocks.append({"type": "redacted_thinking", "data": block["data"]})
    if m.content.strip():
        blocks.append({"type": "text", "text": m.content})
    for call in m.tool_calls or ():
        blocks.append({"type": "tool_use", "id": call.id, "name": call.name, "input": _tool_input(call)})
    return blocks


def _tool_result(m: ChatMessage, call: ToolCall, *, images_ok: bool = True) -> dict[str, Any]:
    """The ``tool_result`` block of a ``tool`` message: text content, or a text block and its images."""
    content: str | list[dict[str, Any]] = m.content
    images = tool_result_images(m, ANTHROPIC_IMAGE_TYPES) if images_ok and not call.is_error else []
    if images:
        blocks: list[dict[str, Any]] = [{"type": "text", "text": m.content}] if m.content.strip() else []
        blocks += [
            {"type": "image", "source": {"type": "base64", "media_type": mime, "data": data}}
            for mime, data in images
        ]
        content = blocks
    result: dict[str, Any] = {"type": "tool_result", "tool_use_id": call.id, "content": content}
    if call.is_error:
        result["is_error"] = True
    return result


def anthropic_messages(
    messages: Sequence[ChatMessage],
    *,
    attachments: Mapping[str, Sequence[WirePart]] | None = None,
    tool_images: bool = True,
) -> list[dict[str, Any]]:
    """Conversation messages in the Messages shape (strictly alternating user/assistant turns).

    ``system`` and ``note`` messages are left out (the system prompt is a top-level field).
    Consecutive same-role turns are merged; ``tool`` messages become ``tool_result`` blocks,
    gathered in one user turn, in the order of the calls, before any text. A result with images
    (``extra["images"]`` of png, jpeg, gif or webp) sends its content as a text block followed by
    ``image`` blocks (unless ``tool_images`` is False: a model known not to see images); other
    images are only described by the result text. ``attachments`` (by user message id, see
    ``desktop.core.attachments``) put image, document and text blocks before a user message's text.
    """
    turns: list[dict[str, Any]] = []
    for m in answered_history(messages):
        if m.role == "user":
            role = "user"
            blocks = anthropic_user_blocks(m.content, attachments.get(m.id, ()) if attachments else ())
        elif m.role == "tool":
            if not m.tool_calls:
                log.warning("tool message %s has no call; not sent", m.id)
                continue
            role = "user"
            blocks = [_tool_result(m, m.tool_calls[0], images_ok=tool_images)]
        elif m.role == "assistant":
            role = "assistant"
            blocks = _assistant_blocks(m)
        else:
            continue
        if not blocks:
            continue
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": blocks})
    # Tool results first, in the order of the preceding assistant turn's tool_use blocks.
    for i, turn in enumerate(turns):
        if turn["role"] != "user":
            continue
        results = [b for b in turn["content"] if b["type"] == "tool_result"]
        if not results:
            continue
        order: dict[str, int] = {}
        if i > 0:
            uses = [b["id"] for b in turns[i - 1]["content"] if b["type"] == "tool_use"]
            order = {call_id: n for n, call_id in enumerate(uses)}
        results.sort(key=lambda b: order.get(b["tool_use_id"], len(order)))
        turn["content"] = results + [b for b in turn["content"] if b["type"] != "tool_result"]
    return turns


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


class _ToolBlock:
    __slots__ = ("id", "name", "parts", "start_input")

    def __init__(self, block_id: str, name: str, start_input: Any) -> None:
        self.id = block_id
        self.name = name
        self.parts: list[str] = []
        self.start_input = start_input


class AnthropicStreamParser(StreamParser):
    """Parses one Messages event stream."""

    __slots__ = (
        "provider", "model", "stop_reason", "_tools", "_got_delta",
        "_input", "_output", "_cache_read", "_cache_write", "_reasoning",
    )

    def __init__(self, *, provider: str, model: str) -> None:
        super().__init__()
        self.provider = provider
        self.model = model
        self.stop_reason: str | None = None
        self._tools: dict[int, _ToolBlock] = {}
        self._got_delta = False
        self._input = self._output = self._cache_read = self._cache_write = self._reasoning = 0

    def handle(self, event: SSEEvent) -> None:
        try:
            data = loads(event.data)
        except ValueError:
            if event.event == "error":
                raise ChatError(
                    f"stream error: {event.data.strip()[:200]}", provider=self.provider, kind="server"
                ) from None
            raise ChatError(
                f"malformed stream data: {event.data.strip()[:200]}", provider=self.provider, kind="protocol"
            ) from None
        if not isinstance(data, dict):
            raise ChatError(
                f"malformed stream data: {event.data.strip()[:200]}", provider=self.provider, kind="protocol"
            )
        kind = data.get("type") or event.event
        if kind == "content_block_delta":
            self._delta(data)
        elif kind == "content_block_start":
            self._block_start(data)
        elif kind == "content_block_stop":
            index = data.get("index")
            block = self._tools.pop(index, None) if isinstance(index, int) else None
            if block is not None:
                self._emit_tool(block)
        elif kind == "message_start":
            message = data.get("message")
            if isinstance(message, dict):
                if isinstance(message.get("model"), str):
                    self.model = message["model"]
                self._usage(message.get("usage"))
        elif kind == "message_delta":
            self._got_delta = True
            delta = data.get("delta")
            if isinstance(delta, dict) and delta.get("stop_reason"):
                self.stop_reason = delta["stop_reason"]
            self._usage(data.get("usage"))
        elif kind == "message_stop":
            self._finish()
        elif kind == "error" or event.event == "error":
            raise error_from_payload(data, provider=self.provider)
        # ping and unknown event types are ignored

    def _delta(self, data: dict[str, Any]) -> None:
        delta = data.get("delta")
        if not isinstance(delta, dict):
            return
        kind = delta.get("type")
        if kind == "text_delta":
            text = delta.get("text")
            if text:
                self.out.append(Delta(text))
                self.visible = True
        elif kind == "input_json_delta":
            block = self._tools.get(data.get("index"))  # type: ignore[arg-type]
            partial = delta.get("partial_json")
            if block is not None and partial and isinstance(partial, str):
                block.parts.append(partial)
        elif kind == "thinking_delta":
            text = delta.get("thinking")
            if text:
                self.out.append(Thinking(text))
                self.visible = True
        elif kind == "signature_delta":
            signature = delta.get("signature")
            if signature:
                self.out.append(Thinking("", signature=signature))
                self.visible = True

    def _block_start(self, data: dict[str, Any]) -> None:
        block = data.get("content_block")
        if not isinstance(block, dict):
            return
        kind = block.get("type")
        if kind == "text":
            if block.get("text"):
                self.out.append(Delta(block["text"]))
                self.visible = True
        elif kind == "tool_use":
            index = data.get("index")
            if isinstance(index, int):
                self._tools[index] = _ToolBlock(
                    str(block.get("id") or f"toolu_{index}"), str(block.get("name") or ""), block.get("input")
                )
        elif kind == "thinking":
            if block.get("thinking"):
                self.out.append(Thinking(block["thinking"]))
                self.visible = True
            if block.get("signature"):
                self.out.append(Thinking("", signature=block["signature"]))
                self.visible = True
        elif kind == "redacted_thinking":
            if block.get("data"):
                self.out.append(Thinking("", redacted_data=block["data"]))
                self.visible = True

    def _usage(self, usage: Any) -> None:
        if not isinstance(usage, dict):
            return
        for key, attr in (
            ("input_tokens", "_input"),
            ("output_tokens", "_output"),
            ("cache_read_input_tokens", "_cache_read"),
            ("cache_creation_input_tokens", "_cache_write"),
        ):
            value = _int(usage.get(key))
            if value is not None:
                setattr(self, attr, value)
        details = usage.get("output_tokens_details")
        if isinstance(details, dict):
            value = _int(details.get("thinking_tokens"))
            if value is not None:
                self._reasoning = value
        report = Usage(
            input_tokens=self._input,
            output_tokens=self._output,
            cache_read_tokens=self._cache_read,
            cache_write_tokens=self._cache_write,
            reasoning_tokens=self._reasoning,
        )
        self.out.append(UsageReport(report, model=self.model))

    def _emit_tool(self, block: _ToolBlock) -> None:
        args = "".join(block.parts).strip()
        if not args:
            start = block.start_input
            args = json.dumps(start, ensure_ascii=False) if isinstance(start, dict) and start else "{}"
        try:
            parsed = loads(args)
        except ValueError:
            parsed = None
        if not block.name or not isinstance(parsed, dict):
            name = block.name or "?"
            self.out.append(Notice(f"tool call not run: incomplete or invalid arguments ({name})"))
            return
        self.out.append(ToolCallRequested(ToolCall(block.id, block.name, clean_arguments(args, parsed))))
        self.visible = True

    def end_of_body(self) -> None:
        if not self._got_delta:
            raise ChatError(INCOMPLETE_STREAM, provider=self.provider, kind="network")
        self._finish()

    def _finish(self) -> None:
        if self.finished:
            return
        self.finished = True
        reason = self.stop_reason
        unfinished = [self._tools[i] for i in sorted(self._tools)]
        self._tools.clear()
        if reason != "max_tokens":
            for block in unfinished:
                self._emit_tool(block)
        elif unfinished:
            log.info("dropping %d tool call(s) cut off by max_tokens", len(unfinished))
        if reason == "max_tokens":
            self.out.append(Notice(TRUNCATED_NOTICE))
        elif reason == "refusal":
            self.out.append(Notice(REFUSAL_NOTICE))
        elif reason == "model_context_window_exceeded":
            self.out.append(Notice(CONTEXT_NOTICE))


class AnthropicDriver(StreamingDriver):
    """Streams from the Anthropic Messages API (see ``StreamingDriver`` args)."""

    def endpoint(self) -> str:
        return anthropic_url(self.config.base_url, "messages")

    def headers(self) -> dict[str, str]:
        return anthropic_headers(self.config.api_key)

    def build_body(
        self,
        *,
        model: str,
        messages: Sequence[ChatMessage],
        tools: Sequence[ChatToolDef],
        system: str | None,
        attachments: Mapping[str, Sequence[WirePart]] | None = None,
    ) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": model,
            "max_tokens": self.config.max_tokens,
            "messages": anthropic_messages(
                messages, attachments=attachments, tool_images=model_capabilities(model).vision is not False
            ),
            "stream": True,
        }
        parts = [system] if system and system.strip() else []
        parts += [m.content for m in messages if m.role == "system" and m.content.strip()]
        if parts:
            body["system"] = "\n\n".join(parts)
        if tools:
            body["tools"] = anthropic_tools(tools)
        if self.config.thinking_budget:
            body["thinking"] = {"type": "enabled", "budget_tokens": self.config.thinking_budget}
        if self.config.prompt_caching:
            body = add_cache_breakpoints(body)
        return body

    def new_parser(self, model: str) -> StreamParser:
        return AnthropicStreamParser(provider=self.config.id, model=model)


def anthropic_headers(api_key: str | None) -> dict[str, str]:
    """Headers of every Anthropic request (``x-api-key`` only when a key is set)."""
    headers = {"content-type": "application/json", "anthropic-version": ANTHROPIC_VERSION}
    if api_key:
        headers["x-api-key"] = api_key
    return headers
