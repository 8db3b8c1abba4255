"""Project servers (``<project>/.mcp.json``) never start before the user trusts them, in the real window."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QPushButton
from test_app_support import close_window, fake_provider_entry, write_settings
from test_mcp_app import wait_gone, wait_ready

from desktop.testing import FakeProvider

pytest_plugins = ["test_app_support"]  # fixtures: fake, make_context, open_window

SERVER = Path(__file__).resolve().parents[1] / "mcp" / "servers" / "stdio_server.py"


def write_project_file(project: Path, marker: Path, *, name: str = "proj") -> None:
    """A .mcp.json whose server touches ``marker`` when it starts, then runs the stdio test server."""
    code = (f"import pathlib, runpy, sys; pathlib.Path({str(marker)!r}).touch(); "
            f"sys.argv = [{str(SERVER)!r}]; runpy.run_path({str(SERVER)!r}, run_name='__main__')")
    project.mkdir(parents=True, exist_ok=True)
    doc = {"mcpServers": {name: {"command": sys.executable, "args": ["-c", code]}}}
    (project / ".mcp.json").write_text(json.dumps(doc, indent=2))


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path, Path]:
    return tmp_path / "project", tmp_path / "config", tmp_path / "started.marker"


def test_banner_then_trust_and_start(
    qtbot: Any, open_window: Any, fake: FakeProvider, dirs: Any
) -> None:
    project, config, marker = dirs
    write_settings(config, fake_provider_entry(fake), default="fake")
    write_project_file(project, marker)
    window = open_window(project, config)
    banner = window.banner_area.find("mcpTrustBanner")
    assert banner is not None
    assert sys.executable in banner.text() and "proj" in banner.text()
    assert banner.findChild(QPushButton, "mcpNotNowButton") is not None
    qtbot.wait(1500)  # well past the start after the first paint
    assert not marker.exists(), "an untrusted project server was started"
    assert "proj" not in window.context.mcp.statuses()
    assert not (project / "mcp-trust.json").exists()

    banner.findChild(QPushButton, "mcpTrustButton").click()
    wait_ready(qtbot, window, "proj")
    assert marker.exists()
    trust = json.loads((config / "mcp-trust.json").read_text())
    assert str(project.resolve()) in trust["projects"]
    assert window.banner_area.find("mcpTrustBanner") is None
    assert [p.name for p in project.iterdir()] and not list(project.glob("*trust*"))
    close_window(qtbot, window)


def test_trusted_file_starts_and_a_changed_file_asks_again(qtbot: Any, open_window: Any, fake: FakeProvider,
                                                           dirs: Any) -> None:
    project, config, marker = dirs
    write_settings(config, fake_provider_entry(fake), default="fake")
    write_project_file(project, marker)
    window = open_window(project, config)
    window.banner_area.find("mcpTrustBanner").findChild(QPushButton, "mcpTrustButton").click()
    wait_ready(qtbot, window, "proj")
    close_window(qtbot, window)

    marker.unlink()
    window = open_window(project, config)  # same content: trusted, starts without asking
    assert window.banner_area.find("mcpTrustBanner") is None
    wait_ready(qtbot, window, "proj")
    assert marker.exists()
    close_window(qtbot, window)

    marker.unlink()
    write_project_file(project, marker, name="renamed")  # a changed file asks again
    window = open_window(project, config)
    assert window.banner_area.find("mcpTrustBanner") is not None
    qtbot.wait(1200)
    assert not marker.exists()
    assert window.context.mcp.statuses() == {}
    window.banner_area.find("mcpTrustBanner").findChild(QPushButton, "mcpNotNowButton").click()
    assert window.banner_area.find("mcpTrustBanner") is None
    close_window(qtbot, window)


def test_project_server_ends_with_the_window(
    qtbot: Any, open_window: Any, fake: FakeProvider, dirs: Any
) -> None:
    from test_mcp_app import server_pid

    project, config, marker = dirs
    write_settings(config, fake_provider_entry(fake), default="fake")
    write_project_file(project, marker)
    window = open_window(project, config)
    window.banner_area.find("mcpTrustBanner").findChild(QPushButton, "mcpTrustButton").click()
    wait_ready(qtbot, window, "proj")
    pid = server_pid(window, "proj")
    started = time.monotonic()
    close_window(qtbot, window)
    assert wait_gone(pid)
    assert time.monotonic() - started < 10
