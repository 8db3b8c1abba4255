"""MCP faults seen from a node: Stop cancels a running call fast, a crash or a timeout is a tool result that
names the server, never a stuck node; images and long results reach the tool card."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QPushButton
from test_mcp_app import posts, stdio_entry, wait_ready, write_mcp_settings

from desktop.testing import FakeProvider, ToolCallSpec, Turn

pytest_plugins = ["test_app_support"]  # fixtures: fake, make_context, open_window


def _window(open_window: Any, fake: FakeProvider, tmp_path: Path, qtbot: Any, timeout_s: float) -> Any:
    config = tmp_path / "config"
    write_mcp_settings(config, fake, {"local": stdio_entry(approval="never", timeout_s=timeout_s)})
    win = open_window(tmp_path / "project", config)
    wait_ready(qtbot, win, "local")
    return win


@pytest.fixture
def window(open_window: Any, fake: FakeProvider, tmp_path: Path, qtbot: Any) -> Any:
    """A window whose MCP calls time out after 2 s (the timeout test's subject)."""
    return _window(open_window, fake, tmp_path, qtbot, timeout_s=2)


@pytest.fixture
def patient_window(open_window: Any, fake: FakeProvider, tmp_path: Path, qtbot: Any) -> Any:
    """A window whose MCP calls may take an hour: only a stop can end them."""
    return _window(open_window, fake, tmp_path, qtbot, timeout_s=3600)


def marker_text(marker: Path) -> str | None:
    """What the stdio test server's ``slow`` tool wrote to ``marker`` (atomically), or None."""
    try:
        return marker.read_text()
    except FileNotFoundError:
        return None


def calls(node: Any) -> list[Any]:
    return [c for m in node.conversation.messages if m.role == "assistant" for c in (m.tool_calls or [])]


def last_call(node: Any) -> Any:
    return calls(node)[-1]


def test_stop_cancels_a_running_call(qtbot: Any, patient_window: Any, fake: FakeProvider,
                                     tmp_path: Path) -> None:
    marker = tmp_path / "slow.marker"
    node = patient_window.nodes()[0]
    # The tool sleeps an hour and the call may wait that long: the run ending at all is the stop's work.
    fake.script(Turn(tool_calls=[ToolCallSpec("mcp__local__slow", {"seconds": 3600, "marker": str(marker)})]))
    node.submit("go slow")
    qtbot.waitUntil(lambda: marker_text(marker) == "started", timeout=30_000)  # the call reached the server
    assert last_call(node).status == "running"
    with qtbot.waitSignal(node.run_finished, timeout=30_000):
        node.stop()
    assert last_call(node).status == "skipped"
    assert not node.is_busy()
    # The server was told (notifications/cancelled): its handler was interrupted, not left to finish.
    qtbot.waitUntil(lambda: marker_text(marker) == "CancelledError", timeout=30_000)


def test_timeout_and_crash_name_the_server(
    qtbot: Any, window: Any, fake: FakeProvider, tmp_path: Path
) -> None:
    node = window.nodes()[0]
    slow = ToolCallSpec("mcp__local__slow", {"seconds": 30, "marker": str(tmp_path / "m")})
    fake.script(Turn(tool_calls=[slow]),
                Turn(text="timed out"))
    with qtbot.waitSignal(node.run_finished, timeout=15_000):
        node.submit("too slow")
    call = last_call(node)
    assert call.status == "error"
    assert 'MCP server "local"' in (call.result or "") and "2 s" in (call.result or "")
    fake.script(Turn(tool_calls=[ToolCallSpec("mcp__local__crash", {})]), Turn(text="it crashed"))
    with qtbot.waitSignal(node.run_finished, timeout=15_000):
        node.submit("crash it")
    call = last_call(node)
    assert call.status == "error" and 'MCP server "local"' in (call.result or "")
    qtbot.waitUntil(lambda: window.banner_area.find("mcpFailedBanner") is not None, timeout=10_000)
    assert "\u201clocal\u201d" in window.banner_area.find("mcpFailedBanner").text()
    assert not node.is_busy()


def test_image_and_long_result_in_the_card(
    qtbot: Any, window: Any, fake: FakeProvider
) -> None:
    node = window.nodes()[0]
    fake.script(Turn(tool_calls=[ToolCallSpec("mcp__local__image", {})]), Turn(text="a pixel"),
                Turn(tool_calls=[ToolCallSpec("mcp__local__big", {"size": 150_000})]), Turn(text="long"))
    with qtbot.waitSignal(node.run_finished, timeout=15_000):
        node.submit("image")
    card = node.transcript.card_for(last_call(node).id)
    qtbot.waitUntil(lambda: card.images is not None and card.images.thumbs[0].is_loaded, timeout=10_000)
    [thumb] = card.images.thumbs  # the tool card shows a result's images like a message's attachments
    assert thumb.objectName() == "attachmentThumb" and not thumb.icon().isNull()
    assert card.mcp_extras is None  # nothing else to add: the result was not cut
    assert "a red pixel" in (last_call(node).result or "")
    with qtbot.waitSignal(node.run_finished, timeout=15_000):
        node.submit("big")
    call = last_call(node)
    assert call.result is not None and len(call.result.encode()) < 101_000  # cut for the model
    tool_msgs = [m for m in (posts(fake)[-1].json or {})["messages"] if m.get("role") == "tool"]
    assert len(tool_msgs[-1]["content"]) < 101_000
    card = node.transcript.card_for(call.id)
    qtbot.waitUntil(lambda: card.mcp_extras is not None, timeout=10_000)
    button = card.mcp_extras.findChild(QPushButton, "mcpFullResultButton")
    button.click()
    assert card.result_view.toPlainText().count("x") == 150_000
