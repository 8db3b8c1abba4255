"""Project tools offered to the model, confined to the project folder.

``project_tools(root)`` returns ``read_file``, ``list_dir``, ``search_files`` (read-only, no
approval) and ``write_file`` (needs approval). Paths are relative to the project folder; anything
that would leave it (absolute paths, ``..``, symlinks resolving outside) raises ``ToolError``, which
the chat loop reports as ``tool error: ...``. ``write_file`` also refuses the project's control
files (``.git/``, ``project.json``, ``.vscode/``...: see ``protected_reason``). Before a
``write_file`` call is approved, ``read_existing`` reads the file it would replace by the same rules
and ``write_diff`` compares it with the new content (the approval card shows both).

File I/O runs in a daemon worker thread per call. Cancelling the call (the user stops the run or
closes the window) sets the thread's cancel flag and returns at once: a long ``search_files`` stops
at its next folder or file, and nothing ever waits for an abandoned thread (not even interpreter
exit, unlike ``asyncio.to_thread``, whose executor is joined at shutdown).
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from desktop.core.chat.types import ChatToolDef
from desktop.core.tools import _files
from desktop.core.tools._files import (
    LIST_CAP_ENTRIES,
    READ_CAP_BYTES,
    SEARCH_MAX_FILE_BYTES,
    SEARCH_SKIP_DIRS,
    protected_reason,
)
from desktop.core.tools._paths import ProjectRoot, ToolCancelled, ToolError
from desktop.core.tools._preview import (
    DIFF_MAX_LINES,
    PREVIEW_READ_CAP,
    ExistingFile,
    ExistingState,
    WriteDiff,
    read_existing,
    write_diff,
)

log = logging.getLogger(__name__)

__all__ = [
    "DIFF_MAX_LINES",
    "LIST_CAP_ENTRIES",
    "PREVIEW_READ_CAP",
    "READ_CAP_BYTES",
    "SEARCH_MAX_FILE_BYTES",
    "SEARCH_SKIP_DIRS",
    "ExistingFile",
    "ExistingState",
    "ProjectRoot",
    "ToolError",
    "WriteDiff",
    "ToolCancelled",
    "protected_reason",
    "run_in_worker",
    "project_tools",
    "read_existing",
    "write_diff",
]

T = TypeVar("T")

_PATH_DESCRIPTION = "Path relative to the project folder, with '/' separators."


def _string_arg(args: dict[str, Any], name: str, *, default: str | None = None) -> str:
    if name not in args or args[name] is None:
        if default is None:
            raise ToolError(f"missing required argument {name!r}")
        return default
    value = args[name]
    if not isinstance(value, str):
        raise ToolError(f"argument {name!r} must be a string, got {type(value).__name__}")
    return value


def _int_arg(args: dict[str, Any], name: str, default: int) -> int:
    value = args.get(name, default)
    if value is None:
        return default
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ToolError(f"argument {name!r} must be an integer")
    return value


def _settle(future: asyncio.Future[T], result: T | None, error: BaseException | None) -> None:
    if future.done():  # cancelled meanwhile
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)  # type: ignore[arg-type]


async def run_in_worker(work: Callable[[threading.Event], T], *, name: str = "tool") -> T:
    """Run ``work(cancel)`` in a new daemon thread and return its result.

    On cancellation of the awaiting task, ``cancel`` is set and the ``CancelledError`` propagates
    at once, without waiting for the thread: ``work`` is expected to check the flag and stop soon.
    Its late result or error is dropped.

    Args:
        work: The blocking function; it receives the cancel flag.
        name: Thread name suffix (shows in debuggers and thread dumps).

    Raises:
        Exception: Whatever ``work`` raised.
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()
    cancel = threading.Event()

    def body() -> None:
        result: T | None = None
        error: BaseException | None = None
        try:
            result = work(cancel)
        except BaseException as exc:  # handed to the awaiting task
            error = exc
        if cancel.is_set():
            return
        try:
            loop.call_soon_threadsafe(_settle, future, result, error)
        except RuntimeError:  # the event loop is closed: nobody waits any more
            log.debug("tool thread %s finished after its event loop closed", name)

    thread = threading.Thread(target=body, name=f"chatnodes-{name}", daemon=True)
    thread.start()
    try:
        return await future
    except asyncio.CancelledError:
        cancel.set()
        raise


