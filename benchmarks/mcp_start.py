"""An MCP stdio server from start to ready, through ``McpManager`` (what the window waits for after its
first paint), against the same server process that only imports the SDK, builds its tools and exits.

The server is a one-tool ``MCPServer`` script written to a temp folder. Ours: ``McpManager.start()``
until ``wait_ready`` reports it ready (spawn, SDK import, ``initialize``, ``tools/list``). The
baseline: the same script run with ``--built`` (spawn, the same imports, the tools built, no session),
until it says so on stdout (then it is killed: its exit is not timed). The ratio is what the session
costs on top of starting the process. Budget ≤ 2.0×. (It was a unit
test, "median of five under 5 s", until issue 31.)
"""

from __future__ import annotations

import asyncio
import logging
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks._harness import Budget, Row, Settings, paired

log = logging.getLogger(__name__)

__all__ = ["run", "SERVER"]

SERVER = '''
import sys

from mcp.server.mcpserver import MCPServer

server = MCPServer("bench", log_level="WARNING")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


if __name__ == "__main__":
    if "--built" in sys.argv:
        print("built", flush=True)
        sys.stdin.read()
    else:
        server.run("stdio")
'''


def _ready_ms(script: Path) -> float:
    from desktop.core.mcp import McpManager, parse_mcp_server

    async def scenario() -> float:
        manager = McpManager({"bench": parse_mcp_server("bench", {"command": sys.executable,
                                                                  "args": [str(script)]})})
        try:
            start = time.perf_counter()
            manager.start()
            status = (await manager.wait_ready(60))["bench"]
            ms = (time.perf_counter() - start) * 1000.0
        finally:
            await manager.aclose()
        if status.state != "ready" or status.tool_count != 1:
            raise RuntimeError(f"the bench MCP server did not get ready: {status.summary()}")
        return ms

    return asyncio.run(scenario())


def _process_ms(script: Path) -> float:
    start = time.perf_counter()
    with subprocess.Popen([sys.executable, str(script), "--built"], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, text=True) as proc:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        ms = (time.perf_counter() - start) * 1000.0
        proc.kill()
    if line.strip() != "built":
        raise RuntimeError(f"the bench MCP server script said {line!r}")
    return ms


def run(settings: Settings) -> list[Row]:
    """The one row of the module docstring."""
    with tempfile.TemporaryDirectory(prefix="chatnodes-mcp-bench-") as tmp:
        script = Path(tmp) / "bench_server.py"
        script.write_text(SERVER, encoding="utf-8")
        ours, base = paired(lambda: _ready_ms(script), lambda: _process_ms(script), settings.runs,
                            warmup=settings.warmup)
    return [Row("mcp.ready", "MCP stdio server (1 tool), start to ready via McpManager", "ms", ours,
                "the same process up to its tools built", base, Budget.ratio(2.0))]
