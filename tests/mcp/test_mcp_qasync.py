"""The manager on the app's real loop: qasync on a QApplication (subprocess transport, cancel, close)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from mcp_helpers import PATIENCE_S, marker_says, marker_text, stdio_server

from desktop.core.mcp import McpManager
from desktop.testing.processes import wait_gone


def test_start_call_cancel_and_close_on_qasync(
    qtbot: Any, qloop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    marker = tmp_path / "marker"
    facts: dict[str, Any] = {}

    async def scenario() -> None:
        manager = McpManager({"local": stdio_server()})
        try:
            manager.start()
            facts["status"] = (await manager.wait_ready(PATIENCE_S))["local"]
            facts["add"] = await manager.run("mcp__local__add", {"a": 20, "b": 22})
            child, server = map(int, (await manager.run("mcp__local__spawn_child", {})).split())
            facts["pids"] = (child, server)
            args = {"seconds": 3600, "marker": str(marker)}
            call = asyncio.ensure_future(manager.run("mcp__local__slow", args))
            await marker_says(marker, "started")  # the call reached the server's handler
            call.cancel()
            try:
                # The tool sleeps an hour: ending at all proves the cancel did not wait for it.
                await asyncio.wait_for(call, PATIENCE_S)
            except asyncio.CancelledError:
                facts["cancelled"] = True
        finally:
            await manager.aclose()

    task = qloop.create_task(scenario())
    qtbot.waitUntil(task.done, timeout=int(PATIENCE_S * 2000))
    task.result()
    assert facts["status"].state == "ready"
    assert facts["add"] == "42"
    assert facts["cancelled"] is True
    qtbot.waitUntil(lambda: marker_text(marker) == "CancelledError", timeout=int(PATIENCE_S * 1000))
    child, server = facts["pids"]
    assert wait_gone(server) and wait_gone(child)
