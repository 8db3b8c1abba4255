"""A stdio server whose process dies while a child keeps its stdout open is noticed by its exit.

The crash server's ``--orphan`` child inherits stdout (as a shell wrapper's child or a forked worker
does), so stdout never reaches EOF when the server dies: the client must watch the process itself. The
call timeouts here are 300 s; every wait is bounded by ``WAIT_S`` (60 s), far below them, so a test
that hangs until a timeout fails instead of passing slowly.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys

import pytest
from crash_helpers import WAIT_S, StatusLog, crash_server, crash_server_pids

from desktop.core.mcp import McpManager, McpToolError
from desktop.core.mcp._stdio import exit_text
from desktop.testing.processes import pid_alive, wait_gone

pytestmark = pytest.mark.anyio


async def _ready(manager: McpManager, name: str = "crashy") -> tuple[int, int]:
    manager.start()
    status = (await manager.wait_ready(WAIT_S))[name]
    assert status.state == "ready", status
    return crash_server_pids(status)


async def test_a_crash_mid_call_fails_the_call_at_once_though_a_child_holds_stdout() -> None:
    log = StatusLog()
    manager = McpManager({"crashy": crash_server("crashy", "--orphan")}, on_status=log)
    try:
        server, child = await _ready(manager)
        assert pid_alive(child)  # it holds the server's stdout open
        call = manager.run("mcp__crashy__exit_now", {"code": 3})
        with pytest.raises(McpToolError) as caught:
            await asyncio.wait_for(call, WAIT_S)  # not the 300 s call timeout
        assert str(caught.value) == (
            'MCP server "crashy", tool "exit_now": the server exited (code 3) and closed the connection '
            "during the call"
        )
        status = await log.wait_for("crashy", "failed")
        assert status.reason == 'MCP server "crashy" exited (code 3); its last stderr line: exiting with 3'
        assert manager.status("crashy").state == "failed"
        assert manager.tools() == []
        refused = r'MCP server "crashy" is not running \(failed: .*exited \(code 3\)'
        with pytest.raises(McpToolError, match=refused):
            await manager.run("mcp__crashy__add", {"a": 1, "b": 2})
        assert wait_gone(server) and wait_gone(child)  # the child's process group was ended
        await manager.restart("crashy")
        assert (await manager.wait_ready(WAIT_S))["crashy"].state == "ready"
        assert await manager.run("mcp__crashy__add", {"a": 1, "b": 2}) == "3"
    finally:
        await manager.aclose()


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
async def test_a_server_killed_while_idle_turns_failed_though_a_child_holds_stdout() -> None:
    log = StatusLog()
    manager = McpManager({"crashy": crash_server("crashy", "--orphan")}, on_status=log)
    try:
        server, child = await _ready(manager)
        os.kill(server, signal.SIGKILL)  # e.g. the out-of-memory killer
        status = await log.wait_for("crashy", "failed")
        assert status.reason is not None
        assert status.reason.startswith('MCP server "crashy" exited (killed by SIGKILL)')
        with pytest.raises(McpToolError, match=r"is not running \(failed: .*killed by SIGKILL"):
            await asyncio.wait_for(manager.run("mcp__crashy__add", {"a": 1, "b": 2}), WAIT_S)
        assert wait_gone(child)
    finally:
        await manager.aclose()


async def test_an_exit_before_initialize_fails_the_start_at_once_though_a_child_holds_stdout() -> None:
    manager = McpManager(
        {"crashy": crash_server("crashy", "--orphan", "--exit-at-start", "5")}, init_timeout=300
    )
    try:
        manager.start()
        status = (await manager.wait_ready(WAIT_S))["crashy"]
        assert status.state == "failed"  # not still "starting" (the initialize timeout is 300 s)
        assert status.reason == (
            'MCP server "crashy" closed the connection before it was ready; it exited (code 5); '
            "its last stderr line: exiting with 5 before serving"
        )
        _server, child = crash_server_pids(status)
        assert wait_gone(child)
    finally:
        await manager.aclose()


async def test_a_server_that_exits_normally_reports_its_code_and_a_stop_is_no_failure() -> None:
    log = StatusLog()
    manager = McpManager({"crashy": crash_server("crashy")}, on_status=log)
    try:
        server, _child = await _ready(manager)
        with pytest.raises(McpToolError, match=r"the server exited \(code 0\)"):
            await asyncio.wait_for(manager.run("mcp__crashy__exit_now", {"code": 0}), WAIT_S)
        status = await log.wait_for("crashy", "failed")
        assert status.reason is not None and status.reason.startswith('MCP server "crashy" exited (code 0)')
        assert wait_gone(server)
        await manager.restart("crashy")
        server, _child = crash_server_pids((await manager.wait_ready(WAIT_S))["crashy"])
        await manager.stop("crashy")  # the process exits because we asked: stopped, not failed
        assert manager.status("crashy").state == "stopped"
        assert manager.status("crashy").reason is None
        assert wait_gone(server)
    finally:
        await manager.aclose()


def test_exit_texts() -> None:
    assert exit_text(3) == "exited (code 3)"
    assert exit_text(0) == "exited (code 0)"
    if sys.platform != "win32":
        assert exit_text(-9) == "exited (killed by SIGKILL)"
        assert exit_text(-11) == "exited (killed by SIGSEGV)"
        assert exit_text(-200) == "exited (killed by signal 200)"
    assert exit_text(0xC0000005) == "exited (code 0xC0000005)"
