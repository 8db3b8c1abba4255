"""The tool loop (D4-D7): stamping, tool order, approvals, denial, errors, iteration limit, cancellation."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from core_chat_fakes import HANG, YIELD, ScriptedDriver, make_tool, replay, without_ts

from desktop.core.chat import (
    DEFAULT_MAX_ITERATIONS,
    ChatError,
    ChatEvent,
    ChatLoopHooks,
    ChatMessage,
    ChatToolDef,
    Delta,
    Done,
    Notice,
    Thinking,
    ToolCall,
    ToolCallFinished,
    ToolCallRequested,
    Usage,
    UsageReport,
    run_chat_loop,
)
from desktop.core.chat.loop import ITERATION_LIMIT_NOTE

USER = ChatMessage("u1", "user", "list the files", 1)


def call(call_id: str, name: str, args: str = "{}") -> ToolCallRequested:
    return ToolCallRequested(ToolCall(call_id, name, args))


class Recorder:
    def __init__(self, decisions: list[str] | None = None) -> None:
        self.events: list[ChatEvent] = []
        self.decisions = list(decisions or [])
        self.asked: list[ToolCall] = []

    def on_event(self, event: ChatEvent) -> None:
        self.events.append(event)

    async def request_approval(self, tool_call: ToolCall) -> Any:
        self.asked.append(tool_call)
        return self.decisions.pop(0)

    def hooks(self, max_iterations: int = DEFAULT_MAX_ITERATIONS) -> ChatLoopHooks:
        return ChatLoopHooks(self.on_event, self.request_approval, max_iterations)

    def of(self, kind: type) -> list[Any]:
        return [e for e in self.events if isinstance(e, kind)]


async def run(
    driver: ScriptedDriver,
    tools: list[ChatToolDef],
    rec: Recorder,
    history: list[ChatMessage] | None = None,
    **kwargs: Any,
) -> tuple[list[ChatMessage], str, list[ChatMessage]]:
    start = list(history if history is not None else [USER])
    messages = list(start)
    result = await run_chat_loop(driver, "gpt-4o", messages, tools, rec.hooks(**kwargs))
    assert result.messages is messages
    # the invariant: applying every event, in order, to the history gives the loop's messages
    assert without_ts(replay(start, rec.events)) == without_ts(result.messages)
    return result.messages, result.stop_reason, start


@pytest.mark.anyio
async def test_text_turn_stamps_every_event_with_the_new_assistant_message() -> None:
    driver = ScriptedDriver(
        [[Thinking("hm"), Thinking("", signature="s"), Delta("Hel"), Delta("lo"), UsageReport(Usage(5, 2))]]
    )
    rec = Recorder()
    messages, reason, _ = await run(driver, [], rec)
    assert reason == "end_turn"
    ids = {e.message_id for e in rec.events}
    assert len(ids) == 1 and ids != {""}
    reply = messages[-1]
    assert (reply.role, reply.content, reply.thinking, reply.usage) == (
        "assistant",
        "Hello",
        "hm",
        Usage(5, 2),
    )
    assert reply.model == "gpt-4o"  # UsageReport without a model gets the requested one
    assert not rec.of(Done)


@pytest.mark.anyio
async def test_d7_tool_results_replay_and_system_prompt_is_sent() -> None:
    seen: list[dict[str, Any]] = []
    driver = ScriptedDriver(
        [[Delta("Let me look."), call("c1", "ls", '{"path": "."}')], [Delta("Two files.")]]
    )
    rec = Recorder()
    messages, reason, _ = await run(driver, [make_tool("ls", result="a\nb", seen=seen)], rec)
    assert reason == "end_turn" and seen == [{"path": "."}]
    assert [m.role for m in messages] == ["user", "assistant", "tool", "assistant"]
    second = driver.calls[1].messages
    assert [m.role for m in second] == ["user", "assistant", "tool"]
    assert second[1].tool_calls == [ToolCall("c1", "ls", '{"path": "."}', "a\nb", False, "done")]
    assert second[2].content == "a\nb" and second[2].tool_calls == second[1].tool_calls
    driver2 = ScriptedDriver([[Delta("ok")]])
    await run_chat_loop(driver2, "m", [USER], [], Recorder().hooks(), system="Be terse.")
    assert driver2.calls[0].system == "Be terse." and driver2.calls[0].tools == []


@pytest.mark.anyio
async def test_seed_notes_are_never_sent_to_the_provider() -> None:
    driver = ScriptedDriver([[Delta("x")]])
    history = [ChatMessage("n1", "note", "cost: $1", 0), USER]
    await run(driver, [], Recorder(), history)
    assert [m.id for m in driver.calls[0].messages] == ["u1"]


@pytest.mark.anyio
async def test_d4_one_tool_call_requested_per_call_with_the_right_status() -> None:
    driver = ScriptedDriver(
        [[call("c1", "read"), call("c2", "write"), call("c1", "read", '{"a": 1}')], [Delta("done")]]
    )
    rec = Recorder(["approve"])
    tools = [make_tool("read"), make_tool("write", needs_approval=True)]
    messages, reason, _ = await run(driver, tools, rec)
    requested = rec.of(ToolCallRequested)
    assert [(e.call.id, e.call.status) for e in requested] == [("c1", "running"), ("c2", "awaiting_approval")]
    assert requested[0].call.args_json == '{"a": 1}'  # a repeated driver event updates the call
    assert [c.id for c in rec.asked] == ["c2"] and rec.asked[0].status == "awaiting_approval"
    finished = rec.of(ToolCallFinished)
    assert [(e.call.id, e.call.status, e.call.is_error) for e in finished] == [
        ("c1", "done", False),
        ("c2", "done", False),
    ]
    # tools run in order, one at a time: each call is announced after the previous one finished
    kinds = [type(e).__name__ for e in rec.events if isinstance(e, (ToolCallRequested, ToolCallFinished))]
    assert kinds == ["ToolCallRequested", "ToolCallFinished"] * 2


@pytest.mark.anyio
async def test_d5_denial_finishes_every_call_and_ends_with_denied() -> None:
    ran: list[dict[str, Any]] = []
    driver = ScriptedDriver([[call("c1", "read"), call("c2", "write"), call("c3", "read")]])
    rec = Recorder(["deny"])
    tools = [make_tool("read", seen=ran), make_tool("write", needs_approval=True, seen=ran)]
    messages, reason, _ = await run(driver, tools, rec)
    assert reason == "denied" and len(driver.calls) == 1
    assert len(ran) == 1  # only c1 ran
    finished = {e.call.id: e.call for e in rec.of(ToolCallFinished)}
    assert (finished["c2"].status, finished["c2"].result, finished["c2"].is_error) == (
        "denied",
        "denied by user",
        True,
    )
    assert finished["c3"].status == "skipped" and finished["c3"].is_error
    assert [e.call.id for e in rec.of(ToolCallRequested)] == ["c1", "c2", "c3"]
    # the assistant message lists every call and each has exactly one tool message: valid history
    assistant = messages[1]
    tool_msgs = [m for m in messages if m.role == "tool"]
    assert [c.id for c in assistant.tool_calls or []] == ["c1", "c2", "c3"]
    assert [m.tool_calls[0].id for m in tool_msgs if m.tool_calls] == ["c1", "c2", "c3"]


@pytest.mark.anyio
async def test_unknown_tool_bad_json_and_raising_tool_are_errors_for_the_model() -> None:
    driver = ScriptedDriver(
        [
            [
                call("c1", "nope"),
                call("c2", "read", "{broken"),
                call("c3", "read", "[1]"),
                call("c4", "boom"),
            ],
            [],
        ]
    )
    rec = Recorder()
    tools = [make_tool("read"), make_tool("boom", error=RuntimeError("disk on fire"))]
    messages, reason, _ = await run(driver, tools, rec)
    assert reason == "end_turn" and len(driver.calls) == 2
    results = {e.call.id: e.call for e in rec.of(ToolCallFinished)}
    assert results["c1"].result == "unknown tool: nope" and results["c1"].status == "error"
    assert (results["c2"].result or "").startswith("tool error: invalid JSON arguments")
    assert (results["c3"].result or "").startswith("tool error: invalid JSON arguments")
    assert results["c4"].result == "tool error: disk on fire"
    assert all(c.is_error for c in results.values())


@pytest.mark.anyio
async def test_bad_arguments_never_ask_for_approval() -> None:
    driver = ScriptedDriver([[call("c1", "write", "{oops")]])
    rec = Recorder()
    await run(driver, [make_tool("write", needs_approval=True)], rec)
    assert rec.asked == [] and rec.of(ToolCallFinished)[0].call.status == "error"


@pytest.mark.anyio
async def test_d6_iteration_limit_adds_a_note_not_a_system_message() -> None:
    driver = ScriptedDriver([[call(f"c{i}", "read")] for i in range(5)])
    rec = Recorder()
    messages, reason, _ = await run(driver, [make_tool("read")], rec, max_iterations=3)
    assert reason == "max_iterations" and len(driver.calls) == 3
    assert messages[-1].role == "note" and messages[-1].content == ITERATION_LIMIT_NOTE
    assert rec.events[-1] == Notice(ITERATION_LIMIT_NOTE, message_id=messages[-1].id)
    assert not any(m.role == "system" for m in messages)
    assert len(rec.of(ToolCallFinished)) == 3  # the last turn's tools ran before the limit


@pytest.mark.anyio
async def test_default_max_iterations_is_ten() -> None:
    assert DEFAULT_MAX_ITERATIONS == 10
    driver = ScriptedDriver([[call(f"c{i}", "read")] for i in range(20)])
    _, reason, _ = await run(driver, [make_tool("read")], Recorder())
    assert reason == "max_iterations" and len(driver.calls) == 10


@pytest.mark.anyio
async def test_max_iterations_below_one_is_rejected() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        await run_chat_loop(ScriptedDriver([]), "m", [USER], [], Recorder().hooks(0))


@pytest.mark.anyio
async def test_calls_of_a_failed_stream_never_run_and_partial_text_stays() -> None:
    ran: list[dict[str, Any]] = []
    err = ChatError("stream ended before the response was complete", kind="network")
    driver = ScriptedDriver([[Delta("partial"), call("c1", "read"), err]])
    rec = Recorder()
    messages = [USER]
    with pytest.raises(ChatError):
        await run_chat_loop(driver, "m", messages, [make_tool("read", seen=ran)], rec.hooks())
    assert ran == [] and not rec.of(ToolCallRequested)
    assert messages[-1].content == "partial"
    assert without_ts(replay([USER], rec.events)) == without_ts(messages)


@pytest.mark.anyio
async def test_driver_notices_become_notes_and_done_from_a_driver_is_ignored() -> None:
    driver = ScriptedDriver([[Delta("cut"), Notice("response truncated: max_tokens"), Done("end_turn")]])
    rec = Recorder()
    messages, _, _ = await run(driver, [], rec)
    assert [m.role for m in messages] == ["user", "assistant", "note"]
    notice = rec.of(Notice)[0]
    assert notice.message_id == messages[2].id and notice.message_id != messages[1].id
    assert not rec.of(Done)


@pytest.mark.anyio
async def test_reused_or_empty_call_ids_get_fresh_ids() -> None:
    history = [USER, ChatMessage("a0", "assistant", "", 1, tool_calls=[ToolCall("call_0", "read", "{}")])]
    driver = ScriptedDriver([[call("call_0", "read"), call("", "read")]])
    rec = Recorder()
    messages, _, _ = await run(driver, [make_tool("read")], rec, history)
    ids = [e.call.id for e in rec.of(ToolCallRequested)]
    assert len(set(ids)) == 2 and "call_0" not in ids and "" not in ids
    assert history[1].tool_calls == [ToolCall("call_0", "read", "{}")]  # the old call is untouched


async def cancel_when(
    driver: ScriptedDriver,
    tools: list[ChatToolDef],
    rec: Recorder,
    ready: Callable[[], bool],
    request_approval: Callable[[ToolCall], Awaitable[Any]] | None = None,
) -> list[ChatMessage]:
    messages = [USER]
    hooks = rec.hooks()
    if request_approval is not None:
        hooks.request_approval = request_approval
    task = asyncio.ensure_future(run_chat_loop(driver, "m", messages, tools, hooks))
    for _ in range(100):
        await asyncio.sleep(0)
        if ready():
            break
    assert ready()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert without_ts(replay([USER], rec.events)) == without_ts(messages)
    return messages


@pytest.mark.anyio
async def test_cancel_while_awaiting_approval_skips_announced_and_remaining_calls() -> None:
    parked = asyncio.Event()

    async def never(_call: ToolCall) -> Any:
        parked.set()
        await asyncio.Event().wait()

    driver = ScriptedDriver([[call("c1", "read"), call("c2", "write"), call("c3", "read")]])
    rec = Recorder()
    tools = [make_tool("read"), make_tool("write", needs_approval=True)]
    await cancel_when(driver, tools, rec, parked.is_set, never)
    finished = [(e.call.id, e.call.status) for e in rec.of(ToolCallFinished)]
    assert finished == [("c1", "done"), ("c2", "skipped"), ("c3", "skipped")]
    assert [e.call.id for e in rec.of(ToolCallRequested)] == ["c1", "c2", "c3"]


@pytest.mark.anyio
async def test_cancel_while_a_tool_runs_skips_it() -> None:
    started: list[dict[str, Any]] = []
    driver = ScriptedDriver([[call("c1", "slow")]])
    rec = Recorder()
    await cancel_when(driver, [make_tool("slow", hang=True, seen=started)], rec, lambda: bool(started))
    assert [(e.call.id, e.call.status, e.call.is_error) for e in rec.of(ToolCallFinished)] == [
        ("c1", "skipped", True)
    ]


@pytest.mark.anyio
async def test_cancel_while_streaming_closes_the_stream_and_announces_nothing() -> None:
    driver = ScriptedDriver([[Delta("par"), call("c1", "read"), YIELD, HANG]])
    rec = Recorder()
    messages = await cancel_when(driver, [make_tool("read")], rec, lambda: bool(rec.events))
    assert driver.cancelled == 1 and driver.closed == 1
    assert not rec.of(ToolCallRequested) and not rec.of(ToolCallFinished)
    assert messages[-1].content == "par"
