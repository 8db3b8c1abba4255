"""The tool loop: stream a model response, run its tool calls, feed the results back, repeat.

``run_chat_loop`` owns the message ids: it stamps ``message_id`` on every event, applies each
event to its own message list with ``apply_event`` and only then hands it to ``on_event``. So
applying every event ``on_event`` received, in order, to the caller's messages gives exactly the
loop's final messages, by construction.

Tool calls (``docs/DESIGN.md``, differences D4 and D5): the driver's ``ToolCallRequested`` events
are collected, not forwarded. After the stream ended cleanly the loop takes the turn's calls in
order, one at a time, and
announces each exactly once with ``ToolCallRequested`` at the moment it is handled (status
``awaiting_approval`` when the tool needs approval, else ``running``), then ends it with exactly
one ``ToolCallFinished``: ``done``, ``error``, ``denied`` or ``skipped``. After a denial, or when
the run is cancelled while a call is pending or running, every call of the turn that has not
finished is announced (if it was not yet) and finished as ``skipped``, so the assistant message
lists every call the model made and each has a result: replayed history is always valid.
A stream that fails or is cancelled never has its calls executed or announced.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Literal, TypeAlias

from .conversation import Conversation, apply_event, new_id
from .types import (
    MAX_TOOL_IMAGE_BYTES,
    MAX_TOOL_IMAGES,
    ChatDriver,
    ChatEvent,
    ChatMessage,
    ChatToolDef,
    Delta,
    Done,
    DoneReason,
    Notice,
    Thinking,
    ToolCall,
    ToolCallFinished,
    ToolCallRequested,
    ToolOutput,
    ToolStatus,
    UsageReport,
)

log = logging.getLogger(__name__)

__all__ = [
    "DEFAULT_MAX_ITERATIONS",
    "ITERATION_LIMIT_NOTE",
    "DENIED_RESULT",
    "SKIPPED_AFTER_DENIAL",
    "SKIPPED_AFTER_STOP",
    "ApprovalDecision",
    "ChatLoopHooks",
    "ChatLoopResult",
    "run_chat_loop",
]

DEFAULT_MAX_ITERATIONS = 10
ITERATION_LIMIT_NOTE = "stopped: tool loop iteration limit reached"
DENIED_RESULT = "denied by user"
SKIPPED_AFTER_DENIAL = "skipped: an earlier tool call was denied"
SKIPPED_AFTER_STOP = "skipped: stopped by user"
#: How long a stop waits for a running tool that changes things (it may be past the point of no
#: return in a thread) so its real outcome is recorded instead of "skipped".
TOOL_STOP_GRACE_S = 2.0

ApprovalDecision: TypeAlias = Literal["approve", "deny"]


@dataclass(slots=True)
class ChatLoopHooks:
    """How the loop talks to its owner.

    Attributes:
        on_event: Plain callable receiving every event, stamped and already applied, in order.
        request_approval: ``async (call) -> "approve" | "deny"``, called right after the call's
            ``ToolCallRequested`` (status ``awaiting_approval``) went to ``on_event``.
        max_iterations: The maximum number of model calls in one run.
    """

    on_event: Callable[[ChatEvent], None]
    request_approval: Callable[[ToolCall], Awaitable[ApprovalDecision]]
    max_iterations: int = DEFAULT_MAX_ITERATIONS


@dataclass(slots=True)
class ChatLoopResult:
    """The loop's outcome: the final messages (the list it was given, grown) and why it stopped."""

    messages: list[ChatMessage]
    stop_reason: DoneReason


class _Emitter:
    """Applies a stamped event to the loop's messages, then hands it to ``on_event``."""

    __slots__ = ("conv", "on_event")

    def __init__(self, conv: Conversation, on_event: Callable[[ChatEvent], None]) -> None:
        self.conv = conv
        self.on_event = on_event

    def __call__(self, event: ChatEvent) -> None:
        apply_event(self.conv, event)
        self.on_event(event)


def _stamp(event: ChatEvent, assistant_id: str, model: str) -> ChatEvent | None:
    """Return ``event`` stamped for the loop's message list (None for events the loop drops)."""
    if isinstance(event, Delta):
        return Delta(event.text, message_id=assistant_id)
    if isinstance(event, Thinking):
        return Thinking(event.text, event.signature, event.redacted_data, message_id=assistant_id)
    if isinstance(event, UsageReport):
        return UsageReport(event.usage, event.model or model or None, message_id=assistant_id)
    if isinstance(event, Notice):
        return Notice(event.text, message_id=new_id("n"))
    if isinstance(event, Done):
        log.warning("driver yielded Done(%s); drivers must not end runs themselves: ignored", event.reason)
        return None
    log.warning("driver yielded an unexpected %s: ignored", type(event).__name__)
    return None


def _provider_view(messages: Sequence[ChatMessage]) -> list[ChatMessage]:
    """The messages a driver gets: a snapshot without local ``note`` messages."""
    return [m for m in messages if m.role != "note"]


