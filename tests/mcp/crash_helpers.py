"""Helpers for the tests of crashing and flooding stdio servers (``servers/crash_server.py``)."""

from __future__ import annotations

import asyncio
import re
import sys
from typing import Any

from mcp_helpers import SERVERS

from desktop.core.mcp import McpServerConfig, ServerState, ServerStatus, parse_mcp_server

WAIT_S = 60.0
"""A generous bound for things that happen at once (the call timeouts in these tests are 300 s)."""


def crash_server(name: str = "crashy", *flags: str, **extra: Any) -> McpServerConfig:
    """A config for the crash server (``flags``: ``--orphan``, ``--exit-at-start CODE``)."""
    args = [str(SERVERS / "crash_server.py"), *flags]
    return parse_mcp_server(name, {"command": sys.executable, "args": args, "timeout_s": 300, **extra})


def crash_server_pids(status: ServerStatus) -> tuple[int, int]:
    """``(server pid, child pid)`` from the crash server's start line (child 0: none)."""
    for line in status.stderr_tail:
        match = re.search(r"test-crash server starting pid=(\d+) child=(\d+)", line)
        if match:
            return int(match.group(1)), int(match.group(2))
    raise AssertionError(f"no start line in {status.stderr_tail}")


class StatusLog:
    """An ``on_status`` callback that keeps every status and lets a test wait for a state."""

    def __init__(self) -> None:
        self.seen: list[ServerStatus] = []
        self._changed = asyncio.Event()

    def __call__(self, status: ServerStatus) -> None:
        self.seen.append(status)
        self._changed.set()

    async def wait_for(self, name: str, state: ServerState, timeout: float = WAIT_S) -> ServerStatus:
        """The first status of ``name`` in ``state`` (waits for it; TimeoutError after ``timeout``)."""

        async def wait() -> ServerStatus:
            while True:
                for status in self.seen:
                    if status.name == name and status.state == state:
                        return status
                self._changed.clear()
                await self._changed.wait()

        return await asyncio.wait_for(wait(), timeout)
