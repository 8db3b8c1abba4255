"""Imported conversations that are not opened: parked in ``Project.closed`` (``PARKED_KEY``), never
evicted by the ``MAX_CLOSED`` cap, counted as already imported, read by the search index."""

from __future__ import annotations

from pathlib import Path

from desktop.core.chat.types import ChatMessage
from desktop.core.importers import existing_imports, split_recent
from desktop.core.search._projectfile import read_project
from desktop.core.search._snapshot import snapshot_project
from desktop.core.store import (
    CLOSED_AT_KEY,
    MAX_CLOSED,
    PARKED_KEY,
    NodeState,
    Project,
    ProjectStore,
    is_parked,
    new_node_state,
)


def _node(i: int, ts: int, *, parked: bool = False, closed: bool = False) -> NodeState:
    node = new_node_state(f"Talk {i}", node_id=f"n-{i}")
    node.conversation.messages.append(ChatMessage(id=f"m-{i}", role="user", content=f"word{i}", ts=ts))
    if parked:
        node.extra[PARKED_KEY] = True
    if closed:
        node.extra[CLOSED_AT_KEY] = ts
    node.extra["imported"] = {"id": f"conv-{i}", "source": "chatgpt"}
    return node


def test_split_recent_opens_the_newest_and_parks_the_rest_in_order() -> None:
    nodes = [_node(i, ts) for i, ts in enumerate([5, 50, 1, 40, 30])]
    opened, parked = split_recent(nodes, 2)
    assert [n.title for n in opened] == ["Talk 1", "Talk 3"]  # export order kept
    assert [n.title for n in parked] == ["Talk 0", "Talk 2", "Talk 4"]
    assert all(is_parked(n) for n in parked) and not any(is_parked(n) for n in opened)


def test_the_store_never_evicts_parked_nodes(tmp_path: Path) -> None:
    closed = [_node(i, 1000 + i, closed=True) for i in range(MAX_CLOSED + 3)]
    parked = [_node(100 + i, 10 + i, parked=True) for i in range(MAX_CLOSED * 3)]
    with ProjectStore(tmp_path) as store:
        result = store.save(Project(nodes=[new_node_state()], closed=[*closed, *parked]))
        assert len(result.evicted) == 3  # only recently closed ones beyond the cap
        project = store.load()
    assert sum(map(is_parked, project.closed)) == MAX_CLOSED * 3
    assert len(project.closed) == MAX_CLOSED + MAX_CLOSED * 3
    assert "conv-150" in existing_imports(project)  # parked ones count as already imported


def test_the_index_reads_closed_and_parked_nodes(tmp_path: Path) -> None:
    project = Project(nodes=[_node(0, 1)], closed=[_node(1, 2, closed=True), _node(2, 3, parked=True)])
    with ProjectStore(tmp_path) as store:
        store.save(project)
    assert [n.title for n in read_project(tmp_path).nodes] == ["Talk 0", "Talk 1", "Talk 2"]
    assert [n.title for n in snapshot_project(tmp_path, project).nodes] == ["Talk 0", "Talk 1", "Talk 2"]


def test_the_command_line_import_opens_the_most_recent_and_parks_the_rest(tmp_path: Path) -> None:
    from io import StringIO

    from import_builders import linear_chatgpt, write_json

    from desktop.cli import main

    conversations = []
    for i in range(8):
        conv = linear_chatgpt(4, conv_id=f"c{i}", title=f"Chat {i}")
        conv["update_time"] = conv["create_time"] = 1_700_000_000 + i * 1000
        for node in conv["mapping"].values():
            if node.get("message"):
                node["message"]["create_time"] = 1_700_000_000 + i * 1000
        conversations.append(conv)
    export = write_json(tmp_path / "conversations.json", conversations)
    project = tmp_path / "project"
    out, err = StringIO(), StringIO()
    args = ["import", str(export), "--project", str(project), "--config-dir", str(tmp_path / "config")]
    assert main(args, out=out, err=err) == 0, err.getvalue()
    said = out.getvalue()
    assert "5 nodes open (the most recent); the other 3 are listed in the sidebar under Imported" in said
    with ProjectStore(project) as store:
        loaded = store.load()
    assert sorted(n.title for n in loaded.nodes) == ["Chat 3", "Chat 4", "Chat 5", "Chat 6", "Chat 7"]
    assert sorted(n.title for n in loaded.closed) == ["Chat 0", "Chat 1", "Chat 2"]
    assert all(is_parked(n) for n in loaded.closed)
    out = StringIO()
    assert main(args, out=out, err=StringIO()) == 0  # again: every one of the 8 is known, parked or not
    assert "Imported 0 conversations" in out.getvalue() and "Skipped 8 conversations" in out.getvalue()
