"""How a server's status reads in menus, lists, banners and the status bar (no SDK, no asyncio)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from desktop.core.mcp import ServerStatus

__all__ = ["reason_text", "short_status"]


def short_status(status: ServerStatus) -> str:
    """A few words for lists and menus: ``ready, 3 tools``, ``starting…``, ``failed``, ``stopped``."""
    if status.state == "ready":
        return f"ready, {status.tool_count} tool{'s' if status.tool_count != 1 else ''}"
    if status.state == "stopped" and status.reason == "disabled":
        return "disabled"
    return "starting…" if status.state == "starting" else status.state


def reason_text(status: ServerStatus) -> str:
    """Why a server failed, without the leading ``MCP server "<name>"`` the core puts in front."""
    reason = status.reason or "no reason given"
    return reason.removeprefix(f'MCP server "{status.name}" ').removeprefix(f'MCP server "{status.name}": ')
