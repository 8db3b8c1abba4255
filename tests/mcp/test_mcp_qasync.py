"""The manager on the app's real loop: qasync on a QApplication (subprocess transport, cancel, close)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import PySide6  # noqa: F401  (import the binding before qasync so it picks PySide6)
import pytest
import qasync  # type: ignore[import-untyped]
from mcp_helpers import stdio_server

from desktop.core.mcp import McpManager
from desktop.testing.processes import wait_gone


@pytest.fixture
def qloop(qapp: Any) -> Iterator[asyncio.AbstractEventLoop]:
    """A qasync loop driven by the Qt event loop pytest-qt runs while waiting (as in tests/ui)."""
    loop = qasync.QEventLoop(qapp, already_running=False)
    asyncio.set_event_loop(loop)
    asyncio.events._set_running_loop(loop)
    try:
        yield loop
    finally:
        for task in [t for t in asyncio.all_tasks(loop) if not t.done()]:
            task.cancel()
        asyncio.events._set_running_loop(None)
        asyncio.set_event_loop(None)
        loop.close()


def test_start_call_cancel_and_close_on_qasync(
    qtbot: Any, qloop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    marker = tmp_path / "marker"
    facts: dict[str, Any] = {}

    async def scenario() -> None:
        manager = McpManager({"local": stdio_server()})
        try:
            manager.start()
            facts["status"] = (await manager.wait_ready(10))["local"]
            facts["add"] = await manager.run("mcp__local__add", {"a": 20, "b": 22})
            child, server = map(int, (await manager.run("mcp__local__spawn_child", {})).split())
            facts["pids"] = (child, server)
            args = {"seconds": 30, "marker": str(marker)}
            call = asyncio.ensure_future(manager.run("mcp__local__slow", args))
            await asyncio.sleep(0.3)
            started = time.perf_counter()
            call.cancel()
            try:
                await call
            except asyncio.CancelledError:
                facts["cancel_s"] = time.perf_counter() - started
        finally:
            await manager.aclose()

    task = qloop.create_task(scenario())
    qtbot.waitUntil(task.done, timeout=20_000)
    task.result()
    assert facts["status"].state == "ready"
    assert facts["add"] == "42"
    assert facts["cancel_s"] < 1.0
    qtbot.waitUntil(marker.exists, timeout=3000)
    assert marker.read_text() == "CancelledError"
    child, server = facts["pids"]
    assert wait_gone(server) and wait_gone(child)
