"""One writer per project (issue 9 #5): the .chatnodes/lock, read-only second stores, change detection."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from desktop.core.chat.conversation import append_message
from desktop.core.store import (
    Project,
    ProjectChangedError,
    ProjectReadOnlyError,
    ProjectStore,
    new_node_state,
)

REPO = Path(__file__).resolve().parents[2]


def _project(text: str) -> Project:
    node = new_node_state(node_id="n-1")
    append_message(node.conversation, "user", text)
    return Project(nodes=[node])


def test_two_stores_in_one_process(tmp_path: Path) -> None:
    first = ProjectStore(tmp_path)
    opened = first.open()
    assert not opened.read_only and opened.read_only_reason is None
    first.save(_project("mine"))
    assert (tmp_path / ".chatnodes" / "lock").is_file()

    second = ProjectStore(tmp_path)
    result = second.open()
    assert result.read_only and second.read_only
    assert result.read_only_reason is not None and "another window of this app" in result.read_only_reason
    assert result.read_only_reason in result.notices
    assert [m.content for m in result.value.nodes[0].conversation.messages] == ["mine"]  # it still reads
    before = first.path.read_bytes()
    with pytest.raises(ProjectReadOnlyError, match="read-only"):
        second.save(_project("theirs"))
    with pytest.raises(ProjectReadOnlyError):
        second.archive_messages("n-1", result.value.nodes[0].conversation.messages)
    assert first.path.read_bytes() == before
    assert not second.archive_path("n-1").exists()
    assert not second.take_over()  # still held

    first.release()
    assert second.take_over() and not second.read_only
    second.save(_project("theirs"))  # nobody wrote since second loaded: allowed
    assert first.open().read_only  # the roles are swapped now
    second.release()


def test_the_store_is_a_context_manager(tmp_path: Path) -> None:
    with ProjectStore(tmp_path) as store:
        store.save(_project("x"))
        assert ProjectStore(tmp_path).open().read_only
    assert not ProjectStore(tmp_path).open().read_only


def test_a_bad_file_is_left_to_the_writer(tmp_path: Path) -> None:
    writer = ProjectStore(tmp_path)
    writer.open()
    writer.path.write_bytes(b"{broken")
    reader = ProjectStore(tmp_path)
    result = reader.open()
    assert result.read_only and result.error is not None and result.moved_aside is None
    assert writer.path.read_bytes() == b"{broken"  # not moved away under the writer's feet
    writer.release()
    assert reader.take_over()
    with pytest.raises(Exception, match="not overwritten"):
        reader.save(result.value)  # it never moved the bad file aside: open again first
    assert reader.open().moved_aside is not None


def test_saves_refuse_a_file_changed_by_someone_else(tmp_path: Path) -> None:
    store = ProjectStore(tmp_path)
    store.open()
    store.save(_project("v1"))
    store.save(_project("v2"))  # our own writes are fine
    other = b'{"version": 1, "nodes": []}\n'
    store.path.write_bytes(other)  # e.g. a git checkout or another app version without the lock
    with pytest.raises(ProjectChangedError, match="changed by another program"):
        store.save(_project("v3"))
    assert store.path.read_bytes() == other
    assert store.open().value.nodes == []  # loading again makes it ours
    store.save(_project("v3"))
    store.path.unlink()  # deleted behind our back: not silently re-created either
    with pytest.raises(ProjectChangedError):
        store.save(_project("v4"))
    store.save(_project("v4"), force=True)
    assert store.path.exists()


def test_a_new_file_written_by_someone_else_is_not_overwritten(tmp_path: Path) -> None:
    store = ProjectStore(tmp_path)
    assert store.open().missing
    store.path.write_bytes(b'{"version": 1, "nodes": []}')
    with pytest.raises(ProjectChangedError):
        store.save(_project("mine"))


_HOLDER = textwrap.dedent("""
    import sys
    from pathlib import Path
    from desktop.core.store import ProjectStore
    store = ProjectStore(Path(sys.argv[1]))
    result = store.open()
    print("read-only" if result.read_only else "locked", flush=True)
    sys.stdin.readline()
""")


def test_another_process_holding_the_lock(tmp_path: Path) -> None:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    store = ProjectStore(tmp_path)
    with subprocess.Popen([sys.executable, "-c", _HOLDER, str(tmp_path)], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, text=True, env=env) as holder:
        try:
            assert holder.stdout is not None and holder.stdin is not None
            assert holder.stdout.readline().strip() == "locked"
            result = store.open()
            assert result.read_only
            assert f"process {holder.pid}" in (result.read_only_reason or "")
            with pytest.raises(ProjectReadOnlyError):
                store.save(_project("blocked"))
            assert not store.path.exists()
            assert not store.take_over()
            holder.stdin.write("\n")
            holder.stdin.flush()
            assert holder.wait(timeout=20) == 0
        finally:
            if holder.poll() is None:
                holder.kill()
    assert store.take_over()  # the first one exited: take over
    store.save(_project("now mine"))
    assert ProjectStore(tmp_path).open().read_only


def test_a_killed_holder_frees_the_lock(tmp_path: Path) -> None:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    with subprocess.Popen([sys.executable, "-c", _HOLDER, str(tmp_path)], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, text=True, env=env) as holder:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "locked"
        assert ProjectStore(tmp_path).open().read_only
        holder.kill()  # SIGKILL: no cleanup code runs
        holder.wait()
    assert not ProjectStore(tmp_path).open().read_only


def test_a_folder_that_cannot_hold_a_lock_still_saves(tmp_path: Path) -> None:
    (tmp_path / ".chatnodes").write_text("a file where the folder should be")
    store = ProjectStore(tmp_path)
    result = store.open()
    assert not result.read_only
    store.save(_project("saved anyway"))
    assert ProjectStore(tmp_path).load().nodes[0].conversation.messages[0].content == "saved anyway"
