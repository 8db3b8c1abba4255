"""``McpManager``: every configured MCP server, their status, their tools, and tool calls.

It runs on the current asyncio loop (the app's qasync loop; tests use plain asyncio). Servers start
in the background; a status-change callback (a plain callable) reports starting / ready / failed /
stopped. ``tools()`` gives ``ChatToolDef`` objects with model-facing names (``mcp__<server>__<tool>``)
whose ``run`` calls the tool with the server's timeout; ``tool_info(name)`` gives what the approval
card shows. Every failure is an error naming the server, never a hang; cancelling a call's task
cancels the request (the SDK sends ``notifications/cancelled``).
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from desktop.core.chat.types import ChatToolDef, ToolOutput
from desktop.core.mcp._config import McpServerConfig
from desktop.core.mcp._names import ToolNameMap
from desktop.core.mcp._results import McpToolResult, convert_result
from desktop.core.mcp._session import Connection, ServerStatus

if TYPE_CHECKING:
    from mcp_types import Tool

__all__ = ["McpManager", "McpToolError", "McpToolInfo", "DEFAULT_INIT_TIMEOUT_S"]

log = logging.getLogger(__name__)

DEFAULT_INIT_TIMEOUT_S = 10.0
_MAX_DESCRIPTION = 10_000
_CALL_GRACE_S = 5.0
"""Extra time past the server's own timeout before a call is abandoned no matter what."""


class McpToolError(Exception):
    """A failed MCP tool call; the message names the server (and never holds a secret)."""


@dataclass(frozen=True, slots=True)
class McpToolInfo:
    """What the approval card shows for one MCP tool.

    Attributes:
        name: The model-facing name (``mcp__server__tool``).
        server: The server's name.
        tool: The tool's own name.
        title: Its display title, when the server gave one.
        description: The server's description of it.
        input_schema: The JSON schema of its arguments.
        read_only: The server claims it changes nothing (annotation; None when not stated).
        destructive: The server says it may destroy data (None when not stated).
        idempotent: The server says repeated calls do no more harm (None when not stated).
        open_world: The server says it reaches outside (web, other systems) (None when not stated).
        needs_approval: Whether a call asks the user, per the server's ``approval`` policy.
    """

    name: str
    server: str
    tool: str
    title: str | None
    description: str
    input_schema: dict[str, Any]
    read_only: bool | None
    destructive: bool | None
    idempotent: bool | None
    open_world: bool | None
    needs_approval: bool


def _needs_approval(policy: str, read_only: bool | None) -> bool:
    if policy == "never":
        return False
    if policy == "ask_unless_read_only":
        return read_only is not True
    return True


def _schema(tool: Tool) -> dict[str, Any]:
    schema = dict(tool.input_schema) if isinstance(tool.input_schema, dict) else {}
    schema.setdefault("type", "object")
    if schema.get("type") == "object":
        schema.setdefault("properties", {})
    return schema


def _closed_text(end: str | None) -> str:
    """Why a call failed when the connection closed, from how the server's process ended (if known)."""
    if end is None:
        return "the server closed the connection during the call"
    if end.startswith("exited"):
        return f"the server {end} and closed the connection during the call"
    return f"the server {end}"


