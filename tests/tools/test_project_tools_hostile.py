"""Hostile projects (issue 9): control files, outside links, deep trees, cancelled searches."""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from desktop.core.chat.runtime import ChatRuntimeDeps, ChatSendRequest, ChatSendResult, create_chat_runtime
from desktop.core.chat.types import (
    ChatEvent,
    ChatMessage,
    ChatToolDef,
    Delta,
    ProviderConfig,
    ToolCall,
    ToolCallFinished,
    ToolCallRequested,
)
from desktop.core.tools import (
    ToolCancelled,
    ToolError,
    _files,
    project_tools,
    protected_reason,
    run_in_worker,
)

RunTool = Callable[..., str]

REFUSED = [
    "project.json",
    "PROJECT.JSON",
    ".chatnodes/permissions.json",
    ".git/config",
    ".git/hooks/pre-commit",
    ".GIT/Config",
    ".Git/HOOKS/post-checkout",
    "sub/.git/config",
    ".git",  # a .git file (gitdir: ...) may point git anywhere
    ".mcp.json",
    ".envrc",
    "sub/dir/.envrc",
    ".vscode/tasks.json",
    ".VSCode/settings.json",
    ".idea/workspace.xml",
    ".hg/hgrc",
    ".svn/entries",
    ".pre-commit-config.yaml",
    ".gitattributes",
    ".gitmodules",
    "a/../.git/config",
    "./.git/config",
]


@pytest.mark.parametrize("path", REFUSED)
@pytest.mark.anyio
async def test_write_file_refuses_control_files(project: Path, run: RunTool, path: str) -> None:
    with pytest.raises(ToolError, match="write_file refuses .*(configures|configure) the project"):
        await run("write_file", path=path, content="[core]\n\tfsmonitor = touch /tmp/pwned\n")
    written = [p for p in project.rglob("*") if p.is_file()]
    assert written == []


@pytest.mark.anyio
async def test_write_file_refuses_a_link_inside_the_project_that_leads_to_a_control_folder(
    project: Path, run: RunTool
) -> None:
    (project / ".git").mkdir()
    (project / ".git" / "config").write_text("[core]\n")
    os.symlink(project / ".git", project / "innocent")
    with pytest.raises(ToolError, match="refuses"):
        await run("write_file", path="innocent/config", content="[core]\n\tfsmonitor = evil\n")
    assert (project / ".git" / "config").read_text() == "[core]\n"


@pytest.mark.parametrize(
    "path", ["notes/project.json.md", ".github/workflows/ci.yml", "git/config", "src/envrc", "a.gitignore"]
)
@pytest.mark.anyio
async def test_write_file_still_writes_ordinary_files(project: Path, run: RunTool, path: str) -> None:
    assert (await run("write_file", path=path, content="ok")).startswith("wrote 2 bytes")
    assert (project / path).read_text() == "ok"


def test_protected_reason_folds_case_and_windows_spellings() -> None:
    assert protected_reason(".GIT./config") is not None
    assert protected_reason(".git::$INDEX_ALLOCATION/config") is not None
    assert protected_reason("sub\\.vscode\\tasks.json") is not None
    assert protected_reason("docs/readme.md") is None


@pytest.mark.anyio
async def test_list_dir_hides_where_an_outside_link_leads(
    project: Path, tmp_path: Path, run: RunTool
) -> None:
    secret_dir = tmp_path / "private-place"
    secret_dir.mkdir()
    (secret_dir / "f.txt").write_text("x")
    os.symlink(secret_dir, project / "out_dir")
    os.symlink(secret_dir / "f.txt", project / "out_file")
    os.symlink(tmp_path / "nowhere", project / "out_broken")
    (project / "inside").mkdir()
    os.symlink(project / "inside", project / "in_link")
    text = await run("list_dir")
    assert str(tmp_path) not in text.replace(str(project), "<project>")
    assert "private-place" not in text and "nowhere" not in text
    lines = text.splitlines()
    assert "out_dir/ -> (link outside the project)" in lines
    assert "out_file -> (link outside the project)" in lines
    assert "out_broken -> (link outside the project)" in lines
    assert "in_link/ -> " + str(project / "inside") + " (symlink)" in lines


@pytest.mark.anyio
async def test_search_walks_a_very_deep_tree_without_recursion(project: Path, run: RunTool) -> None:
    depth = 1500
    deep = project
    for _ in range(depth):  # Path.mkdir(parents=True) and os.makedirs recurse themselves
        deep = deep / "d"
        deep.mkdir()
    (deep / "bottom.txt").write_text("the needle is here\n")
    (project / "top.txt").write_text("needle at the top\n")
    try:
        out = (await run("search_files", query="NEEDLE")).splitlines()
        assert out[0] == "top.txt:1: needle at the top"
        assert out[1] == "/".join(["d"] * depth) + "/bottom.txt:1: the needle is here"
    finally:  # shutil.rmtree (pytest's cleanup) recurses too: take the tree down here
        (deep / "bottom.txt").unlink()
        while deep != project:
            deep.rmdir()
            deep = deep.parent


@pytest.mark.anyio
async def test_search_order_matches_a_top_down_sorted_walk(project: Path, run: RunTool) -> None:
    for rel in ["b/z.txt", "b/a/y.txt", "a/x.txt", "c.txt", "a/b/w.txt"]:
        (project / rel).parent.mkdir(parents=True, exist_ok=True)
        (project / rel).write_text("hit\n")
    assert [line.split(":")[0] for line in (await run("search_files", query="hit")).splitlines()] == [
        "c.txt", "a/x.txt", "a/b/w.txt", "b/z.txt", "b/a/y.txt",
    ]


