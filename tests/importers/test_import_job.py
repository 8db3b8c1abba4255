"""Importing into a project: through ProjectStore and its lock, re-imports, replace, cancel, worker thread."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest
from import_builders import branchy_chatgpt, branchy_claude, chatgpt_zip, deep_branching_chatgpt, write_json

from desktop.core.chat import versions as V
from desktop.core.importers import (
    ImportFailed,
    ImportJob,
    ImportOptions,
    ImportProgress,
    ProjectLockedError,
    convert_export,
    existing_imports,
    import_into_project,
    preview_export,
)
from desktop.core.store import ProjectStore, new_node_state


def export(tmp_path: Path, n: int = 3) -> Path:
    return chatgpt_zip(tmp_path / "export.zip", [branchy_chatgpt(f"c{i}", f"Chat {i}") for i in range(n)])


def test_import_into_a_new_project_and_load_it_back(tmp_path: Path) -> None:
    folder = tmp_path / "project"
    with ProjectStore(folder, history_cap_bytes=10 * 1024 * 1024) as store:
        outcome, saved = import_into_project(store, export(tmp_path))
    assert saved is not None and [i.title for i in outcome.report.imported] == ["Chat 0", "Chat 1", "Chat 2"]
    with ProjectStore(folder, history_cap_bytes=10 * 1024 * 1024) as store:
        project = store.load()
    assert [n.title for n in project.nodes] == ["Chat 0", "Chat 1", "Chat 2"]  # no empty "Chat" node first
    assert len({(n.x, n.y) for n in project.nodes}) == 3  # cascaded, not stacked
    node = project.nodes[0]
    assert node.extra["imported"] == {"source": "chatgpt", "id": "c0"}
    assert sorted((c.kind, c.k, c.n) for c in V.version_controls(node.conversation).values()) == [
        ("answer", 2, 2),
        ("edit", 1, 2),
        ("edit", 2, 2),
    ]
    assert not (Path(os.environ["CHATNODES_CONFIG_DIR"]) / "usage.jsonl").exists()  # the ledger is untouched


def test_a_deeply_branching_export_is_one_node_and_the_project_file_stays_shallow(tmp_path: Path) -> None:
    from desktop.core.files import MAX_DEPTH, depth_exceeds, parse_document

    levels = 150  # each level nests the next fork inside a stored version
    folder = tmp_path / "project"
    with ProjectStore(folder, history_cap_bytes=50 * 1024 * 1024) as store:
        path = write_json(tmp_path / "c.json", [deep_branching_chatgpt(levels)])
        outcome, saved = import_into_project(store, path)
    assert saved is not None
    (item,) = outcome.report.imported
    assert len(item.node_ids) == 1 and item.branches == levels + 1  # no "Deep (branch k)" nodes
    raw = (folder / "project.json").read_bytes()
    doc, _repaired = parse_document(raw)  # within MAX_DEPTH, or this raises
    assert not depth_exceeds(doc, 24) and 24 < MAX_DEPTH  # as shallow as with a single fork
    with ProjectStore(folder, history_cap_bytes=50 * 1024 * 1024) as store:
        loaded = store.open()
    assert loaded.error is None and not loaded.notices
    (node,) = loaded.value.nodes
    conv = node.conversation
    assert [m.content for m in conv.messages] == ["question 0", "regenerated answer 0"]
    for level in range(levels - 1):  # every level reachable: switch to the first answer, go down
        V.switch_fork(conv, conv.messages[2 * level].id, "answer", 1)
    assert conv.messages[-1].content == f"regenerated answer {levels - 1}"
    assert len(conv.messages) == 2 * levels


def test_an_existing_project_keeps_its_nodes(tmp_path: Path) -> None:
    folder = tmp_path / "project"
    with ProjectStore(folder) as store:
        project = store.open().value
        project.nodes[0].title = "Mine"
        store.save(project)
        import_into_project(store, write_json(tmp_path / "c.json", [branchy_claude()]))
    with ProjectStore(folder) as store:
        assert [n.title for n in store.load().nodes] == ["Mine", "Which town"]


def test_importing_the_same_file_again_skips_what_is_there_unless_replace(tmp_path: Path) -> None:
    folder = tmp_path / "project"
    path = export(tmp_path)
    with ProjectStore(folder) as store:
        import_into_project(store, path)
        first = {n.id for n in store.load().nodes}
        outcome, saved = import_into_project(store, path)
        assert outcome.report.imported == [] and saved is None
        assert [(s.title, s.reason) for s in outcome.report.skipped] == [
            ("Chat 0", "already imported"),
            ("Chat 1", "already imported"),
            ("Chat 2", "already imported"),
        ]
        assert {n.id for n in store.load().nodes} == first
        outcome, _ = import_into_project(store, path, options=ImportOptions(replace=True, only=["c1"]))
        assert [i.title for i in outcome.report.imported] == ["Chat 1"]
        assert [s.reason for s in outcome.report.skipped] == ["not selected", "not selected"]
        nodes = store.load().nodes
    assert [n.title for n in nodes] == ["Chat 0", "Chat 2", "Chat 1"]
    assert len(set(outcome.report.replaced_node_ids) & first) == 1
    assert not set(outcome.report.replaced_node_ids) & {n.id for n in nodes}


def test_a_window_holding_the_project_stops_the_import(tmp_path: Path) -> None:
    folder = tmp_path / "project"
    with ProjectStore(folder) as window:
        window.save(window.open().value)
        before = (folder / "project.json").read_bytes()
        with ProjectStore(folder) as cli, pytest.raises(ProjectLockedError, match="close it there"):
            import_into_project(cli, export(tmp_path))
        assert (folder / "project.json").read_bytes() == before


def test_an_unreadable_export_leaves_the_project_unchanged(tmp_path: Path) -> None:
    folder = tmp_path / "project"
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "chatnodes-export", "version": 2, "nodes": []}', encoding="utf-8")
    with ProjectStore(folder) as store:
        store.save(store.open().value)
        before = (folder / "project.json").read_bytes()
        with pytest.raises(ImportFailed, match="version 2 is not known"):
            import_into_project(store, bad)
    assert (folder / "project.json").read_bytes() == before


def test_cancel_keeps_whole_conversations_and_reads_no_more(tmp_path: Path) -> None:
    path = export(tmp_path, 5)
    seen: list[ImportProgress] = []
    outcome = convert_export(path, cancelled=lambda: len(seen) >= 2, progress=seen.append)
    assert outcome.report.cancelled and not outcome.report.ok
    assert [i.title for i in outcome.report.imported] == ["Chat 0", "Chat 1"]
    assert len(outcome.nodes) == 2 and all(len(n.conversation.messages) == 10 for n in outcome.nodes)


def test_the_job_runs_in_a_worker_thread_with_progress(tmp_path: Path) -> None:
    path = export(tmp_path, 4)
    progress: list[tuple[int, str, float | None, str]] = []
    done = threading.Event()
    job = ImportJob(
        path,
        on_progress=lambda p: progress.append(
            (p.conversations, p.title, p.fraction, threading.current_thread().name)
        ),
        on_done=lambda j: done.set(),
    )
    job.start()
    assert done.wait(60) and job.wait(0)
    assert job.error is None and job.outcome is not None
    assert [i.title for i in job.outcome.report.imported] == [f"Chat {i}" for i in range(4)]
    assert [p[:2] for p in progress] == [(i + 1, f"'Chat {i}'") for i in range(4)]
    assert {p[3] for p in progress} == {"chatnodes-import"}
    fractions = [p[2] for p in progress]
    assert all(f is not None for f in fractions) and fractions == sorted(fractions)  # type: ignore[type-var]


def test_a_job_reports_a_file_error_instead_of_raising(tmp_path: Path) -> None:
    job = ImportJob(tmp_path / "missing.zip")
    job.run()
    assert job.outcome is None and job.error is not None and "no such file" in job.error


def test_a_cancelled_job_stops(tmp_path: Path) -> None:
    job = ImportJob(export(tmp_path, 3))
    job.cancel()
    job.run()
    assert job.cancelled and job.outcome is not None and job.outcome.report.cancelled
    assert job.outcome.nodes == []


def test_preview_marks_what_the_project_already_has(tmp_path: Path) -> None:
    path = export(tmp_path, 2)
    project_nodes = convert_export(path, options=ImportOptions(only=["c0"])).nodes
    from desktop.core.store import Project

    project = Project(nodes=[new_node_state(), *project_nodes])
    existing = existing_imports(project)
    preview = preview_export(path, existing=existing)
    assert [(e.title, e.messages, e.branches) for e in preview.entries] == [
        ("Chat 0", 17, 4),
        ("Chat 1", 17, 4),
    ]
    assert preview.already_imported == {"c0"}
    assert preview.entries[0].created_at == 1_700_000_000_000
