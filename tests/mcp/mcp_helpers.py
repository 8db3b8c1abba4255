"""Helpers shared by the MCP tests: configs for the test servers and process checks."""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from desktop.core.mcp import McpServerConfig, parse_mcp_server

SERVERS = Path(__file__).parent / "servers"
HTTP_TOKEN = "test-token-7f3a9c"
PATIENCE_S = 30.0
"""How long the helpers below wait for a condition before failing: a hang guard, never the point."""


def stdio_server(name: str = "local", **extra: Any) -> McpServerConfig:
    """A config for the well-behaved stdio test server."""
    return parse_mcp_server(
        name, {"command": sys.executable, "args": [str(SERVERS / "stdio_server.py")], **extra}
    )


def hostile_server(mode: str, name: str | None = None, **extra: Any) -> McpServerConfig:
    """A config for one of the hostile stdio servers."""
    return parse_mcp_server(
        name or mode, {"command": sys.executable, "args": [str(SERVERS / "hostile_server.py"), mode], **extra}
    )


async def eventually(condition: Callable[[], bool], what: str, timeout: float = PATIENCE_S) -> None:
    """Wait until ``condition()`` holds (polled on the event loop); fail naming ``what`` after ``timeout``."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout:g} s")
        await asyncio.sleep(0.02)


def marker_text(marker: Path) -> str | None:
    """What the stdio test server's ``slow`` tool wrote to ``marker`` (written atomically), or None."""
    try:
        return marker.read_text()
    except FileNotFoundError:
        return None


async def marker_says(marker: Path, text: str, timeout: float = PATIENCE_S) -> None:
    """Wait until the ``slow`` tool's marker file reads ``text`` ("started", "CancelledError"...)."""
    await eventually(lambda: marker_text(marker) == text, f"{marker.name} == {text!r}", timeout)
