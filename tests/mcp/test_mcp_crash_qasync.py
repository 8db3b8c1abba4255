"""The process watch and the line cap on the app's real loop: qasync on a QApplication."""

from __future__ import annotations

import asyncio
from typing import Any

from crash_helpers import WAIT_S, StatusLog, crash_server, crash_server_pids

from desktop.core.mcp import McpManager, McpToolError
from desktop.testing.processes import wait_gone


def test_crash_with_a_child_on_stdout_and_a_long_line_on_qasync(
    qtbot: Any, qloop: asyncio.AbstractEventLoop
) -> None:
    facts: dict[str, Any] = {}
    log = StatusLog()

    async def scenario() -> None:
        servers = {"crashy": crash_server("crashy", "--orphan"),
                   "flood": crash_server("flood", max_message_mb=1)}
        manager = McpManager(servers, on_status=log)
        try:
            manager.start()
            statuses = await manager.wait_ready(WAIT_S)
            facts["pids"] = [*crash_server_pids(statuses["crashy"]), crash_server_pids(statuses["flood"])[0]]
            for name, args in (("crashy__exit_now", {"code": 3}), ("flood__flood", {"mb": 4})):
                try:
                    await asyncio.wait_for(manager.run(f"mcp__{name}", args), WAIT_S)
                except McpToolError as err:
                    facts[name] = str(err)
            facts["crashy"] = await log.wait_for("crashy", "failed")
            facts["flood"] = await log.wait_for("flood", "failed")
        finally:
            await manager.aclose()

    task = qloop.create_task(scenario())
    qtbot.waitUntil(task.done, timeout=int(WAIT_S * 2000))
    task.result()
    assert "the server exited (code 3)" in facts["crashy__exit_now"]
    assert facts["crashy"].reason.startswith('MCP server "crashy" exited (code 3)')
    assert facts["flood__flood"].endswith("the server sent a message over 1 MB; stopped")
    assert facts["flood"].reason == 'MCP server "flood" sent a message over 1 MB; stopped'
    assert all(wait_gone(pid) for pid in facts["pids"])
