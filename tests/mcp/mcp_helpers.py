"""Helpers shared by the MCP tests: configs for the test servers and process checks."""

from __future__ import annotations

import sys
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
