"""The tool set: names, approval flags, schemas, argument validation."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from desktop.core.chat.types import ChatToolDef
from desktop.core.tools import ToolError, _files, project_tools

RunTool = Callable[..., str]


def test_tool_set_and_approval_flags(tools: dict[str, ChatToolDef]) -> None:
    assert list(tools) == ["read_file", "list_dir", "search_files", "write_file"]
    assert {n: t.needs_approval for n, t in tools.items()} == {
        "read_file": False,
        "list_dir": False,
        "search_files": False,
        "write_file": True,
    }


def test_schemas_are_objects_with_described_properties(tools: dict[str, ChatToolDef]) -> None:
    required = {
        "read_file": ["path"],
        "list_dir": [],
        "search_files": ["query"],
        "write_file": ["path", "content"],
    }
    for name, tool in tools.items():
        schema = tool.schema
        assert schema["type"] == "object"
        assert schema["required"] == required[name]
        assert set(schema["required"]) <= set(schema["properties"])
        for prop in schema["properties"].values():
            assert prop["type"] in ("string", "integer") and prop["description"]
        assert tool.description


@pytest.mark.anyio
async def test_missing_and_mistyped_arguments(run: RunTool) -> None:
    with pytest.raises(ToolError, match="missing required argument 'path'"):
        await run("read_file")
    with pytest.raises(ToolError, match="'content' must be a string"):
        await run("write_file", path="a.txt", content=5)
    with pytest.raises(ToolError, match="'max_results' must be an integer"):
        await run("search_files", query="x", max_results="many")
    with pytest.raises(ToolError, match="query must be a non-empty string"):
        await run("search_files", query="   ")
    with pytest.raises(ToolError, match="path must not be empty"):
        await run("read_file", path="")


def test_tool_error_is_a_value_error() -> None:
    assert issubclass(ToolError, ValueError)


def test_root_must_exist(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        project_tools(tmp_path / "missing")
    file = tmp_path / "f"
    file.write_text("x")
    with pytest.raises(ToolError, match="not a directory"):
        project_tools(file)


@pytest.mark.anyio
async def test_tools_run_off_the_event_loop_thread(
    project: Path, tools: dict[str, ChatToolDef], monkeypatch: pytest.MonkeyPatch
) -> None:
    (project / "a.txt").write_text("hello")
    io_threads: list[int] = []
    real_read = _files.read_file

    def spy(*args: object) -> str:
        io_threads.append(threading.get_ident())
        return real_read(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(_files, "read_file", spy)

    text, loop_thread = await tools["read_file"].run({"path": "a.txt"}), threading.get_ident()
    assert text == "hello"
    assert io_threads and io_threads[0] != loop_thread
