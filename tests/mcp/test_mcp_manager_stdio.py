"""McpManager against the real stdio test server (tests/mcp/servers/stdio_server.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from mcp_helpers import stdio_server

from desktop.core.mcp import McpManager, ServerStatus

pytestmark = pytest.mark.anyio


def _server_pid(status: ServerStatus) -> int:
    for line in status.stderr_tail:
        match = re.search(r"test-stdio server starting pid=(\d+)", line)
        if match:
            return int(match.group(1))
    raise AssertionError(f"no pid line in {status.stderr_tail}")


async def _ready(manager: McpManager, name: str = "local") -> ServerStatus:
    manager.start()
    statuses = await manager.wait_ready(timeout=10)
    status = statuses[name]
    assert status.state == "ready", status
    return status


async def test_start_list_and_call(tmp_path: Path) -> None:
    seen: list[tuple[str, str]] = []
    manager = McpManager({"local": stdio_server()}, on_status=lambda s: seen.append((s.name, s.state)))
    try:
        status = await _ready(manager)
        assert status.tool_count == 12
        assert status.summary() == "ready (12 tools)"
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
