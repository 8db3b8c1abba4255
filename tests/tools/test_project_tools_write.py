"""write_file: parents created, atomic replace, no temp file left, modes kept, unicode byte counts."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path

import pytest

from desktop.core.tools import ToolError, _files

RunTool = Callable[..., str]


@pytest.mark.anyio
async def test_creates_parents_and_reports_bytes(project: Path, run: RunTool) -> None:
    out = await run("write_file", path="notes/deep/hello.md", content="# Hi\n")
    assert out == "wrote 5 bytes to notes/deep/hello.md"
    assert (project / "notes" / "deep" / "hello.md").read_text(encoding="utf-8") == "# Hi\n"
    assert sorted(p.name for p in (project / "notes" / "deep").iterdir()) == ["hello.md"]


@pytest.mark.anyio
async def test_unicode_content_counts_utf8_bytes(project: Path, run: RunTool) -> None:
    content = "Grüße 👋\n"
    out = await run("write_file", path="ü.txt", content=content)
    assert out == f"wrote {len(content.encode('utf-8'))} bytes to ü.txt"
    assert (project / "ü.txt").read_bytes() == content.encode("utf-8")


@pytest.mark.anyio
async def test_overwrite_keeps_mode_and_leaves_no_temp(project: Path, run: RunTool) -> None:
    target = project / "script.sh"
    target.write_text("old")
    target.chmod(0o750)
    await run("write_file", path="script.sh", content="new")
    assert target.read_text() == "new"
    assert stat.S_IMODE(target.stat().st_mode) == 0o750
    assert [p.name for p in project.iterdir()] == ["script.sh"]


@pytest.mark.anyio
async def test_replace_is_atomic(project: Path, run: RunTool, monkeypatch: pytest.MonkeyPatch) -> None:
    target = project / "data.txt"
    target.write_text("precious")
    seen: list[tuple[str, str]] = []
    real_replace = os.replace

    def checking_replace(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> None:
        # At the moment of the swap, the new bytes are complete in a sibling temp file.
        seen.append((Path(src).read_text(), Path(dst).read_text()))
        assert Path(src).parent == Path(dst).parent
        real_replace(src, dst)

    monkeypatch.setattr(_files.os, "replace", checking_replace)
    await run("write_file", path="data.txt", content="fresh")
    assert seen == [("fresh", "precious")]


@pytest.mark.anyio
async def test_failure_leaves_old_file_and_no_temp(
    project: Path, run: RunTool, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = project / "data.txt"
    target.write_text("precious")

    def failing_replace(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(_files.os, "replace", failing_replace)
    with pytest.raises(ToolError, match="cannot write data.txt: No space left on device"):
        await run("write_file", path="data.txt", content="new")
    assert target.read_text() == "precious"
    assert [p.name for p in project.iterdir()] == ["data.txt"]


@pytest.mark.anyio
async def test_refuses_directories_and_blocked_parents(project: Path, run: RunTool) -> None:
    (project / "dir").mkdir()
    (project / "file").write_text("x")
    with pytest.raises(ToolError, match="dir is a directory"):
        await run("write_file", path="dir", content="x")
    with pytest.raises(ToolError, match="cannot create folder for file/sub.txt"):
        await run("write_file", path="file/sub.txt", content="x")
    with pytest.raises(ToolError, match="project folder itself"):
        await run("write_file", path=".", content="x")


@pytest.mark.anyio
async def test_writes_through_a_symlink_inside(project: Path, run: RunTool) -> None:
    (project / "real").mkdir()
    os.symlink(project / "real", project / "alias")
    assert await run("write_file", path="alias/x.txt", content="ok") == "wrote 2 bytes to real/x.txt"
    assert (project / "real" / "x.txt").read_text() == "ok"
