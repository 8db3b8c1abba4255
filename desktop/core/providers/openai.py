"""Driver for OpenAI Chat Completions and compatible servers (DeepSeek, OpenRouter, Groq, Ollama...).

Handles every wire quirk listed in ``docs/PROTOCOLS.md``: usage wherever it appears, tool-call fragments
by index (new id at a used index, missing index, whole call in one chunk, empty name on
continuations), reasoning as ``reasoning_content``, ``reasoning`` or ``<think>`` tags, errors
after HTTP 200 in three shapes, and servers that reject ``stream_options``.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

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

from ._attachment_parts import OPENAI_IMAGE_TYPES, openai_tool_images_message, openai_user_content
from ._base import StreamingDriver, StreamParser
from ._http import error_from_payload
from ._json import clean_arguments, loads
from ._replay import answered_history, tool_result_images
from ._sse import SSEEvent

log = logging.getLogger(__name__)

__all__ = [
    "OpenAIDriver",
    "OpenAIStreamParser",
    "openai_url",
    "openai_messages",
    "openai_tools",
    "openai_usage",
    "DEFAULT_OPENAI_BASE",
    "TRUNCATED_NOTICE",
    "INCOMPLETE_STREAM",
]

DEFAULT_OPENAI_BASE = "https://api.openai.com/v1"
TRUNCATED_NOTICE = "response truncated: max_tokens"
CONTENT_FILTER_NOTICE = "response stopped by the provider's content filter"
INCOMPLETE_STREAM = "stream ended before the response was complete"

_VERSION_SEGMENT = re.compile(r"v\d+[a-z0-9]*")
_THINK_OPEN = "<think>"
_THINK_CLOSE = "</think>"


def openai_url(base_url: str | None, path: str) -> str:
    """``{base}/{path}`` when the base path has a version segment (``/v1``, ``/api/v1``,
    ``/v1beta``...), else ``{base}/v1/{path}``."""
    base = (base_url or DEFAULT_OPENAI_BASE).strip().rstrip("/")
    segments = urlsplit(base).path.split("/")
    if not any(_VERSION_SEGMENT.fullmatch(seg) for seg in segments):
        base += "/v1"
    return f"{base}/{path.lstrip('/')}"


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def openai_usage(raw: dict[str, Any]) -> Usage:
    """Normalise an OpenAI ``usage`` object: ``prompt_tokens`` includes cached tokens, so subtract."""
    prompt = _int(raw.get("prompt_tokens"))
    completion = _int(raw.get("completion_tokens"))
    details = raw.get("prompt_tokens_details")
    cached = cache_write = 0
    if isinstance(details, dict):
        cached = _int(details.get("cached_tokens"))
        cache_write = _int(details.get("cache_write_tokens"))
    if not cached:
        cached = _int(raw.get("prompt_cache_hit_tokens"))  # DeepSeek
    out_details = raw.get("completion_tokens_details")
    reasoning = _int(out_details.get("reasoning_tokens")) if isinstance(out_details, dict) else 0
    return Usage(
        input_tokens=max(prompt - cached - cache_write, 0),
        output_tokens=completion,
        cache_read_tokens=cached,
        cache_write_tokens=cache_write,
        reasoning_tokens=reasoning,
    )


def _system_text(system: str | None, messages: Sequence[ChatMessage]) -> str:
    parts = [system] if system and system.strip() else []
    parts += [m.content for m in messages if m.role == "system" and m.content.strip()]
    return "\n\n".join(parts)


def openai_tools(tools: Sequence[ChatToolDef]) -> list[dict[str, Any]]:
    """Tool definitions in the Chat Completions shape."""
    return [
        {
            "type": "function",
            "function": {"name": t.name, "description": t.description, "parameters": t.schema},
        }
        for t in tools
    ]


def openai_messages(
    messages: Sequence[ChatMessage],
    system: str | None = None,
    *,
    replay_reasoning: bool = False,
    attachments: Mapping[str, Sequence[WirePart]] | None = None,
    tool_images: bool = False,
) -> list[dict[str, Any]]:
    """Conversation messages in the Chat Completions shape.

    The system prompt (and any ``system`` messages) becomes one leading system message; ``note``
    messages are never sent; assistant tool calls and ``tool`` results take the shapes the API
    accepts on re-entry. ``replay_reasoning`` (DeepSeek) adds ``reasoning_content`` to assistant
    messages that made tool calls. ``attachments`` (by user message id, see
    ``desktop.core.attachments``) turn a user message's content into parts; with ``tool_images``
    the images of tool results follow the results as a user message (``_attachment_parts``).
    """
    out: list[dict[str, Any]] = []
    system_text = _system_text(system, messages)
    if system_text:
        out.append({"role": "system", "content": system_text})
    pending: list[tuple[ToolCall, list[tuple[str, str]]]] = []  # tool-result images not sent yet
    for m in answered_history(messages):
        if pending and m.role not in ("tool", "note"):
            out.append(openai_tool_images_message(pending))
            pending = []
        if m.role == "user":
            parts = attachments.get(m.id, ()) if attachments else ()
            out.append({"role": "user", "content": openai_user_content(m.content, parts)})
        elif m.role == "assistant":
            if m.tool_calls:
                item: dict[str, Any] = {
                    "role": "assistant",
                    "content": m.content or None,
                    "tool_calls": [
                        {
                            "id": c.id,
                            "type": "function",
                            "function": {"name": c.name, "arguments": c.args_json or "{}"},
                        }
                        for c in m.tool_calls
                    ],
                }
                if replay_reasoning:
                    item["reasoning_content"] = m.thinking or ""
                out.append(item)
            elif m.content:
                out.append({"role": "assistant", "content": m.content})
        elif m.role == "tool":
            if not m.tool_calls:
                log.warning("tool message %s has no call; not sent", m.id)
                continue
            call = m.tool_calls[0]
            out.append({"role": "tool", "tool_call_id": call.id, "content": m.content})
            images = tool_result_images(m, OPENAI_IMAGE_TYPES) if tool_images and not call.is_error else []
            if images:
                pending.append((call, images))
    if pending:
        out.append(openai_tool_images_message(pending))
    return out


class _CallAcc:
    __slots__ = ("id", "name", "parts")

    def __init__(self, call_id: str) -> None:
        self.id = call_id
        self.name = ""
        self.parts: list[str] = []


class OpenAIStreamParser(StreamParser):
    """Parses one Chat Completions event stream."""

    __slots__ = (
        "provider", "model", "finish_reason", "_calls", "_by_index", "_last_call",
        "_think_mode", "_pending", "_blank", "_strip_leading",
    )

    def __init__(self, *, provider: str, model: str) -> None:
        super().__init__()
        self.provider = provider
        self.model = model
        self.finish_reason: str | None = None
        self._calls: list[_CallAcc] = []
        self._by_index: dict[int, _CallAcc] = {}
        self._last_call: _CallAcc | None = None
        # <think> handling: "start" until the first non-blank content decides, then "think" or "text".
        self._think_mode = "start"
        self._pending = ""
        # Whitespace-only content before the decision, kept as pieces: joining (or stripping) it
        # again on every delta would make a long run of blank deltas quadratic.
        self._blank: list[str] = []
        self._strip_leading = False

    # -- events ---------------------------------------------------------------------------------

    def handle(self, event: SSEEvent) -> None:
        data = event.data
        if data == "[DONE]":
            self._finish()
            return
        try:
            chunk = loads(data)
        except ValueError:
            if event.event == "error":
                raise ChatError(
                    f"stream error: {data.strip()[:200]}", provider=self.provider, kind="server"
                ) from None
            raise ChatError(
                f"malformed stream data: {data.strip()[:200]}", provider=self.provider, kind="protocol"
            ) from None
        if not isinstance(chunk, dict):
            raise ChatError(
                f"malformed stream data: {data.strip()[:200]}", provider=self.provider, kind="protocol"
            )
        if event.event == "error" or chunk.get("error"):
            usage = chunk.get("usage")
            if isinstance(usage, dict):
                self.out.append(UsageReport(openai_usage(usage), model=chunk.get("model") or self.model))
            raise error_from_payload(chunk, provider=self.provider)
        choices = chunk.get("choices")
        if choices:
            for choice in choices:
                if isinstance(choice, dict):
                    self._choice(choice)
        usage = chunk.get("usage")
        if usage:
            self.out.append(UsageReport(openai_usage(usage), model=chunk.get("model") or self.model))

    def _choice(self, choice: dict[str, Any]) -> None:
        delta = choice.get("delta")
        if delta:
            content = delta.get("content")
            reasoning = delta.get("reasoning_content") or delta.get("reasoning")
            if reasoning and isinstance(reasoning, str):
                self.out.append(Thinking(reasoning))
                self.visible = True
            if content and isinstance(content, str):
                if self._think_mode == "text" and not self._strip_leading:
                    self.out.append(Delta(content))
                    self.visible = True
                else:
                    self._content(content)
            refusal = delta.get("refusal")
            if refusal and isinstance(refusal, str):
                self.out.append(Delta(refusal))
                self.visible = True
            calls = delta.get("tool_calls")
            if calls:
                for call in calls:
                    if isinstance(call, dict):
                        self._tool_fragment(call)
        reason = choice.get("finish_reason")
        if reason:
            self.finish_reason = reason

    def _content(self, piece: str) -> None:
        """Content while ``<think>`` handling is still active (start or inside a think block)."""
        if self._think_mode == "start" and not self._pending and piece.isspace():
            self._blank.append(piece)  # nothing to decide on yet
            return
        if self._blank:  # only blank text came before (no partial "<think>" is pending)
            text = "".join(self._blank) + piece
            self._blank.clear()
        else:
            text = self._pending + piece
        self._pending = ""
        while text:
            if self._think_mode == "start":
                stripped = text.lstrip()
                if not stripped:
                    self._pending = text
                    return
                if stripped.startswith(_THINK_OPEN):
                    self._think_mode = "think"
                    text = stripped[len(_THINK_OPEN):]
                    continue
                if _THINK_OPEN.startswith(stripped):
                    self._pending = text  # maybe the start of "<think>": wait for more
                    return
                self._think_mode = "text"
                self._emit_text(text)
                return
            if self._think_mode == "think":
                end = text.find(_THINK_CLOSE)
                if end >= 0:
                    if end:
                        self._emit_thinking(text[:end])
                    self._think_mode = "text"
                    self._strip_leading = True
                    text = text[end + len(_THINK_CLOSE):]
                    continue
                keep = _partial_suffix(text, _THINK_CLOSE)
                if keep:
                    self._pending = text[-keep:]
                    text = text[:-keep]
                if text:
                    self._emit_thinking(text)
                return
            self._emit_text(text)
            return

    def _emit_text(self, text: str) -> None:
        if self._strip_leading:
            text = text.lstrip()
            if not text:
                return
            self._strip_leading = False
        self.out.append(Delta(text))
        self.visible = True

    def _emit_thinking(self, text: str) -> None:
        self.out.append(Thinking(text))
        self.visible = True

    def _tool_fragment(self, frag: dict[str, Any]) -> None:
        index = frag.get("index")
        call_id = frag.get("id")
        if not isinstance(call_id, str):
            call_id = ""
        if isinstance(index, int):
            acc = self._by_index.get(index)
            if acc is None or (call_id and acc.id and call_id != acc.id):
                acc = self._new_call(call_id)
                self._by_index[index] = acc
        else:
            acc = self._last_call
            if acc is None or (call_id and call_id != acc.id):
                acc = self._new_call(call_id)
        if call_id and not acc.id:
            acc.id = call_id
        self._last_call = acc
        fn = frag.get("function")
        if isinstance(fn, dict):
            name = fn.get("name")
            if name and isinstance(name, str):
                acc.name = name
            args = fn.get("arguments")
            if isinstance(args, str):
                if args:
                    acc.parts.append(args)
            elif isinstance(args, dict):
                acc.parts.append(json.dumps(args, ensure_ascii=False))

    def _new_call(self, call_id: str) -> _CallAcc:
        acc = _CallAcc(call_id)
        self._calls.append(acc)
        return acc

    # -- end ------------------------------------------------------------------------------------

    def end_of_body(self) -> None:
        if self.finish_reason is None:
            raise ChatError(INCOMPLETE_STREAM, provider=self.provider, kind="network")
        self._finish()

    def _finish(self) -> None:
        if self.finished:
            return
        self.finished = True
        if self._blank:
            self._pending = "".join(self._blank)
            self._blank.clear()
        if self._pending:
            pending, self._pending = self._pending, ""
            if self._think_mode == "think":
                self._emit_thinking(pending)
            elif pending.strip():
                self._emit_text(pending)
        dropped: list[str] = []
        truncated = self.finish_reason == "length"
        for n, acc in enumerate(self._calls):
            raw = "".join(acc.parts).strip()
            if truncated and not raw:
                # Cut off before any argument arrived: "{}" would parse, but the call is unfinished.
                dropped.append(acc.name or "?")
                continue
            args = raw or "{}"
            try:
                parsed = loads(args)
            except ValueError:
                parsed = None
            if not acc.name or not isinstance(parsed, dict):
                dropped.append(acc.name or "?")
                continue
            call = ToolCall(acc.id or f"call_{n}", acc.name, clean_arguments(args, parsed))
            self.out.append(ToolCallRequested(call))
            self.visible = True
        reason = self.finish_reason
        if reason == "length":
            self.out.append(Notice(TRUNCATED_NOTICE))
        elif reason == "content_filter":
            self.out.append(Notice(CONTENT_FILTER_NOTICE))
        if dropped and reason != "length":
            names = ", ".join(dropped)
            self.out.append(Notice(f"tool call not run: incomplete or invalid arguments ({names})"))


def _partial_suffix(text: str, tag: str) -> int:
    """Length of the longest proper prefix of ``tag`` that ``text`` ends with."""
    for size in range(min(len(tag) - 1, len(text)), 0, -1):
        if text.endswith(tag[:size]):
            return size
    return 0


class OpenAIDriver(StreamingDriver):
    """Streams Chat Completions from an OpenAI-compatible server (see ``StreamingDriver`` args)."""

    _include_usage = True

    def endpoint(self) -> str:
        return openai_url(self.config.base_url, "chat/completions")

    def headers(self) -> dict[str, str]:
        headers = {"content-type": "application/json", "accept": "text/event-stream"}
        if self.config.api_key:
            headers["authorization"] = f"Bearer {self.config.api_key}"
        return headers

    @property
    def is_deepseek(self) -> bool:
        """True when the base URL is DeepSeek's (reasoning must be replayed on tool-call turns)."""
        host = urlsplit(self.config.base_url or "").hostname or ""
        return "deepseek" in host

    def build_body(
        self,
        *,
        model: str,
        messages: Sequence[ChatMessage],
        tools: Sequence[ChatToolDef],
        system: str | None,
        attachments: Mapping[str, Sequence[WirePart]] | None = None,
    ) -> dict[str, Any]:
        # Tool-result images ride in a user message: only for a model known to take images (an
        # unknown local model would reject the request); the result text describes them anyway.
        body: dict[str, Any] = {
            "model": model,
            "messages": openai_messages(
                messages, system, replay_reasoning=self.is_deepseek, attachments=attachments,
                tool_images=model_capabilities(model).vision is True,
            ),
            "stream": True,
        }
        if self._include_usage:
            body["stream_options"] = {"include_usage": True}
        if tools:
            body["tools"] = openai_tools(tools)
        return body

    def new_parser(self, model: str) -> StreamParser:
        return OpenAIStreamParser(provider=self.config.id, model=model)

    def adjust_after_error(self, status: int, body_text: str, body: dict[str, Any]) -> bool:
        if status == 400 and "stream_options" in body and (
            "stream_options" in body_text or "include_usage" in body_text
        ):
            log.info("%s rejects stream_options; sending without it from now on", self.config.id)
            self._include_usage = False
            del body["stream_options"]
            return True
        return False
