"""The chat runtime: seed order and outcomes, D1-D5, stop, approvals, errors, shutdown."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any

import pytest
from core_chat_fakes import HANG, ScriptedDriver, make_tool, provider, replay, without_ts

import desktop.core.providers as providers_pkg
from desktop.core.chat import (
    ChatError,
    ChatEvent,
    ChatMessage,
    ChatRuntime,
    ChatRuntimeDeps,
    ChatSendRequest,
    ChatSendResult,
    ChatToolDef,
    Delta,
    Done,
    ProviderConfig,
    ToolCall,
    ToolCallFinished,
    ToolCallRequested,
    create_chat_runtime,
)
from desktop.core.chat import loop as chat_loop
from desktop.core.chat.runtime import BUSY_ERROR, NO_PROVIDER_ERROR

USER = ChatMessage("u1", "user", "hello", 1)


def req(node: str = "n1", **kwargs: Any) -> ChatSendRequest:
    return ChatSendRequest(node, [USER], **kwargs)


def call(call_id: str, name: str, args: str = "{}") -> ToolCallRequested:
    return ToolCallRequested(ToolCall(call_id, name, args))


class Harness:
    def __init__(
        self,
        scripts: list[list[Any]] | None = None,
        tools: Sequence[ChatToolDef] = (),
        config: ProviderConfig | None = None,
        **deps: Any,
    ) -> None:
        self.driver = ScriptedDriver(list(scripts or []))
        self.events: list[tuple[str, ChatEvent]] = []
        self.logs: list[str] = []
        self.on_event: Callable[[str, ChatEvent], None] | None = None
        self.config = config or provider()
        options: dict[str, Any] = {
            "tools_for": lambda _req: list(tools),
            "driver_for": lambda _cfg: self.driver,
            "log": self.logs.append,
            **deps,
        }
        self.runtime: ChatRuntime = create_chat_runtime(
            ChatRuntimeDeps(resolve_provider=lambda _req: self.config, broadcast=self.broadcast, **options)
        )

    def broadcast(self, node: str, event: ChatEvent) -> None:
        self.events.append((node, event))
        if self.on_event is not None:
            self.on_event(node, event)

    def of(self, kind: type, node: str = "n1") -> list[Any]:
        return [e for n, e in self.events if n == node and isinstance(e, kind)]

    def node_events(self, node: str = "n1") -> list[ChatEvent]:
        return [e for n, e in self.events if n == node]

    def start(self, request: ChatSendRequest | None = None) -> asyncio.Task[ChatSendResult]:
        return asyncio.ensure_future(self.runtime.send(request or req()))


async def until(predicate: Callable[[], bool], ticks: int = 200) -> None:
    for _ in range(ticks):
        if predicate():
            return
        await asyncio.sleep(0)
    raise AssertionError("condition not reached")


def assert_invariant(h: Harness, result: ChatSendResult, node: str = "n1") -> None:
    assert without_ts(replay([USER], h.node_events(node))) == without_ts(result.messages)


# -- seed behaviour --------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_seed_text_turn_broadcasts_events_then_exactly_one_done() -> None:
    h = Harness([[Delta("Hi"), Delta(" there")]])
    result = await h.runtime.send(req())
    assert (result.ok, result.error, result.stop_reason) == (True, None, "end_turn")
    events = h.node_events()
    assert [type(e) for e in events] == [Delta, Delta, Done]
    assert events[-1] == Done("end_turn")
    assert result.messages[-1].content == "Hi there"
    assert_invariant(h, result)
    assert len(h.logs) == 1 and h.logs[0].startswith("chat n1 finished in ") and h.logs[0].endswith("ms")


@pytest.mark.anyio
async def test_seed_busy_node_is_rejected_without_done() -> None:
    h = Harness([[Delta("x"), HANG]])
    first = h.start()
    await until(lambda: bool(h.of(Delta)))
    second = await h.runtime.send(req())
    assert (second.ok, second.error) == (False, BUSY_ERROR)
    assert second.stop_reason == "error" and second.messages == []
    assert not h.of(Done)
    h.runtime.stop("n1")
    assert (await first).stop_reason == "stopped"
    assert len(h.of(Done)) == 1


@pytest.mark.anyio
async def test_seed_missing_provider_is_an_error_without_done() -> None:
    h = Harness([[Delta("x")]])
    h.config = None  # type: ignore[assignment]
    h.runtime = create_chat_runtime(ChatRuntimeDeps(resolve_provider=lambda _r: None, broadcast=h.broadcast))
    result = await h.runtime.send(req())
    assert (result.ok, result.error) == (False, NO_PROVIDER_ERROR)
    assert h.events == [] and not h.runtime.is_busy("n1")


@pytest.mark.anyio
async def test_seed_a_raising_resolver_is_an_early_error_too() -> None:
    def boom(_req: ChatSendRequest) -> ProviderConfig:
        raise RuntimeError("settings unreadable")

    runtime = create_chat_runtime(ChatRuntimeDeps(resolve_provider=boom, broadcast=lambda n, e: None))
    result = await runtime.send(req())
    assert not result.ok and "settings unreadable" in (result.error or "")


@pytest.mark.anyio
async def test_seed_run_is_registered_before_any_io() -> None:
    busy_at_driver_creation: list[bool] = []
    h = Harness([[Delta("x")]])

    def driver_for(_cfg: ProviderConfig) -> ScriptedDriver:
        busy_at_driver_creation.append(h.runtime.is_busy("n1"))
        return h.driver

    h.runtime = create_chat_runtime(
        ChatRuntimeDeps(resolve_provider=lambda _r: h.config, broadcast=h.broadcast, driver_for=driver_for)
    )
    task = h.start()
    await asyncio.sleep(0)  # the first tick of send
    assert h.runtime.is_busy("n1")
    await task
    assert busy_at_driver_creation == [True] and not h.runtime.is_busy("n1")


@pytest.mark.anyio
async def test_seed_model_resolution_and_no_tools_by_default() -> None:
    h = Harness([[], [], []], config=provider(model="cfg-model"))
    h.runtime = create_chat_runtime(
        ChatRuntimeDeps(
            resolve_provider=lambda _r: h.config, broadcast=h.broadcast, driver_for=lambda c: h.driver
        )
    )
    await h.runtime.send(req(model="req-model", system="Be terse."))
    await h.runtime.send(req())
    h.config = provider(model=None)
    await h.runtime.send(req())
    assert [c.model for c in h.driver.calls] == ["req-model", "cfg-model", ""]
    assert [c.tools for c in h.driver.calls] == [[], [], []]
    assert h.driver.calls[0].system == "Be terse."


@pytest.mark.anyio
async def test_seed_caller_messages_are_not_mutated() -> None:
    h = Harness([[Delta("x")]])
    messages = [USER]
    await h.runtime.send(ChatSendRequest("n1", messages))
    assert messages == [USER] and USER.content == "hello"


@pytest.mark.anyio
async def test_seed_default_driver_for_comes_from_the_providers_package(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    driver = ScriptedDriver([[Delta("from registry")]])
    seen: list[ProviderConfig] = []

    def fake_driver_for(config: ProviderConfig, client: object = None) -> ScriptedDriver:
        seen.append(config)
        return driver

    monkeypatch.setattr(providers_pkg, "driver_for", fake_driver_for, raising=False)
    config = provider()
    runtime = create_chat_runtime(
        ChatRuntimeDeps(resolve_provider=lambda _r: config, broadcast=lambda n, e: None)
    )
    result = await runtime.send(req())
    assert result.ok and seen == [config] and result.messages[-1].content == "from registry"


@pytest.mark.anyio
async def test_chat_error_ends_with_done_error_and_keeps_partial_text_marked() -> None:
    err = ChatError("401 authentication_error: invalid x-api-key", provider="anthropic", status=401)
    h = Harness([[Delta("partial"), err]])
    result = await h.runtime.send(req())
    assert (result.ok, result.error, result.stop_reason) == (False, str(err), "error")
    done = h.of(Done)
    assert len(done) == 1 and done[0].reason == "error" and done[0].error == str(err)
    assistant = result.messages[-1]
    assert done[0].message_id == assistant.id and assistant.stopped and assistant.content == "partial"
    assert_invariant(h, result)


@pytest.mark.anyio
async def test_any_exception_becomes_done_error_and_never_escapes() -> None:
    def broken_driver_for(_cfg: ProviderConfig) -> ScriptedDriver:
        raise RuntimeError("no such api")

    h = Harness(driver_for=broken_driver_for)
    result = await h.runtime.send(req())
    assert (result.ok, result.error, result.stop_reason) == (False, "no such api", "error")
    assert h.of(Done) == [Done("error", "no such api")]
    h2 = Harness([[KeyError("bad chunk")]])
    result2 = await h2.runtime.send(req())
    assert not result2.ok and h2.of(Done)[0].reason == "error" and not h2.runtime.is_busy("n1")


@pytest.mark.anyio
async def test_a_failing_broadcast_is_contained() -> None:
    h = Harness([[Delta("x")]])

    def explode(node: str, event: ChatEvent) -> None:
        raise RuntimeError("slot failed")

    h.on_event = explode
    result = await h.runtime.send(req())  # must not raise
    assert not result.ok and "slot failed" in (result.error or "")
    assert len(h.of(Done)) == 1 and not h.runtime.is_busy("n1")


# -- D1-D5 -----------------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_d1_not_busy_when_done_is_broadcast_and_a_resend_succeeds() -> None:
    h = Harness([[Delta("one")], [Delta("two")]])
    busy_on_done: list[bool] = []
    resends: list[asyncio.Task[ChatSendResult]] = []

    def on_event(node: str, event: ChatEvent) -> None:
        if isinstance(event, Done):
            busy_on_done.append(h.runtime.is_busy(node))
            if not resends:
                resends.append(h.start())

    h.on_event = on_event
    first = await h.runtime.send(req())
    second = await resends[0]
    assert first.ok and second.ok and second.messages[-1].content == "two"
    assert busy_on_done == [False, False]


@pytest.mark.anyio
async def test_d2_stop_frees_a_run_parked_on_an_approval() -> None:
    ran: list[dict[str, Any]] = []
    h = Harness([[call("c1", "write")]], tools=[make_tool("write", needs_approval=True, seen=ran)])
    task = h.start()
    await until(lambda: bool(h.of(ToolCallRequested)))
    run = h.runtime._runs["n1"]
    assert list(run.pending) == ["c1"]
    h.runtime.stop("n1")
    # Nothing else would ever end this run (nobody approves): returning at all is the proof; the
    # timeout only keeps a broken stop from hanging the suite.
    result = await asyncio.wait_for(task, 30)
    assert result.ok and result.stop_reason == "stopped"
    assert h.of(Done) == [Done("stopped")]  # nothing was streaming: no message to mark
    assert run.pending == {} and not h.runtime.is_busy("n1")
    finished = h.of(ToolCallFinished)
    assert [(f.call.id, f.call.status) for f in finished] == [("c1", "skipped")]
    h.runtime.approve("n1", "c1", "approve")  # a late click is harmless
    assert ran == [] and len(h.of(Done)) == 1
    assert_invariant(h, result)


@pytest.mark.anyio
async def test_d2_shutdown_resolves_pending_approvals_of_every_run() -> None:
    h = Harness(
        [[call("c1", "write")], [call("c2", "write")]], tools=[make_tool("write", needs_approval=True)]
    )
    t1, t2 = h.start(req("a")), h.start(req("b"))
    await until(lambda: len([e for _, e in h.events if isinstance(e, ToolCallRequested)]) == 2)
    runs = [h.runtime._runs["a"], h.runtime._runs["b"]]
    await h.runtime.aclose()
    assert all(r.pending == {} for r in runs)
    assert (await t1).stop_reason == "stopped" and (await t2).stop_reason == "stopped"
    assert len(h.of(Done, "a")) == 1 and len(h.of(Done, "b")) == 1
    late = await h.runtime.send(req("c"))
    assert not late.ok and not h.of(Done, "c")


@pytest.mark.anyio
async def test_d3_run_registry_is_per_runtime_instance() -> None:
    h1, h2 = Harness([[HANG]]), Harness([[Delta("independent")]])
    t1 = h1.start()
    await until(lambda: h1.runtime.is_busy("n1"))
    assert not h2.runtime.is_busy("n1")
    result = await h2.runtime.send(req())
    assert result.ok
    h1.runtime.stop("n1")
    await t1


@pytest.mark.anyio
async def test_d4_one_tool_call_requested_per_call_through_approval() -> None:
    h = Harness(
        [[call("c1", "write"), call("c2", "read")], [Delta("done")]],
        tools=[make_tool("write", needs_approval=True), make_tool("read")],
    )

    def on_event(node: str, event: ChatEvent) -> None:
        if isinstance(event, ToolCallRequested) and event.call.status == "awaiting_approval":
            asyncio.get_running_loop().call_soon(h.runtime.approve, node, event.call.id, "approve")

    h.on_event = on_event
    result = await h.runtime.send(req())
    assert result.stop_reason == "end_turn"
    requested = [(e.call.id, e.call.status) for e in h.of(ToolCallRequested)]
    assert requested == [("c1", "awaiting_approval"), ("c2", "running")]
    assert_invariant(h, result)


@pytest.mark.anyio
async def test_d4_a_synchronous_always_allow_answer_is_not_lost() -> None:
    h = Harness([[call("c1", "write")], [Delta("written")]], tools=[make_tool("write", needs_approval=True)])

    def on_event(node: str, event: ChatEvent) -> None:
        if isinstance(event, ToolCallRequested) and event.call.status == "awaiting_approval":
            h.runtime.approve(node, event.call.id, "approve")  # inside the broadcast itself

    h.on_event = on_event
    result = await asyncio.wait_for(h.runtime.send(req()), 30)  # a hang guard only
    assert result.stop_reason == "end_turn" and h.of(ToolCallFinished)[0].call.status == "done"


@pytest.mark.anyio
async def test_d5_denial_gives_every_call_one_finished_and_reason_denied() -> None:
    h = Harness(
        [[call("c1", "write"), call("c2", "read")]],
        tools=[make_tool("write", needs_approval=True), make_tool("read")],
    )
    task = h.start()
    await until(lambda: bool(h.of(ToolCallRequested)))
    h.runtime.approve("n1", "unknown-call", "approve")  # no-op
    h.runtime.approve("nobody", "c1", "approve")  # no-op
    h.runtime.approve("n1", "c1", "deny")
    result = await task
    assert (result.ok, result.stop_reason) == (True, "denied")
    assert h.of(Done) == [Done("denied")]
    finished = [(f.call.id, f.call.status, f.call.is_error) for f in h.of(ToolCallFinished)]
    assert finished == [("c1", "denied", True), ("c2", "skipped", True)]
    assert_invariant(h, result)


# -- stop, iteration limit, cancellation -----------------------------------------------------------


@pytest.mark.anyio
async def test_stop_while_streaming_marks_the_message_in_progress() -> None:
    h = Harness([[Delta("half an ans"), HANG]])
    task = h.start()
    await until(lambda: bool(h.of(Delta)))
    h.runtime.stop("n1")
    h.runtime.stop("n1")  # twice is fine
    result = await task
    assert (result.ok, result.stop_reason) == (True, "stopped")
    done = h.of(Done)
    assert len(done) == 1 and done[0].message_id == h.of(Delta)[0].message_id
    assert result.messages[-1].stopped and h.driver.cancelled == 1
    assert_invariant(h, result)


@pytest.mark.anyio
async def test_stop_and_approve_on_an_idle_node_are_no_ops() -> None:
    h = Harness()
    h.runtime.stop("idle")
    h.runtime.approve("idle", "c1", "approve")
    assert h.events == []
    with pytest.raises(ValueError, match="'approve' or 'deny'"):
        h.runtime.approve("idle", "c1", "maybe")  # type: ignore[arg-type]


@pytest.mark.anyio
async def test_d6_max_iterations_from_deps_ends_with_done_max_iterations() -> None:
    h = Harness([[call(f"c{i}", "read")] for i in range(5)], tools=[make_tool("read")], max_iterations=2)
    result = await h.runtime.send(req())
    assert (result.ok, result.stop_reason) == (True, "max_iterations")
    assert h.of(Done) == [Done("max_iterations")] and result.messages[-1].role == "note"
    assert_invariant(h, result)


@pytest.mark.anyio
async def test_external_cancellation_still_broadcasts_done_then_propagates() -> None:
    h = Harness([[Delta("x"), HANG]])
    task = h.start()
    await until(lambda: bool(h.of(Delta)))
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert len(h.of(Done)) == 1 and h.of(Done)[0].reason == "stopped"
    assert not h.runtime.is_busy("n1") and h.driver.closed == 1


def test_runtime_rejects_a_bad_iteration_limit() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        create_chat_runtime(
            ChatRuntimeDeps(resolve_provider=lambda r: None, broadcast=lambda n, e: None, max_iterations=0)
        )


def _threaded_write(path: Any, started: Any, release: Any) -> ChatToolDef:
    """A gated tool that does its work in a thread, like write_file: a stop cannot interrupt it. It
    writes only once the test sets ``release`` (after the stop), so the write lands during the stop."""

    def write() -> str:
        started.set()
        if not release.wait(30):
            raise TimeoutError("the test never released the write")
        path.write_text("written")
        return "wrote 7 bytes"

    async def run(args: dict[str, Any]) -> str:
        return await asyncio.to_thread(write)

    return ChatToolDef("write", "write a file", {"type": "object"}, True, run)


@pytest.mark.anyio
async def test_stop_during_a_threaded_write_records_what_really_happened(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading

    # The stop's grace for a thread tool is 2 s; a minute here, so a busy machine cannot make the
    # released write miss it (the point is what gets recorded, not how long the grace is).
    monkeypatch.setattr(chat_loop, "TOOL_STOP_GRACE_S", 60.0)
    target, started, release = tmp_path / "out.txt", threading.Event(), threading.Event()
    tool = _threaded_write(target, started, release)
    h = Harness([[call("c1", "write"), call("c2", "write")]], tools=[tool])
    task = h.start()
    await until(lambda: bool(h.of(ToolCallRequested)))
    h.runtime.approve("n1", "c1", "approve")
    assert await asyncio.to_thread(started.wait, 30), "the write never started"
    h.runtime.stop("n1")
    assert not target.exists()  # the stop came first: the write is still held in its thread
    release.set()
    result = await asyncio.wait_for(task, 30)
    assert result.stop_reason == "stopped" and target.read_text() == "written"
    finished = [(f.call.id, f.call.status, f.call.result) for f in h.of(ToolCallFinished)]
    assert finished == [("c1", "done", "wrote 7 bytes"), ("c2", "skipped", "skipped: stopped by user")]
    assert_invariant(h, result)


@pytest.mark.anyio
async def test_stop_during_an_interruptible_gated_tool_does_not_wait_for_it(
    monkeypatch: pytest.MonkeyPatch
) -> None:
    # A thread tool would get TOOL_STOP_GRACE_S first: an hour here, so waiting for it could not
    # pass for "not waiting" (the tool below never ends unless it is cancelled).
    monkeypatch.setattr(chat_loop, "TOOL_STOP_GRACE_S", 3600.0)
    running, cancelled = asyncio.Event(), asyncio.Event()

    async def run(args: dict[str, Any]) -> str:
        running.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()  # an MCP call tells its server here (notifications/cancelled)
            raise
        return "never"

    tool = ChatToolDef("remote", "a server-side action", {"type": "object"}, True, run, interruptible=True)
    h = Harness([[call("c1", "remote")]], tools=[tool])
    task = h.start()
    await until(lambda: bool(h.of(ToolCallRequested)))
    h.runtime.approve("n1", "c1", "approve")
    await asyncio.wait_for(running.wait(), 30)
    h.runtime.stop("n1")
    result = await asyncio.wait_for(task, 30)  # a generous timeout; waiting for the grace would be an hour
    assert result.stop_reason == "stopped" and cancelled.is_set()
    assert [f.call.status for f in h.of(ToolCallFinished)] == ["skipped"]
    assert_invariant(h, result)
