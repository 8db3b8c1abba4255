"""A stateful model test of the runtime: random interleavings of send/stop/approve/deny/driver errors.

One runtime, several nodes, one dedicated event loop driven a few ticks at a time by the rules.
Checked after every step: exactly one Done per started send, not busy once Done is seen (D1), no
pending approval outlives its run (D2), every announced call finished exactly once (D4/D5), no
exception escapes send, and the apply_event invariant.
"""

from __future__ import annotations

import asyncio
import itertools
from collections import defaultdict
from typing import Any

from core_chat_fakes import HANG, YIELD, ScriptedDriver, make_tool, replay, without_ts
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from desktop.core.chat import (
    ChatError,
    ChatEvent,
    ChatMessage,
    ChatRuntimeDeps,
    ChatSendRequest,
    ChatSendResult,
    Delta,
    Done,
    Notice,
    ProviderConfig,
    Thinking,
    ToolCall,
    ToolCallFinished,
    ToolCallRequested,
    Usage,
    UsageReport,
    create_chat_runtime,
)
from desktop.core.chat.runtime import BUSY_ERROR, _Run

NODES = ("a", "b", "c")
KINDS = (
    "text",
    "thinking",
    "tool",
    "approval",
    "two_approvals",
    "error_mid_stream",
    "error_after_tool",
    "hang",
    "slow_tool",
    "loop_forever",
    "broken_driver",
    "raising_tool",
)
MAX_ITERATIONS = 3


class RuntimeMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.loop = asyncio.new_event_loop()
        self.ids = itertools.count()
        self.events: dict[str, list[ChatEvent]] = defaultdict(list)
        self.started: dict[str, list[ChatSendRequest]] = defaultdict(list)
        self.tasks: dict[int, asyncio.Task[ChatSendResult]] = {}
        self.all_tasks: list[asyncio.Task[ChatSendResult]] = []
        self.drivers: dict[str, list[ScriptedDriver | Exception]] = defaultdict(list)
        self.runs_seen: list[_Run] = []
        self.driver_of: dict[int, ScriptedDriver] = {}
        self.violations: list[str] = []
        tools = [
            make_tool("read", result="file text"),
            make_tool("write", needs_approval=True, result="written"),
            make_tool("slow", hang=True),
            make_tool("boom", error=OSError("disk full")),
        ]
        self.runtime = create_chat_runtime(
            ChatRuntimeDeps(
                resolve_provider=self.resolve,
                broadcast=self.broadcast,
                tools_for=lambda _req: tools,
                driver_for=self.driver_for,
                max_iterations=MAX_ITERATIONS,
            )
        )

    # -- deps ------------------------------------------------------------------------------------

    def resolve(self, req: ChatSendRequest) -> ProviderConfig:
        # called exactly once per started run, in run order (after the busy check)
        self.started[req.node_id].append(req)
        return ProviderConfig(id=req.node_id, name="fake", api="openai", base_url="http://127.0.0.1:9")

    def driver_for(self, config: ProviderConfig) -> ScriptedDriver:
        driver = self.drivers[config.id].pop(0)
        if isinstance(driver, Exception):
            raise driver
        self.driver_of[id(self.started[config.id][-1])] = driver
        return driver

    def broadcast(self, node: str, event: ChatEvent) -> None:
        self.events[node].append(event)
        if isinstance(event, Done):
            if self.runtime.is_busy(node):
                self.violations.append(f"{node} still busy when Done was broadcast")
        else:
            run = self.runtime._runs.get(node)
            if run is None:
                self.violations.append(f"{node}: {type(event).__name__} broadcast outside a run")
            elif run not in self.runs_seen:
                self.runs_seen.append(run)

    # -- scripts ---------------------------------------------------------------------------------

    def call(self, name: str) -> ToolCallRequested:
        return ToolCallRequested(ToolCall(f"call{next(self.ids)}", name, '{"path": "x"}'))

    def script(self, kind: str) -> ScriptedDriver | Exception:
        text = [Delta("Hel"), YIELD, Delta("lo"), UsageReport(Usage(10, 2, cache_read_tokens=3), "m")]
        turns: dict[str, list[list[Any]]] = {
            "text": [text],
            "thinking": [
                [Thinking("hm"), YIELD, Thinking("", signature="sig"), Thinking("", redacted_data="R"), *text]
            ],
            "tool": [[Delta("Looking."), self.call("read")], [YIELD, *text]],
            "approval": [[self.call("write"), self.call("read")], text],
            "two_approvals": [[self.call("write"), YIELD, self.call("write")], text],
            "error_mid_stream": [
                [Delta("part"), YIELD, ChatError("overloaded_error: Overloaded", status=529)]
            ],
            "error_after_tool": [
                [self.call("read")],
                [Delta("x"), YIELD, ChatError("503 api_error", status=503)],
            ],
            "hang": [[Delta("thinking about it"), YIELD, HANG]],
            "slow_tool": [[self.call("slow")], text],
            "loop_forever": [
                [self.call("read"), Notice("note from driver")] for _ in range(MAX_ITERATIONS + 1)
            ],
            "raising_tool": [[self.call("boom")], text],
        }
        if kind == "broken_driver":
            return RuntimeError("driver construction failed")
        return ScriptedDriver(turns[kind])

    # -- helpers ---------------------------------------------------------------------------------

    def tick(self, n: int = 1) -> None:
        for _ in range(n):
            self.loop.run_until_complete(asyncio.sleep(0))

    def segments(self, node: str) -> list[list[ChatEvent]]:
        """The node's events split per run (runs of a node are sequential; each ends with Done)."""
        out: list[list[ChatEvent]] = [[]]
        for event in self.events[node]:
            out[-1].append(event)
            if isinstance(event, Done):
                out.append([])
        return out

    def awaiting(self, node: str) -> list[str]:
        current = self.segments(node)[-1]
        finished = {e.call.id for e in current if isinstance(e, ToolCallFinished)}
        return [
            e.call.id
            for e in current
            if isinstance(e, ToolCallRequested)
            and e.call.status == "awaiting_approval"
            and e.call.id not in finished
        ]

    # -- rules -----------------------------------------------------------------------------------

    @rule(node=st.sampled_from(NODES), kind=st.sampled_from(KINDS))
    def send(self, node: str, kind: str) -> None:
        if not self.runtime.is_busy(node):
            self.drivers[node].append(self.script(kind))
        history = [ChatMessage(f"u{next(self.ids)}", "user", "hi", 1)]
        req = ChatSendRequest(node, history, model="m")
        task = self.loop.create_task(self.runtime.send(req))
        self.tasks[id(req)] = task
        self.all_tasks.append(task)
        self.tick()

    @rule(node=st.sampled_from(NODES))
    def stop(self, node: str) -> None:
        self.runtime.stop(node)

    @rule(node=st.sampled_from(NODES), decision=st.sampled_from(["approve", "deny"]))
    def answer(self, node: str, decision: Any) -> None:
        pending = self.awaiting(node)
        self.runtime.approve(node, pending[0] if pending else "no-such-call", decision)

    @rule(node=st.sampled_from(NODES))
    def late_approve(self, node: str) -> None:
        # an answer for a call of an earlier run must change nothing
        old = [e.call.id for seg in self.segments(node)[:-1] for e in seg if isinstance(e, ToolCallRequested)]
        if old:
            before = len(self.events[node])
            self.runtime.approve(node, old[0], "approve")
            assert len(self.events[node]) == before

    @rule(n=st.integers(min_value=1, max_value=6))
    def step(self, n: int) -> None:
        self.tick(n)

    @precondition(lambda self: any(self.runtime.is_busy(n) for n in NODES))
    @rule()
    def settle(self) -> None:
        self.tick(30)

    # -- invariants ------------------------------------------------------------------------------

    @invariant()
    def no_violations(self) -> None:
        assert self.violations == []

    @invariant()
    def one_done_per_started_send_and_busy_matches(self) -> None:
        for node in NODES:
            dones = sum(isinstance(e, Done) for e in self.events[node])
            started = len(self.started[node])
            assert started - 1 <= dones <= started, (node, started, dones)
            assert self.runtime.is_busy(node) == (started > dones)

    @invariant()
    def no_exception_escapes_and_busy_rejections_broadcast_nothing(self) -> None:
        started_ids = {id(r) for reqs in self.started.values() for r in reqs}
        for key, task in self.tasks.items():
            if task.done():
                assert not task.cancelled() and task.exception() is None
                if key not in started_ids:
                    assert task.result().error == BUSY_ERROR

    @invariant()
    def no_pending_approval_outlives_its_run(self) -> None:
        active = set(map(id, self.runtime._runs.values()))
        for run in self.runs_seen:
            if id(run) not in active:
                assert run.pending == {}
        for node, run in self.runtime._runs.items():
            assert set(run.pending) <= set(self.awaiting(node))

    @invariant()
    def finished_runs_are_complete_and_replay_exactly(self) -> None:
        for node in NODES:
            for req, events in zip(self.started[node], self.segments(node)[:-1], strict=False):
                requested = [e.call.id for e in events if isinstance(e, ToolCallRequested)]
                finished = [e.call.id for e in events if isinstance(e, ToolCallFinished)]
                assert len(requested) == len(set(requested)), "one ToolCallRequested per call (D4)"
                assert sorted(requested) == sorted(finished), "one ToolCallFinished per call (D5)"
                driver = self.driver_of.get(id(req))
                if driver is not None:
                    # every call of every cleanly ended stream was answered (D5), none invented
                    assert sorted(finished) == sorted(driver.completed_call_ids)
                task = self.tasks[id(req)]
                if not task.done():
                    continue  # Done is broadcast just before send returns
                result = task.result()
                done = events[-1]
                assert isinstance(done, Done) and result.stop_reason == done.reason
                assert result.ok == (done.reason != "error")
                assert without_ts(replay(req.messages, events)) == without_ts(result.messages)

    def teardown(self) -> None:
        try:
            for node in NODES:
                self.runtime.stop(node)
            for _ in range(200):
                if all(t.done() for t in self.all_tasks):
                    break
                self.tick()
            assert all(t.done() for t in self.all_tasks)
            self.loop.run_until_complete(self.runtime.aclose())
            self.finished_runs_are_complete_and_replay_exactly()
            for node in NODES:
                assert sum(isinstance(e, Done) for e in self.events[node]) == len(self.started[node])
            assert self.violations == []
        finally:
            self.loop.run_until_complete(self.loop.shutdown_asyncgens())
            self.loop.close()


RuntimeMachine.TestCase.settings = settings(
    max_examples=50,
    stateful_step_count=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
TestRuntimeStateMachine = RuntimeMachine.TestCase
