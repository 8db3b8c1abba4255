"""Reading ``project.json`` for the index node by node gives what ``project_from_dict`` gives."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from search_helpers import msg, node, save

from desktop.core.search import read_project
from desktop.core.store import PROJECT_FILE, project_from_dict


def _expected(folder: Path) -> list[tuple[str, str, list[str]]]:
    raw = json.loads((folder / PROJECT_FILE).read_text(encoding="utf-8-sig"))
    nodes = project_from_dict(raw).nodes
    return [(n.id, n.title, [m.content for m in n.conversation.messages]) for n in nodes]


def _got(folder: Path) -> list[tuple[str, str, list[str]]]:
    return [(n.node_id, n.title, [m.content for m in n.messages]) for n in read_project(folder).nodes]


def test_a_saved_project_reads_the_same_as_through_project_from_dict(tmp_path: Path) -> None:
    save(tmp_path, node("n1", "One", [msg("u1", "user", "hello \u00e9 \U0001f600", 0)]),
         node("n2", "Two", [msg("u2", "user", "x", 1)]))
    assert _got(tmp_path) == _expected(tmp_path) and len(_got(tmp_path)) == 2


@pytest.mark.parametrize("layout", ["pretty", "bom", "keys after nodes", "no nodes", "surrogate"])
def test_other_layouts_of_the_same_json(tmp_path: Path, layout: str) -> None:
    save(tmp_path, node("n1", "One", [msg("u1", "user", "hello", 0)]))
    path = tmp_path / PROJECT_FILE
    raw = json.loads(path.read_text(encoding="utf-8"))
    if layout == "pretty":
        text = json.dumps(raw, indent=4)
    elif layout == "bom":
        text = "\ufeff" + json.dumps(raw)
    elif layout == "keys after nodes":
        text = json.dumps({"nodes": raw["nodes"], "version": 1, "extra": {"a": [1, 2]}})
    elif layout == "no nodes":
        text = json.dumps({"version": 1, "nodes": []})
    else:
        text = json.dumps(raw).replace("hello", "hel\\ud83dlo")
    path.write_text(text, encoding="utf-8")
    got = _got(tmp_path)
    if layout == "surrogate":
        assert got == [("n1", "One", ["hel\ufffdlo"])]
    else:
        assert got == _expected(tmp_path)


def test_a_bad_node_is_left_out_and_a_bad_file_is_an_error(tmp_path: Path) -> None:
    save(tmp_path, node("n1", "One", [msg("u1", "user", "hello", 0)]), node("n2", "Two", []))
    path = tmp_path / PROJECT_FILE
    raw = json.loads(path.read_text(encoding="utf-8"))
    raw["nodes"][1]["title"] = 42
    path.write_text(json.dumps(raw), encoding="utf-8")
    assert [n.node_id for n in read_project(tmp_path).nodes] == ["n1"]
    for bad in ("[1, 2]", '{"version": 1, "nodes": [', "\xff\xfe", '{"version": 99, "nodes": []}'):
        path.write_bytes(bad.encode("latin-1"))
        with pytest.raises(ValueError):
            read_project(tmp_path)
    with pytest.raises(FileNotFoundError):
        read_project(tmp_path / "missing")
