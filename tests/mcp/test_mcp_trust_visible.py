"""The trust banner's lines come from the project's .mcp.json: they cannot add or disguise a line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from desktop.core.mcp import McpConfigError, TrustStore


def _project(tmp_path: Path, servers: dict[str, object]) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    return project


def test_bidi_and_newlines_in_names_and_command_lines_show_as_escapes(tmp_path: Path) -> None:
    name = "git\u202e\u200b"
    args = ["a\n  \u2022 docs: https://x", "b\u202ec"]
    project = _project(tmp_path, {name: {"command": "uvx", "args": args}})
    pending = TrustStore(tmp_path / "config").pending(project)
    assert pending is not None
    ((shown_name, shown_line),) = pending.banner_lines()
    assert shown_name == "git<U+202E><U+200B>"
    assert "\n" not in shown_line and "\\n  \u2022 docs" in shown_line and "b<U+202E>c" in shown_line
    assert list(pending.servers) == [name]  # what is trusted and started is the file's own server


def test_an_error_about_a_name_shows_it_on_one_line(tmp_path: Path) -> None:
    project = _project(tmp_path, {"git\n  \u2022 docs": {"command": "uvx"}})
    with pytest.raises(McpConfigError) as err:
        TrustStore(tmp_path / "config").pending(project)
    assert "\n" not in str(err.value) and 'server "git\\n  \u2022 docs"' in str(err.value)