async def _stream_turn(
    driver: ChatDriver,
    model: str,
    messages: list[ChatMessage],
    tools: Sequence[ChatToolDef],
    system: str | None,
    emit: _Emitter,
    used_call_ids: set[str],
) -> tuple[str, list[ToolCall]]:
    """Stream one model response; return its message id and its tool calls (collected, not announced)."""
    assistant_id = new_id("m")
    calls: dict[str, ToolCall] = {}
    stream = driver.stream(model=model, messages=_provider_view(messages), tools=tools, system=system)
    try:
        async for event in stream:
            if isinstance(event, ToolCallRequested):
                call = event.call.copy()
                if not call.id or (call.id in used_call_ids and call.id not in calls):
                    # Empty or reused ids (some local servers repeat "call_0") would make results
                    # ambiguous; the call and its result both carry the new id.
                    call.id = new_id("call")
                call.status, call.result, call.is_error = "running", None, False
                calls[call.id] = call
                used_call_ids.add(call.id)
                continue
            stamped = _stamp(event, assistant_id, model)
            if stamped is not None:
                emit(stamped)
    finally:
        aclose = getattr(stream, "aclose", None)
        if aclose is not None:
            await aclose()
    return assistant_id, list(calls.values())


class _ToolRunner:
    """Runs one turn's calls in order, one at a time, with exactly one announce and one finish each."""

    def __init__(
        self,
        assistant_id: str,
        calls: list[ToolCall],
        tools: dict[str, ChatToolDef],
        hooks: ChatLoopHooks,
        emit: _Emitter,
    ) -> None:
        self.assistant_id = assistant_id
        self.calls = calls
        self.tools = tools
        self.hooks = hooks
        self.emit = emit
        self.announced: set[str] = set()
        self.finished: set[str] = set()

    def _initial_status(self, call: ToolCall) -> Literal["awaiting_approval", "running"]:
        tool = self.tools.get(call.name)
        return "awaiting_approval" if tool is not None and tool.needs_approval else "running"

    def announce(self, call: ToolCall, status: Literal["awaiting_approval", "running"]) -> ToolCall:
        announced = call.copy()
        announced.status = status
        self.announced.add(call.id)
        self.emit(ToolCallRequested(announced, message_id=self.assistant_id))
        return announced.copy()

    def finish(
        self, call: ToolCall, status: ToolStatus, result: str, images: list[dict[str, str]] | None = None
    ) -> None:
        done = call.copy()
        done.status = status
        done.result = result
        done.is_error = status != "done"
        done.images = images or None
        self.finished.add(call.id)
        self.emit(ToolCallFinished(done, message_id=new_id("t")))

    def skip_rest(self, reason: str) -> None:
        """Announce (when needed) and skip every call that has not finished."""
        for call in self.calls:
            if call.id in self.finished:
                continue
            if call.id not in self.announced:
                self.announce(call, self._initial_status(call))
            self.finish(call, "skipped", reason)

    async def run(self) -> bool:
        """Run the calls; True when the user denied one (the rest are skipped)."""
        try:
            for call in self.calls:
                if not await self._run_one(call):
                    self.skip_rest(SKIPPED_AFTER_DENIAL)
                    return True
        except asyncio.CancelledError:
            self.skip_rest(SKIPPED_AFTER_STOP)
            raise
        except BaseException:
            # A failing hook: still answer every announced call if the sink allows it.
            try:
                self.skip_rest(SKIPPED_AFTER_STOP)
            except Exception:
                log.debug("could not finish the remaining tool calls", exc_info=True)
            raise
        return False

    async def _run_one(self, call: ToolCall) -> bool:
        """Handle one call; False when it was denied."""
        tool = self.tools.get(call.name)
        if tool is None:
            self.announce(call, "running")
            self.finish(call, "error", f"unknown tool: {call.name}")
            return True
        try:
            args = call.args()
        except (ValueError, RecursionError) as err:
            # Nothing could run, so the user is not asked to approve it.
            self.announce(call, "running")
            self.finish(call, "error", f"tool error: invalid JSON arguments: {err}")
            return True
        if tool.needs_approval:
            pending = self.announce(call, "awaiting_approval")
            decision = await self.hooks.request_approval(pending)
            if decision != "approve":
                if decision != "deny":
                    log.warning("approval returned %r for %s: treated as deny", decision, call.name)
                self.finish(call, "denied", DENIED_RESULT)
                return False
        else:
            self.announce(call, "running")
        task = asyncio.ensure_future(tool.run(args))
        try:
            await asyncio.shield(task)
        except asyncio.CancelledError:
            # Stopped while the tool runs. Work in a thread (a file write) cannot be interrupted, so
            # "skipped" could be a lie: give a tool that changes things a moment to finish and
            # record what it did. Read-only and interruptible tools are simply cancelled.
            if tool.needs_approval and not tool.interruptible:
                await asyncio.wait({task}, timeout=TOOL_STOP_GRACE_S)
            if task.done() and not task.cancelled():
                self._finish_from(call, task)
            else:
                task.cancel()
            raise
        except Exception:
            pass  # read from the task below
        self._finish_from(call, task)
        return True

    def _finish_from(self, call: ToolCall, task: asyncio.Future[str | ToolOutput]) -> None:
        """Finish ``call`` with the outcome of its (done) tool task."""
        err = task.exception()
        if err is not None:  # a raising tool is an error result for the model, not a crash
            log.info("tool %s failed: %s", call.name, err, exc_info=err)
            self.finish(call, "error", f"tool error: {err or type(err).__name__}")
            return
        result = task.result()
        if isinstance(result, ToolOutput):
            text, images = _model_images(call.name, result)
            self.finish(call, "done", text, images)
            return
        self.finish(call, "done", result if isinstance(result, str) else str(result))


