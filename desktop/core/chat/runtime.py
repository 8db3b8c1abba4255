"""The chat runtime: one active run per node, stop, tool approval and the terminal ``Done`` event.

It is the only stateful piece of the chat core and knows nothing about HTTP or Qt: providers,
drivers, tools and the event sink are injected through ``ChatRuntimeDeps`` (plain callables).

Differences from the original (``docs/DESIGN.md`` §3):

- D1: a run's registry entry is removed *before* its ``Done`` is broadcast, so a UI that sends
  again when it sees ``Done`` succeeds.
- D2: ``stop()`` cancels the run, which frees it also while it waits for an approval; every
  pending approval of a run is resolved when the run ends, so none outlives it.
- D3: the run registry belongs to the runtime instance.
- D4/D5: see ``loop``: one ``ToolCallRequested`` and one ``ToolCallFinished`` per call.

Every started ``send`` broadcasts exactly one ``Done`` and never raises (an external cancellation
of the awaiting task still broadcasts ``Done("stopped")`` and then propagates, as asyncio requires).
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from .conversation import Conversation, apply_event
from .loop import DEFAULT_MAX_ITERATIONS, ApprovalDecision, ChatLoopHooks, ChatLoopResult, run_chat_loop
from .types import (
    ChatDriver,
    ChatError,
    ChatEvent,
    ChatMessage,
    ChatToolDef,
    Delta,
    Done,
    DoneReason,
    ProviderConfig,
    Thinking,
    ToolCall,
    ToolCallFinished,
    ToolCallRequested,
    UsageReport,
)

log = logging.getLogger(__name__)

__all__ = [
    "BUSY_ERROR",
    "NO_PROVIDER_ERROR",
    "CLOSED_ERROR",
    "ChatRuntime",
    "ChatRuntimeDeps",
    "ChatSendRequest",
    "ChatSendResult",
    "create_chat_runtime",
]

BUSY_ERROR = "chat already running for this node"
NO_PROVIDER_ERROR = "no chat provider configured (Settings → Providers)"
CLOSED_ERROR = "chat runtime is closed"


@dataclass(slots=True)
class ChatSendRequest:
    """One user turn for one node.

    Attributes:
        node_id: The chat node.
        messages: The conversation so far, the new user message included. Not mutated.
        model: Model id; defaults to the provider's model.
        provider: Provider id; ``resolve_provider`` decides what None means.
        system: System prompt sent with every model call of the run.
    """

    node_id: str
    messages: Sequence[ChatMessage]
    model: str | None = None
    provider: str | None = None
    system: str | None = None


@dataclass(slots=True)
class ChatSendResult:
    """Outcome of ``send``.

    Attributes:
        ok: False for the two early exits and for errors.
        error: The error text when not ok.
        stop_reason: The ``Done`` reason (``"error"`` on failure).
        messages: The run's final messages (``req.messages`` plus what the run added, with the
            ``Done`` applied); empty for the early exits. Equal to applying every broadcast event
            to ``req.messages``.
    """

    ok: bool
    error: str | None = None
    stop_reason: DoneReason | None = None
    messages: list[ChatMessage] = field(default_factory=list)


@dataclass(slots=True)
class ChatRuntimeDeps:
    """What the runtime needs from its host; every callable is plain (not async).

    Attributes:
        resolve_provider: ``(req) -> ProviderConfig | None``; None means "not configured".
        broadcast: ``(node_id, event) -> None``; receives every event of every run, in order.
        tools_for: ``(req) -> list of ChatToolDef``; no tools when omitted.
        driver_for: ``(config) -> ChatDriver``; defaults to ``desktop.core.providers.driver_for``.
        log: ``(text) -> None`` for the "chat <node> finished in <ms>" line.
        max_iterations: Model calls per run.
    """

    resolve_provider: Callable[[ChatSendRequest], ProviderConfig | None]
    broadcast: Callable[[str, ChatEvent], None]
    tools_for: Callable[[ChatSendRequest], Sequence[ChatToolDef]] | None = None
    driver_for: Callable[[ProviderConfig], ChatDriver] | None = None
    log: Callable[[str], None] | None = None
    max_iterations: int = DEFAULT_MAX_ITERATIONS


class _Run:
    """One active run: its task, its pending approvals and the message being streamed."""

    __slots__ = ("node_id", "task", "stop_requested", "pending", "streaming_id", "finished")

    def __init__(self, node_id: str) -> None:
        self.node_id = node_id
        self.task: asyncio.Task[ChatLoopResult] | None = None
        self.stop_requested = False
        self.pending: dict[str, asyncio.Future[ApprovalDecision]] = {}
        self.streaming_id = ""
        self.finished = asyncio.Event()

    def resolve_pending(self) -> None:
        """Resolve every pending approval (cancelled: the loop skips the call) and forget them."""
        pending, self.pending = self.pending, {}
        for future in pending.values():
            if not future.done():
                future.cancel()


def _default_driver_for(config: ProviderConfig) -> ChatDriver:
    # Imported lazily: the providers package pulls in httpx, and the core must import without it.
    providers = importlib.import_module("desktop.core.providers")
    driver: ChatDriver = providers.driver_for(config)
    return driver


class ChatRuntime:
    """Runs chats for nodes: ``send``, ``stop``, ``approve``, ``is_busy``, ``aclose``.

    Create it with ``create_chat_runtime``; use it from one asyncio event loop.
    """

    def __init__(self, deps: ChatRuntimeDeps) -> None:
        if deps.max_iterations < 1:
            raise ValueError(f"max_iterations must be at least 1, got {deps.max_iterations}")
        self._deps = deps
        self._runs: dict[str, _Run] = {}
        self._closed = False

    # -- queries and controls (plain calls) ------------------------------------------------

    def is_busy(self, node_id: str) -> bool:
        """True while a run of ``node_id`` is registered (from ``send``'s first tick until ``Done``)."""
        return node_id in self._runs

    def stop(self, node_id: str) -> None:
        """Stop the node's run promptly (also while it waits for an approval); no-op when idle.

        The run ends with ``Done("stopped")``; pending and unstarted tool calls become ``skipped``.
        """
        run = self._runs.get(node_id)
        if run is None:
            return
        run.stop_requested = True
        run.resolve_pending()
        if run.task is not None:
            run.task.cancel()

    def approve(self, node_id: str, call_id: str, decision: ApprovalDecision) -> None:
        """Answer the approval card of ``call_id``; a no-op for an unknown node or call.

        Raises:
            ValueError: ``decision`` is neither ``"approve"`` nor ``"deny"``.
        """
        if decision not in ("approve", "deny"):
            raise ValueError(f"decision must be 'approve' or 'deny', got {decision!r}")
        run = self._runs.get(node_id)
        if run is None:
            return
        future = run.pending.get(call_id)
        if future is not None and not future.done():
            future.set_result(decision)  # the waiting side removes the entry

    async def aclose(self) -> None:
        """Stop every run and wait until each has broadcast its ``Done``; later sends fail."""
        self._closed = True
        runs = list(self._runs.values())
        for run in runs:
            self.stop(run.node_id)
        for run in runs:
            await run.finished.wait()

    # -- send ----------------------------------------------------------------------------------

    async def send(self, req: ChatSendRequest) -> ChatSendResult:
        """Run one chat turn for ``req.node_id`` to its end. Never raises (see the module doc).

        Order: busy check, provider resolution (both early exits broadcast no ``Done``), then the
        run is registered before any I/O, the loop runs, the run is unregistered, and exactly one
        ``Done`` is broadcast.
        """
        node_id = req.node_id
        if self._closed:
            return ChatSendResult(ok=False, error=CLOSED_ERROR, stop_reason="error")
        if node_id in self._runs:
            return ChatSendResult(ok=False, error=BUSY_ERROR, stop_reason="error")
        try:
            config = self._deps.resolve_provider(req)
        except Exception as err:
            log.exception("resolve_provider failed for node %s", node_id)
            return ChatSendResult(ok=False, error=f"provider configuration error: {err}", stop_reason="error")
        if config is None:
            return ChatSendResult(ok=False, error=NO_PROVIDER_ERROR, stop_reason="error")

        run = _Run(node_id)
        self._runs[node_id] = run
        started = time.perf_counter()
        messages = list(req.messages)
        reason: DoneReason = "end_turn"
        error: str | None = None
        external_cancel: asyncio.CancelledError | None = None
        try:
            reason = await self._run(run, req, config, messages)
        except asyncio.CancelledError as cancel:
            reason = "stopped"
            current = asyncio.current_task()
            if current is not None and current.cancelling() and not run.stop_requested:
                external_cancel = cancel
        except Exception as err:
            reason = "error"
            error = str(err) or type(err).__name__
            if not isinstance(err, ChatError):
                log.error("chat run of node %s failed", node_id, exc_info=err)
        finally:
            # D1: unregister first, so a UI reacting to Done can send again at once.
            if self._runs.get(node_id) is run:
                del self._runs[node_id]
            run.resolve_pending()  # D2: no approval outlives its run
            done = Done(reason, error, message_id=run.streaming_id if reason in ("stopped", "error") else "")
            apply_event(Conversation(id="", messages=messages, created_at=0), done)
            self._broadcast(node_id, done)
            run.finished.set()
            elapsed_ms = (time.perf_counter() - started) * 1000
            if self._deps.log is not None:
                try:
                    self._deps.log(f"chat {node_id} finished in {elapsed_ms:.0f}ms")
                except Exception:
                    log.exception("deps.log failed")
        if external_cancel is not None:
            raise external_cancel
        if reason == "error":
            return ChatSendResult(ok=False, error=error, stop_reason="error", messages=messages)
        return ChatSendResult(ok=True, stop_reason=reason, messages=messages)

    async def _run(
        self, run: _Run, req: ChatSendRequest, config: ProviderConfig, messages: list[ChatMessage]
    ) -> DoneReason:
        driver_for = self._deps.driver_for or _default_driver_for
        driver = driver_for(config)
        tools = list(self._deps.tools_for(req)) if self._deps.tools_for is not None else []
        model = req.model or config.model or ""
        hooks = ChatLoopHooks(
            on_event=lambda event: self._forward(run, event),
            request_approval=lambda call: self._request_approval(run, call),
            max_iterations=self._deps.max_iterations,
        )
        if run.stop_requested:  # stopped from inside a dependency callback
            return "stopped"
        task = asyncio.ensure_future(run_chat_loop(driver, model, messages, tools, hooks, system=req.system))
        run.task = task
        try:
            result = await task
        except asyncio.CancelledError:
            if not task.done():
                # This task itself was cancelled while the loop runs: let the loop clean up too.
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
            raise
        return "stopped" if run.stop_requested else result.stop_reason

    def _forward(self, run: _Run, event: ChatEvent) -> None:
        """The loop's ``on_event``: track the message being streamed, broadcast, pre-park approvals."""
        if isinstance(event, (Delta, Thinking, UsageReport)):
            run.streaming_id = event.message_id
        elif isinstance(event, (ToolCallRequested, ToolCallFinished)):
            run.streaming_id = ""  # the loop handles tools only after a stream ended cleanly
            if isinstance(event, ToolCallRequested) and event.call.status == "awaiting_approval":
                # Park the approval before the card is shown, so a UI that approves synchronously
                # ("always allow") is not lost.
                run.pending[event.call.id] = asyncio.get_running_loop().create_future()
        self._deps.broadcast(run.node_id, event)

    async def _request_approval(self, run: _Run, call: ToolCall) -> ApprovalDecision:
        if run.stop_requested:
            raise asyncio.CancelledError
        future = run.pending.get(call.id)  # parked by _forward; maybe already answered
        if future is None:
            future = asyncio.get_running_loop().create_future()
            run.pending[call.id] = future
        try:
            return await future
        finally:
            if run.pending.get(call.id) is future:
                del run.pending[call.id]

    def _broadcast(self, node_id: str, event: ChatEvent) -> None:
        try:
            self._deps.broadcast(node_id, event)
        except Exception:
            log.exception("broadcast of %s for node %s failed", type(event).__name__, node_id)


def create_chat_runtime(deps: ChatRuntimeDeps) -> ChatRuntime:
    """Return a new runtime with its own run registry (D3)."""
    return ChatRuntime(deps)
