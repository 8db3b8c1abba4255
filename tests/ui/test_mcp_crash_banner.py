"""A stdio server that dies mid-call while its child keeps stdout open, seen from the window: the call
fails at once naming the exit code, and the failure banner says how the server ended (the call timeout
is 300 s; every wait here is 60 s at most, so hanging until a timeout fails the test)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from test_mcp_app import wait_ready, write_mcp_settings

from desktop.testing import FakeProvider, ToolCallSpec, Turn

pytest_plugins = ["test_app_support"]  # fixtures: fake, make_context, open_window

SERVERS = Path(__file__).resolve().parents[1] / "mcp" / "servers"


def test_a_crash_mid_call_fails_the_call_and_shows_the_exit_in_the_banner(
    qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path
) -> None:
    entry = {"command": sys.executable, "args": [str(SERVERS / "crash_server.py"), "--orphan"],
             "approval": "never", "timeout_s": 300}
    config = tmp_path / "config"
    write_mcp_settings(config, fake, {"crashy": entry})
    window = open_window(tmp_path / "project", config)
    wait_ready(qtbot, window, "crashy")
    node = window.nodes()[0]
    crash = ToolCallSpec("mcp__crashy__exit_now", {"code": 3})
    fake.script(Turn(tool_calls=[crash]), Turn(text="it crashed"))
    with qtbot.waitSignal(node.run_finished, timeout=60_000):
        node.submit("crash it")
    call = [c for m in node.conversation.messages if m.role == "assistant" for c in (m.tool_calls or [])][-1]
    assert call.status == "error"
    assert 'MCP server "crashy", tool "exit_now": the server exited (code 3)' in (call.result or "")
    qtbot.waitUntil(lambda: window.banner_area.find("mcpFailedBanner") is not None, timeout=60_000)
    text = window.banner_area.find("mcpFailedBanner").text()
    assert "\u201ccrashy\u201d failed: exited (code 3); its last stderr line: exiting with 3" in text
    assert not node.is_busy()