def _model_images(tool: str, output: ToolOutput) -> tuple[str, list[dict[str, str]]]:
    """The text and the images of ``output`` the model may get (see ``ToolOutput``).

    An image that is malformed, not valid base64, over ``MAX_TOOL_IMAGE_BYTES`` decoded or past the
    first ``MAX_TOOL_IMAGES`` is left out, and a line saying so is added to the text.
    """
    text = output.text if isinstance(output.text, str) else str(output.text)
    kept: list[dict[str, str]] = []
    notes: list[str] = []
    for image in output.images:
        mime = image.get("mime") if isinstance(image, dict) else None
        data = image.get("data") if isinstance(image, dict) else None
        if not isinstance(mime, str) or not isinstance(data, str):
            notes.append("[image not sent: malformed]")
            continue
        if len(kept) >= MAX_TOOL_IMAGES:
            notes.append(f"[image not sent: {mime}, more than {MAX_TOOL_IMAGES} images]")
            continue
        if len(data) > (MAX_TOOL_IMAGE_BYTES + 2) // 3 * 4 + 4:
            size = len(data) * 3 // 4  # too big to be worth decoding: estimated from the base64 length
        else:
            try:
                size = len(base64.b64decode(data, validate=True))
            except (binascii.Error, ValueError):
                notes.append(f"[image not sent: {mime}, invalid base64 data]")
                continue
        if size > MAX_TOOL_IMAGE_BYTES:
            notes.append(f"[image not sent: {mime}, {size} bytes, over {MAX_TOOL_IMAGE_BYTES} bytes]")
            continue
        kept.append({"mime": mime, "data": data})
    if notes:
        log.info("tool %s: %d image(s) not sent to the model", tool, len(notes))
        text = "\n".join([text, *notes]) if text else "\n".join(notes)
    return text, kept


async def run_chat_loop(
    driver: ChatDriver,
    model: str,
    messages: list[ChatMessage],
    tools: Sequence[ChatToolDef],
    hooks: ChatLoopHooks,
    system: str | None = None,
) -> ChatLoopResult:
    """Run model calls and tool calls until the model answers without tools.

    Args:
        driver: The provider driver.
        model: The model id.
        messages: The history; the loop appends to this list in place (pass a copy to keep yours)
            and ``ChatLoopResult.messages`` is this list.
        tools: The tools offered to the model.
        hooks: Event sink, approval callback and iteration limit.
        system: System prompt, passed to the driver.

    Returns:
        The final messages and the stop reason: ``end_turn``, ``denied`` (a call was denied; every
        later call of the turn was skipped) or ``max_iterations`` (after ``max_iterations`` model
        calls whose tools ran; a note says so).

    Raises:
        ChatError: From the driver (the text streamed so far stays applied).
        asyncio.CancelledError: Propagated after every announced call got its ``ToolCallFinished``.
        ValueError: ``hooks.max_iterations`` is below 1.
    """
    if hooks.max_iterations < 1:
        raise ValueError(f"max_iterations must be at least 1, got {hooks.max_iterations}")
    emit = _Emitter(Conversation(id="", messages=messages, created_at=0), hooks.on_event)
    tools_by_name = {tool.name: tool for tool in tools}
    used_call_ids = {c.id for m in messages if m.tool_calls for c in m.tool_calls}
    for iteration in range(1, hooks.max_iterations + 1):
        assistant_id, calls = await _stream_turn(driver, model, messages, tools, system, emit, used_call_ids)
        if not calls:
            return ChatLoopResult(messages, "end_turn")
        if await _ToolRunner(assistant_id, calls, tools_by_name, hooks, emit).run():
            return ChatLoopResult(messages, "denied")
        if iteration == hooks.max_iterations:
            emit(Notice(ITERATION_LIMIT_NOTE, message_id=new_id("n")))
            return ChatLoopResult(messages, "max_iterations")
    raise AssertionError("unreachable")  # pragma: no cover
