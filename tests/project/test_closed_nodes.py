"""Closed nodes in ``project.json`` (issue 25 #1): kept whole, the last 20, older ones archived."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from desktop.core.chat.conversation import append_message
from desktop.core.config import GrantStore
from desktop.core.importers import convert_export
from desktop.core.store import (
    CLOSED_ARCHIVE_DIR,
    CLOSED_AT_KEY,
    MAX_CLOSED,
    NodeState,
    Project,
    ProjectStore,
    new_node_state,
    project_from_dict,
    project_to_json,
)


def _node(title: str, *texts: str, x: int = 10) -> NodeState:
    node = new_node_state(title, x=x, y=20, width=430, height=390, model="m-1", provider="p-1",
                          system="be brief")
    for i, text in enumerate(texts):
        append_message(node.conversation, "user" if i % 2 == 0 else "assistant", text)
    return node


def _closed(title: str, when: int, *texts: str) -> NodeState:
    node = _node(title, *texts)
    node.extra[CLOSED_AT_KEY] = when
    return node


def test_closed_nodes_round_trip_beside_nodes() -> None:
    open_node = _node("Open", "hi", "hello")
    gone = _closed("Gone", 1_700_000_000_000, "question", "answer")
    text = project_to_json(Project(nodes=[open_node], closed=[gone]))
    raw = json.loads(text)
    assert [n["id"] for n in raw["nodes"]] == [open_node.id]
    assert [n["id"] for n in raw["closed"]] == [gone.id]
    assert raw["closed"][0]["closedAt"] == 1_700_000_000_000
    back = project_from_dict(raw)
    assert [n.id for n in back.nodes] == [open_node.id]
    (again,) = back.closed
    assert (again.title, again.x, again.y, again.width, again.height) == ("Gone", 10, 20, 430, 390)
    assert (again.model, again.provider, again.system) == ("m-1", "p-1", "be brief")
    assert [m.content for m in again.conversation.messages] == ["question", "answer"]
    assert again.extra[CLOSED_AT_KEY] == 1_700_000_000_000
    assert "closed" not in back.extra


def test_a_file_without_closed_nodes_loads_and_is_written_without_the_key() -> None:
    raw = json.loads(project_to_json(Project(nodes=[_node("Only")])))
    assert "closed" not in raw
    assert project_from_dict(raw).closed == []


def test_an_unknown_top_level_key_is_kept_as_an_older_build_keeps_closed() -> None:
    # An older build reads "closed" the way this one reads any key it does not know: kept in
    # ``extra`` and written back, so opening the project there does not drop the closed nodes.
    raw = json.loads(project_to_json(Project(nodes=[_node("Open")])))
    raw["closedLater"] = [{"id": "x", "title": "kept verbatim"}]
    back = project_from_dict(raw)
    assert json.loads(project_to_json(back))["closedLater"] == raw["closedLater"]


def test_closed_problems_are_named_and_ids_are_unique_across_both_lists() -> None:
    node = _node("Open")
    raw = json.loads(project_to_json(Project(nodes=[node], closed=[_closed("Gone", 1)])))
    raw["closed"][0]["id"] = node.id
    with pytest.raises(ValueError, match=r"closed\[0\]\.id: .* used twice"):
        project_from_dict(raw)
    raw["closed"] = {"not": "a list"}
    with pytest.raises(ValueError, match="closed: must be a list"):
        project_from_dict(raw)


def test_the_store_keeps_the_last_twenty_and_archives_older_ones(tmp_path: Path) -> None:
    closed = [_closed(f"Closed {i}", 10_000 - i, f"question {i}", f"answer {i}")
              for i in range(MAX_CLOSED + 2)]
    with ProjectStore(tmp_path) as store:
        store.open()
        result = store.save(Project(nodes=[_node("Open")], closed=closed))
        assert result.evicted == (closed[-2].id, closed[-1].id)
        again = store.open().value
    assert [n.id for n in again.closed] == [n.id for n in closed[:MAX_CLOSED]]  # most recent first
    files = sorted((tmp_path / CLOSED_ARCHIVE_DIR).iterdir())
    assert [f.name for f in files] == sorted(f"{n.id}.json" for n in closed[-2:])
    # Each archived node is a Chat Nodes export: the import brings it back whole.
    outcome = convert_export(tmp_path / CLOSED_ARCHIVE_DIR / f"{closed[-1].id}.json")
    (node,) = outcome.nodes
    assert node.title == f"Closed {MAX_CLOSED + 1}" and node.system == "be brief"
    assert [m.content for m in node.conversation.messages] == [f"question {MAX_CLOSED + 1}",
                                                                f"answer {MAX_CLOSED + 1}"]


def test_an_archive_that_cannot_be_written_keeps_the_closed_node(tmp_path: Path) -> None:
    closed = [_closed(f"Closed {i}", 100 - i, "q") for i in range(MAX_CLOSED + 1)]
    (tmp_path / CLOSED_ARCHIVE_DIR).parent.mkdir(parents=True)
    (tmp_path / CLOSED_ARCHIVE_DIR).write_text("a file where the folder should be", encoding="utf-8")
    with ProjectStore(tmp_path) as store:
        store.open()
        assert store.save(Project(nodes=[], closed=closed)).evicted == ()
        assert [n.id for n in store.open().value.closed] == [n.id for n in closed]


def test_closed_nodes_are_capped_and_keep_their_grants(tmp_path: Path) -> None:
    config = tmp_path / "config"
    big = _closed("Big", 5, *(f"message {i} " + "x" * 600 for i in range(6)))
    big.always_allow = ["write_file"]
    with ProjectStore(tmp_path / "p", history_cap_bytes=1024, grants=GrantStore(config)) as store:
        store.open()
        result = store.save(Project(nodes=[], closed=[big]))
        assert big.id in result.trimmed  # capped like an open node: the oldest went to the archive
        assert store.read_archive(big.id)
        again = store.open().value.closed[0]
        assert again.always_allow == ["write_file"]  # the grant is still there to bring back
        ids = {m.id for m in store.read_archive(big.id)} | {m.id for m in again.conversation.messages}
        assert {m.id for m in big.conversation.messages} <= ids  # nothing lost
        # Deleted for good: saved without it, its grants and its archive go.
        store.save(Project(nodes=[], closed=[]))
        assert store.delete_node_history(big.id)
        assert not store.archive_path(big.id).exists()
    assert GrantStore(config).tools(tmp_path / "p", big.id) == []
