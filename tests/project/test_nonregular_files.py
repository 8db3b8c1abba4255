"""A FIFO (or any file that is not a regular file) where a project file should be is refused at once.

Opening a FIFO for reading blocks until some process opens it for writing (and for writing until
a reader comes): on the GUI thread that froze the window. Every load here runs in a thread with a
generous timeout, so a regression fails the test instead of hanging the suite; the FIFOs are then
opened from the other end so the stuck thread ends.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest

from desktop.core.chat.conversation import append_message
from desktop.core.config import SettingsStore
from desktop.core.files import NotRegularFileError, open_regular, read_checked, read_regular
from desktop.core.mcp import McpConfigError, TrustStore, read_project_servers
from desktop.core.store import Project, ProjectError, ProjectStore, new_node_state

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs POSIX FIFOs")

T = TypeVar("T")
GENEROUS = 30.0
"""Seconds a load may take before the test calls it blocked (it returns in milliseconds)."""


@contextlib.contextmanager
def fifos(*paths: Path) -> Iterator[None]:
    """Make FIFOs at ``paths``; afterwards open each from both ends, so nothing stays blocked."""
    for path in paths:
        path.parent.mkdir(parents=True, exist_ok=True)
        os.mkfifo(path)
    try:
        yield
    finally:
        for path in paths:
            for flags in (os.O_WRONLY | os.O_NONBLOCK, os.O_RDONLY | os.O_NONBLOCK):
                with contextlib.suppress(OSError):
                    os.close(os.open(path, flags))


def returns(fn: Callable[[], T]) -> T:
    """``fn()`` run in a thread; the test fails when it has not returned within ``GENEROUS`` s."""
    box: dict[str, object] = {}
    done = threading.Event()

    def run() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # re-raised in the test's thread
            box["error"] = exc
        finally:
            done.set()

    threading.Thread(target=run, daemon=True).start()
    if not done.wait(GENEROUS):
        pytest.fail(f"blocked: {fn} did not return (waiting on a FIFO?)")
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    return box["value"]  # type: ignore[return-value]


def _saved_project(folder: Path) -> Project:
    node = new_node_state(node_id="n-1")
    append_message(node.conversation, "user", "hello")
    append_message(node.conversation, "assistant", "hi")
    project = Project(nodes=[node])
    with ProjectStore(folder) as store:
        store.save(project)
    return project


def test_a_fifo_as_project_json_is_refused_left_in_place_and_never_overwritten(tmp_path: Path) -> None:
    store = ProjectStore(tmp_path)
    with fifos(store.path):
        result = returns(store.open)
        assert result.error is not None and "named pipe, not a regular file" in result.error.reason
        assert result.moved_aside is None and store.path.is_fifo()
        with pytest.raises(ProjectError, match="not overwritten"):
            store.save(result.value)
        assert store.path.is_fifo()
    store.release()


def test_a_fifo_as_the_backup_is_not_read_when_recovering(tmp_path: Path) -> None:
    store = ProjectStore(tmp_path)
    store.path.write_bytes(b"{broken")
    with fifos(store.backup_path):
        result = returns(store.open)
    assert result.error is not None and result.recovered_from is None
    assert result.moved_aside is not None  # the broken file was kept aside; a new project opens
    store.release()


def test_a_fifo_as_mcp_json_is_refused_with_a_clear_error(tmp_path: Path) -> None:
    trust = TrustStore(tmp_path / "config")
    with fifos(tmp_path / ".mcp.json"):
        with pytest.raises(McpConfigError, match="named pipe, not a regular file"):
            returns(lambda: read_project_servers(tmp_path))
        with pytest.raises(McpConfigError, match="named pipe"):
            returns(lambda: trust.pending(tmp_path))
        with pytest.raises(McpConfigError, match="named pipe"):
            returns(lambda: trust.trusted_servers(tmp_path))


def test_a_fifo_as_an_archive_is_neither_read_nor_written(tmp_path: Path) -> None:
    project = _saved_project(tmp_path)
    node = project.nodes[0]
    for i in range(6):
        append_message(node.conversation, "user", f"q{i} " + "x" * 400)
        append_message(node.conversation, "assistant", "y" * 400)
    store = ProjectStore(tmp_path, history_cap_bytes=1024)
    with fifos(store.archive_path(node.id)):
        assert returns(store.open).error is None
        assert returns(lambda: store.read_archive(node.id)) == []
        result = returns(lambda: store.save(project))  # the cap cannot archive: nothing is trimmed
        assert result.trimmed == {}
        (tmp_path / ".chatnodes" / "archive-pending").touch()  # as after a crash: the loader reads ids
        store.release()
        reopened = ProjectStore(tmp_path)
        loaded = returns(reopened.open)
        assert len(loaded.value.nodes[0].conversation.messages) == 14  # whole: nothing was archived
        reopened.release()


def test_a_fifo_as_the_lock_file_leaves_the_project_usable(tmp_path: Path) -> None:
    _saved_project(tmp_path)
    (tmp_path / ".chatnodes" / "lock").unlink()
    store = ProjectStore(tmp_path)
    with fifos(tmp_path / ".chatnodes" / "lock"):
        result = returns(store.open)
        assert result.error is None and not result.read_only
        assert [m.content for m in result.value.nodes[0].conversation.messages] == ["hello", "hi"]
    store.release()


def test_a_fifo_as_settings_json_is_refused(tmp_path: Path) -> None:
    store = SettingsStore(tmp_path)
    with fifos(store.path):
        returns(store.load)
    assert store.last_corrupt is not None and "named pipe" in store.last_corrupt.reason


def test_the_helpers_refuse_what_is_not_a_regular_file(tmp_path: Path) -> None:
    pipe = tmp_path / "pipe"
    with fifos(pipe):
        for read in (read_regular, read_checked):
            with pytest.raises(NotRegularFileError, match="a named pipe, not a regular file"):
                returns(lambda read=read: read(pipe))  # type: ignore[misc]
        with pytest.raises(NotRegularFileError):
            returns(lambda: open_regular(pipe, os.O_WRONLY | os.O_APPEND))
    with pytest.raises(NotRegularFileError, match="a folder"):
        read_regular(tmp_path)
    with pytest.raises(FileNotFoundError):
        read_regular(tmp_path / "missing")
    fd = open_regular(tmp_path / "new", os.O_WRONLY | os.O_CREAT, 0o600)  # O_CREAT makes a missing file
    os.write(fd, b"abc")
    os.close(fd)
    assert read_regular(tmp_path / "new") == b"abc" and read_regular(tmp_path / "new", 2) == b"ab"
    assert os.get_blocking(fd := open_regular(tmp_path / "new")) is True
    os.close(fd)
