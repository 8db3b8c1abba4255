"""The stdio transport on its own (``open_stdio``) against real child processes: every line arrives, in
order, whatever the pipe's chunking, with a slow reader (stdout paused and resumed), and the end of the
stream carries the exit code."""

from __future__ import annotations

import asyncio
import os
import sys
import textwrap

import pytest

from desktop.core.mcp import ResolvedStdio
from desktop.core.mcp._stdio import MIB, StdioProcess, open_stdio

pytestmark = pytest.mark.anyio

# Writes COUNT JSON-RPC notifications in one burst: small ones, some of 300 kB (they span pipe chunks),
# blank lines and CRLF endings between them, one line that is not UTF-8; then exits with code 7.
WRITER = textwrap.dedent(
    """
    import json, os, sys
    count = int(sys.argv[1])
    out = bytearray()
    for i in range(count):
        pad = "y" * (300_000 if i % 500 == 0 else i % 50)
        line = json.dumps({"jsonrpc": "2.0", "method": "notifications/message",
                           "params": {"level": "info", "data": f"{i} {pad}"}}).encode()
        out += line + (b"\\r\\n" if i % 3 == 0 else b"\\n")
        if i % 1000 == 0:
            out += b"\\n   \\n"
        if i == 10:
            out += b'{"jsonrpc": "2.0", "method": "x\\xff"}\\n'
    os.write(1, bytes(out)) if len(out) < 65536 else sys.stdout.buffer.write(out)
    sys.stdout.flush()
    sys.exit(7)
    """
)


async def _read_all(read: object, slow: bool) -> list[object]:
    items: list[object] = []
    async for item in read:  # type: ignore[attr-defined]
        items.append(item)
        if slow and len(items) % 100 == 0:
            await asyncio.sleep(0.001)  # a reader slower than the pipe: reading stdout pauses and resumes
    return items


@pytest.mark.parametrize("slow", [False, True])
async def test_every_line_arrives_in_order_and_the_end_carries_the_exit_code(slow: bool) -> None:
    count = 5_000
    launch = ResolvedStdio(command=sys.executable, args=("-c", WRITER, str(count)), env={}, cwd=None)
    with open(os.devnull, "w") as errlog:
        async with open_stdio(launch, errlog=errlog, max_message=MIB) as (read, _write, process):
            items = await asyncio.wait_for(_read_all(read, slow), 60)
            assert isinstance(process, StdioProcess)
            assert process.returncode == 7
            assert process.end_text() == "exited (code 7)"
    errors = [item for item in items if isinstance(item, Exception)]
    assert len(errors) == 1  # the line that is not UTF-8: a value for the session to report
    messages = [item.message for item in items if not isinstance(item, Exception)]  # type: ignore[attr-defined]
    numbers = [int(m.params["data"].split(" ", 1)[0]) for m in messages]
    assert numbers == list(range(count))
    assert len(messages[500].params["data"]) == len("500 ") + 300_000
