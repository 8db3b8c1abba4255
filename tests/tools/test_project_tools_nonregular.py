"""The project tools never open a FIFO: read_file refuses it, search_files passes it by.

Both check with ``stat`` and then open through ``desktop.core.files`` (``O_NONBLOCK`` and an
``fstat`` of what was opened), so a FIFO swapped in between the check and the open cannot block
the tool's thread either.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from desktop.core.tools import ToolError

RunTool = Callable[..., Awaitable[str]]

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs POSIX FIFOs")


@pytest.mark.anyio
async def test_search_passes_fifos_by_and_finds_the_rest(project: Path, run: RunTool) -> None:
    (project / "sub").mkdir()
    os.mkfifo(project / "sub" / "pipe.txt")
    os.mkfifo(project / "a-pipe")
    (project / "sub" / "notes.txt").write_text("needle here\n", encoding="utf-8")
    out = await run("search_files", query="needle")
    assert out.splitlines()[0] == "sub/notes.txt:1: needle here"
    assert "pipe" not in out


@pytest.mark.anyio
async def test_read_file_refuses_a_symlink_to_a_fifo(project: Path, run: RunTool) -> None:
    os.mkfifo(project / "pipe")
    (project / "link").symlink_to("pipe")
    with pytest.raises(ToolError, match="link is not a regular file|pipe is not a regular file"):
        await run("read_file", path="link")
