"""An MCP server over streamable HTTP on loopback that requires a bearer token.

The token comes from ``MCP_TEST_TOKEN``; the server binds 127.0.0.1 on a free port and prints the
port as its first stdout line. With the argument ``sse`` it serves the old HTTP+SSE transport
(``/sse``) instead.
"""

from __future__ import annotations

import asyncio
import hmac
import os
import socket
import sys
from typing import Any

import uvicorn
from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations

server = MCPServer("test-http")
TOKEN = os.environ["MCP_TEST_TOKEN"]


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def shout(text: str) -> str:
    """Upper-case the text."""
    return text.upper()


@server.tool()
def big(size: int) -> str:
    """Return a text of ``size`` bytes."""
    return "y" * size


SSE = len(sys.argv) > 1 and sys.argv[1] == "sse"
app = server.sse_app() if SSE else server.streamable_http_app()


async def guarded(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """Reject every HTTP request without ``Authorization: Bearer <token>`` (401)."""
    if scope["type"] == "http":
        given = dict(scope["headers"]).get(b"authorization", b"")
        if not hmac.compare_digest(given, f"Bearer {TOKEN}".encode()):
            await send(
                {
                    "type": "http.response.start",
                    "status": 401,
                    "headers": [(b"content-type", b"text/plain"), (b"www-authenticate", b"Bearer")],
                }
            )
            await send({"type": "http.response.body", "body": b"missing or wrong token"})
            return
    await app(scope, receive, send)


def main() -> None:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    print(sock.getsockname()[1], flush=True)
    config = uvicorn.Config(guarded, log_level="warning", lifespan="on")
    asyncio.run(uvicorn.Server(config).serve(sockets=[sock]))


if __name__ == "__main__":
    main()
