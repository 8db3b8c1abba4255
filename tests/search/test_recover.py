"""A missing, stale or damaged index is replaced and rebuilt; an unusable data folder is reported
("search unavailable: <reason>"), never raised as anything else."""

from __future__ import annotations

import os
import sqlite3
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from search_helpers import msg, node, save

from desktop.core.files import FileLock
from desktop.core.search import (
    INDEX_FILE,
    SCHEMA_VERSION,
    IndexDamaged,
    SearchIndex,
    SearchQuery,
    SearchUnavailable,
    default_index_dir,
)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "proj"
    messages = [msg(f"m{i}", "user", f"hello pelican number {i}", i) for i in range(300)]
    save(folder, node("n1", "Chat", messages))
    return folder


@pytest.fixture
def read_only_dir(tmp_path: Path) -> Iterator[Path]:
    """A folder nothing can be created in: chmod for a normal user; for root (which ignores the mode),
    a folder of Linux's read-only /proc file system."""
    if os.geteuid() != 0:
        folder = tmp_path / "ro"
        folder.mkdir()
        folder.chmod(0o500)
        try:
            yield folder
        finally:
            folder.chmod(0o700)
        return
    if not sys.platform.startswith("linux"):
        pytest.skip("running as root outside Linux: no read-only folder to test with")
    folder = Path("/proc/self")
    with pytest.raises(OSError):
        (folder / "probe").write_bytes(b"x")
    yield folder


def test_the_default_folder_is_the_data_folder_never_a_project(data_dir: Path) -> None:
    assert default_index_dir() == data_dir / "search"
    assert default_index_dir({}).name == "search" and "chatnodes" in str(default_index_dir({}))


def test_a_file_that_is_not_a_database_is_kept_aside_and_rebuilt(tmp_path: Path, project: Path) -> None:
    folder = tmp_path / "index"
    folder.mkdir()
    (folder / INDEX_FILE).write_bytes(b"this is not an SQLite database, just garbage\n" * 100)
    index = SearchIndex(folder)
    assert index.open() == "the index was damaged"
    kept = list(folder.glob(f"{INDEX_FILE}.corrupt-*"))
    assert len(kept) == 1 and kept[0].read_bytes().startswith(b"this is not")
    index.build([project])
    assert len(index.search(SearchQuery("pelican", limit=500)).hits) == 300
    index.close()


def test_an_index_of_another_schema_version_is_rebuilt(tmp_path: Path, project: Path) -> None:
    folder = tmp_path / "index"
    index = SearchIndex(folder)
    index.open()
    index.build([project])
    index.close()
    conn = sqlite3.connect(folder / INDEX_FILE)
    conn.execute(f"PRAGMA user_version={SCHEMA_VERSION + 1}")
    conn.close()
    index = SearchIndex(folder)
    assert index.open() == f"the index was made by another version (schema {SCHEMA_VERSION + 1}, now " \
                           f"{SCHEMA_VERSION})"
    assert index.search(SearchQuery("pelican")).hits == ()
    index.build([project])
    assert index.search(SearchQuery("pelican")).hits
    index.close()


def test_an_interrupted_build_is_resumed(tmp_path: Path, project: Path) -> None:
    index = SearchIndex(tmp_path / "index")
    index.open()
    steps = index.build_steps([project])
    next(steps)
    next(steps)  # one node indexed, then the app quits
    index.close()
    index = SearchIndex(tmp_path / "index")
    assert index.open() == "the last build did not finish"
    index.close()


def test_an_index_damaged_while_in_use_is_replaced(tmp_path: Path, project: Path) -> None:
    folder = tmp_path / "index"
    index = SearchIndex(folder)
    index.open()
    index.build([project])
    index.close()
    conn = sqlite3.connect(folder / INDEX_FILE)
    page_size = conn.execute("PRAGMA page_size").fetchone()[0]
    root = conn.execute("SELECT rootpage FROM sqlite_schema WHERE name='messages'").fetchone()[0]
    conn.close()
    with open(folder / INDEX_FILE, "r+b") as fh:  # the messages table's root page: garbage
        fh.seek((root - 1) * page_size)
        fh.write(os.urandom(page_size))
    index = SearchIndex(folder)
    assert index.open() is None  # the header and the small tables still read fine
    with pytest.raises(IndexDamaged):
        index.index_folder(project, force=True)
    assert index.rebuild_reason == "the index was damaged"
    assert len(list(folder.glob(f"{INDEX_FILE}.corrupt-*"))) == 1
    index.build([project])
    assert len(index.search(SearchQuery("pelican", limit=500)).hits) == 300
    index.close()


def test_a_read_only_data_folder_is_reported(read_only_dir: Path) -> None:
    index = SearchIndex(read_only_dir / "search")
    with pytest.raises(SearchUnavailable, match="cannot be used|not writable"):
        index.open()
    index = SearchIndex(read_only_dir)
    with pytest.raises(SearchUnavailable, match=f"the data folder {read_only_dir} is not writable"):
        index.open()


def test_a_data_folder_that_is_a_file_is_reported(tmp_path: Path) -> None:
    blocker = tmp_path / "data"
    blocker.write_text("a file where the folder should be")
    with pytest.raises(SearchUnavailable, match="cannot be used"):
        SearchIndex(blocker / "search").open()


def test_a_locked_index_is_reported_and_works_again_once_free(tmp_path: Path, project: Path) -> None:
    folder = tmp_path / "index"
    index = SearchIndex(folder, busy_ms=50)
    index.open()
    other = sqlite3.connect(folder / INDEX_FILE, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another app instance writing, for longer than we wait
    with pytest.raises(SearchUnavailable, match="locked by another program"):
        index.index_folder(project, force=True)
    assert index.search(SearchQuery("pelican")).hits == ()  # reading still works
    other.execute("ROLLBACK")
    other.close()
    index.index_folder(project)
    assert index.search(SearchQuery("pelican")).hits
    index.close()
    holder = FileLock(folder / "index.lock")
    holder.try_acquire()  # another instance is opening (or replacing) the file
    try:
        with pytest.raises(SearchUnavailable, match="locked by another program"):
            SearchIndex(folder, busy_ms=50).open()
    finally:
        holder.release()
