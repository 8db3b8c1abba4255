"""Hostile servers: each fault ends as a failed status naming the server, quickly, with no process left."""

from __future__ import annotations

import asyncio
import sys
import time

import pytest
from mcp_helpers import hostile_server, stdio_server

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


async def _start_one(manager: McpManager, name: str, timeout: float = 10) -> ServerStatus:
    manager.start()
    return (await manager.wait_ready(timeout))[name]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
async def test_garbage_on_stdout_fails_fast_and_leaves_no_process() -> None:
    before = _children()
    manager = McpManager({"garbage": hostile_server("garbage")}, init_timeout=8)
    started = time.perf_counter()
    status = await _start_one(manager, "garbage")
    assert time.perf_counter() - started < 4  # not the 8 s initialize timeout
    assert status.state == "failed"
    assert status.reason is not None
    assert status.reason.startswith('MCP server "garbage" wrote something that is not JSON-RPC to stdout')
    assert "Server listening on port 3000" in status.reason
    await manager.aclose()
    await asyncio.sleep(0.05)
    assert _children() - before == set()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
async def test_never_answering_initialize_times_out_and_is_killed() -> None:
    before = _children()
    manager = McpManager({"silent": hostile_server("silent")}, init_timeout=1.0)
    started = time.perf_counter()
    status = await _start_one(manager, "silent")
    assert status.state == "failed"
    assert status.reason == 'MCP server "silent" did not answer "initialize" within 1 s; ' + (
        "its last stderr line: silent server up, will never answer"
    )
    # It ignores stdin closing and SIGTERM: the SDK escalates to SIGKILL on the process group.
    await manager.aclose()
    assert time.perf_counter() - started < 8.5
    await asyncio.sleep(0.05)
    assert _children() - before == set()


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
        statuses = await manager.wait_ready(10)
        assert statuses["ok"].state == "ready" and statuses["ghost"].state == "failed"
        assert [t.name for t in manager.tools() if t.name.startswith("mcp__ok__add")] == ["mcp__ok__add"]
        assert not any(t.name.startswith("mcp__ghost__") for t in manager.tools())
    finally:
        await manager.aclose()


async def test_wait_ready_gives_up_after_its_timeout() -> None:
    manager = McpManager({"silent": hostile_server("silent")}, init_timeout=5)
    manager.start()
    started = time.perf_counter()
    statuses = await manager.wait_ready(0.3)
    assert 0.25 < time.perf_counter() - started < 1.5
    assert statuses["silent"].state == "starting"
    assert statuses["silent"].summary() == "starting…"
    await manager.aclose()
    assert manager.status("silent").state == "stopped"


async def test_stop_while_starting_and_pid_is_gone() -> None:
    manager = McpManager({"local": stdio_server()})
    manager.start()
    await asyncio.sleep(0.05)
    await manager.stop("local")
    assert manager.status("local").state == "stopped"
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
