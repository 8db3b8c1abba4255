"""Versions never make a project unreadable: the JSON depth does not grow with use, files of the
older nested form are read whatever their depth and migrated on the first save."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from versions_helpers import FLAT_DEPTH, json_depth, state

from desktop.core.chat.conversation import Conversation, append_message
from desktop.core.chat.types import Usage
from desktop.core.chat.versions import (
    ANSWERS_KEY,
    TAILS_KEY,
    all_responses,
    regenerate,
    responses_in,
    stored_versions,
    versions_at,
)
from desktop.core.store import (
    PRE_FLAT_SUFFIX,
    HistoryArchive,
    NodeState,
    Project,
    ProjectStore,
    apply_trim,
    new_node_state,
)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "projects"
def save(store: ProjectStore, node: NodeState) -> None:
    """Save as the app does: the node applies what the cap trimmed."""
    result = store.save(Project(nodes=[node]))
    for info in result.trimmed.values():
        apply_trim(node.conversation, info)


def regenerate_last_to_first(store: ProjectStore, answers: int) -> NodeState:
    """``answers`` exchanges, then each answer regenerated once from the last to the first, saving
    after each step (the issue's reproduction)."""
    node = new_node_state(node_id="n-deep")
    conv = node.conversation
    for i in range(answers):
        append_message(conv, "user", f"q{i}")
        append_message(conv, "assistant", f"a{i}").usage = Usage(3, 2)
    save(store, node)
    for i in reversed(range(answers)):
        old = next(m for m in conv.messages if m.content == f"a{i}")
        regenerate(conv, old.id)
        append_message(conv, "assistant", f"b{i}").usage = Usage(3, 2)
        save(store, node)
    return node


def reopen(folder: Path) -> tuple[Conversation, tuple[str, ...]]:
    with ProjectStore(folder) as store:
        result = store.open()
        assert result.error is None, result.notices
        return result.value.nodes[0].conversation, result.notices


@pytest.mark.parametrize("answers", [31, 40])
def test_every_answer_regenerated_last_to_first_reopens_whole(tmp_path: Path, answers: int) -> None:
    with ProjectStore(tmp_path) as store:
        node = regenerate_last_to_first(store, answers)
    loaded, notices = reopen(tmp_path)
    assert not notices
    assert state(loaded) == state(node.conversation)
    assert len(all_responses(loaded)) == 2 * answers
    assert [m.content for m in loaded.messages] == ["q0", "b0"]
    assert not list(tmp_path.glob("project.json.corrupt-*"))


def test_the_file_is_as_deep_with_sixty_versions_as_with_two(tmp_path: Path) -> None:
    depths = []
    for answers in (2, 60):
        folder = tmp_path / str(answers)
        with ProjectStore(folder) as store:
            regenerate_last_to_first(store, answers)
        depths.append(json_depth(json.loads((folder / "project.json").read_bytes())))
    assert depths[0] == depths[1] <= FLAT_DEPTH


def test_the_active_path_owns_a_flat_table_of_refs(tmp_path: Path) -> None:
    with ProjectStore(tmp_path) as store:
        regenerate_last_to_first(store, 3)
    raw = json.loads((tmp_path / "project.json").read_bytes())
    first = raw["nodes"][0]["data"]["conversation"]["messages"][0]
    refs = first[ANSWERS_KEY]["others"]
    assert [type(r) for r in refs] == [str]
    table = first[TAILS_KEY]
    assert sorted(table) == sorted({refs[0], *(ref for tail in table.values() for m in tail
                                               for ref in m.get(ANSWERS_KEY, {}).get("others", []))})
    assert all(TAILS_KEY not in m for tail in table.values() for m in tail)  # tables only on the path


# ---------------------------------------------------------------------------------------------
# Files of the older nested form


def test_a_nested_file_reads_as_before_and_is_migrated_on_the_first_save(tmp_path: Path) -> None:
    original = (FIXTURES / "nested-mixed.project.json").read_bytes()
    (tmp_path / "project.json").write_bytes(original)
    expected = json.loads((FIXTURES / "nested-mixed.expected.json").read_bytes())
    store = ProjectStore(tmp_path)
    result = store.open()
    assert result.error is None and not result.notices
    loaded = state(result.value.nodes[0].conversation)
    assert {k: loaded[k] for k in expected} == expected
    assert (tmp_path / "project.json").read_bytes() == original  # opening writes nothing
    assert not list(tmp_path.glob(f"project.json.{PRE_FLAT_SUFFIX}*"))

    store.save(result.value)
    assert (tmp_path / f"project.json.{PRE_FLAT_SUFFIX}").read_bytes() == original
    saved = json.loads((tmp_path / "project.json").read_bytes())
    assert json_depth(saved) <= FLAT_DEPTH < json_depth(json.loads(original))
    store.save(result.value)  # kept once, not at every save
    assert len(list(tmp_path.glob(f"project.json.{PRE_FLAT_SUFFIX}*"))) == 1
    store.release()

    again, notices = reopen(tmp_path)
    assert not notices
    assert {k: state(again)[k] for k in expected} == expected


def test_a_nested_file_too_deep_for_the_old_loader_opens_whole(tmp_path: Path) -> None:
    """Written by the old app (40 answers regenerated last to first), refused by its own loader."""
    shutil.copy(FIXTURES / "nested-forty.project.json", tmp_path / "project.json")
    assert json_depth(json.loads((tmp_path / "project.json").read_bytes())) > 128
    conv, notices = reopen(tmp_path)
    assert not notices
    assert [m.content for m in conv.messages] == ["q0", "b0"]
    assert len(all_responses(conv)) == 80
    assert versions_at(conv, conv.messages[1].id) == (2, 2)
    assert len(list(stored_versions(conv.messages))) == 40


def test_a_nested_file_recovered_from_the_backup_is_kept_before_migrating(tmp_path: Path) -> None:
    original = (FIXTURES / "nested-mixed.project.json").read_bytes()
    (tmp_path / "project.json.bak").write_bytes(original)
    (tmp_path / "project.json").write_bytes(b"{not json")
    with ProjectStore(tmp_path) as store:
        result = store.open()
        assert result.recovered_from == tmp_path / "project.json.bak"
        store.save(result.value)
    assert (tmp_path / f"project.json.{PRE_FLAT_SUFFIX}").read_bytes() == original


def test_deep_nesting_outside_versions_is_still_refused(tmp_path: Path) -> None:
    node = new_node_state(node_id="n1")
    with ProjectStore(tmp_path) as store:
        store.save(Project(nodes=[node]))
    raw = json.loads((tmp_path / "project.json").read_bytes())
    deep: list[Any] = []
    for _ in range(200):
        deep = [deep]
    raw["nodes"][0]["data"]["conversation"]["messages"] = [
        {"id": "u", "role": "user", "content": "q", "ts": 1, "stopped": False, "junk": deep}
    ]
    (tmp_path / "project.json").write_text(json.dumps(raw), encoding="utf-8")
    with ProjectStore(tmp_path) as store:
        result = store.open()
    assert result.error is not None and "nested more than 128 levels" in result.error.reason
    assert result.moved_aside is not None


def test_fake_records_nested_past_what_json_can_parse_are_refused_cleanly(tmp_path: Path) -> None:
    head = '{"version":1,"nodes":[{"id":"n1","data":{"conversation":{"v":2,"id":"c","createdAt":1,"messages":'
    msg_open = '[{"id":"u","role":"user","content":"q","ts":1,"answerVersions":{"active":1,"others":['
    levels = 20_000
    text = head + msg_open * levels + "]}}]" * levels + "}}}]}"
    (tmp_path / "project.json").write_text(text, encoding="utf-8")
    with ProjectStore(tmp_path) as store:
        result = store.open()
    assert result.error is not None and "nested too deeply" in result.error.reason
    assert [len(n.conversation.messages) for n in result.value.nodes] == [0]  # a new project


def test_a_record_nested_inside_an_unreadable_record_is_not_followed(tmp_path: Path) -> None:
    """Only readable records are flattened; a malformed one keeps its depth and counts as such."""
    inner: list[Any] = [{"id": "a", "role": "assistant", "content": "r", "ts": 1}]
    for i in range(40):
        inner = [{"id": f"u{i}", "role": "user", "content": "q", "ts": 1,
                  ANSWERS_KEY: {"active": 1, "others": [inner, 42]}}]
    raw = {"version": 1, "nodes": [{"id": "n1", "data": {"conversation": {
        "v": 2, "id": "c", "createdAt": 1, "messages": inner}}}]}
    (tmp_path / "project.json").write_text(json.dumps(raw), encoding="utf-8")
    with ProjectStore(tmp_path) as store:
        result = store.open()
    assert result.error is not None and "nested more than 128 levels" in result.error.reason


# ---------------------------------------------------------------------------------------------
# The cap and the archive


def test_the_cap_archives_a_carrier_with_its_table_and_every_line_stays_flat(tmp_path: Path) -> None:
    with ProjectStore(tmp_path) as store:
        node = regenerate_last_to_first(store, 30)  # every version now hangs under the first question
        store.history_cap_bytes = 2048
        for i in range(3):
            append_message(node.conversation, "user", f"later {i}")
            append_message(node.conversation, "assistant", "x" * 600).usage = Usage(3, 2)
            save(store, node)
        archived = store.read_archive(node.id)
    assert archived[0].content == "q0" and TAILS_KEY in archived[0].extra
    lines = (tmp_path / ".chatnodes" / "archive" / f"{node.id}.jsonl").read_bytes().splitlines()
    assert lines and max(json_depth(json.loads(line)) for line in lines) <= FLAT_DEPTH
    loaded, _ = reopen(tmp_path)
    ids = {m.id for m in all_responses(loaded)} | {m.id for m in responses_in(archived)}
    assert len(ids) == 63  # no version lost: each is in project.json or in the archive
    assert state(loaded) == state(node.conversation)


def test_archive_lines_of_the_older_nested_form_are_still_read(tmp_path: Path) -> None:
    raw = json.loads((FIXTURES / "nested-forty.project.json").read_bytes())
    carrier = raw["nodes"][0]["data"]["conversation"]["messages"][0]
    archive = HistoryArchive(tmp_path)
    archive.dir.mkdir(parents=True)
    archive.path("n-forty").write_text(json.dumps(carrier) + "\n", encoding="utf-8")
    read = archive.read("n-forty")
    assert read.bad_lines == 0
    assert len(responses_in(read.messages)) == 79  # every version under q0 (b0 was on the path)
    assert len(list(stored_versions(read.messages))) == 40