def project_tools(root: Path) -> list[ChatToolDef]:
    """The project tools anchored at ``root`` (which must be an existing folder).

    Raises:
        FileNotFoundError: ``root`` does not exist.
        ToolError: ``root`` is not a folder.
    """
    sandbox = ProjectRoot(root)

    async def read_file(args: dict[str, Any]) -> str:
        path = _string_arg(args, "path")
        return await run_in_worker(lambda _cancel: _files.read_file(sandbox, path), name="read_file")

    async def list_dir(args: dict[str, Any]) -> str:
        path = _string_arg(args, "path", default=".")
        return await run_in_worker(lambda _cancel: _files.list_dir(sandbox, path), name="list_dir")

    async def search_files(args: dict[str, Any]) -> str:
        query = _string_arg(args, "query")
        path = _string_arg(args, "path", default=".")
        max_results = _int_arg(args, "max_results", 50)
        return await run_in_worker(
            lambda cancel: _files.search_files(sandbox, query, path, max_results, cancel), name="search_files"
        )

    async def write_file(args: dict[str, Any]) -> str:
        path = _string_arg(args, "path")
        content = _string_arg(args, "content")
        return await run_in_worker(
            lambda cancel: _files.write_file(sandbox, path, content, cancel), name="write_file"
        )

    return [
        ChatToolDef(
            name="read_file",
            description=(
                f"Read a text file in the project. Shows at most {READ_CAP_BYTES} bytes, then "
                "'[truncated N bytes]'; binary files are described, not shown."
            ),
            schema={
                "type": "object",
                "properties": {"path": {"type": "string", "description": _PATH_DESCRIPTION}},
                "required": ["path"],
                "additionalProperties": False,
            },
            needs_approval=False,
            run=read_file,
        ),
        ChatToolDef(
            name="list_dir",
            description=(
                "List a folder of the project: sorted entries, folders end with '/', files show their "
                f"size in bytes. At most {LIST_CAP_ENTRIES} entries."
            ),
            schema={
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": _PATH_DESCRIPTION + " Default: '.' (the root)."}
                },
                "required": [],
                "additionalProperties": False,
            },
            needs_approval=False,
            run=list_dir,
        ),
        ChatToolDef(
            name="search_files",
            description=(
                "Case-insensitive plain-text search through the project's text files. Returns "
                "'path:line: text' lines. Skips " + ", ".join(sorted(SEARCH_SKIP_DIRS)) + ", binary files "
                "and files over 1 MB."
            ),
            schema={
                "type": "object",
                "properties": {
                    "query": {
                        "type": "string",
                        "description": "The text to find (not a regular expression).",
                    },
                    "path": {"type": "string", "description": "Folder to search in. " + _PATH_DESCRIPTION},
                    "max_results": {
                        "type": "integer",
                        "minimum": 1,
                        "maximum": 500,
                        "description": "Maximum number of matching lines (default 50).",
                    },
                },
                "required": ["query"],
                "additionalProperties": False,
            },
            needs_approval=False,
            run=search_files,
        ),
        ChatToolDef(
            name="write_file",
            description=(
                "Create or overwrite a UTF-8 text file in the project (parent folders are created). "
                "The user must approve every call. Control files are refused: project.json, .git/, "
                ".chatnodes/, .vscode/, .idea/, .mcp.json, .envrc and other tool configuration."
            ),
            schema={
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": _PATH_DESCRIPTION},
                    "content": {"type": "string", "description": "The complete new file content."},
                },
                "required": ["path", "content"],
                "additionalProperties": False,
            },
            needs_approval=True,
            run=write_file,
        ),
    ]
