"""Every way out of the project folder is refused, for every tool; symlinks inside are fine."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from desktop.core.tools import ToolError

RunTool = Callable[..., str]


def _attempts(path: str) -> list[tuple[str, dict[str, object]]]:
    return [
        ("read_file", {"path": path}),
        ("list_dir", {"path": path}),
        ("search_files", {"query": "secret", "path": path}),
        ("write_file", {"path": path, "content": "pwned"}),
    ]


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "secret.txt").write_text("secret")
    return folder


@pytest.mark.parametrize(
    "path", ["..", "../outside/secret.txt", "a/../../outside/secret.txt", "./../outside"]
)
@pytest.mark.anyio
async def test_dotdot_escapes(project: Path, outside: Path, run: RunTool, path: str) -> None:
    for name, args in _attempts(path):
        with pytest.raises(ToolError, match="path escapes the project folder"):
            await run(name, **args)
    assert (outside / "secret.txt").read_text() == "secret"


@pytest.mark.anyio
async def test_absolute_paths(project: Path, outside: Path, run: RunTool) -> None:
    for path in [
        str(outside / "secret.txt"),
        str(project / "inside.txt"),
        "/etc/passwd",
        "~/x",
        "C:\\x",
        "\\\\server\\share",
    ]:
        for name, args in _attempts(path):
            with pytest.raises(ToolError, match="path escapes the project folder"):
                await run(name, **args)
    assert not (project / "inside.txt").exists()


@pytest.mark.anyio
async def test_symlinked_file_pointing_out(project: Path, outside: Path, run: RunTool) -> None:
    os.symlink(outside / "secret.txt", project / "link.txt")
    for name, args in _attempts("link.txt"):
        with pytest.raises(ToolError, match="path escapes the project folder: 'link.txt'"):
            await run(name, **args)
    assert (outside / "secret.txt").read_text() == "secret"


@pytest.mark.anyio
async def test_dangling_symlink_pointing_out_cannot_create_a_file(
    project: Path, outside: Path, run: RunTool
) -> None:
    os.symlink(outside / "new.txt", project / "dangling.txt")
    with pytest.raises(ToolError, match="path escapes the project folder"):
        await run("write_file", path="dangling.txt", content="x")
    assert not (outside / "new.txt").exists()


@pytest.mark.anyio
async def test_symlinked_dir_pointing_out(project: Path, outside: Path, run: RunTool) -> None:
    os.symlink(outside, project / "escape")
    for path in ["escape", "escape/secret.txt", "escape/new/deeper.txt"]:
        for name, args in _attempts(path):
            with pytest.raises(ToolError, match="path escapes the project folder"):
                await run(name, **args)
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]
    # search from the root does not follow it either
    assert (await run("search_files", query="secret")).splitlines() == [
        "no matches for 'secret'",
        "[skipped: 1 symlinked folder(s) not followed]",
    ]


@pytest.mark.anyio
async def test_symlink_inside_is_allowed(project: Path, run: RunTool) -> None:
    (project / "docs").mkdir()
    (project / "docs" / "a.md").write_text("alpha")
    os.symlink(project / "docs", project / "docs_link")
    os.symlink(project / "docs" / "a.md", project / "a_link.md")
    assert await run("read_file", path="docs_link/a.md") == "alpha"
    assert await run("read_file", path="a_link.md") == "alpha"
    assert (await run("list_dir", path="docs_link")).splitlines()[1] == "a.md  (5 bytes)"
    assert await run("search_files", query="alpha", path="docs_link") == "docs/a.md:1: alpha"


@pytest.mark.anyio
async def test_project_root_reached_through_a_symlink(tmp_path: Path) -> None:
    from desktop.core.tools import project_tools

    real = tmp_path / "real_project"
    real.mkdir()
    (real / "f.txt").write_text("content")
    os.symlink(real, tmp_path / "project_link")
    tools = {t.name: t for t in project_tools(tmp_path / "project_link")}
    assert await tools["read_file"].run({"path": "f.txt"}) == "content"
