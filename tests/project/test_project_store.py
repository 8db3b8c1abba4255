"""project.json: format, round-trips, unknown keys, corrupt files kept aside, .bak recovery, atomicity."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from desktop.core.chat.conversation import (
    append_message,
    create_conversation,
    serialize_conversation,
)
from desktop.core.chat.types import ToolCall, Usage
from desktop.core.config import GrantStore
from desktop.core.store import (
    NodeState,
    Project,
    ProjectChangedError,
    ProjectCorruptError,
    ProjectError,
    ProjectStore,
    new_node_state,
    new_project,
    project_from_dict,
)
from desktop.core.store import _project as project_module


def _chat_node(node_id: str = "n-1", *, messages: int = 2) -> NodeState:
    node = new_node_state("Research", x=10, y=20, width=500, height=400, model="gpt-4.1", provider="openai",
                          system="Be brief.", node_id=node_id)
    node.always_allow = ["read_file"]
    for i in range(messages // 2):
        append_message(node.conversation, "user", f"question {i} — ü")
        reply = append_message(node.conversation, "assistant", f"answer {i}")
        reply.usage = Usage(10, 5, cache_read_tokens=2)
        reply.model = "gpt-4.1"
        reply.tool_calls = [ToolCall("c1", "read_file", '{"path": "a"}', "x", False, "done")]
    return node


def test_missing_file_gives_one_empty_chat_node(tmp_path: Path) -> None:
    store = ProjectStore(tmp_path / "proj")
    project = store.load()
    assert len(project.nodes) == 1
    node = project.nodes[0]
    assert node.kind == "chat" and node.conversation.messages == [] and node.id
    assert not store.path.exists() and not store.folder.exists()
    assert store.load_or_recover()[1] is None


def test_round_trip(tmp_path: Path) -> None:
    grants = GrantStore(tmp_path / "config")
    store = ProjectStore(tmp_path / "p", grants=grants)
    project = Project(nodes=[_chat_node("n-1", messages=4), _chat_node("n-2")])
    assert store.save(project).archived == {}
    loaded = ProjectStore(tmp_path / "p", grants=grants).load()
    assert loaded == project  # always_allow came back from the user's grants, not from the file


def test_written_format_matches_design(tmp_path: Path) -> None:
    grants = GrantStore(tmp_path / "config")
    store = ProjectStore(tmp_path, grants=grants)
    node = _chat_node()
    store.save(Project(nodes=[node]))
    raw = json.loads(store.path.read_text(encoding="utf-8"))
    assert list(raw) == ["version", "nodes"] and raw["version"] == 1
    (n,) = raw["nodes"]
    assert list(n) == ["id", "kind", "title", "x", "y", "width", "height", "data"]
    assert (n["id"], n["kind"], n["title"], n["x"], n["y"], n["width"], n["height"]) == (
        "n-1", "chat", "Research", 10, 20, 500, 400,
    )
    data = n["data"]
    assert list(data) == ["conversation", "model", "provider", "system", "always_allow"]
    assert isinstance(data["conversation"], dict)  # embedded as an object, not a string
    assert data["conversation"] == json.loads(serialize_conversation(node.conversation))
    assert (data["model"], data["provider"], data["system"], data["always_allow"]) == (
        "gpt-4.1", "openai", "Be brief.", [],  # a project file never carries a grant
    )
    assert grants.tools(tmp_path, "n-1") == ["read_file"]
    assert "ü" in store.path.read_text(encoding="utf-8")  # UTF-8 kept, not \\u-escaped


def test_unknown_keys_are_kept_at_every_level(tmp_path: Path) -> None:
    store = ProjectStore(tmp_path)
    conv = create_conversation()
    append_message(conv, "user", "hi")
    raw = {
        "version": 1,
        "theme": {"dark": True},
        "nodes": [
            {"id": "a", "kind": "chat", "title": "T", "x": 1, "y": 2, "width": 300, "height": 200,
             "pinned": True,
             "data": {"conversation": json.loads(serialize_conversation(conv)), "model": None,
                      "provider": None, "system": None, "always_allow": [], "color": "#fff"}},
            {"id": "b", "kind": "sketch", "title": "S", "x": 0, "y": 0, "width": 10, "height": 10,
             "data": {"strokes": [[1, 2], [3, 4]]}},
        ],
    }
    store.path.write_text(json.dumps(raw), encoding="utf-8")
    project = store.load()
    assert project.extra == {"theme": {"dark": True}}
    assert project.nodes[0].extra == {"pinned": True}
    assert project.nodes[0].data_extra == {"color": "#fff"}
    assert project.nodes[1].kind == "sketch" and project.nodes[1].data_extra == {"strokes": [[1, 2], [3, 4]]}
    store.save(project)
    written = json.loads(store.path.read_text(encoding="utf-8"))
    assert written["theme"] == raw["theme"]
    assert written["nodes"][0]["pinned"] is True
    assert written["nodes"][0]["data"]["color"] == "#fff"
    assert written["nodes"][1] == raw["nodes"][1]
    assert written["nodes"][0]["data"]["conversation"] == raw["nodes"][0]["data"]["conversation"]


def test_v1_conversation_and_string_conversation_load() -> None:
    v1 = {"v": 1, "messages": [{"id": "m1", "role": "user", "content": "hi", "ts": 1}]}
    for conv in (v1, json.dumps(v1)):
        project = project_from_dict(
            {"version": 1, "nodes": [{"id": "a", "data": {"conversation": conv}}]}
        )
        node = project.nodes[0]
        assert [m.content for m in node.conversation.messages] == ["hi"]
        assert (node.kind, node.title, node.width > 0) == ("chat", "Chat", True)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ([], "the file must hold a JSON object"),
        ({"version": 2, "nodes": []}, "version: 2 is not supported"),
        ({"version": 1}, "nodes: must be a list"),
        ({"version": 1, "nodes": [1]}, "nodes[0]: must be an object"),
        ({"version": 1, "nodes": [{"id": ""}]}, "nodes[0].id"),
        ({"version": 1, "nodes": [{"id": "a", "x": "1"}]}, "nodes[0].x: must be a number"),
        ({"version": 1, "nodes": [{"id": "a", "width": 0}]}, "nodes[0].width: must be positive"),
        ({"version": 1, "nodes": [{"id": "a", "data": []}]}, "nodes[0].data: must be an object"),
        ({"version": 1, "nodes": [{"id": "a"}, {"id": "a"}]}, "nodes[1].id: 'a' is used twice"),
        ({"version": 1, "nodes": [{"id": "a", "data": {"conversation": {"v": 9, "messages": []}}}]},
         "nodes[0].data.conversation: unknown conversation format version"),
        ({"version": 1, "nodes": [{"id": "a", "data": {"conversation": {"v": 2, "id": "c", "createdAt": 1,
          "messages": [{"id": "m", "role": "robot", "content": "", "ts": 1}]}}}]},
         "nodes[0].data.conversation: message 0: 'role'"),
        ({"version": 1, "nodes": [{"id": "a", "data": {"always_allow": "read_file"}}]}, "always_allow"),
        ({"version": 1, "nodes": [{"id": "a", "data": {"model": 5}}]}, "nodes[0].data.model"),
    ],
)
def test_invalid_structure_is_named(raw: object, expected: str) -> None:
    with pytest.raises(ValueError) as info:
        project_from_dict(raw)
    assert expected in str(info.value)


@pytest.mark.parametrize(
    "content",
    [b"{not json", b"\xff\xfegarbage", b'{"version": 1, "nodes": {}}', b"", b"[" * 100_000],
)
def test_corrupt_file_is_moved_aside_byte_identical(tmp_path: Path, content: bytes) -> None:
    store = ProjectStore(tmp_path)
    store.path.write_bytes(content)
    with pytest.raises(ProjectCorruptError) as info:
        store.load()
    err = info.value
    assert err.path == store.path
    assert err.moved_to is not None and err.moved_to.name.startswith("project.json.corrupt-")
    assert err.moved_to.read_bytes() == content
    assert not store.path.exists()
    assert str(err.moved_to) in str(err) and err.reason in str(err)


def test_load_or_recover_gives_fresh_project_and_the_error(tmp_path: Path) -> None:
    store = ProjectStore(tmp_path)
    store.path.write_bytes(b"{oops")
    project, err = store.load_or_recover()
    assert err is not None and err.recovered_from is None
    assert len(project.nodes) == 1 and project.nodes[0].conversation.messages == []
    # saving the fresh project never touches the moved-aside file
    moved = err.moved_to
    assert moved is not None
    store.save(project)
    assert moved.read_bytes() == b"{oops"


def test_load_or_recover_uses_last_good_backup(tmp_path: Path) -> None:
    store = ProjectStore(tmp_path)
    first = Project(nodes=[_chat_node("first")])
    store.save(first)
    second = Project(nodes=[_chat_node("second")])
    store.save(second)
    assert json.loads(store.backup_path.read_text(encoding="utf-8"))["nodes"][0]["id"] == "first"
    store.path.write_bytes(b'{"version": 1, "nodes": [')  # torn write by something else
    project, err = ProjectStore(tmp_path).load_or_recover()
    assert err is not None and err.recovered_from == store.backup_path
    assert [n.id for n in project.nodes] == ["first"]
    assert "restored from project.json.bak" in str(err)


def test_several_corrupt_files_never_overwrite_each_other(tmp_path: Path) -> None:
    store = ProjectStore(tmp_path)
    moved = []
    for i in range(3):
        store.path.write_bytes(f"bad {i}".encode())
        _, err = store.load_or_recover()
        assert err is not None and err.moved_to is not None
        moved.append(err.moved_to)
    assert sorted(p.read_bytes() for p in moved) == [b"bad 0", b"bad 1", b"bad 2"]


def test_unreadable_file_is_left_alone_and_not_overwritten(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "project.json").write_bytes(b'{"version": 1, "nodes": []}')
    real_read = project_module.read_regular

    def deny(path: Path, limit: int | None = None) -> bytes:
        if Path(path) == tmp_path / "project.json":
            raise PermissionError(13, "Permission denied")
        return real_read(path, limit)

    monkeypatch.setattr(project_module, "read_regular", deny)  # root here: chmod would deny nothing
    store = ProjectStore(tmp_path)
    project, err = store.load_or_recover()
    assert err is not None and err.moved_to is None and "Permission denied" in err.reason
    with pytest.raises(ProjectError, match="not overwritten"):
        store.save(project)
    monkeypatch.undo()
    assert store.path.read_bytes() == b'{"version": 1, "nodes": []}'


def test_bak_is_the_last_good_file(tmp_path: Path) -> None:
    store = ProjectStore(tmp_path)
    store.save(Project(nodes=[_chat_node("good")]))
    store.save(Project(nodes=[_chat_node("good2")]))
    store.path.write_bytes(b"{damaged behind our back")
    with pytest.raises(ProjectChangedError):  # changed since our last save: not overwritten...
        store.save(Project(nodes=[_chat_node("new")]))
    assert store.path.read_bytes() == b"{damaged behind our back"
    store.save(Project(nodes=[_chat_node("new")]), force=True)  # ...unless the caller insists
    assert json.loads(store.backup_path.read_text(encoding="utf-8"))["nodes"][0]["id"] == "good"
    # an externally edited but valid file is a fine backup
    edited = Project(nodes=[_chat_node("edited")])
    store.release()
    with ProjectStore(tmp_path) as other:
        other.save(edited)
    assert store.take_over()
    store.save(Project(nodes=[_chat_node("mine")]), force=True)
    assert json.loads(store.backup_path.read_text(encoding="utf-8"))["nodes"][0]["id"] == "edited"


def test_save_leaves_no_temp_files(tmp_path: Path) -> None:
    store = ProjectStore(tmp_path / "new" / "proj")
    for i in range(3):
        store.save(Project(nodes=[_chat_node(f"n{i}")]))
    names = sorted(p.name for p in store.folder.iterdir())
    assert names == [".chatnodes", "project.json", "project.json.bak"]
    assert sorted(p.name for p in (store.folder / ".chatnodes").iterdir()) == ["lock"]


def test_failed_replace_keeps_the_old_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = ProjectStore(tmp_path)
    store.save(Project(nodes=[_chat_node("old")]))
    before = store.path.read_bytes()

    def boom(src: object, dst: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError, match="No space"):
        store.save(Project(nodes=[_chat_node("new")]))
    monkeypatch.undo()
    assert store.path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == [".chatnodes", "project.json"]
    assert sorted(p.name for p in (tmp_path / ".chatnodes").iterdir()) == ["lock"]
    assert ProjectStore(tmp_path).load().nodes[0].id == "old"


def test_failed_write_keeps_the_old_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = ProjectStore(tmp_path)
    store.save(Project(nodes=[_chat_node("old")]))
    store.save(Project(nodes=[_chat_node("old2")]))
    before, bak_before = store.path.read_bytes(), store.backup_path.read_bytes()

    def boom(fd: int) -> None:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(os, "fsync", boom)
    with pytest.raises(OSError, match="Input/output"):
        store.save(Project(nodes=[_chat_node("new")]))
    monkeypatch.undo()
    assert (store.path.read_bytes(), store.backup_path.read_bytes()) == (before, bak_before)
    assert sorted(p.name for p in tmp_path.iterdir()) == [".chatnodes", "project.json", "project.json.bak"]
    assert sorted(p.name for p in (tmp_path / ".chatnodes").iterdir()) == ["lock"]


def test_empty_node_list_round_trips(tmp_path: Path) -> None:
    store = ProjectStore(tmp_path)
    store.save(Project(nodes=[]))
    assert store.load().nodes == []


def test_new_helpers() -> None:
    a, b = new_node_state(), new_node_state(provider="anthropic")
    assert a.id != b.id and a.conversation.id != b.conversation.id
    assert b.provider == "anthropic" and a.always_allow == [] and a.kind == "chat"
    p = new_project()
    assert len(p.nodes) == 1 and p.node(p.nodes[0].id) is p.nodes[0] and p.node("zzz") is None
