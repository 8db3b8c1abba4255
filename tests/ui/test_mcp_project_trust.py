"""Project servers (``<project>/.mcp.json``) never start before the user trusts them, in the real window."""

from __future__ import annotations

import json
import sys
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


def write_settings_with_a_user_server(config: Path, fake: FakeProvider) -> None:
    """Settings with the user's own (trusted) stdio server "mine": once it is ready, the window's one
    start of the MCP servers has happened, and whatever it did not start was not started."""
    from test_mcp_app import stdio_entry, write_mcp_settings

    write_mcp_settings(config, fake, {"mine": stdio_entry()})


def assert_started_without_proj(qtbot: Any, window: Any, marker: Path) -> None:
    """The window's one start of its MCP servers happened ("mine" is ready) and did not include the
    project's server "proj": the manager starts every server it is given at once, and "proj" is not
    among them (nor did its command run: no marker)."""
    wait_ready(qtbot, window, "mine")
    assert window.context.mcp.manager is not None
    assert set(window.context.mcp.statuses()) == {"mine"}, "an untrusted project server was started"
    assert not marker.exists(), "an untrusted project server's command ran"


def test_banner_then_trust_and_start(
    qtbot: Any, open_window: Any, fake: FakeProvider, dirs: Any
) -> None:
    project, config, marker = dirs
    write_settings_with_a_user_server(config, fake)
    write_project_file(project, marker)
    window = open_window(project, config)
    banner = window.banner_area.find("mcpTrustBanner")
    assert banner is not None
    assert sys.executable in banner.text() and "proj" in banner.text()
    assert banner.findChild(QPushButton, "mcpNotNowButton") is not None
    assert_started_without_proj(qtbot, window, marker)
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
    write_settings_with_a_user_server(config, fake)
    window = open_window(project, config)
    assert window.banner_area.find("mcpTrustBanner") is not None
    wait_ready(qtbot, window, "mine")  # the window's start has happened...
    assert set(window.context.mcp.statuses()) == {"mine"}  # ...without "renamed" (nor the old "proj")
    assert not marker.exists()
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
    close_window(qtbot, window)
    assert wait_gone(pid)  # polls with a generous hang guard; the close itself ended the process
