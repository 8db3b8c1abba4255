"""MCP in the app: one ``McpManager`` per ``AppContext``, created lazily, and its status as a Qt signal.

Nothing here imports the MCP SDK (nor ``desktop.core.mcp`` until a server is configured): the manager
imports the SDK when a server starts (``import mcp`` costs about a second), and :class:`McpHub`
creates the manager only when some server is enabled, after the window is usable
(:meth:`McpHub.ensure_started`, called by ``desktop.ui.mcp.servers`` after the first paint, or by a send).

* App-wide servers live in ``settings.json`` under ``"mcpServers"`` (kept in ``Settings.extra``; see
  :func:`read_app_servers` / :func:`write_app_servers`). Bearer tokens are in the OS keyring (service
  ``chatnodes``, user ``mcp:<name>``), never in a file, and only app servers ever get one.
* Project servers (``<project>/.mcp.json``) join the same manager only once the user trusted them
  (``desktop.ui.mcp.servers`` asks); a name that clashes with an app server gets a ``-project`` suffix.
* Each node can switch built-in tools, whole servers (``"mcp:<server>"``) and single MCP tools (their
  model-facing name) off: :meth:`McpHub.set_tools_off`, read by :meth:`McpHub.filter_tools`.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from collections import OrderedDict
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Signal

if TYPE_CHECKING:
    from desktop.core.chat.types import ChatToolDef, ToolOutput
    from desktop.core.config import GrantStore, SecretStore, Settings
    from desktop.core.mcp import McpManager, McpServerConfig, McpToolInfo, McpToolResult, ServerStatus

log = logging.getLogger(__name__)

__all__ = [
    "SETTINGS_KEY",
    "SERVER_PREFIX",
    "WAIT_LIMIT_S",
    "McpHub",
    "McpStatusHub",
    "hub_for",
    "read_app_servers",
    "server_key",
    "write_app_servers",
]

SETTINGS_KEY = "mcpServers"
"""The top-level key of ``settings.json`` holding the app-wide servers."""
SERVER_PREFIX = "mcp:"
"""``tools_off`` entries starting with this switch a whole server off (``"mcp:files"``)."""
WAIT_LIMIT_S = 10.0
"""How long a send waits for the node's servers that are still starting."""
_RESULTS_KEPT = 64

_hubs: weakref.WeakKeyDictionary[object, McpHub] = weakref.WeakKeyDictionary()


def hub_for(runtime: object) -> McpHub | None:
    """The hub of the context whose chat runtime is ``runtime`` (None: no MCP, e.g. a bare test node)."""
    try:
        return _hubs.get(runtime)
    except TypeError:
        return None


def server_key(server: str) -> str:
    """The ``tools_off`` entry that switches the whole server ``server`` off."""
    return SERVER_PREFIX + server


def read_app_servers(settings: Settings) -> dict[str, McpServerConfig]:
    """The app-wide servers of ``settings`` (``"mcpServers"``, kept in ``Settings.extra``).

    Raises:
        McpConfigError: The object is invalid (every problem names the server and field).
    """
    raw = settings.extra.get(SETTINGS_KEY)
    if raw is None:
        return {}
    from desktop.core.mcp import parse_mcp_servers

    return parse_mcp_servers(raw)


def write_app_servers(settings: Settings, servers: Mapping[str, McpServerConfig]) -> None:
    """Store ``servers`` as the ``"mcpServers"`` of ``settings`` (removed when empty)."""
    if servers:
        from desktop.core.mcp import mcp_servers_to_dict

        settings.extra[SETTINGS_KEY] = mcp_servers_to_dict(servers)
    else:
        settings.extra.pop(SETTINGS_KEY, None)


class McpStatusHub(QObject):
    """Where MCP status changes reach the UI.

    Signals:
        status_changed(object): a server's new ``ServerStatus``.
        servers_changed(): the configured servers (or the manager) changed.
    """

    status_changed = Signal(object)
    servers_changed = Signal()


