"""list_dir: sorted entries, folder slashes, sizes, symlinks shown, the entry cap."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from desktop.core.tools import LIST_CAP_ENTRIES, ToolError

RunTool = Callable[..., str]


@pytest.mark.anyio
async def test_lists_sorted_with_sizes(project: Path, run: RunTool) -> None:
    (project / "src").mkdir()
    (project / "b.txt").write_bytes(b"12345")
    (project / "A.md").write_bytes(b"x" * 2048)
    (project / ".hidden").write_bytes(b"")
    (project / "src" / "x.py").write_text("")
    assert (await run("list_dir")).splitlines() == [
        "./ (4 entries)",
        ".hidden  (0 bytes)",
        "A.md  (2,048 bytes)",
        "b.txt  (5 bytes)",
        "src/",
    ]
    assert (await run("list_dir", path="src")).splitlines() == ["src/ (1 entries)", "x.py  (0 bytes)"]


@pytest.mark.anyio
async def test_empty_folder(project: Path, run: RunTool) -> None:
    (project / "e").mkdir()
    assert await run("list_dir", path="e") == "e/ (0 entries)\n(empty folder)"


@pytest.mark.anyio
async def test_symlinks_are_listed_not_hidden(project: Path, tmp_path: Path, run: RunTool) -> None:
    (project / "real").mkdir()
    os.symlink(project / "real", project / "inside_link")
    os.symlink(tmp_path, project / "outside_link")
    os.symlink(project / "gone", project / "broken")
    lines = (await run("list_dir")).splitlines()
    assert "broken -> " + str(project / "gone") + " (broken symlink)" in lines
    assert any(line.startswith("inside_link/ -> ") for line in lines)
    assert "outside_link/ -> (link outside the project)" in lines  # named, never followed or shown
    assert "real/" in lines


@pytest.mark.anyio
async def test_cap_says_how_many_more(project: Path, run: RunTool) -> None:
    for i in range(LIST_CAP_ENTRIES + 7):
        (project / f"f{i:04d}").write_bytes(b"")
    lines = (await run("list_dir")).splitlines()
    assert lines[0] == f"./ ({LIST_CAP_ENTRIES + 7} entries)"
    assert len(lines) == 1 + LIST_CAP_ENTRIES + 1
    assert lines[-1] == "… and 7 more"
    assert lines[1] == "f0000  (0 bytes)"


@pytest.mark.anyio
async def test_errors(project: Path, run: RunTool) -> None:
    (project / "f.txt").write_text("x")
    with pytest.raises(ToolError, match="not a directory"):
        await run("list_dir", path="f.txt")
    with pytest.raises(ToolError, match="folder not found: missing"):
        await run("list_dir", path="missing")
