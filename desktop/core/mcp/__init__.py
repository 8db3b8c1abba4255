"""MCP (Model Context Protocol) tool servers: config, project trust, tool names, results, the manager.

Qt-free. Importing this package does NOT import the MCP SDK (``import mcp`` costs about a second):
the SDK is imported by ``McpManager`` when a server starts or a tool is called. Nothing imports this
package at app start-up; the app wires it in lazily.

Public API:

* config: ``McpServerConfig``, ``parse_mcp_server``, ``parse_mcp_servers``, ``mcp_servers_to_dict``,
  ``parse_mcp_file``, ``resolve_launch``, ``expand_env_refs``, ``keyring_user``, ``McpConfigError``,
  ``claude_desktop_config_path``, ``import_claude_desktop``, ``McpImportError``, ``DEFAULT_MAX_MESSAGE_MB``;
* project trust: ``TrustStore``, ``ProjectServers``, ``read_project_servers``;
* names: ``mangle_tool_name``, ``ToolNameMap``, and what a permission card shows: ``card_names``
  (``CardNames``), ``clean_name``;
* results: ``McpToolResult``, ``McpMedia``, ``McpResourceLink``, ``convert_result``, ``cut_for_model``;
* runtime: ``McpManager``, ``ServerStatus``, ``McpToolInfo``, ``McpToolError``.
"""

from __future__ import annotations

from desktop.core.mcp._config import (
    APPROVALS,
    DEFAULT_MAX_MESSAGE_MB,
    DEFAULT_TIMEOUT_S,
    KEYRING_SERVICE,
    Approval,
    McpConfigError,
    McpImportError,
    McpServerConfig,
    ResolvedHttp,
    ResolvedStdio,
    Transport,
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
from desktop.core.mcp._manager import DEFAULT_INIT_TIMEOUT_S, McpManager, McpToolError, McpToolInfo
from desktop.core.mcp._names import (
    CARD_NAME_LIMIT,
    MAX_TOOL_NAME,
    CardNames,
    ToolNameMap,
    card_names,
    clean_name,
    mangle_tool_name,
)
from desktop.core.mcp._results import (
    MODEL_TEXT_LIMIT,
    McpMedia,
    McpResourceLink,
    McpToolResult,
    convert_result,
    cut_for_model,
)
from desktop.core.mcp._session import ServerState, ServerStatus
from desktop.core.mcp._stderr import STDERR_LINES
from desktop.core.mcp._trust import PROJECT_FILE, TRUST_FILE, ProjectServers, TrustStore, read_project_servers

__all__ = [
    "APPROVALS",
    "CARD_NAME_LIMIT",
    "DEFAULT_INIT_TIMEOUT_S",
    "DEFAULT_MAX_MESSAGE_MB",
    "DEFAULT_TIMEOUT_S",
    "KEYRING_SERVICE",
    "MAX_TOOL_NAME",
    "MODEL_TEXT_LIMIT",
    "PROJECT_FILE",
    "STDERR_LINES",
    "TRUST_FILE",
    "Approval",
    "CardNames",
    "McpConfigError",
    "McpImportError",
    "McpManager",
    "McpMedia",
    "McpResourceLink",
    "McpServerConfig",
    "McpToolError",
    "McpToolInfo",
    "McpToolResult",
    "ProjectServers",
    "ResolvedHttp",
    "ResolvedStdio",
    "ServerState",
    "ServerStatus",
    "ToolNameMap",
    "Transport",
    "TrustStore",
    "card_names",
    "claude_desktop_config_path",
    "clean_name",
    "convert_result",
    "cut_for_model",
    "expand_env_refs",
    "import_claude_desktop",
    "keyring_user",
    "mangle_tool_name",
    "mcp_servers_to_dict",
    "parse_mcp_file",
    "parse_mcp_server",
    "parse_mcp_servers",
    "read_project_servers",
    "resolve_launch",
]
