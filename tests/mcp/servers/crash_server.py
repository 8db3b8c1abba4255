"""An MCP server over stdio (the SDK's MCPServer) that can crash, leave a child on stdout, or flood it.

Run as ``python crash_server.py [--orphan] [--exit-at-start CODE]``; it logs
``test-crash server starting pid=<pid> child=<pid>`` to stderr at start (``child=0`` without ``--orphan``).

* ``--orphan``: at start, before serving, it starts a long-lived child that inherits stdout (as a
  shell wrapper's child or a forked worker does), so stdout stays open after the server dies.
* ``--exit-at-start CODE``: exits with ``CODE`` before answering anything (after ``--orphan``'s child).
* ``exit_now(code)``: exits with ``code`` in the middle of the call (the call is never answered).
* ``big(size)``: answers a text of ``size`` bytes (one JSON-RPC line a little longer than that).
* ``flood(mb)``: writes ``mb`` MiB of ``x`` to stdout with no newline, then waits to be killed.
* ``add(a, b)``: a quick well-behaved tool.

The SDK's server points fd 1 at stderr while it serves (so children and stray prints miss the wire);
the child and ``flood`` therefore use descriptors taken before it starts.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

from mcp.server.mcpserver import MCPServer

server = MCPServer("test-crash", log_level="WARNING")
WIRE = os.dup(1)  # the real stdout pipe (not inherited by children)


@server.tool()
def exit_now(code: int) -> str:
    """Exit with ``code`` mid-call."""
    print(f"exiting with {code}", file=sys.stderr, flush=True)
    os._exit(code)


@server.tool()
def big(size: int) -> str:
    """Return a text of ``size`` bytes."""
    return "x" * size


@server.tool()
def flood(mb: int) -> str:
    """Write ``mb`` MiB to stdout without a newline (never a valid message), then wait."""
    chunk = b"x" * (1 << 20)
    try:
        for _ in range(mb):
            os.write(WIRE, chunk)
    except OSError:
        os._exit(0)  # the reader is gone
    time.sleep(600)
    return "unreachable"


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


if __name__ == "__main__":
    child = 0
    if "--orphan" in sys.argv[1:]:
        # No stdout argument: the child inherits fd 1, the stdout pipe, and keeps it open.
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"]).pid
    print(f"test-crash server starting pid={os.getpid()} child={child}", file=sys.stderr, flush=True)
    if "--exit-at-start" in sys.argv[1:]:
        code = int(sys.argv[sys.argv.index("--exit-at-start") + 1])
        print(f"exiting with {code} before serving", file=sys.stderr, flush=True)
        os._exit(code)
    server.run("stdio")
