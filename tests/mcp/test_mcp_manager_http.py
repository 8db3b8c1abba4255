"""McpManager against the real streamable HTTP test server on loopback, which requires a bearer token."""

from __future__ import annotations

import asyncio
import subprocess

import pytest
from mcp_helpers import HTTP_TOKEN, PATIENCE_S, eventually

from desktop.core.mcp import McpManager, McpToolError, parse_mcp_server

pytestmark = pytest.mark.anyio


async def test_bearer_token_from_the_keyring_callable(http_server: str) -> None:
    asked: list[str] = []

    def secret_for(name: str) -> str | None:
        asked.append(name)
        return HTTP_TOKEN

    config = parse_mcp_server("web", {"type": "http", "url": http_server})
    manager = McpManager({"web": config}, secret_for=secret_for)
    try:
        manager.start()
        status = (await manager.wait_ready(PATIENCE_S))["web"]
        assert status.state == "ready", status
        assert asked == ["web"]
        assert {t.name for t in manager.tools()} == {"mcp__web__shout", "mcp__web__big"}
        assert await manager.run("mcp__web__shout", {"text": "hi"}) == "HI"
        # Larger than the SDK's default 1 MiB SSE event limit.
        big = await manager.call("mcp__web__big", {"size": 3 * 1024 * 1024})
        assert len(big.full_text) == 3 * 1024 * 1024 and big.truncated
    finally:
        await manager.aclose()
    assert HTTP_TOKEN not in repr(config) and HTTP_TOKEN not in str(config.to_dict())


async def test_header_with_env_reference(http_server: str) -> None:
    config = parse_mcp_server(
        "web",
        {
            "type": "streamable-http",
            "url": http_server,
            "headers": {"Authorization": "Bearer ${env:WEB_TOKEN}"},
        },
    )
    manager = McpManager({"web": config}, environ={"WEB_TOKEN": HTTP_TOKEN})
    try:
        manager.start()
        assert (await manager.wait_ready(PATIENCE_S))["web"].state == "ready"
        assert await manager.run("mcp__web__shout", {"text": "ok"}) == "OK"
    finally:
        await manager.aclose()


@pytest.mark.parametrize("token", [None, "wrong-token"])
async def test_wrong_or_missing_token_is_a_clear_auth_error(http_server: str, token: str | None) -> None:
    config = parse_mcp_server("web", {"type": "http", "url": http_server})
    manager = McpManager({"web": config}, secret_for=lambda _name: token)
    manager.start()
    status = (await manager.wait_ready(PATIENCE_S))["web"]
    assert status.state == "failed"
    assert status.reason == 'MCP server "web": authentication failed (HTTP 401); check its token or headers'
    if token:
        assert token not in (status.reason or "")
    await manager.aclose()


async def test_nothing_listening_is_a_clear_connect_error() -> None:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}/mcp"
    manager = McpManager({"web": parse_mcp_server("web", {"url": url})})
    manager.start()
    status = (await manager.wait_ready(PATIENCE_S))["web"]
    assert status.state == "failed"
    assert status.reason == f'MCP server "web": cannot connect to {url}'
    await manager.aclose()


async def test_server_going_away_fails_the_call_and_the_server(
    http_server_process: tuple[str, subprocess.Popen[bytes]],
) -> None:
    url, proc = http_server_process
    config = parse_mcp_server("web", {"url": url, "headers": {"Authorization": f"Bearer {HTTP_TOKEN}"}})
    manager = McpManager({"web": config})
    try:
        manager.start()
        assert (await manager.wait_ready(PATIENCE_S))["web"].state == "ready"
        proc.kill()
        proc.wait(PATIENCE_S)
        with pytest.raises(McpToolError, match=r'^MCP server "web", tool "shout": '):
            await asyncio.wait_for(manager.run("mcp__web__shout", {"text": "x"}), PATIENCE_S)
        await eventually(lambda: manager.status("web").state == "failed", "the server marked failed")
        assert manager.status("web").reason == f'MCP server "web": cannot connect to {url}'
    finally:
        await manager.aclose()


async def test_old_sse_transport(sse_server: str) -> None:
    config = parse_mcp_server("old", {"type": "sse", "url": sse_server})
    manager = McpManager({"old": config}, secret_for=lambda _name: HTTP_TOKEN)
    try:
        manager.start()
        status = (await manager.wait_ready(PATIENCE_S))["old"]
        assert status.state == "ready", status
        assert await manager.run("mcp__old__shout", {"text": "sse"}) == "SSE"
    finally:
        await manager.aclose()


async def test_old_sse_transport_wrong_token(sse_server: str) -> None:
    config = parse_mcp_server("old", {"type": "sse", "url": sse_server})
    manager = McpManager({"old": config}, secret_for=lambda _name: "nope")
    manager.start()
    status = (await manager.wait_ready(PATIENCE_S))["old"]
    assert status.state == "failed"
    assert status.reason == 'MCP server "old": authentication failed (HTTP 401); check its token or headers'
    await manager.aclose()
