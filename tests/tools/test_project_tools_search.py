"""search_files: case-insensitive matches, skipped folders and files reported, caps."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from desktop.core.tools import SEARCH_MAX_FILE_BYTES, ToolError

RunTool = Callable[..., str]


@pytest.mark.anyio
async def test_finds_case_insensitive_matches_with_line_numbers(project: Path, run: RunTool) -> None:
    (project / "src").mkdir()
    (project / "src" / "app.py").write_text(
        "import os\n\ndef Main():\n    return MAIN_VALUE\n", encoding="utf-8"
    )
    (project / "README.md").write_text("# Title\nrun main() to start\n", encoding="utf-8")
    out = await run("search_files", query="main")
    assert out.splitlines() == [
        "README.md:2: run main() to start",
        "src/app.py:3: def Main():",
        "src/app.py:4: return MAIN_VALUE",
    ]
    out = await run("search_files", query="MAIN", path="src")
    assert out.splitlines()[0] == "src/app.py:3: def Main():"


@pytest.mark.anyio
async def test_unicode_query(project: Path, run: RunTool) -> None:
    (project / "de.txt").write_text("Straße\nGRÜSSE aus Köln\n", encoding="utf-8")
    assert await run("search_files", query="köln") == "de.txt:2: GRÜSSE aus Köln"


@pytest.mark.anyio
async def test_no_matches(project: Path, run: RunTool) -> None:
    (project / "a.txt").write_text("nothing here")
    assert await run("search_files", query="needle") == "no matches for 'needle'"


@pytest.mark.anyio
async def test_skips_and_says_so(project: Path, tmp_path: Path, run: RunTool) -> None:
    for skipped in (".git", ".venv", "node_modules", ".chatnodes"):
        (project / skipped).mkdir()
        (project / skipped / "x.txt").write_text("needle")
    (project / "bin.dat").write_bytes(b"needle\x00\x01")
    (project / "latin.txt").write_bytes(b"needle caf\xe9")
    (project / "huge.txt").write_bytes(b"needle\n" + b"a" * SEARCH_MAX_FILE_BYTES)
    outside = tmp_path / "outside.txt"
    outside.write_text("needle outside")
    os.symlink(outside, project / "out_link.txt")
    (project / "ok.txt").write_text("a needle")
    os.symlink(project / "ok.txt", project / "in_link.txt")
    lines = (await run("search_files", query="needle")).splitlines()
    assert lines[:2] == ["in_link.txt:1: a needle", "ok.txt:1: a needle"]
    assert lines[2] == (
        "[skipped: folders .chatnodes, .git, .venv, node_modules; 2 binary file(s); 1 file(s) over 1 MB; "
        "1 symlink(s) leading outside the project]"
    )
    assert len(lines) == 3


@pytest.mark.anyio
async def test_results_capped_with_note(project: Path, run: RunTool) -> None:
    (project / "many.txt").write_text("hit\n" * 30)
    lines = (await run("search_files", query="hit", max_results=5)).splitlines()
    assert lines[:5] == [f"many.txt:{i}: hit" for i in range(1, 6)]
    assert lines[5] == "[results capped at 5; narrow the query or the path for more]"
    assert len((await run("search_files", query="hit")).splitlines()) == 30  # default 50: not capped


@pytest.mark.anyio
async def test_long_lines_are_shortened(project: Path, run: RunTool) -> None:
    (project / "long.txt").write_text("x" * 1000 + "needle" + "y" * 1000)
    (line,) = (await run("search_files", query="needle")).splitlines()
    assert line.startswith("long.txt:1: xxx") and line.endswith("…") and len(line) < 300


@pytest.mark.anyio
async def test_search_cannot_leave_the_project(project: Path, run: RunTool) -> None:
    with pytest.raises(ToolError, match="escapes the project folder"):
        await run("search_files", query="x", path="..")
    with pytest.raises(ToolError, match="max_results must be a positive integer"):
        await run("search_files", query="x", max_results=0)
