"""History cap on save (D8/D9), the .jsonl archive, and no secret in any written file."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from desktop.core.chat.conversation import append_message, message_to_dict
from desktop.core.chat.types import ChatMessage, ToolCall
from desktop.core.config import SecretStore, SettingsStore, default_settings, resolve_provider
from desktop.core.store import Project, ProjectStore, apply_trim, new_node_state


def _msg(i: int, role: str = "user", text: str | None = None) -> ChatMessage:
    return ChatMessage(id=f"m{i}", role=role, content=text or f"message {i} ✓", ts=1000 + i)  # type: ignore[arg-type]


def _long_node(exchanges: int, size: int = 1000, node_id: str = "n-1"):
    node = new_node_state(node_id=node_id)
    append_message(node.conversation, "system", "You are terse.")
    for i in range(exchanges):
        append_message(node.conversation, "user", f"q{i} " + "x" * size)
        append_message(node.conversation, "assistant", f"a{i} " + "y" * size)
    return node


def test_archive_append_and_read_back(tmp_path: Path) -> None:
    store = ProjectStore(tmp_path)
    first = [_msg(1), _msg(2, "assistant")]
    first[1].tool_calls = [ToolCall("c1", "read_file", "{}", "data", False, "done")]
    first[1].extra = {"future": [1, 2]}
    assert store.archive_messages("n-1", first) == 2
    assert store.archive_messages("n-1", [_msg(3)]) == 1
    assert store.archive_messages("n-1", []) == 0
    path = tmp_path / ".chatnodes" / "archive" / "n-1.jsonl"
    assert store.archive_path("n-1") == path
    lines = path.read_text(encoding="utf-8").splitlines()
    assert [json.loads(line) for line in lines] == [message_to_dict(m) for m in [*first, _msg(3)]]
    assert store.read_archive("n-1") == [*first, _msg(3)]
    assert store.read_archive("other") == []


def test_bad_archive_lines_are_skipped_and_counted(tmp_path: Path) -> None:
    store = ProjectStore(tmp_path)
    store.archive_messages("n", [_msg(1)])
    path = store.archive_path("n")
    with open(path, "ab") as fh:
        fh.write(b"not json\n\xff\xfe\n[1,2]\n" + json.dumps({"id": "x", "role": "robot"}).encode() + b"\n\n")
        fh.write(b'{"id": "torn", "role": "us')  # crash mid-line, no newline
    store.archive_messages("n", [_msg(2)])  # must start on a fresh line
    contents = store.read_archive_contents("n")
    assert [m.id for m in contents.messages] == ["m1", "m2"]
    assert contents.bad_lines == 5
    assert [m.id for m in store.read_archive("n")] == ["m1", "m2"]


@pytest.mark.parametrize("node_id", ["../../escape", "/abs/path", "a/b", "..", "ü-node", " "])
def test_archive_names_stay_inside_the_archive_folder(tmp_path: Path, node_id: str) -> None:
    store = ProjectStore(tmp_path / "proj")
    store.archive_messages(node_id, [_msg(1)])
    path = store.archive_path(node_id)
    assert path.parent == store.archive_dir and path.name.endswith(".jsonl")
    assert path.resolve().is_relative_to(store.archive_dir.resolve())
    assert store.read_archive(node_id) == [_msg(1)]
    assert store.archive_path("../../escape") != store.archive_path("__escape")
    assert sorted(p.name for p in (tmp_path / "proj").iterdir()) == [".chatnodes"]


def test_save_applies_the_cap_and_archives_trimmed_exchanges(tmp_path: Path) -> None:
    store = ProjectStore(tmp_path, history_cap_bytes=8 * 1024)
    node = _long_node(20)  # about 40 KB
    small = _long_node(1, node_id="n-2")
    before = list(node.conversation.messages)
    result = store.save(Project(nodes=[node, small]))
    dropped = result.archived["n-1"]
    assert "n-2" not in result.archived and set(result.trimmed) == {"n-1"}
    assert dropped > 0 and dropped % 2 == 0  # whole exchanges
    assert node.conversation.messages == before  # the save never touches the live model
    assert result.trimmed["n-1"].archived == dropped
    assert apply_trim(node.conversation, result.trimmed["n-1"])  # what a node does with the result
    assert not apply_trim(node.conversation, result.trimmed["n-1"])  # idempotent
    msgs = node.conversation.messages
    assert tuple(m.id for m in msgs) == result.trimmed["n-1"].kept_ids
    assert msgs[0].role == "system"
    assert msgs[1].role == "note" and f"{dropped} earlier messages moved" in msgs[1].content
    assert ".chatnodes/archive/n-1.jsonl" in msgs[1].content
    assert msgs[2:] == before[1 + dropped:]  # the newest exchanges, unchanged
    assert store.read_archive("n-1") == before[1:1 + dropped]
    # nothing was lost: archive + kept == original
    written = json.loads(store.path.read_text(encoding="utf-8"))
    kept_ids = [m["id"] for m in written["nodes"][0]["data"]["conversation"]["messages"]]
    assert kept_ids == [m.id for m in msgs]
    conv_bytes = len(json.dumps(written["nodes"][0]["data"]["conversation"]["messages"],
                                ensure_ascii=False, separators=(",", ":")).encode())
    assert conv_bytes <= 8 * 1024
    # saving again archives nothing more (no duplicates)
    assert store.save(Project(nodes=[node, small])).archived == {}
    assert len(store.read_archive("n-1")) == dropped


def test_a_single_huge_exchange_is_kept_whole(tmp_path: Path) -> None:
    store = ProjectStore(tmp_path, history_cap_bytes=1024)
    node = _long_node(1, size=5000)
    assert store.save(Project(nodes=[node])).archived == {}
    assert len(store.load().nodes[0].conversation.messages) == 3


def test_archive_failure_keeps_everything_in_the_project(tmp_path: Path) -> None:
    store = ProjectStore(tmp_path, history_cap_bytes=4 * 1024)
    (tmp_path / ".chatnodes").write_text("a file where the folder should be")
    node = _long_node(10)
    count = len(node.conversation.messages)
    assert store.save(Project(nodes=[node])).archived == {}
    assert len(node.conversation.messages) == count
    assert len(store.load().nodes[0].conversation.messages) == count


def test_no_secret_is_ever_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    keyring_key = "sk-KEYRING-planted-5f1e2d3c4b5a"
    env_key = "sk-ENV-planted-0a9b8c7d6e5f"
    session_key = "sk-SESSION-planted-1234abcd"
    monkeypatch.setenv("ANTHROPIC_API_KEY", env_key)
    secrets = SecretStore()
    secrets.set("openai", keyring_key)
    secrets.set("groq", session_key, session_only=True)
    config_dir = Path(os.environ["CHATNODES_CONFIG_DIR"])
    project_dir = tmp_path / "proj"

    settings_store = SettingsStore(config_dir)
    settings = default_settings()
    settings_store.save(settings)
    settings_store.save(settings)  # with a .bak

    store = ProjectStore(project_dir, history_cap_bytes=2048)
    nodes = []
    for provider in ("openai", "anthropic", "groq"):

        class Req:
            model = None

        Req.provider = provider  # type: ignore[attr-defined]
        cfg = resolve_provider(settings, Req(), secrets=secrets)  # type: ignore[arg-type]
        assert cfg is not None and cfg.api_key
        node = _long_node(6, size=400, node_id=f"node-{provider}")
        node.provider, node.model = cfg.id, cfg.model
        node.data_extra["config"] = repr(cfg)  # even a careless caller's repr holds no key
        nodes.append(node)
    store.save(Project(nodes=nodes))
    store.save(Project(nodes=nodes))
    store.path.write_bytes(b"{corrupt")
    store.load_or_recover()

    written = [p for p in [*config_dir.rglob("*"), *project_dir.rglob("*")] if p.is_file()]
    names = {p.name for p in written}
    assert {"settings.json", "settings.json.bak", "project.json.bak", "node-openai.jsonl"} <= names
    for path in written:
        data = path.read_bytes()
        for key in (keyring_key, env_key, session_key):
            assert key.encode() not in data, f"{key[:8]}... leaked into {path}"


def test_archiving_the_same_messages_twice_does_not_duplicate(tmp_path: Path) -> None:
    store = ProjectStore(tmp_path)
    assert store.archive_messages("n", [_msg(1), _msg(2), _msg(1)]) == 2
    store.release()  # one writer at a time
    with ProjectStore(tmp_path) as again:
        assert again.archive_messages("n", [_msg(2), _msg(3)]) == 1  # reads what is there
    assert [m.id for m in ProjectStore(tmp_path).read_archive("n")] == ["m1", "m2", "m3"]


def test_saving_copies_of_a_growing_conversation_never_duplicates_the_archive(tmp_path: Path) -> None:
    """A caller that saves fresh copies (the UI keeps its own list) must not archive twice."""
    store = ProjectStore(tmp_path, history_cap_bytes=4 * 1024)
    live = _long_node(10)
    for round_ in range(3):
        copy = new_node_state(node_id=live.id)
        copy.conversation.id = live.conversation.id
        copy.conversation.messages = list(live.conversation.messages)
        store.save(Project(nodes=[copy]))
        append_message(live.conversation, "user", f"more {round_} " + "z" * 1000)
        append_message(live.conversation, "assistant", "ok")
    archived = store.read_archive(live.id)
    ids = [m.id for m in archived]
    assert len(ids) == len(set(ids))
    saved = store.load().nodes[0].conversation.messages
    assert saved[1].role == "note"
    # archive + what project.json keeps (minus system and note) is the whole live conversation before the
    # last append
    expected = [m.id for m in live.conversation.messages[1:-2]]
    assert [m.id for m in archived] + [m.id for m in saved[2:]] == expected


def test_trim_notes_accumulate_and_are_not_archived(tmp_path: Path) -> None:
    store = ProjectStore(tmp_path, history_cap_bytes=4 * 1024)
    node = _long_node(6)
    project = Project(nodes=[node])
    result = store.save(project)
    first = result.archived[node.id]
    assert apply_trim(node.conversation, result.trimmed[node.id])
    for i in range(6):
        append_message(node.conversation, "user", f"later {i} " + "z" * 1000)
        append_message(node.conversation, "assistant", "ok")
    result = store.save(project)
    second = result.archived[node.id]
    assert apply_trim(node.conversation, result.trimmed[node.id])
    notes = [m for m in node.conversation.messages if m.role == "note"]
    assert len(notes) == 1
    assert notes[0].content.startswith(f"{first + second} earlier messages moved")
    archived = store.read_archive(node.id)
    assert all(m.role != "note" for m in archived) and len(archived) == first + second
    reloaded = store.load().nodes[0].conversation.messages
    assert [m.content for m in reloaded if m.role == "note"] == [notes[0].content]