class McpManager:
    """Runs the configured servers and exposes their tools.

    Args:
        servers: Servers by name (disabled ones are kept, shown as stopped, never started).
        secret_for: ``name -> token or None``: the bearer token of an HTTP server (the keyring).
        environ: Where ``${env:NAME}`` is looked up (``os.environ`` when None).
        on_status: Called with a ``ServerStatus`` on every change (exceptions are logged).
        init_timeout: Seconds a server has to answer ``initialize`` and list its tools.
        client_name: The client name sent in ``initialize``.
        client_version: The client version sent in ``initialize``.
    """

    def __init__(
        self,
        servers: Mapping[str, McpServerConfig],
        *,
        secret_for: Callable[[str], str | None] | None = None,
        environ: Mapping[str, str] | None = None,
        on_status: Callable[[ServerStatus], None] | None = None,
        init_timeout: float = DEFAULT_INIT_TIMEOUT_S,
        client_name: str = "chatnodes",
        client_version: str = "0.1.0",
    ) -> None:
        self._secret_for = secret_for
        self._environ = environ
        self._on_status = on_status
        self._init_timeout = init_timeout
        self._client = (client_name, client_version)
        self._conns: dict[str, Connection] = {}
        self._retired: set[Connection] = set()  # removed from the settings, still stopping
        self._names = ToolNameMap(())
        self._waiters: set[asyncio.Future[None]] = set()
        self._started = False
        self._closed = False
        for name, config in servers.items():
            self._conns[name] = self._new_connection(config)

    def _new_connection(self, config: McpServerConfig) -> Connection:
        return Connection(
            config,
            environ=self._environ,
            secret_for=self._secret_for,
            init_timeout=self._init_timeout,
            client_name=self._client[0],
            client_version=self._client[1],
            on_change=self._changed_cb,
        )

    def _changed_cb(self, conn: Connection) -> None:
        if self._conns.get(conn.name) is not conn:
            return  # a replaced connection winding down
        self._rebuild_names()
        for waiter in list(self._waiters):
            if not waiter.done():
                waiter.set_result(None)
        if self._on_status is not None:
            try:
                self._on_status(conn.status())
            except Exception:
                log.exception("MCP on_status callback failed")

    def _rebuild_names(self) -> None:
        pairs = [(c.name, t.name) for c in self._conns.values() for t in c.tools]
        self._names = ToolNameMap(pairs)

    # ------------------------------------------------------------------------------------------
    # Lifecycle

    def start(self, name: str | None = None) -> None:
        """Start one server, or every enabled one, in the background (returns at once).

        Raises:
            RuntimeError: No running event loop, or the manager is closed.
            KeyError: Unknown server name.
        """
        if self._closed:
            raise RuntimeError("the MCP manager is closed")
        asyncio.get_running_loop()
        self._started = True
        targets = [self._conns[name]] if name is not None else list(self._conns.values())
        for conn in targets:
            if conn.config.enabled:
                conn.start()

    async def stop(self, name: str) -> None:
        """Stop one server and wait until it has ended.

        Raises:
            KeyError: Unknown server name.
        """
        await self._conns[name].stop()

    async def restart(self, name: str) -> None:
        """Stop a server, then start it again in the background (an enabled one).

        Raises:
            KeyError: Unknown server name.
        """
        conn = self._conns[name]
        await conn.stop()
        if conn.config.enabled and not self._closed:
            conn.start()

    async def set_servers(self, servers: Mapping[str, McpServerConfig]) -> None:
        """Apply new settings: removed servers stop, changed ones restart, new enabled ones start."""
        old = self._conns
        for name in [n for n in old if n not in servers]:
            # Held until stopped: a close that cancels this (the app quits) must still end it.
            removed = old.pop(name)
            self._retired.add(removed)
            await removed.stop()
            self._retired.discard(removed)
        for name, config in servers.items():
            current = old.get(name)
            if current is not None and current.config == config:
                continue
            if current is not None:
                await current.stop()
            conn = self._new_connection(config)
            old[name] = conn
            if config.enabled and not self._closed and self._started:
                conn.start()
            else:
                self._changed_cb(conn)
        self._conns = {name: old[name] for name in servers}
        self._rebuild_names()

    async def aclose(self) -> None:
        """Stop every server (stdio: process group ended after a short grace; no orphans)."""
        self._closed = True
        conns = [*self._conns.values(), *self._retired]
        if conns:
            await asyncio.gather(*(c.stop() for c in conns), return_exceptions=True)

    # ------------------------------------------------------------------------------------------
    # Status

    def server_names(self) -> list[str]:
        """Configured server names, in settings order."""
        return list(self._conns)

    def status(self, name: str) -> ServerStatus:
        """The status of one server.

        Raises:
            KeyError: Unknown server name.
        """
        conn = self._conns[name]
        status = conn.status()
        if not conn.config.enabled and status.state == "stopped" and status.reason is None:
            return ServerStatus(name, "stopped", reason="disabled", stderr_tail=status.stderr_tail)
        return status

    def statuses(self) -> dict[str, ServerStatus]:
        """Every server's status."""
        return {name: self.status(name) for name in self._conns}

    def starting(self) -> list[str]:
        """Names of the servers still starting."""
        return [c.name for c in self._conns.values() if c.state == "starting"]

    async def wait_ready(self, timeout: float = 10.0) -> dict[str, ServerStatus]:
        """Wait until no server is starting (each is ready, failed or stopped), at most ``timeout`` s.

        Returns:
            The statuses when done waiting (some may still be starting after a timeout).
        """
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while self.starting():
            remaining = deadline - loop.time()
            if remaining <= 0:
                break
            # Registered before any await: a change can never slip between the check and the wait.
            waiter: asyncio.Future[None] = loop.create_future()
            self._waiters.add(waiter)
            try:
                await asyncio.wait({waiter}, timeout=remaining)
            finally:
                self._waiters.discard(waiter)
                waiter.cancel()
        return self.statuses()

    # ------------------------------------------------------------------------------------------
    # Tools

    def tool_info(self, name: str) -> McpToolInfo | None:
        """The approval card's data for a model-facing tool name, or None when it is not an MCP tool."""
        pair = self._names.resolve(name)
        if pair is None:
            return None
        conn = self._conns.get(pair[0])
        tool = next((t for t in conn.tools if t.name == pair[1]), None) if conn is not None else None
        if conn is None or tool is None:
            return None
        ann = tool.annotations
        read_only = ann.read_only_hint if ann is not None else None
        description = tool.description or tool.title or f'Tool "{tool.name}" of MCP server "{conn.name}"'
        return McpToolInfo(
            name=name,
            server=conn.name,
            tool=tool.name,
            title=tool.title or (ann.title if ann is not None else None),
            description=description[:_MAX_DESCRIPTION],
            input_schema=_schema(tool),
            read_only=read_only,
            destructive=ann.destructive_hint if ann is not None else None,
            idempotent=ann.idempotent_hint if ann is not None else None,
            open_world=ann.open_world_hint if ann is not None else None,
            needs_approval=_needs_approval(conn.config.approval, read_only),
        )

    def tools(self, servers: set[str] | None = None) -> list[ChatToolDef]:
        """``ChatToolDef`` objects for the tools of ready servers (optionally only ``servers``)."""
        out: list[ChatToolDef] = []
        for conn in self._conns.values():
            if conn.state != "ready" or (servers is not None and conn.name not in servers):
                continue
            for tool in conn.tools:
                name = self._names.name_for(conn.name, tool.name)
                info = self.tool_info(name)
                if info is None:
                    continue
                out.append(
                    ChatToolDef(
                        name=name,
                        description=info.description,
                        schema=info.input_schema,
                        needs_approval=info.needs_approval,
                        run=functools.partial(self.run, name),
                        interruptible=True,  # a cancelled call sends notifications/cancelled
                    )
                )
        return out

    async def run(self, name: str, args: dict[str, Any]) -> str | ToolOutput:
        """``ChatToolDef.run``: the result text for the model, with its images when it has any.

        Raises:
            McpToolError: The call failed or the server flagged an error (the message names the server).
        """
        result = await self.call(name, args)
        if result.is_error:
            where = f'MCP server "{result.server}", tool "{result.tool}"'
            raise McpToolError(f"{where} returned an error: {result.text}")
        return result.model_output()

    async def call(self, name: str, args: dict[str, Any]) -> McpToolResult:
        """Call a tool by its model-facing name with the server's timeout; the full result object.

        Raises:
            McpToolError: Unknown tool, server not ready, timeout, server exit, protocol error.
            asyncio.CancelledError: The caller's task was cancelled (the request is cancelled too).
        """
        import anyio
        from mcp import MCPError
        from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT

        pair = self._names.resolve(name)
        if pair is None:
            raise McpToolError(f"unknown MCP tool: {name}")
        server, tool = pair
        conn = self._conns.get(server)
        session = conn.session if conn is not None else None
        if conn is None or session is None or conn.state != "ready":
            state = conn.status().summary() if conn is not None else "removed"
            raise McpToolError(f'MCP server "{server}" is not running ({state}); "{tool}" was not called')
        timeout = conn.config.timeout_s
        where = f'MCP server "{server}", tool "{tool}"'
        try:
            with anyio.fail_after(timeout + _CALL_GRACE_S):
                result = await session.call_tool(tool, args, read_timeout_seconds=timeout)
        except MCPError as err:
            if err.code == REQUEST_TIMEOUT:
                raise McpToolError(f"{where}: no answer within {timeout:g} s (call cancelled)") from None
            if err.code == CONNECTION_CLOSED:
                raise McpToolError(f"{where}: {_closed_text(conn.end_text())}") from None
            raise McpToolError(f"{where}: {err.message or 'error ' + str(err.code)}") from None
        except TimeoutError:
            raise McpToolError(f"{where}: no answer within {timeout:g} s") from None
        except Exception as err:  # validation errors, transport faults...
            text = str(err).splitlines()[0] if str(err) else ""
            raise McpToolError(f"{where}: {type(err).__name__}{': ' + text if text else ''}") from None
        return convert_result(server, tool, result)
