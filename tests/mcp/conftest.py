"""Fixtures for the MCP tests: real servers (tests/mcp/servers) run as subprocesses.

Tests use anyio's pytest plugin on the asyncio backend (the app runs the manager on its qasync
loop, an asyncio loop); the ``*_qasync`` tests run it on a real qasync loop (``qloop``), under the
app's rule that garbage is collected on the GUI thread only.
"""

from __future__ import annotations

import asyncio
import gc
import os
import select
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from mcp_helpers import HTTP_TOKEN, SERVERS


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def qloop(qapp: Any) -> Iterator[asyncio.AbstractEventLoop]:
    """A qasync loop driven by the Qt event loop pytest-qt runs while waiting (as in tests/ui).

    As in tests/ui: automatic garbage collection is off while the test runs (``GuiThreadCollector``),
    and the closed loop's Qt timers are stopped here, on the GUI thread. Left to the automatic
    collector, the loop (kept in a cycle by its pending handles) was freed during a later test by
    whichever thread allocated (a server's stderr reader, a child watcher) and the next
    ``processEvents`` crashed on its timer object.
    """
    import PySide6  # noqa: F401  (import the binding before qasync so it picks PySide6)

    from desktop.ui.event_loop import new_event_loop
    from desktop.ui.gc_guard import GuiThreadCollector, release_loop_timers

    collector = GuiThreadCollector(qapp)
    loop = new_event_loop(qapp)
    asyncio.set_event_loop(loop)
    asyncio.events._set_running_loop(loop)
    try:
        yield loop
    finally:
        for task in [t for t in asyncio.all_tasks(loop) if not t.done()]:
            task.cancel()
        loop.run_due()  # the cancelled tasks' cleanup, and the callbacks it schedules
        asyncio.events._set_running_loop(None)
        asyncio.set_event_loop(None)
        loop.close()
        release_loop_timers(loop)
        collector.stop()
        collector.deleteLater()
        gc.collect()


@pytest.fixture
def http_server(http_server_process: tuple[str, subprocess.Popen[bytes]]) -> str:
    """The streamable HTTP test server's endpoint URL."""
    return http_server_process[0]


@pytest.fixture
def http_server_process() -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """The streamable HTTP test server on 127.0.0.1 (free port); yields its URL and its process."""
    yield from _serve_http([], "/mcp")


@pytest.fixture
def sse_server() -> Iterator[str]:
    """The same server over the old HTTP+SSE transport; yields its ``/sse`` URL."""
    for url, _proc in _serve_http(["sse"], "/sse"):
        yield url


def _serve_http(args: list[str], path: str) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    env = {**os.environ, "MCP_TEST_TOKEN": HTTP_TOKEN}
    proc = subprocess.Popen(
        [sys.executable, str(SERVERS / "http_server.py"), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
        start_new_session=True,
    )
    try:
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], 15)
        assert ready, "the HTTP test server did not start"
        port = int(proc.stdout.readline())
        yield f"http://127.0.0.1:{port}{path}", proc
    finally:
        if proc.poll() is None:
            proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
        if proc.stdout is not None:
            proc.stdout.close()
