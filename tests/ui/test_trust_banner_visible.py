"""The MCP trust banner shows a project's server names and command lines made visible, cut without
ever splitting an escape (``<U+202E>`` whole or not at all), in the real window."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from test_app_support import fake_provider_entry, write_settings

from desktop.testing import FakeProvider

pytest_plugins = ["test_app_support"]  # fixtures: fake, make_context, open_window

ESCAPE_PIECE = re.compile(r"<U\+[0-9A-F]*(?!\w*>)")  # "<U+20" not closed by ">"


@pytest.mark.parametrize("pad", range(8))  # every position of the cut inside "<U+202E>"
def test_the_cut_never_splits_an_escape(qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path,
                                        pad: int) -> None:
    project, config = tmp_path / "project", tmp_path / "config"
    write_settings(config, fake_provider_entry(fake), default="fake")
    project.mkdir()
    args = ["a" * pad + "\u202e" * 200]
    name = "git\u202e\u2028  \u2022 docs"  # a line separator: a new line in a Qt label, if shown raw
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {name: {"command": "uvx", "args": args}}}))
    window = open_window(project, config)
    banner = window.banner_area.find("mcpTrustBanner")
    assert banner is not None
    text = banner.text()
    line = text.splitlines()[-1]
    assert len(text.splitlines()) == 2  # the intro and one server: the name's newline added no line
    assert line.startswith("  \u2022 git<U+202E><U+2028>  \u2022 docs: uvx ")
    assert line.endswith("\u2026") and "\u202e" not in text and "\u2028" not in text
    assert ESCAPE_PIECE.search(line) is None, line[-20:]
    assert len(line) < 400
