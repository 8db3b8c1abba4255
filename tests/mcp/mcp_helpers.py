"""Helpers shared by the MCP tests: configs for the test servers and process checks."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

from desktop.core.mcp import McpServerConfig, parse_mcp_server

SERVERS = Path(__file__).parent / "servers"
HTTP_TOKEN = "test-token-7f3a9c"



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


def pid_alive(pid: int) -> bool:
    """True while ``pid`` exists and is not a zombie."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def wait_gone(pid: int, timeout: float = 3.0) -> bool:
    """Poll until ``pid`` is gone; True when it is."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not pid_alive(pid):
            return True
        time.sleep(0.02)
    return not pid_alive(pid)