def test_search_stops_when_its_cancel_flag_is_set(project: Path) -> None:
    from desktop.core.tools import ProjectRoot

    (project / "f.txt").write_text("needle\n")
    flag = threading.Event()
    flag.set()
    with pytest.raises(ToolCancelled):
        _files.search_files(ProjectRoot(project), "needle", ".", 50, flag)


def search_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "chatnodes-search_files"]


class HeldReads:
    """Stands between the search and its file reads: the first read waits for ``release`` (the test
    stops the search meanwhile); every read is counted, so "stops at the next file" is a count."""

    def __init__(self, real: Callable[[Path], str | None]) -> None:
        self.real = real
        self.reading = threading.Event()
        self.release = threading.Event()
        self.reads = 0

    def __call__(self, file: Path) -> str | None:
        self.reads += 1
        self.reading.set()
        if not self.release.wait(30):
            raise TimeoutError("the test never released the read")
        return self.real(file)


def hold_search_reads(project: Path, monkeypatch: pytest.MonkeyPatch) -> HeldReads:
    for i in range(3000):
        (project / f"f{i:04d}.txt").write_text("nothing\n")
    held = HeldReads(_files._read_text_for_search)
    monkeypatch.setattr(_files, "_read_text_for_search", held)
    return held


def join_search_threads() -> None:
    for thread in search_threads():
        thread.join(30)  # a hang guard: released, a cancelled search ends at its next check
    assert search_threads() == []


@pytest.mark.anyio
async def test_cancelled_search_returns_at_once_and_its_thread_stops_at_the_next_file(
    project: Path, tools: dict[str, ChatToolDef], monkeypatch: pytest.MonkeyPatch
) -> None:
    held = hold_search_reads(project, monkeypatch)
    task = asyncio.ensure_future(tools["search_files"].run({"query": "needle"}))
    assert await asyncio.to_thread(held.reading.wait, 30), "the search never read a file"
    assert search_threads(), "the search runs in its worker thread"
    task.cancel()
    # The worker thread is still held inside its first read: the task ending proves it was not awaited.
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 30)
    assert held.reads == 1 and search_threads()
    held.release.set()
    join_search_threads()
    assert held.reads == 1  # the cancel flag was checked before the next of the 3,000 files


@pytest.mark.anyio
async def test_closing_never_waits_for_an_abandoned_tool_thread() -> None:
    release, entered = threading.Event(), threading.Event()

    def stubborn(cancel: threading.Event) -> str:
        entered.set()
        release.wait(30)  # ignores its cancel flag
        return "late"

    task = asyncio.ensure_future(run_in_worker(stubborn, name="stubborn"))
    assert await asyncio.to_thread(entered.wait, 30)
    task.cancel()
    try:
        # asyncio.to_thread would make this wait for the thread, which only the test can release.
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(task, 30)
        thread = next(t for t in threading.enumerate() if t.name == "chatnodes-stubborn")
        assert thread.is_alive() and thread.daemon  # still held, and cannot keep the process alive
    finally:
        release.set()
    thread.join(30)
    assert not thread.is_alive()


@pytest.mark.anyio
async def test_worker_results_and_errors_reach_the_caller() -> None:
    async def scenario() -> None:
        assert await run_in_worker(lambda cancel: "ok") == "ok"
        with pytest.raises(ToolError, match="boom"):
            await run_in_worker(lambda cancel: (_ for _ in ()).throw(ToolError("boom")))

    await scenario()


class _SearchOnce:
    """A driver whose first answer asks for a search and whose later answers say "done"."""

    def __init__(self) -> None:
        self.calls = 0

    async def stream(self, *, model: str, messages: Any, tools: Any, system: str | None = None
                     ) -> AsyncIterator[ChatEvent]:
        self.calls += 1
        if self.calls == 1:
            yield ToolCallRequested(ToolCall("c1", "search_files", '{"query": "needle"}'))
        else:
            yield Delta("done")


@pytest.mark.anyio
async def test_stopping_a_run_during_a_long_search_returns_at_once(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    held = hold_search_reads(project, monkeypatch)
    events: list[ChatEvent] = []
    config = ProviderConfig(id="fake", name="Fake", api="openai", base_url="http://127.0.0.1:9", model="m")
    runtime = create_chat_runtime(ChatRuntimeDeps(
        resolve_provider=lambda _req: config,
        broadcast=lambda _node, event: events.append(event),
        tools_for=lambda _req: project_tools(project),
        driver_for=lambda _cfg: _SearchOnce(),
    ))
    task = asyncio.ensure_future(runtime.send(ChatSendRequest("n1", [ChatMessage("u", "user", "go", 0)])))
    try:
        assert await asyncio.to_thread(held.reading.wait, 30), "the search never started"
        runtime.stop("n1")
        # The search is held inside its first read: the run ending proves the stop did not wait for it.
        result: ChatSendResult = await asyncio.wait_for(task, 30)
    finally:
        held.release.set()
    assert result.stop_reason == "stopped"
    finished = [e for e in events if isinstance(e, ToolCallFinished)]
    assert [(f.call.id, f.call.status) for f in finished] == [("c1", "skipped")]
    join_search_threads()
    assert held.reads == 1  # and the thread stopped at its next file, not after 3,000
