"""Grants are the user's (issue 9 #1): a project.json asks, only the GrantStore in the config dir grants."""

from __future__ import annotations

import json
from pathlib import Path

from desktop.core.chat.conversation import serialize_conversation
from desktop.core.config import GrantStore, NodeGrants
from desktop.core.store import Project, ProjectStore, new_node_state


def _hostile(folder: Path, allow: list[str]) -> None:
    node = new_node_state(node_id="n-1")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "project.json").write_text(json.dumps({"version": 1, "nodes": [{
        "id": "n-1", "kind": "chat", "title": "Cloned", "x": 0, "y": 0, "width": 500, "height": 400,
        "data": {"conversation": json.loads(serialize_conversation(node.conversation)), "model": None,
                 "provider": None, "system": None, "always_allow": allow}}]}), encoding="utf-8")


def test_a_hostile_project_grants_nothing(tmp_path: Path) -> None:
    grants = GrantStore(tmp_path / "config")
    project_dir = tmp_path / "cloned-repo"
    _hostile(project_dir, ["write_file", "write_file", "run_command"])
    for store in (ProjectStore(project_dir, grants=grants), ProjectStore(tmp_path / "cloned-repo")):
        with store:
            node = store.open().value.nodes[0]
            assert node.always_allow == []  # nothing is approved without a card
            assert node.requested_always_allow == ["write_file", "run_command"]  # shown once as a request
            store.save(Project(nodes=[node]))
            written = json.loads(store.path.read_text(encoding="utf-8"))
            assert written["nodes"][0]["data"]["always_allow"] == []  # and never written back
            assert store.open().value.nodes[0].requested_always_allow == []
            _hostile(project_dir, ["write_file", "write_file", "run_command"])
            store.open()
    assert grants.for_project(project_dir) == {}
    assert not grants.path.exists()


def test_a_grant_survives_reload_and_stays_in_its_folder(tmp_path: Path) -> None:
    config = tmp_path / "config"
    one, two = tmp_path / "one", tmp_path / "two"
    with ProjectStore(one, grants=GrantStore(config)) as store:
        node = store.open().value.nodes[0]
        node.always_allow.append("write_file")  # the user clicked "Always allow" in the node
        store.save(Project(nodes=[node]))
        node_id = node.id
    assert GrantStore(config).tools(one, node_id) == ["write_file"]
    assert "write_file" not in (one / "project.json").read_text(encoding="utf-8")
    with ProjectStore(one, grants=GrantStore(config)) as store:
        assert store.open().value.nodes[0].always_allow == ["write_file"]
    # the same node id in another folder (a copy of the project) gets nothing
    two.mkdir()
    (two / "project.json").write_bytes((one / "project.json").read_bytes())
    with ProjectStore(two, grants=GrantStore(config)) as store:
        copied = store.open().value.nodes[0]
        assert copied.id == node_id and copied.always_allow == []
    assert GrantStore(config).for_project(two) == {}


def test_grant_store_api(tmp_path: Path) -> None:
    grants = GrantStore(tmp_path / "config")
    folder = tmp_path / "p"
    folder.mkdir()
    assert grants.allow_tool(folder, "n", "write_file")
    assert not grants.allow_tool(folder, "n", "write_file")
    assert grants.allow_server(folder / "." / "sub" / "..", "n", "files")  # keyed by the resolved path
    other = GrantStore(tmp_path / "config")  # e.g. a second app instance
    assert other.node(folder, "n") == NodeGrants(("write_file",), ("files",))
    assert other.allow_tool(folder, "m", "read_file")
    assert grants.tools(folder, "m") == ["read_file"]  # re-read: nobody loses the other's grant
    assert grants.sync_tools(folder, {"n": []}, forget_others=True)
    assert grants.for_project(folder) == {"n": NodeGrants((), ("files",))}  # servers are kept
    assert grants.revoke_server(folder, "n", "files")
    assert grants.for_project(folder) == {}
    assert grants.allow_tool(folder, "n", "x") and grants.forget_node(folder, "n")
    assert not grants.forget_node(folder, "n")
    assert json.loads(grants.path.read_text(encoding="utf-8")) == {"version": 1, "projects": {}}


def test_deleted_nodes_lose_their_grants_on_save(tmp_path: Path) -> None:
    grants = GrantStore(tmp_path / "config")
    a, b = new_node_state(node_id="a"), new_node_state(node_id="b")
    a.always_allow, b.always_allow = ["write_file"], ["write_file"]
    with ProjectStore(tmp_path / "p", grants=grants) as store:
        store.save(Project(nodes=[a, b]))
        assert set(grants.for_project(tmp_path / "p")) == {"a", "b"}
        store.save(Project(nodes=[a]))
    assert set(grants.for_project(tmp_path / "p")) == {"a"}


def test_a_corrupt_grants_file_grants_nothing(tmp_path: Path) -> None:
    config = tmp_path / "config"
    folder = tmp_path / "p"
    GrantStore(config).allow_tool(folder, "n", "write_file")
    (config / "grants.json").write_text('{"version": 1, "projects": {"x": {"nodes": {"n": {"tools": 5}}}}}')
    grants = GrantStore(config)
    assert grants.tools(folder, "n") == []
    assert grants.last_load is not None and grants.last_load.moved_aside is not None
    assert "no tool is always allowed" in grants.last_load.notices[0]
    assert grants.allow_tool(folder, "n", "read_file")
    assert GrantStore(config).tools(folder, "n") == ["read_file"]
