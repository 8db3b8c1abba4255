"""Versions in project.json and the history archive: saved, reloaded, capped and archived, never lost."""

from __future__ import annotations

import json
from pathlib import Path

from desktop.core.chat.conversation import append_message
from desktop.core.chat.versions import all_responses, regenerate, responses_in, switch_version, versions_at
from desktop.core.store import Project, ProjectStore, apply_trim, new_node_state


def _node_with_versions(exchanges: int, size: int = 600):
    node = new_node_state(node_id="n-v")
    conv = node.conversation
    for i in range(exchanges):
        append_message(conv, "user", f"q{i} " + "x" * size)
        first = append_message(conv, "assistant", f"a{i} " + "y" * size)
        regenerate(conv, first.id)
        append_message(conv, "assistant", f"b{i} " + "z" * size)
    return node


def test_versions_are_saved_and_reloaded_with_the_chosen_version(tmp_path: Path) -> None:
    store = ProjectStore(tmp_path)
    node = _node_with_versions(2)
    conv = node.conversation
    switch_version(conv, conv.messages[3].id, 1)
    store.save(Project(nodes=[node]))
    raw = json.loads((tmp_path / "project.json").read_text(encoding="utf-8"))
    messages = raw["nodes"][0]["data"]["conversation"]["messages"]
    assert [m["content"][:2] for m in messages] == ["q0", "b0", "q1", "a1"]  # the active path
    loaded = store.load().nodes[0].conversation
    assert [m.content[:2] for m in loaded.messages] == ["q0", "b0", "q1", "a1"]
    assert versions_at(loaded, loaded.messages[1].id) == (2, 2)
    assert versions_at(loaded, loaded.messages[3].id) == (1, 2)
    assert sorted(m.id for m in all_responses(loaded)) == sorted(m.id for m in all_responses(conv))


def test_the_cap_archives_versions_with_their_exchange(tmp_path: Path) -> None:
    store = ProjectStore(tmp_path, history_cap_bytes=4 * 1024)
    node = _node_with_versions(4)
    before = {m.id for m in all_responses(node.conversation)}
    result = store.save(Project(nodes=[node]))
    assert result.archived.get("n-v")
    archived = store.read_archive("n-v")
    loaded = store.load().nodes[0].conversation
    after = {m.id for m in all_responses(loaded)} | {m.id for m in responses_in(archived)}
    assert after == before  # no version was dropped: the trimmed ones are in the archive
    assert any(m.content.startswith("a0") for m in responses_in(archived))
    kept_users = [m for m in loaded.messages if m.role == "user"]
    assert kept_users and all(versions_at(loaded, m.id) == (1, 1) for m in kept_users)
    kept_answers = [m for m in loaded.messages if m.role == "assistant"]
    assert all(versions_at(loaded, m.id) == (2, 2) for m in kept_answers)  # kept with their fork point
    live = node.conversation
    assert apply_trim(live, result.trimmed["n-v"])
    assert {m.id for m in all_responses(live)} == {m.id for m in all_responses(loaded)}
