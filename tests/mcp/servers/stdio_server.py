"""A well-behaved MCP server over stdio, written with the SDK's server API (MCPServer).

Run as ``python stdio_server.py``; it logs one line to stderr at start.
"""

from __future__ import annotations

import base64
import os
import subprocess
import sys
import time
from pathlib import Path

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import ImageContent, ResourceLink, TextContent, ToolAnnotations

# WARNING: the SDK logs every request at INFO to stderr, which would push the start line (with the pid
# the tests look for) out of the manager's 50-line stderr tail.
server = MCPServer("test-stdio", log_level="WARNING")

PNG_1PX = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool(annotations=ToolAnnotations(destructive_hint=True, open_world_hint=True))
def echo(text: str) -> str:
    """Echo the text back."""
    return text


def _mark(marker: str, text: str) -> None:
    """Write ``text`` to the marker file atomically (a reader sees the old text or the new, never half)."""
    tmp = Path(marker + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, marker)


@server.tool()
async def slow(seconds: float, marker: str) -> str:
    """Write "started" to the marker file, sleep for a while, then write how it ended there."""
    _mark(marker, "started")
    try:
        await anyio.sleep(seconds)
    except BaseException as exc:
        _mark(marker, type(exc).__name__)
        raise
    _mark(marker, "finished")
    return "slept"


@server.tool()
def big(size: int) -> str:
    """Return a text of ``size`` bytes."""
    return "x" * size


@server.tool()
def fail(why: str) -> str:
    """Always raise."""
    raise ValueError(f"it failed because {why}")


@server.tool()
def image() -> list[ImageContent | TextContent]:
    """Return a 1x1 PNG and a caption."""
    return [
        ImageContent(type="image", data=base64.b64encode(PNG_1PX).decode(), mime_type="image/png"),
        TextContent(type="text", text="a red pixel"),
    ]


@server.tool()
def link() -> list[ResourceLink]:
    """Return a resource link."""
    return [
        ResourceLink(
            type="resource_link", uri="file:///etc/hostname", name="hostname", mime_type="text/plain"
        )
    ]


@server.tool()
def weather(city: str) -> dict[str, object]:
    """Structured output."""
    return {"city": city, "temp_c": 21.5, "tags": ["sunny", "dry"]}


@server.tool()
def crash() -> str:
    """Exit the process in the middle of the call."""
    print("crashing now", file=sys.stderr, flush=True)
    os._exit(3)


@server.tool()
def spawn_child() -> str:
    """Start a long-lived child process (same process group) and return its pid and ours."""
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    return f"{child.pid} {os.getpid()}"


@server.tool()
def getenv(name: str) -> str:
    """Return an environment variable of the server process ("<unset>" when missing)."""
    return os.environ.get(name, "<unset>")


@server.tool()
async def grow(ctx: Context) -> str:
    """Add a tool named "late" and tell the client that the tool list changed."""

    def late() -> str:
        """A tool added at run time."""
        return "late tool"

    server.add_tool(late)
    await ctx.session.send_tool_list_changed()
    return "grown"


@server.tool(name="weird.name with spaces")
def weird() -> str:
    """A tool whose name needs mangling."""
    return "ok"


if __name__ == "__main__":
    print(f"test-stdio server starting pid={os.getpid()} at {time.time():.3f}", file=sys.stderr, flush=True)
    server.run("stdio")
