"""An MCP server over stdio whose tools answer like ``@modelcontextprotocol/server-filesystem``'s
``read_media_file``: the file as an image or audio content block, and a ``structuredContent`` that
repeats the same block, base64 included (``{"content": [{"type", "data", "mimeType"}]}``).

Two more tools put base64 elsewhere in structured content: beside a ``mimeType`` key, and as a
``data:`` URL. Run as ``python media_server.py``.
"""

from __future__ import annotations

import base64
import os
import sys
from pathlib import Path

from mcp.server.mcpserver import MCPServer
from mcp_types import AudioContent, CallToolResult, ImageContent, TextContent

server = MCPServer("test-media", log_level="WARNING")

_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".gif": "image/gif", ".webp": "image/webp",
          ".wav": "audio/wav", ".mp3": "audio/mpeg"}


@server.tool()
def read_media_file(path: str) -> CallToolResult:
    """Read an image or audio file; return it as base64 with its MIME type."""
    mime = _TYPES.get(Path(path).suffix.lower(), "application/octet-stream")
    data = base64.b64encode(Path(path).read_bytes()).decode()
    block: ImageContent | AudioContent
    if mime.startswith("audio/"):
        block = AudioContent(type="audio", data=data, mime_type=mime)
    else:
        block = ImageContent(type="image", data=data, mime_type=mime)
    item = {"type": block.type, "data": data, "mimeType": mime}
    return CallToolResult(content=[block], structured_content={"content": [item]})


@server.tool()
def describe_photo(path: str) -> CallToolResult:
    """An image block, a caption, and structured content with the photo's base64 beside its type."""
    data = base64.b64encode(Path(path).read_bytes()).decode()
    return CallToolResult(
        content=[ImageContent(type="image", data=data, mime_type="image/png"),
                 TextContent(type="text", text="A small red square.")],
        structured_content={"caption": "A small red square.",
                            "photo": {"mimeType": "image/png", "data": data},
                            "tags": ["red", "square"]},
    )


@server.tool()
def thumbnail(path: str) -> CallToolResult:
    """No image block: the image only as a data URL inside structured content."""
    data = base64.b64encode(Path(path).read_bytes()).decode()
    return CallToolResult(
        content=[TextContent(type="text", text="thumbnail made")],
        structured_content={"thumbnail": f"data:image/png;base64,{data}", "width": 64},
    )


if __name__ == "__main__":
    print(f"test-media server starting pid={os.getpid()}", file=sys.stderr, flush=True)
    server.run("stdio")
