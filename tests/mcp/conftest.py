"""Fixtures for the MCP tests: real servers (tests/mcp/servers) run as subprocesses.

Tests use anyio's pytest plugin on the asyncio backend (the app runs the manager on its qasync
loop, an asyncio loop).
"""

from __future__ import annotations

import os
import select
import subprocess
import sys
from collections.abc import Iterator

import pytest
from mcp_helpers import HTTP_TOKEN, SERVERS


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


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
