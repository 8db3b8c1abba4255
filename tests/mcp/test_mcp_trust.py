"""Project servers (.mcp.json) never start until the user trusts exactly that file content."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from desktop.core.mcp import McpConfigError, TrustStore, read_project_servers

MCP_JSON = {
    "mcpServers": {
        "git": {"command": "uvx", "args": ["mcp-server-git", "--repository", "."]},
        "docs": {"type": "http", "url": "https://docs.example.com/mcp"},
    }
}


def _project(tmp_path: Path, content: object = MCP_JSON) -> Path:
    project = tmp_path / "proj"
    project.mkdir(exist_ok=True)
    (project / ".mcp.json").write_text(json.dumps(content))
    return project


def test_untrusted_until_trusted_and_a_change_asks_again(tmp_path: Path) -> None:
    config = tmp_path / "config"
    project = _project(tmp_path)
    store = TrustStore(config)
    pending = store.pending(project)
    assert pending is not None
    assert pending.banner_lines() == [
        ("git", "uvx mcp-server-git --repository ."),
        ("docs", "https://docs.example.com/mcp"),
    ]
    assert store.trusted_servers(project) == {}
    assert not store.is_trusted(pending)

    store.trust(pending)
    assert store.pending(project) is None
    trusted = store.trusted_servers(project)
    assert list(trusted) == ["git", "docs"]
    assert trusted["git"].base_dir == str(project.resolve())

    # Stored in the user's config folder, never in the project.
    assert sorted(p.name for p in project.iterdir()) == [".mcp.json"]
    doc = json.loads((config / "mcp-trust.json").read_text())
    assert doc["projects"][str(project.resolve())]["sha256"] == pending.digest

    # One byte changes: untrusted again, nothing may start.
    changed = {"mcpServers": {**MCP_JSON["mcpServers"], "git": {"command": "uvx", "args": ["evil"]}}}
    (project / ".mcp.json").write_text(json.dumps(changed))
    assert store.trusted_servers(project) == {}
    again = store.pending(project)
    assert again is not None and again.digest != pending.digest
    assert again.banner_lines()[0] == ("git", "uvx evil")


def test_keyed_by_the_resolved_folder(tmp_path: Path) -> None:
    project = _project(tmp_path)
    link = tmp_path / "link"
    os.symlink(project, link)
    store = TrustStore(tmp_path / "config")
    pending = store.pending(link / ".." / "proj")
    assert pending is not None and pending.project == project.resolve()
    store.trust(pending)
    assert store.pending(link) is None
    # The same content in another folder is not trusted.
    other = tmp_path / "other"
    other.mkdir()
    (other / ".mcp.json").write_bytes((project / ".mcp.json").read_bytes())
    assert store.pending(other) is not None
    store.revoke(project)
    assert store.pending(project) is not None


def test_no_file_or_no_servers_asks_nothing(tmp_path: Path) -> None:
    store = TrustStore(tmp_path / "config")
    empty = tmp_path / "empty"
    empty.mkdir()
    assert read_project_servers(empty) is None
    assert store.pending(empty) is None and store.trusted_servers(empty) == {}
    project = _project(tmp_path, {"mcpServers": {}})
    assert store.pending(project) is None


def test_invalid_project_file_is_a_clear_error(tmp_path: Path) -> None:
    project = _project(tmp_path, {"mcpServers": {"x": {"command": ["not", "a", "string"]}}})
    problem = r'\.mcp\.json: server "x": "command" must be a non-empty string'
    with pytest.raises(McpConfigError, match=problem):
        TrustStore(tmp_path / "config").pending(project)
    (project / ".mcp.json").write_text("{")
    with pytest.raises(McpConfigError, match="not valid JSON"):
        read_project_servers(project)
    (project / ".mcp.json").write_bytes(b" " * (1024 * 1024 + 1))
    with pytest.raises(McpConfigError, match="larger than 1024 KiB"):
        read_project_servers(project)


def test_a_corrupt_trust_file_trusts_nothing_and_is_moved_aside(tmp_path: Path) -> None:
    config = tmp_path / "config"
    config.mkdir()
    (config / "mcp-trust.json").write_text("{garbage")
    project = _project(tmp_path)
    store = TrustStore(config)
    pending = store.pending(project)
    assert pending is not None
    store.trust(pending)
    assert store.pending(project) is None
    assert any(p.name.startswith("mcp-trust.json.corrupt-") for p in config.iterdir())
