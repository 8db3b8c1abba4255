"""The mcpServers config: the ecosystem's format, our keys, round trips, validation, env references."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from desktop.core.mcp import (
    McpConfigError,
    McpImportError,
    ResolvedHttp,
    ResolvedStdio,
    claude_desktop_config_path,
    expand_env_refs,
    import_claude_desktop,
    keyring_user,
    mcp_servers_to_dict,
    parse_mcp_file,
    parse_mcp_server,
    parse_mcp_servers,
    resolve_launch,
)

CLAUDE_DESKTOP = {
    "mcpServers": {
        "files": {
            "command": "npx",
            "args": ["-y", "@modelcontextprotocol/server-filesystem", "/home/me/notes"],
            "env": {"DEBUG": "0"},
        },
        "search": {
            "type": "http",
            "url": "https://mcp.example.com/mcp",
            "headers": {"Authorization": "Bearer ${env:SEARCH_TOKEN}"},
        },
        "old": {"type": "sse", "url": "http://localhost:8931/sse"},
        "cursor-style": {"url": "http://localhost:3000/mcp"},
        "code-style": {"type": "stdio", "command": "uvx", "args": ["mcp-server-git"], "cwd": "repo"},
    },
    "globalShortcut": "Ctrl+Space",
}


def test_parses_every_shape_users_have() -> None:
    servers = parse_mcp_servers(CLAUDE_DESKTOP["mcpServers"])
    assert list(servers) == ["files", "search", "old", "cursor-style", "code-style"]
    files = servers["files"]
    assert files.transport == "stdio" and files.command == "npx"
    assert files.args == ("-y", "@modelcontextprotocol/server-filesystem", "/home/me/notes")
    assert dict(files.env) == {"DEBUG": "0"}
    assert (files.enabled, files.approval, files.timeout_s) == (True, "ask", 60.0)
    assert servers["search"].transport == "http" and servers["search"].url == "https://mcp.example.com/mcp"
    assert servers["old"].transport == "sse"
    assert servers["cursor-style"].transport == "http" and servers["cursor-style"].type is None
    assert servers["code-style"].transport == "stdio" and servers["code-style"].cwd == "repo"
    assert files.describe() == "npx -y @modelcontextprotocol/server-filesystem /home/me/notes"
    assert servers["old"].describe() == "http://localhost:8931/sse (SSE)"
    assert servers["search"].describe() == "https://mcp.example.com/mcp"


def test_round_trip_keeps_unknown_keys_and_our_keys() -> None:
    raw = {
        "files": {
            "command": "npx",
            "args": ["x"],
            "enabled": False,
            "approval": "ask_unless_read_only",
            "timeout_s": 15,
            "disabled": True,
            "autoApprove": ["read_file"],
            "x-vendor": {"nested": [1, 2]},
        },
        "web": {"type": "streamable-http", "url": "https://e.com/mcp", "approval": "never", "timeout_s": 2.5},
        "plain": {"command": "srv"},
    }
    servers = parse_mcp_servers(raw)
    extra = {"disabled": True, "autoApprove": ["read_file"], "x-vendor": {"nested": [1, 2]}}
    assert servers["files"].extra == extra
    out = mcp_servers_to_dict(servers)
    assert out == raw
    assert json.loads(json.dumps(out)) == raw
    assert parse_mcp_servers(out) == servers


def test_validation_errors_name_the_server_and_the_field() -> None:
    raw = {
        "a": {"command": "", "args": "not-a-list"},
        "b": {"type": "websocket", "url": "ws://x"},
        "c": {"url": "ftp://nope", "headers": {"X": 1}},
        "d": {"command": "x", "approval": "sometimes", "timeout_s": -1, "enabled": "yes", "env": {"K": 3}},
        "e": "not an object",
        "f": {"command": "x", "url": "http://both"},
    }
    with pytest.raises(McpConfigError) as info:
        parse_mcp_servers(raw)
    problems = info.value.problems
    expected = [
        'server "a": "command" must be a non-empty string',
        'server "a": "args" must be a list of strings',
        'server "b": "type" must be one of "stdio", "http", "streamable-http", "sse"',
        'server "c": "url" must be an http:// or https:// URL',
        "server \"c\": \"headers\": the value of 'X' must be a string",
        "server \"d\": \"env\": the value of 'K' must be a string",
        'server "d": "enabled" must be true or false',
        'server "d": "approval" must be "ask", "ask_unless_read_only" or "never"',
        'server "d": "timeout_s" must be a positive number of seconds',
        'server "e" must be a JSON object',
        'server "f": "url" is for HTTP servers; a stdio server has a "command"',
    ]
    for line in expected:
        assert line in problems, (line, problems)
    with pytest.raises(McpConfigError, match="must be a JSON object of servers"):
        parse_mcp_servers(["x"])
    with pytest.raises(McpConfigError, match="non-empty"):
        parse_mcp_server("", {"command": "x"})
    for bad in (True, float("inf"), 0, "10"):
        with pytest.raises(McpConfigError, match="timeout_s"):
            parse_mcp_server("t", {"command": "x", "timeout_s": bad})


def test_env_references_expand_at_start_only() -> None:
    env = {"TOKEN": "s3cret", "EMPTY": ""}
    assert expand_env_refs("Bearer ${env:TOKEN}", env, where="w") == "Bearer s3cret"
    assert expand_env_refs("${TOKEN}/${EMPTY}/${MISSING:-dflt}", env, where="w") == "s3cret//dflt"
    assert expand_env_refs("no refs $TOKEN {env:TOKEN}", env, where="w") == "no refs $TOKEN {env:TOKEN}"
    with pytest.raises(McpConfigError, match=r"^w refers to \$\{env:NOPE\}, which is not set$"):
        expand_env_refs("${env:NOPE}", env, where="w")

    stdio = parse_mcp_server("s", {"command": "srv", "env": {"API_KEY": "${env:TOKEN}"}, "cwd": "sub"})
    launch = resolve_launch(stdio, environ=env)
    assert isinstance(launch, ResolvedStdio)
    assert launch.env == {"API_KEY": "s3cret"} and launch.cwd == "sub"
    assert "s3cret" not in repr(launch)
    assert stdio.to_dict()["env"] == {"API_KEY": "${env:TOKEN}"}


def test_bearer_token_comes_from_secret_for_and_wins_over_the_file() -> None:
    headers = {"authorization": "Bearer old", "X": "1"}
    web = parse_mcp_server("web", {"url": "https://e.com/mcp", "headers": headers})
    launch = resolve_launch(web, environ={}, secret_for=lambda name: "tok-" + name)
    assert isinstance(launch, ResolvedHttp)
    assert launch.headers == {"X": "1", "Authorization": "Bearer tok-web"}
    assert "tok-web" not in repr(launch)
    unchanged = resolve_launch(web, environ={}, secret_for=lambda _name: None)
    assert isinstance(unchanged, ResolvedHttp) and unchanged.headers["authorization"] == "Bearer old"
    assert "tok-web" not in json.dumps(web.to_dict())
    assert keyring_user("web") == "mcp:web"


def test_project_servers_resolve_cwd_against_the_project(tmp_path: Path) -> None:
    raw = {"a": {"command": "x"}, "b": {"command": "y", "cwd": "tools"}}
    servers = parse_mcp_servers(raw, base_dir=str(tmp_path))
    a, b = (resolve_launch(servers[n], environ={}) for n in ("a", "b"))
    assert isinstance(a, ResolvedStdio) and a.cwd == str(tmp_path)
    assert isinstance(b, ResolvedStdio) and b.cwd == str(tmp_path / "tools")
    assert "base_dir" not in servers["a"].to_dict()


def test_parse_mcp_file_reports_the_file() -> None:
    assert list(parse_mcp_file(json.dumps(CLAUDE_DESKTOP).encode(), source="f.json")) == [
        "files",
        "search",
        "old",
        "cursor-style",
        "code-style",
    ]
    assert parse_mcp_file(b"{}", source="f.json") == {}
    with pytest.raises(McpConfigError, match=r"^f.json: not valid JSON"):
        parse_mcp_file(b"{nope", source="f.json")
    with pytest.raises(McpConfigError, match=r"^f.json: the file must hold a JSON object"):
        parse_mcp_file(b"[]", source="f.json")
    with pytest.raises(McpConfigError, match=r'^f.json: server "x": "command"'):
        parse_mcp_file(b'{"mcpServers": {"x": {"command": 1}}}', source="f.json")


def test_claude_desktop_path_per_platform(tmp_path: Path) -> None:
    home = tmp_path
    assert claude_desktop_config_path(platform="darwin", environ={}, home=home) == (
        home / "Library" / "Application Support" / "Claude" / "claude_desktop_config.json"
    )
    appdata = {"APPDATA": str(tmp_path / "AD")}
    assert claude_desktop_config_path(platform="win32", environ=appdata, home=home) == (
        tmp_path / "AD" / "Claude" / "claude_desktop_config.json"
    )
    assert claude_desktop_config_path(platform="linux", environ={}, home=home) == (
        home / ".config" / "Claude" / "claude_desktop_config.json"
    )


def test_import_from_claude_desktop(tmp_path: Path) -> None:
    path = tmp_path / "claude_desktop_config.json"
    with pytest.raises(McpImportError, match="Claude Desktop's config was not found at"):
        import_claude_desktop(path)
    path.write_text("{ broken")
    with pytest.raises(McpImportError, match=r"not valid JSON"):
        import_claude_desktop(path)
    path.write_text(json.dumps(CLAUDE_DESKTOP))
    servers = import_claude_desktop(path)
    assert list(servers)[:2] == ["files", "search"]
    path.write_text(json.dumps({"globalShortcut": "x"}))
    assert import_claude_desktop(path) == {}
    path.write_text(json.dumps({"mcpServers": {"bad": {"command": 5}}}))
    with pytest.raises(McpImportError, match='server "bad": "command" must be a non-empty string'):
        import_claude_desktop(path)
