"""What a permission card names for an MCP call (issue 24, item 2): the cleaned names the model uses,
the server's own names only beside them and made visible, so a name cannot forge the card."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from desktop.core.mcp import (
    CARD_NAME_LIMIT,
    McpManager,
    ToolNameMap,
    card_names,
    clean_name,
    parse_mcp_server,
)
from desktop.core.visible import visible_text

SERVERS = Path(__file__).parent / "servers"
sys.path.insert(0, str(SERVERS))
from forging_server import FORGED, LONG, REVERSED  # noqa: E402  (the server's own constants)

SAFE = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")


def test_the_forged_name_is_cleaned_and_its_given_form_shows_the_newline() -> None:
    model_name = ToolNameMap([("local", FORGED)]).name_for("local", FORGED)
    names = card_names(model_name, "local", FORGED)
    assert names.server == "local" and names.server_given is None
    assert set(names.tool) <= SAFE and "filesystem" in names.tool  # no quote, dash, space or newline
    assert model_name == names.model_name  # the name the model calls (over 64 characters: cut + hash)
    assert f"mcp__local__{names.tool}".startswith(model_name[: -len("_f0b0f57c")])
    assert names.tool_given is not None
    assert "\n" not in names.tool_given and "\\n" in names.tool_given
    assert names.tool_given == visible_text(FORGED)


def test_bidi_and_zero_width_characters_never_reach_the_card() -> None:
    names = card_names(f"mcp__s__{clean_name(REVERSED)}", "s\u202e", REVERSED)
    for text in (names.server, names.tool, names.model_name, names.server_given, names.tool_given):
        assert text is not None
        assert not any(c in text for c in "\u202e\u2066\u200b")
    assert names.server_given == "s<U+202E>"
    assert names.tool_given == "list<U+200B>_dir<U+202E><U+2066>exe.txt"


def test_a_long_given_name_is_cut() -> None:
    names = card_names("mcp__s__t", "s", "t" * 500)
    assert names.tool_given is None  # "ttt…" is already clean: shown once, as the model sees it
    long = card_names("mcp__s__x", "s", "\u00e9" * 500)
    assert long.tool_given == "\u00e9" * CARD_NAME_LIMIT + "\u2026"
    assert long.tool == "_" * 500


@pytest.mark.anyio
async def test_a_real_server_s_names_reach_the_card_cleaned() -> None:
    script = str(SERVERS / "forging_server.py")
    config = parse_mcp_server("forging", {"command": sys.executable, "args": [script]})
    manager = McpManager({"forging": config})
    try:
        manager.start()
        status = (await manager.wait_ready(timeout=10))["forging"]
        assert status.state == "ready", status
        given = {info.tool for t in manager.tools() if (info := manager.tool_info(t.name)) is not None}
        assert given == {FORGED, REVERSED, LONG}  # the SDK passed the names through as they are
        for tool in manager.tools():
            info = manager.tool_info(tool.name)
            assert info is not None
            names = card_names(info.name, info.server, info.tool)
            assert names.model_name == tool.name  # what the user approves is what the model calls
            assert set(names.server) <= SAFE and set(names.tool) <= SAFE
            assert names.tool_given is not None and names.tool_given == visible_text(info.tool)
            assert "\n" not in names.tool_given and "\u202e" not in names.tool_given
            description = visible_text(info.description, keep_newlines=True)
            assert "\u2067" not in description
    finally:
        await manager.aclose()
