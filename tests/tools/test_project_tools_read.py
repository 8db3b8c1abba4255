"""read_file: text, the 12 KiB cap and its marker, binary detection, unicode."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from desktop.core.tools import READ_CAP_BYTES, ToolError

RunTool = Callable[..., str]


@pytest.mark.anyio
async def test_reads_text(project: Path, run: RunTool) -> None:
    (project / "src").mkdir()
    (project / "src" / "main.py").write_text("print('hi')\n", encoding="utf-8")
    assert await run("read_file", path="src/main.py") == "print('hi')\n"
    assert await run("read_file", path="./src/../src/main.py") == "print('hi')\n"


@pytest.mark.anyio
async def test_exactly_at_cap_is_not_truncated(project: Path, run: RunTool) -> None:
    (project / "a.txt").write_bytes(b"a" * READ_CAP_BYTES)
    assert await run("read_file", path="a.txt") == "a" * READ_CAP_BYTES


@pytest.mark.anyio
async def test_over_cap_is_truncated_with_marker(project: Path, run: RunTool) -> None:
    assert READ_CAP_BYTES == 12288
    (project / "big.txt").write_bytes(b"x" * 20_000)
    out = await run("read_file", path="big.txt")
    assert out == "x" * 12288 + f"\n[truncated {20_000 - 12288} bytes]"


@pytest.mark.anyio
async def test_cap_never_splits_a_multibyte_character(project: Path, run: RunTool) -> None:
    data = ("a" + "é" * 10_000).encode("utf-8")  # 'é' is 2 bytes: the cap lands inside one
    (project / "u.txt").write_bytes(data)
    out = await run("read_file", path="u.txt")
    text, marker = out.rsplit("\n", 1)
    shown = len(text.encode("utf-8"))
    assert shown == READ_CAP_BYTES - 1 and text == "a" + "é" * ((READ_CAP_BYTES - 2) // 2)
    assert marker == f"[truncated {len(data) - shown} bytes]"


@pytest.mark.anyio
async def test_unicode_text(project: Path, run: RunTool) -> None:
    content = "Grüße 👋 — 日本語\n"
    (project / "ünï cødé.md").write_text(content, encoding="utf-8")
    assert await run("read_file", path="ünï cødé.md") == content


@pytest.mark.parametrize(
    "data",
    [b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", b"text then a NUL \x00 byte", b"latin-1 caf\xe9 is not utf-8"],
)
@pytest.mark.anyio
async def test_binary_is_described_not_dumped(project: Path, run: RunTool, data: bytes) -> None:
    (project / "blob.bin").write_bytes(data)
    assert await run("read_file", path="blob.bin") == f"binary file ({len(data)} bytes), not shown"


@pytest.mark.anyio
async def test_nul_beyond_sniff_window_in_shown_part(project: Path, run: RunTool) -> None:
    # A NUL after the first 8 KiB does not make the file binary; it is valid UTF-8 text.
    data = b"a" * 9000 + b"\x00" + b"b" * 10
    (project / "late.txt").write_bytes(data)
    assert await run("read_file", path="late.txt") == data.decode()


@pytest.mark.anyio
async def test_empty_file(project: Path, run: RunTool) -> None:
    (project / "empty").write_bytes(b"")
    assert await run("read_file", path="empty") == ""


@pytest.mark.anyio
async def test_errors(project: Path, run: RunTool) -> None:
    (project / "dir").mkdir()
    with pytest.raises(ToolError, match="file not found: nope.txt"):
        await run("read_file", path="nope.txt")
    with pytest.raises(ToolError, match="dir is a directory"):
        await run("read_file", path="dir")
    with pytest.raises(ToolError, match="project folder itself"):
        await run("read_file", path=".")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs POSIX fifos")
@pytest.mark.anyio
async def test_special_files_are_refused_without_blocking(project: Path, run: RunTool) -> None:
    os.mkfifo(project / "pipe")
    with pytest.raises(ToolError, match="pipe is not a regular file"):
        await run("read_file", path="pipe")
