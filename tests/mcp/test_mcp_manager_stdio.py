"""McpManager against the real stdio test server (tests/mcp/servers/stdio_server.py)."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest
from mcp_helpers import PATIENCE_S, eventually, marker_says, stdio_server

from desktop.core.mcp import McpManager, McpToolError, ServerStatus
from desktop.testing.processes import pid_alive, wait_gone

pytestmark = pytest.mark.anyio


def _server_pid(status: ServerStatus) -> int:
    for line in status.stderr_tail:
        match = re.search(r"test-stdio server starting pid=(\d+)", line)
        if match:
            return int(match.group(1))
    raise AssertionError(f"no pid line in {status.stderr_tail}")


async def _ready(manager: McpManager, name: str = "local") -> ServerStatus:
    manager.start()
    statuses = await manager.wait_ready(PATIENCE_S)
    status = statuses[name]
    assert status.state == "ready", status
    return status


async def test_start_list_and_call(tmp_path: Path) -> None:
    seen: list[tuple[str, str]] = []
    manager = McpManager({"local": stdio_server()}, on_status=lambda s: seen.append((s.name, s.state)))
    try:
        status = await _ready(manager)
        assert status.tool_count == 13
        assert status.summary() == "ready (13 tools)"
        names = {t.name for t in manager.tools()}
        assert "mcp__local__add" in names
        assert "mcp__local__weird_name_with_spaces" in names
        add = next(t for t in manager.tools() if t.name == "mcp__local__add")
        assert add.description == "Add two integers."
        assert add.schema["type"] == "object" and set(add.schema["properties"]) == {"a", "b"}
        assert add.needs_approval is True  # "ask" is the default, read-only or not
        assert await add.run({"a": 2, "b": 40}) == "42"
        assert await manager.run("mcp__local__weird_name_with_spaces", {}) == "ok"
    finally:
        await manager.aclose()
    assert seen[0] == ("local", "starting") and ("local", "ready") in seen
    assert seen[-1] == ("local", "stopped")
    assert manager.status("local").state == "stopped"


async def test_results_errors_and_metadata(tmp_path: Path) -> None:
    manager = McpManager({"local": stdio_server(approval="ask_unless_read_only")})
    try:
        await _ready(manager)
        tools = {t.name: t for t in manager.tools()}
        assert tools["mcp__local__add"].needs_approval is False  # read-only + ask_unless_read_only
        assert tools["mcp__local__echo"].needs_approval is True
        info = manager.tool_info("mcp__local__echo")
        assert info is not None
        assert (info.server, info.tool, info.description) == ("local", "echo", "Echo the text back.")
        assert (info.read_only, info.destructive, info.open_world) == (None, True, True)
        assert manager.tool_info("mcp__local__add").read_only is True  # type: ignore[union-attr]
        assert manager.tool_info("project_read") is None

        weather = await manager.call("mcp__local__weather", {"city": "Oslo"})
        assert json.loads(weather.text) == {"city": "Oslo", "temp_c": 21.5, "tags": ["sunny", "dry"]}
        assert weather.text == '{"city":"Oslo","temp_c":21.5,"tags":["sunny","dry"]}'  # compact

        image = await manager.call("mcp__local__image", {})
        assert image.text == "[image: image/png, 70 bytes]\na red pixel"
        assert len(image.images) == 1 and image.images[0].mime == "image/png" and image.images[0].size == 70

        link = await manager.call("mcp__local__link", {})
        assert link.text == "[resource link: hostname <file:///etc/hostname> (text/plain)]"
        assert link.resource_links[0].uri == "file:///etc/hostname"

        failed = r'MCP server "local", tool "fail" returned an error: Error executing tool fail'
        with pytest.raises(McpToolError, match=failed):
            await manager.run("mcp__local__fail", {"why": "bad"})
        with pytest.raises(McpToolError, match=r'MCP server "local", tool "add"'):
            await manager.run("mcp__local__add", {"a": "not a number"})
        with pytest.raises(McpToolError, match="unknown MCP tool"):
            await manager.run("mcp__local__nope", {})
    finally:
        await manager.aclose()


async def test_ten_megabyte_result_is_cut_for_the_model() -> None:
    manager = McpManager({"local": stdio_server()})
    try:
        await _ready(manager)
        # A hang guard only: the time is the SDK's (20 MB on the wire).
        big = manager.call("mcp__local__big", {"size": 10 * 1024 * 1024})
        result = await asyncio.wait_for(big, PATIENCE_S)
        assert len(result.full_text) == 10 * 1024 * 1024
        assert result.truncated
        assert result.text.startswith("x" * 100_000)
        assert "[result cut: 10,485,760 bytes in total" in result.text
        assert len(result.text.encode()) < 100_300
    finally:
        await manager.aclose()


async def test_stderr_is_captured_and_env_refs_are_expanded() -> None:
    config = stdio_server(env={"GREETING": "${env:MCP_TEST_GREETING}", "PLAIN": "1"})
    manager = McpManager({"local": config}, environ={"MCP_TEST_GREETING": "hello there"})
    try:
        status = await _ready(manager)
        assert any("test-stdio server starting" in line for line in status.stderr_tail)
        assert await manager.run("mcp__local__getenv", {"name": "GREETING"}) == "hello there"
        assert await manager.run("mcp__local__getenv", {"name": "MCP_TEST_GREETING"}) == "<unset>"
        assert config.env["GREETING"] == "${env:MCP_TEST_GREETING}"  # never stored expanded
    finally:
        await manager.aclose()


async def test_missing_env_reference_fails_naming_server_and_field() -> None:
    config = stdio_server(env={"TOKEN": "${env:MCP_TEST_UNSET_VAR}"})
    manager = McpManager({"local": config}, environ={})
    manager.start()
    status = (await manager.wait_ready(PATIENCE_S))["local"]
    assert status.state == "failed"
    assert status.reason is not None
    assert 'server "local": "env.TOKEN" refers to ${env:MCP_TEST_UNSET_VAR}' in status.reason
    await manager.aclose()


async def test_cancel_returns_at_once_and_the_server_sees_notifications_cancelled(tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    manager = McpManager({"local": stdio_server()})
    try:
        await _ready(manager)
        args = {"seconds": 3600, "marker": str(marker)}
        task = asyncio.ensure_future(manager.run("mcp__local__slow", args))
        await marker_says(marker, "started")  # the call reached the server's handler
        assert not task.done()
        task.cancel()
        # The tool sleeps an hour: the task ending proves the cancel did not wait for the server.
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(task, PATIENCE_S)
        # The server's handler was interrupted: only notifications/cancelled does that.
        await marker_says(marker, "CancelledError")
        assert manager.status("local").state == "ready"
        assert await manager.run("mcp__local__add", {"a": 1, "b": 1}) == "2"  # still usable
    finally:
        await manager.aclose()


async def test_call_timeout_is_an_error_naming_the_server(tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    manager = McpManager({"local": stdio_server(timeout_s=0.5)})
    try:
        await _ready(manager)
        # The tool sleeps an hour; the error names the call's own timeout (0.5 s), so it is what ended
        # the call (the outer timeout is a hang guard only).
        with pytest.raises(McpToolError, match=r'MCP server "local", tool "slow": no answer within 0.5 s'):
            await asyncio.wait_for(
                manager.run("mcp__local__slow", {"seconds": 3600, "marker": str(marker)}), PATIENCE_S)
        await marker_says(marker, "CancelledError")  # the courtesy cancel reached the server
    finally:
        await manager.aclose()


async def test_server_exiting_mid_call_fails_the_call_and_the_server() -> None:
    manager = McpManager({"local": stdio_server()})
    try:
        status = await _ready(manager)
        pid = _server_pid(status)
        with pytest.raises(McpToolError, match=r'MCP server "local", tool "crash": .*closed the connection'):
            await asyncio.wait_for(manager.run("mcp__local__crash", {}), PATIENCE_S)
        await eventually(lambda: manager.status("local").state == "failed", "the server marked failed")
        status = manager.status("local")
        assert status.state == "failed"
        assert status.reason is not None and status.reason.startswith('MCP server "local" exited')
        assert "crashing now" in status.reason  # the last stderr line
        assert any("crashing now" in line for line in status.stderr_tail)
        assert manager.tools() == []
        with pytest.raises(McpToolError, match=r'MCP server "local" is not running \(failed: '):
            await manager.run("mcp__local__add", {"a": 1, "b": 2})
        assert wait_gone(pid)
        await manager.restart("local")
        assert (await manager.wait_ready(PATIENCE_S))["local"].state == "ready"
        assert await manager.run("mcp__local__add", {"a": 1, "b": 2}) == "3"
    finally:
        await manager.aclose()


async def test_aclose_ends_the_whole_process_tree() -> None:
    manager = McpManager({"local": stdio_server(), "second": stdio_server("second")})
    try:
        manager.start()
        statuses = await manager.wait_ready(PATIENCE_S)
        assert {s.state for s in statuses.values()} == {"ready"}
        child, server = map(int, (await manager.run("mcp__local__spawn_child", {})).split())
        other = _server_pid(statuses["second"])
        assert pid_alive(child)
    finally:
        await manager.aclose()
    assert wait_gone(server) and wait_gone(other)
    assert wait_gone(child), "the server's child outlived aclose()"
    assert {s.state for s in manager.statuses().values()} == {"stopped"}


async def test_disabled_server_is_not_started_and_wait_ready_returns_at_once() -> None:
    manager = McpManager({"off": stdio_server("off", enabled=False)})
    manager.start()
    # Asked to wait up to an hour, it returns: there is nothing to wait for (the outer timeout is a
    # hang guard only).
    statuses = await asyncio.wait_for(manager.wait_ready(3600), PATIENCE_S)
    assert statuses["off"].state == "stopped" and statuses["off"].reason == "disabled"
    assert manager.tools() == []
    await manager.aclose()


async def test_concurrent_calls_share_one_session() -> None:
    manager = McpManager({"local": stdio_server()})
    try:
        await _ready(manager)
        results = await asyncio.gather(*(manager.run("mcp__local__add", {"a": i, "b": i}) for i in range(8)))
        assert results == [str(2 * i) for i in range(8)]
    finally:
        await manager.aclose()


async def test_set_servers_applies_changes() -> None:
    seen: list[tuple[str, str]] = []
    manager = McpManager(
        {"keep": stdio_server("keep"), "drop": stdio_server("drop"), "change": stdio_server("change")},
        on_status=lambda s: seen.append((s.name, s.state)),
    )
    try:
        manager.start()
        assert {s.state for s in (await manager.wait_ready(PATIENCE_S)).values()} == {"ready"}
        keep_pid = _server_pid(manager.status("keep"))
        change_pid = _server_pid(manager.status("change"))
        drop_pid = _server_pid(manager.status("drop"))
        seen.clear()
        await manager.set_servers(
            {
                "keep": stdio_server("keep"),
                "change": stdio_server("change", approval="never"),
                "new": stdio_server("new"),
            }
        )
        assert manager.server_names() == ["keep", "change", "new"]
        statuses = await manager.wait_ready(PATIENCE_S)
        assert {s.state for s in statuses.values()} == {"ready"}
        assert _server_pid(statuses["keep"]) == keep_pid  # untouched
        assert wait_gone(drop_pid) and wait_gone(change_pid)
        assert ("change", "stopped") in seen and ("new", "ready") in seen
        assert not any(name == "keep" for name, _ in seen)
        change_add = next(t for t in manager.tools() if t.name == "mcp__change__add")
        assert change_add.needs_approval is False
        with pytest.raises(KeyError):
            manager.status("drop")
    finally:
        await manager.aclose()


async def test_aclose_ends_a_removed_server_whose_stop_was_cancelled() -> None:
    """The app quits (cancelling the settings change) while a server it removed is still stopping."""
    manager = McpManager({"drop": stdio_server("drop")})
    try:
        pid = _server_pid(await _ready(manager, "drop"))
        change = asyncio.ensure_future(manager.set_servers({}))
        await asyncio.sleep(0)  # the change runs up to its wait for the stop
        assert manager.server_names() == [] and pid_alive(pid)
        change.cancel()
        await asyncio.gather(change, return_exceptions=True)
    finally:
        await manager.aclose()
    assert wait_gone(pid), "a removed server outlived aclose()"


async def test_a_changed_tool_list_is_listed_again() -> None:
    ready_counts: list[int] = []
    manager = McpManager(
        {"local": stdio_server()},
        on_status=lambda s: ready_counts.append(s.tool_count) if s.state == "ready" else None,
    )
    try:
        await _ready(manager)
        assert "mcp__local__late" not in {t.name for t in manager.tools()}
        assert await manager.run("mcp__local__grow", {}) == "grown"
        await eventually(lambda: any(t.name == "mcp__local__late" for t in manager.tools()), "the new tool")
        assert await manager.run("mcp__local__late", {}) == "late tool"
        assert ready_counts[-1] == ready_counts[0] + 1
    finally:
        await manager.aclose()
