"""Hostile project.json and settings.json (issue 9 #2, #4): loading never crashes, text is valid Unicode."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from desktop.core.chat.conversation import append_message, serialize_conversation
from desktop.core.config import SettingsStore, default_settings, settings_to_dict
from desktop.core.store import Project, ProjectStore, new_node_state
from desktop.core.text import repair_surrogates, repair_text, utf8_bytes

LONE = "\ud83d"


def _valid_project() -> dict[str, Any]:
    node = new_node_state("T", node_id="n-1")
    append_message(node.conversation, "user", "hello")
    reply = append_message(node.conversation, "assistant", "hi there")
    reply.model = "m"
    conv = json.loads(serialize_conversation(node.conversation))
    data = {"conversation": conv, "model": None, "provider": None, "system": None, "always_allow": []}
    return {"version": 1, "nodes": [{"id": "n-1", "kind": "chat", "title": "T", "x": 1, "y": 2, "width": 300,
                                     "height": 200, "data": data}]}


def _deep(depth: int, closed: bool = True) -> bytes:
    return b"[" * depth + (b"]" * depth if closed else b"")


@pytest.mark.parametrize("body", [
    _deep(100_000, closed=False),
    _deep(100_000),
    b'{"version": 1, "nodes": [], "x": ' + _deep(600) + b"}",  # parses, but deeper than any file of ours
    b'{"version": 1, "nodes": [], "x": ' + _deep(140) + b"}",
])
def test_deep_nesting_moves_the_project_aside(tmp_path: Path, body: bytes) -> None:
    store = ProjectStore(tmp_path)
    store.path.write_bytes(body)
    result = store.open()
    assert result.error is not None and result.moved_aside is not None
    assert result.moved_aside.read_bytes() == body and not store.path.exists()
    assert len(result.value.nodes) == 1 and result.notices
    assert "nested" in result.error.reason
    store.save(result.value)  # and the app goes on


@pytest.mark.parametrize("body", [
    _deep(100_000, closed=False),
    _deep(100_000),
    b'{"version": 1, "window": ' + _deep(600) + b"}",
    b'{"version": 1, "window": ' + _deep(500) + b"}",  # deep-copying this used to overflow the stack
])
def test_deep_nesting_moves_the_settings_aside(tmp_path: Path, body: bytes) -> None:
    store = SettingsStore(tmp_path)
    store.path.write_bytes(body)
    result = store.open()
    assert result.value == default_settings()
    assert result.moved_aside is not None and result.moved_aside.read_bytes() == body
    assert result.error is not None and store.last_corrupt is result.error
    assert any("could not be read" in n for n in result.notices)
    assert store.load() == default_settings()  # the next start is clean


def _mutations(raw: Any, rng: random.Random) -> Any:
    """A copy of ``raw`` with one value somewhere replaced by a value of another type."""
    out = json.loads(json.dumps(raw))
    paths: list[tuple[Any, Any]] = []
    stack = [out]
    while stack:
        item = stack.pop()
        keys = list(item) if isinstance(item, dict) else list(range(len(item)))
        for k in keys:
            paths.append((item, k))
            if isinstance(item[k], (dict, list)):
                stack.append(item[k])
    parent, key = rng.choice(paths)
    parent[key] = rng.choice([None, True, -1, 1e308, "x", [], {}, [[[]]], {"v": {}}, "\udc00"])
    return out


def test_wrong_types_anywhere_never_crash_a_load(tmp_path: Path) -> None:
    rng = random.Random(9)
    raw_project = _valid_project()
    raw_settings = settings_to_dict(default_settings())
    for i in range(150):
        pdir, cdir = tmp_path / f"p{i}", tmp_path / f"c{i}"
        pdir.mkdir()
        cdir.mkdir()
        (pdir / "project.json").write_text(json.dumps(_mutations(raw_project, rng)), encoding="utf-8")
        (cdir / "settings.json").write_text(json.dumps(_mutations(raw_settings, rng)), encoding="utf-8")
        with ProjectStore(pdir) as store:
            result = store.open()  # never raises
            assert result.error is None or not store.path.exists()
            store.save(result.value)
        sresult = SettingsStore(cdir).open()
        assert sresult.error is None or sresult.value == default_settings()


def test_escaped_lone_surrogates_in_a_project_are_repaired_and_reported(tmp_path: Path) -> None:
    raw = _valid_project()
    raw["nodes"][0]["title"] = f"cut {LONE} emoji"
    msgs = raw["nodes"][0]["data"]["conversation"]["messages"]
    msgs[1]["content"] = f"half an emoji: {LONE}"
    msgs[1][f"future{LONE}"] = [f"\udc00{LONE}"]
    raw["key\udc00"] = "x"
    text = json.dumps(raw)  # ensure_ascii: the surrogates are written as \\ud83d escapes
    assert "\\ud83d" in text
    store = ProjectStore(tmp_path)
    store.path.write_text(text, encoding="ascii")
    result = store.open()
    assert result.error is None and result.repaired
    assert any("invalid Unicode" in n and "\ufffd" in n for n in result.notices)
    node = result.value.nodes[0]
    assert node.title == "cut \ufffd emoji"
    assert node.conversation.messages[1].content == "half an emoji: \ufffd"
    assert node.conversation.messages[1].extra == {"future\ufffd": ["\ufffd\ufffd"]}
    assert result.value.extra == {"key\ufffd": "x"}
    store.save(result.value)
    store.path.read_bytes().decode("utf-8")  # valid UTF-8
    again = ProjectStore(tmp_path / "copy")
    again.path.parent.mkdir()
    again.path.write_bytes(store.path.read_bytes())
    assert not again.open().repaired


def test_escaped_lone_surrogates_in_settings_are_repaired_and_reported(tmp_path: Path) -> None:
    raw = settings_to_dict(default_settings())
    raw["providers"][0]["name"] = f"Open{LONE}AI"
    raw["window"] = {"title": LONE}
    store = SettingsStore(tmp_path)
    store.path.write_text(json.dumps(raw), encoding="ascii")
    result = store.open()
    assert result.error is None and result.repaired
    assert result.value.providers[0].name == "Open\ufffdAI"
    assert result.value.extra == {"window": {"title": "\ufffd"}}
    assert store.last_error is not None and "invalid Unicode" in store.last_error
    store.save(result.value)
    assert "Open\ufffdAI" in store.path.read_bytes().decode("utf-8")


def test_saving_a_live_lone_surrogate_never_raises(tmp_path: Path) -> None:
    node = new_node_state(node_id="n-1")
    append_message(node.conversation, "user", "q")
    reply = append_message(node.conversation, "assistant", f"streamed {LONE} cut")
    node.title = f"title {LONE}"
    store = ProjectStore(tmp_path, history_cap_bytes=10)
    for i in range(3):
        append_message(node.conversation, "user", f"q{i} {LONE}")
        append_message(node.conversation, "assistant", "a" * 200)
    result = store.save(Project(nodes=[node]))
    assert result.repaired
    assert reply.content == f"streamed {LONE} cut"  # the live model is not touched
    data = store.path.read_bytes().decode("utf-8")  # valid UTF-8
    assert "title \ufffd" in data and "q2 \ufffd" in data
    archived = store.read_archive("n-1")
    assert [m.content for m in archived[:2]] == ["q", "streamed \ufffd cut"]
    assert all("\ud83d" not in m.content for m in archived)

    settings = default_settings()
    settings.providers[0].name = f"bad {LONE}"
    sstore = SettingsStore(tmp_path / "cfg")
    sstore.save(settings)
    assert SettingsStore(tmp_path / "cfg").load().providers[0].name == "bad \ufffd"


def test_text_helpers() -> None:
    assert repair_text("plain") == "plain"
    assert repair_text("a\ud83d\ude00b") == "a\U0001f600b"  # a real pair is joined, not replaced
    assert repair_text("\ude00\ud83d") == "\ufffd\ufffd"
    value, count = repair_surrogates({"a": [LONE, {"b\udc00": "ok"}], "c": 1})
    assert value == {"a": ["\ufffd", {"b\ufffd": "ok"}], "c": 1} and count == 2
    assert repair_surrogates("fine") == ("fine", 0)
    assert utf8_bytes(f"x{LONE}") == ("x\ufffd".encode(), True)
    assert utf8_bytes("ü") == ("ü".encode(), False)
