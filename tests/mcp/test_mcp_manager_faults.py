"""Hostile servers: each fault ends as a failed status naming the server, quickly, with no process left."""

from __future__ import annotations

import asyncio
import sys

import pytest
from mcp_helpers import PATIENCE_S, eventually, hostile_server, stdio_server

from desktop.core.mcp import McpManager, McpToolError, ServerStatus, parse_mcp_server

pytestmark = pytest.mark.anyio


def _children() -> set[int]:
    """Pids whose parent is this test process (Linux /proc)."""
    import os
    from pathlib import Path

    me = os.getpid()
    out: set[int] = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            fields = stat.rsplit(")", 1)[1].split()
            if int(fields[1]) == me and fields[0] != "Z":
                out.add(int(entry.name))
    return out


async def _start_one(manager: McpManager, name: str, timeout: float = PATIENCE_S) -> ServerStatus:
    manager.start()
    return (await manager.wait_ready(timeout))[name]


async def _no_children_left(before: set[int]) -> None:
    """Wait until every child process this test started is gone (reaped or never there)."""
    await eventually(lambda: _children() - before == set(), "the server's processes gone")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
async def test_garbage_on_stdout_fails_fast_and_leaves_no_process() -> None:
    before = _children()
    # An hour to answer "initialize": failing within wait_ready's timeout can only be the garbage
    # (the reason says so too), never the initialize timeout.
    manager = McpManager({"garbage": hostile_server("garbage")}, init_timeout=3600)
    status = await _start_one(manager, "garbage")
    assert status.state == "failed"
    assert status.reason is not None
    assert status.reason.startswith('MCP server "garbage" wrote something that is not JSON-RPC to stdout')
    assert "Server listening on port 3000" in status.reason
    await manager.aclose()
    await _no_children_left(before)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
async def test_never_answering_initialize_times_out_and_is_killed() -> None:
    before = _children()
    manager = McpManager({"silent": hostile_server("silent")}, init_timeout=1.0)
    status = await _start_one(manager, "silent")
    assert status.state == "failed"
    assert status.reason == 'MCP server "silent" did not answer "initialize" within 1 s; ' + (
        "its last stderr line: silent server up, will never answer"
    )
    # It ignores stdin closing and SIGTERM: the SDK escalates to SIGKILL on the process group.
    await asyncio.wait_for(manager.aclose(), PATIENCE_S)
    await _no_children_left(before)


async def test_dying_at_start_reports_its_stderr() -> None:
    manager = McpManager({"die": hostile_server("die")})
    status = await _start_one(manager, "die")
    assert status.state == "failed"
    assert status.reason is not None
    assert status.reason.startswith('MCP server "die" closed the connection before it was ready')
    assert status.reason.endswith("its last stderr line: fatal: MY_SERVICE_TOKEN is not set")
    assert status.stderr_tail[-1] == "fatal: MY_SERVICE_TOKEN is not set"
    await manager.aclose()


async def test_missing_command_fails_naming_server_and_command() -> None:
    config = parse_mcp_server("ghost", {"command": "chatnodes-no-such-mcp-server-xyz", "args": ["--stdio"]})
    manager = McpManager({"ghost": config})
    status = await _start_one(manager, "ghost")
    assert status.state == "failed"
    expected = 'MCP server "ghost" could not start: command not found: chatnodes-no-such-mcp-server-xyz'
    assert status.reason == expected
    assert manager.tools() == []
    with pytest.raises(McpToolError, match="unknown MCP tool: mcp__ghost__anything"):
        await manager.call("mcp__ghost__anything", {})
    await manager.aclose()


async def test_one_failing_server_does_not_hold_up_the_others() -> None:
    manager = McpManager(
        {"ok": stdio_server("ok"), "ghost": parse_mcp_server("ghost", {"command": "chatnodes-no-such-xyz"})}
    )
    try:
        manager.start()
        statuses = await manager.wait_ready(PATIENCE_S)
        assert statuses["ok"].state == "ready" and statuses["ghost"].state == "failed"
        assert [t.name for t in manager.tools() if t.name.startswith("mcp__ok__add")] == ["mcp__ok__add"]
        assert not any(t.name.startswith("mcp__ghost__") for t in manager.tools())
    finally:
        await manager.aclose()


async def test_wait_ready_gives_up_after_its_timeout() -> None:
    # The server never answers and may take an hour to be declared failed: wait_ready(0.3) returning
    # a "starting" server is its own timeout at work (the outer one is a hang guard only).
    manager = McpManager({"silent": hostile_server("silent")}, init_timeout=3600)
    manager.start()
    statuses = await asyncio.wait_for(manager.wait_ready(0.3), PATIENCE_S)
    assert statuses["silent"].state == "starting"
    assert statuses["silent"].summary() == "starting…"
    await manager.aclose()
    assert manager.status("silent").state == "stopped"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
async def test_stop_while_starting_and_pid_is_gone() -> None:
    before = _children()
    # A server that is up but never answers "initialize" stays "starting" for as long as the test needs.
    manager = McpManager({"silent": hostile_server("silent")}, init_timeout=3600)
    manager.start()
    await eventually(lambda: bool(manager.status("silent").stderr_tail), "the server process up")
    assert manager.status("silent").state == "starting" and _children() - before
    await asyncio.wait_for(manager.stop("silent"), PATIENCE_S)
    assert manager.status("silent").state == "stopped"
    await _no_children_left(before)
    await manager.aclose()


async def test_a_failing_secret_lookup_is_a_status_not_a_crash() -> None:
    def secret_for(_name: str) -> str | None:
        raise RuntimeError("keyring locked: s3cret-detail")

    config = parse_mcp_server("web", {"url": "http://127.0.0.1:9/mcp"})
    manager = McpManager({"web": config}, secret_for=secret_for)
    status = await _start_one(manager, "web")
    assert status.state == "failed"
    assert status.reason == 'MCP server "web": could not read its token (RuntimeError)'
    await manager.aclose()


def test_start_needs_a_running_loop() -> None:
    manager = McpManager({"local": stdio_server()})
    with pytest.raises(RuntimeError):
        manager.start()
    assert manager.status("local").state == "stopped"
