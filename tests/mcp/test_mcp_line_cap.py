"""A stdio server's message (one stdout line) is capped before it is parsed: past the cap the server is
killed with a clear error; below it a large message passes whole. ``max_message_mb`` sets the cap."""

from __future__ import annotations

import asyncio

import pytest
from crash_helpers import WAIT_S, StatusLog, crash_server, crash_server_pids

from desktop.core.mcp import (
    DEFAULT_MAX_MESSAGE_MB,
    McpConfigError,
    McpManager,
    McpToolError,
    mcp_servers_to_dict,
    parse_mcp_server,
)
from desktop.testing.processes import wait_gone

pytestmark = pytest.mark.anyio


async def _ready(manager: McpManager, name: str = "crashy") -> int:
    manager.start()
    status = (await manager.wait_ready(WAIT_S))[name]
    assert status.state == "ready", status
    return crash_server_pids(status)[0]


async def test_a_50_mb_line_kills_the_server_with_a_clear_error() -> None:
    assert DEFAULT_MAX_MESSAGE_MB == 32
    log = StatusLog()
    manager = McpManager({"crashy": crash_server()}, on_status=log)
    try:
        server = await _ready(manager)
        # The SDK's server sends a text result twice (content and structured): a 50 MB line.
        call = manager.run("mcp__crashy__big", {"size": 25_000_000})
        with pytest.raises(McpToolError) as caught:
            await asyncio.wait_for(call, WAIT_S)
        assert str(caught.value) == (
            'MCP server "crashy", tool "big": the server sent a message over 32 MB; stopped'
        )
        status = await log.wait_for("crashy", "failed")
        assert status.reason == 'MCP server "crashy" sent a message over 32 MB; stopped'
        assert wait_gone(server)
    finally:
        await manager.aclose()


async def test_an_endless_line_is_cut_at_the_cap_without_waiting_for_its_end() -> None:
    log = StatusLog()
    manager = McpManager({"crashy": crash_server(max_message_mb=1)}, on_status=log)
    try:
        server = await _ready(manager)
        # 4 MiB with no newline, then the server waits (never finishing the line): only the cap ends it.
        with pytest.raises(McpToolError, match=r'tool "flood": the server sent a message over 1 MB; stopped'):
            await asyncio.wait_for(manager.run("mcp__crashy__flood", {"mb": 4}), WAIT_S)
        status = await log.wait_for("crashy", "failed")
        assert status.reason == 'MCP server "crashy" sent a message over 1 MB; stopped'
        assert status.summary() == 'failed: MCP server "crashy" sent a message over 1 MB; stopped'
        assert wait_gone(server)
    finally:
        await manager.aclose()


async def test_a_large_message_under_the_cap_passes_whole() -> None:
    manager = McpManager({"crashy": crash_server(max_message_mb=2)})
    try:
        await _ready(manager)
        result = await asyncio.wait_for(manager.call("mcp__crashy__big", {"size": 900_000}), WAIT_S)
        assert result.full_text == "x" * 900_000  # a line of ~1.8 MB, read in many pipe chunks
        assert await manager.run("mcp__crashy__add", {"a": 2, "b": 3}) == "5"
        assert manager.status("crashy").state == "ready"
    finally:
        await manager.aclose()


def test_max_message_mb_config() -> None:
    config = parse_mcp_server("s", {"command": "srv", "max_message_mb": 64})
    assert config.max_message_mb == 64.0
    assert mcp_servers_to_dict({"s": config}) == {"s": {"command": "srv", "max_message_mb": 64}}
    default = parse_mcp_server("s", {"command": "srv"})
    assert default.max_message_mb == DEFAULT_MAX_MESSAGE_MB
    assert "max_message_mb" not in default.to_dict()
    assert parse_mcp_server("s", {"command": "srv", "max_message_mb": 0.5}).to_dict()["max_message_mb"] == 0.5
    for bad in (0, -1, True, "32", float("inf"), 4096):
        with pytest.raises(McpConfigError, match=r'server "s": "max_message_mb" must be a number of MB'):
            parse_mcp_server("s", {"command": "srv", "max_message_mb": bad})
