"""``RecentProjects``: every project the user opened, most recent first, in the config folder."""

from __future__ import annotations

import itertools
import json
import shutil
from pathlib import Path

from desktop.core.store import MAX_ENTRIES, RECENT_FILE, RecentProject, RecentProjects


def _project(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "project.json").write_text('{"version": 1, "nodes": []}', encoding="utf-8")
    return folder


def _recent(config: Path) -> RecentProjects:
    ticks = itertools.count(1_000)
    return RecentProjects(config, clock=lambda: next(ticks))


def test_most_recent_first_each_folder_once_resolved(tmp_path: Path) -> None:
    a, b = _project(tmp_path / "a"), _project(tmp_path / "b")
    recent = _recent(tmp_path / "config")
    recent.add(a)
    recent.add(b)
    recent.add(tmp_path / "x" / ".." / "a")  # the same folder, written another way
    assert recent.entries() == [RecentProject(a.resolve(), 1_002), RecentProject(b.resolve(), 1_001)]
    assert recent.folders() == [a.resolve(), b.resolve()]
    assert recent.entries(limit=1)[0].path == a.resolve()
    data = json.loads((tmp_path / "config" / RECENT_FILE).read_text(encoding="utf-8"))
    assert data["version"] == 1
    assert [p["path"] for p in data["projects"]] == [str(a.resolve()), str(b.resolve())]


def test_missing_folders_are_marked_left_out_and_pruned(tmp_path: Path) -> None:
    a, b = _project(tmp_path / "a"), _project(tmp_path / "b")
    recent = _recent(tmp_path / "config")
    recent.add(a)
    recent.add(b)
    shutil.rmtree(b)
    assert [e.exists for e in recent.entries()] == [False, True]
    assert recent.folders() == [a.resolve()]
    assert recent.folders(existing_only=False) == [b.resolve(), a.resolve()]
    assert recent.prune() == [b.resolve()]
    assert recent.folders(existing_only=False) == [a.resolve()]
    assert recent.remove(a) and not recent.remove(a)
    assert recent.entries() == []


def test_two_instances_never_drop_each_others_entries(tmp_path: Path) -> None:
    a, b = _project(tmp_path / "a"), _project(tmp_path / "b")
    one, two = _recent(tmp_path / "config"), _recent(tmp_path / "config")
    one.entries()
    two.entries()
    one.add(a)
    two.add(b)  # re-reads the file under the lock before writing
    assert {e.path for e in one.entries()} == {a.resolve(), b.resolve()}


def test_a_bad_file_is_kept_aside_and_the_list_starts_again(tmp_path: Path) -> None:
    config = tmp_path / "config"
    config.mkdir()
    (config / RECENT_FILE).write_text("{not json", encoding="utf-8")
    recent = _recent(config)
    assert recent.entries() == []
    assert recent.last_load is not None and recent.last_load.moved_aside is not None
    assert recent.last_load.moved_aside.read_text(encoding="utf-8") == "{not json"
    recent.add(_project(tmp_path / "a"))
    assert len(recent.entries()) == 1


def test_the_list_is_bounded(tmp_path: Path) -> None:
    recent = _recent(tmp_path / "config")
    for i in range(MAX_ENTRIES + 3):
        recent.add(tmp_path / f"p{i}")
    entries = recent.entries()
    assert len(entries) == MAX_ENTRIES and entries[0].path == (tmp_path / f"p{MAX_ENTRIES + 2}").resolve()