class McpHub:
    """The MCP servers of one application context.

    Args:
        runtime: The context's chat runtime (nodes find the hub through it: :func:`hub_for`).
        settings: Returns the current settings.
        secrets: The key store (bearer tokens of app servers).
        environ: Where ``${env:NAME}`` is looked up.
        project_dir: Returns the open project folder (grants are keyed by it).
        builtin_tools: Returns the built-in tools of the open project.
        grants: The user's always-allow grants (MCP servers per node).

    Attributes:
        signals: The Qt object whose signals carry status changes.
        grants: The user's always-allow grants.
        config_error: Why the app's ``mcpServers`` could not be read, or None.
    """

    def __init__(
        self,
        *,
        runtime: object,
        settings: Callable[[], Settings],
        secrets: SecretStore,
        environ: Mapping[str, str],
        project_dir: Callable[[], Path | None],
        builtin_tools: Callable[[], list[ChatToolDef]],
        grants: GrantStore,
    ) -> None:
        self.signals = McpStatusHub()
        self.grants = grants
        self.manager: McpManager | None = None
        self.config_error: str | None = None
        self._settings = settings
        self._secrets = secrets
        self._environ = environ
        self._project_dir = project_dir
        self._builtin_tools = builtin_tools
        self._project_servers: dict[str, McpServerConfig] = {}
        self._app_names: set[str] = set()
        self._tools_off: dict[str, frozenset[str]] = {}
        self._results: OrderedDict[tuple[str, str], McpToolResult] = OrderedDict()
        self._tasks: set[asyncio.Task[Any]] = set()
        self._closed = False
        _hubs[runtime] = self

    # -- configuration ---------------------------------------------------------------------------
    def configured(self) -> dict[str, McpServerConfig]:
        """Every server the manager should know: the app's, then the trusted project's."""
        from desktop.core.mcp import McpConfigError

        try:
            app = read_app_servers(self._settings())
            self.config_error = None
        except McpConfigError as err:
            self.config_error = f"settings.json \u201cmcpServers\u201d: {err}"
            app = {}
        self._app_names = set(app)
        servers = dict(app)
        for name, config in self._project_servers.items():
            key = name if name not in servers else f"{name}-project"
            servers[key] = _renamed(config, key)
        return servers

    def grant_key(self, server: str) -> str | None:
        """What an "Always allow this server" grant names: the server and what it runs.

        ``name#<12 hex of SHA-256 of its transport, command line / URL and cwd>``, so a grant never
        carries over to a different server that reuses the name (a project's ``.mcp.json``, or an
        edited command); None for an unknown server.
        """
        import hashlib
        import json

        config = self.configured().get(server)
        if config is None:
            return None
        what = [config.transport, config.command, list(config.args), config.url, config.cwd]
        digest = hashlib.sha256(json.dumps(what, ensure_ascii=False).encode("utf-8")).hexdigest()[:12]
        return f"{server}#{digest}"

    def wanted(self) -> bool:
        """True when at least one configured server is enabled (then the manager is worth starting)."""
        if not self._project_servers and SETTINGS_KEY not in self._settings().extra:
            return False  # the usual case: not even desktop.core.mcp is imported
        return any(s.enabled for s in self.configured().values())

    def secret_for(self, name: str) -> str | None:
        """The bearer token of an app server (``mcp:<name>`` in the keyring); never for project servers."""
        if name not in self._app_names:
            return None
        from desktop.core.mcp import keyring_user

        return self._secrets.get(keyring_user(name))

    def set_project_servers(self, servers: Mapping[str, McpServerConfig]) -> None:
        """Use these (trusted) project servers from now on (applied at once when the manager runs;
        otherwise they start with the others in :meth:`ensure_started`)."""
        self._project_servers = dict(servers)
        if self.manager is not None and not self._closed:
            self._spawn(self.manager.set_servers(self.configured()))
            self.signals.servers_changed.emit()

    def apply(self) -> None:
        """The settings or project servers changed: update the running manager, or start one if wanted."""
        if self._closed:
            return
        if self.manager is None:
            self.ensure_started()
        else:
            self._spawn(self.manager.set_servers(self.configured()))
        self.signals.servers_changed.emit()

    def ensure_started(self) -> bool:
        """Create the manager and start every enabled server when any is configured; True when it runs."""
        if self.manager is not None:
            return True
        if self._closed or not self.wanted():
            return False
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            log.debug("no running event loop: the MCP servers start later")
            return False
        from desktop.core.mcp import McpManager

        self.manager = McpManager(
            self.configured(),
            secret_for=self.secret_for,
            environ=self._environ,
            on_status=self._on_status,
        )
        self.manager.start()
        self.signals.servers_changed.emit()
        return True

    def _on_status(self, status: ServerStatus) -> None:
        if status.state == "failed":
            log.warning("MCP server %s: %s", status.name, status.summary())
        self.signals.status_changed.emit(status)

    def statuses(self) -> dict[str, ServerStatus]:
        """The status of every server the manager knows (empty before it starts)."""
        return self.manager.statuses() if self.manager is not None else {}

    def restart(self, name: str) -> None:
        """Restart one server in the background (starts the manager when it is not running)."""
        if self.manager is None:
            self.ensure_started()
        elif name in self.manager.server_names():
            self._spawn(self.manager.restart(name))

    def _spawn(self, coro: Any) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._task_done)

    def _task_done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("MCP task failed: %s", task.exception())

    # -- per node --------------------------------------------------------------------------------
    def set_tools_off(self, node_id: str, off: frozenset[str]) -> None:
        """What node ``node_id`` switched off: built-in tool names, ``mcp:<server>``, MCP tool names."""
        self._tools_off[node_id] = off

    def tools_off(self, node_id: str) -> frozenset[str]:
        """What node ``node_id`` switched off."""
        return self._tools_off.get(node_id, frozenset())

    def node_servers(self, node_id: str) -> list[str]:
        """The servers enabled for a node (not switched off there)."""
        if self.manager is None:
            return []
        off = self.tools_off(node_id)
        return [s for s in self.manager.server_names() if server_key(s) not in off]

    def starting_for(self, node_id: str) -> list[str]:
        """The node's servers that are still starting."""
        if self.manager is None:
            return []
        starting = set(self.manager.starting())
        return [s for s in self.node_servers(node_id) if s in starting]

    async def wait_for_node(self, node_id: str, timeout: float = WAIT_LIMIT_S) -> None:
        """Wait (at most ``timeout`` s) until none of the node's servers is starting."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while self.manager is not None and self.starting_for(node_id) and loop.time() < deadline:
            await self.manager.wait_ready(timeout=min(0.5, deadline - loop.time()))

    def filter_tools(self, node_id: str, builtin: list[ChatToolDef]) -> list[ChatToolDef]:
        """The node's tools: the built-in ones it kept, then the MCP tools of its servers."""
        off = self.tools_off(node_id)
        tools = [t for t in builtin if t.name not in off]
        if self.manager is None:
            return tools
        for tool in self.manager.tools(set(self.node_servers(node_id))):
            if tool.name not in off:
                tools.append(self._remembering(tool))
        return tools

    def _remembering(self, tool: ChatToolDef) -> ChatToolDef:
        """``tool`` whose run keeps the whole result (images, full text) for the card."""
        import dataclasses

        manager = self.manager
        name = tool.name

        from desktop.core.mcp import McpToolError

        async def run(args: dict[str, Any]) -> str | ToolOutput:
            if manager is None:  # pragma: no cover - tools exist only while a manager runs
                raise McpToolError(f"MCP tool {name} is not available")
            result = await manager.call(name, args)
            self._remember(name, result)
            if result.is_error:
                where = f'MCP server "{result.server}", tool "{result.tool}"'
                raise McpToolError(f"{where} returned an error: {result.text}")
            return result.model_output()

        return dataclasses.replace(tool, run=run)

    def _remember(self, name: str, result: McpToolResult) -> None:
        self._results[(name, result.text)] = result
        while len(self._results) > _RESULTS_KEPT:
            self._results.popitem(last=False)

    def result_for(self, name: str, text: str | None) -> McpToolResult | None:
        """The whole result of a recent MCP call of ``name`` whose model text was ``text``."""
        return self._results.get((name, text)) if text is not None else None

    def tool_info(self, name: str) -> McpToolInfo | None:
        """What the approval card shows for a model-facing MCP tool name (None: not an MCP tool)."""
        return self.manager.tool_info(name) if self.manager is not None else None

    def builtin_names(self) -> list[str]:
        """The names of the built-in tools."""
        try:
            return [t.name for t in self._builtin_tools()]
        except Exception:  # noqa: BLE001 - a vanished project folder: no tools to list
            return []

    def project_dir(self) -> Path | None:
        """The open project folder."""
        return self._project_dir()

    # -- shutdown --------------------------------------------------------------------------------
    async def aclose(self) -> None:
        """Stop every server (stdio processes end; no orphans). Idempotent."""
        self._closed = True
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        manager, self.manager = self.manager, None
        if manager is not None:
            await manager.aclose()


def _renamed(config: McpServerConfig, name: str) -> McpServerConfig:
    if config.name == name:
        return config
    import dataclasses

    return dataclasses.replace(config, name=name)
