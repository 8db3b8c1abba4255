"""One MCP server connection: an owner task that starts the transport and session, then waits.

The transports and ``ClientSession`` are anyio context managers whose task groups must be entered and
left by the same task, so each server gets one long-lived owner task on the running loop (the app's
qasync loop). Tool calls are made from the callers' own tasks through the live session. The SDK is
imported here, lazily, inside the owner task: importing this module costs nothing.

Stdio servers use the app's own transport (``_stdio.py``): it ends the connection when the server's
process exits (even while a child keeps its stdout open) and stops a server whose message is over the
server's ``max_message_mb``; the status then says which (``exited (code 3)``, ``sent a message over
32 MB; stopped``) and a call in flight fails at once with the same words. HTTP servers use the SDK's.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from desktop.core.mcp._config import (
    McpConfigError,
    McpServerConfig,
    ResolvedHttp,
    ResolvedStdio,
    resolve_launch,
)
from desktop.core.mcp._stderr import StderrTail
from desktop.core.mcp._stdio import MIB, StdioProcess, open_stdio

if TYPE_CHECKING:
    import httpx2
    from mcp import ClientSession
    from mcp.client._transport import TransportStreams
    from mcp_types import LoggingMessageNotificationParams, Tool

__all__ = ["ServerState", "ServerStatus", "Connection", "MAX_SSE_EVENT"]

log = logging.getLogger(__name__)

ServerState: TypeAlias = Literal["starting", "ready", "failed", "stopped"]

MAX_SSE_EVENT = 64 * 1024 * 1024
"""Largest single SSE event accepted from an HTTP server (the SDK's default, 1 MiB, is too small)."""
STOP_TIMEOUT_S = 8.0
"""How long stopping may take before the owner task is cancelled (the stdio transport's kill escalation
is stdin close, 2 s, SIGTERM to the process group, 2 s, SIGKILL)."""
_MAX_TOOL_PAGES = 100


@dataclass(frozen=True, slots=True)
class ServerStatus:
    """What the settings page and the status bar show for one server.

    Attributes:
        name: The server's name.
        state: ``starting``, ``ready``, ``failed`` or ``stopped``.
        tool_count: Tools offered (ready only).
        reason: Why it failed or stopped (names the server), else None.
        stderr_tail: The last lines of its stderr (stdio) and log messages, oldest first.
        started_s: Seconds from start to ready (ready only).
    """

    name: str
    state: ServerState
    tool_count: int = 0
    reason: str | None = None
    stderr_tail: tuple[str, ...] = ()
    started_s: float | None = None

    def summary(self) -> str:
        """One line: ``ready (3 tools)``, ``starting…``, ``failed: …`` or ``stopped``."""
        if self.state == "ready":
            return f"ready ({self.tool_count} tool{'s' if self.tool_count != 1 else ''})"
        if self.state == "starting":
            return "starting…"
        if self.state == "failed":
            return f"failed: {self.reason}"
        return "stopped" if not self.reason else f"stopped: {self.reason}"


def _flatten(exc: BaseException) -> list[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        out: list[BaseException] = []
        for sub in exc.exceptions:
            out.extend(_flatten(sub))
        return out
    return [exc]


def _garbage_text(exc: Exception) -> str:
    errors = getattr(exc, "errors", None)
    if callable(errors):
        with contextlib.suppress(Exception):
            first = errors()[0]
            value = first.get("input")
            if isinstance(value, bytes):  # the stdio transport validates the raw line
                value = value[:480].decode("utf-8", "replace")
            if isinstance(value, str):
                return repr(value[:120])
    return repr(str(exc).splitlines()[0][:120]) if str(exc) else type(exc).__name__


class _WatchedReadStream:
    """Wraps the transport's read stream: notices EOF and non-JSON-RPC input, passes all else on."""

    def __init__(self, inner: Any, conn: Connection) -> None:
        self._inner = inner
        self._conn = conn

    @property
    def last_context(self) -> Any:
        """The sender's context snapshot (streamable HTTP), looked up by the SDK's dispatcher."""
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> Any:
        import anyio

        try:
            item = await self._inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            self._conn._transport_closed()
            raise
        if isinstance(item, Exception):
            self._conn._bad_input(item)
        return item

    def __aiter__(self) -> _WatchedReadStream:
        return self

    async def __anext__(self) -> Any:
        import anyio

        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> _WatchedReadStream:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()


def _safe_url(url: str) -> str:
    """``url`` without its query and fragment (some servers take a key there) for error texts."""
    return url.split("?", 1)[0].split("#", 1)[0]


def _auth_failed(status: int) -> str:
    return f"authentication failed (HTTP {status}); check its token or headers"


class _StartFailed(Exception):
    """The server could not be started; the message is the reason (it names the server)."""


class Connection:
    """Starts, watches and stops one server; holds its live session while ready.

    Attributes:
        config: The server's configuration.
        state: The current state.
        reason: Why it failed or stopped.
        tools: The tools last listed (kept after a failure so names stay stable).
        session: The live ``ClientSession`` while ready, else None.
        tail: Its stderr/log ring buffer.
    """

    def __init__(
        self,
        config: McpServerConfig,
        *,
        environ: Mapping[str, str] | None,
        secret_for: Callable[[str], str | None] | None,
        init_timeout: float,
        client_name: str,
        client_version: str,
        on_change: Callable[[Connection], None],
    ) -> None:
        self.config = config
        self.name = config.name
        self.state: ServerState = "stopped"
        self.reason: str | None = None
        self.tools: list[Tool] = []
        self.session: ClientSession | None = None
        self.tail = StderrTail()
        self.started_s: float | None = None
        self._environ = environ
        self._secret_for = secret_for
        self._init_timeout = init_timeout
        self._client = (client_name, client_version)
        self._on_change = on_change
        self._task: asyncio.Task[None] | None = None
        self._wake = asyncio.Event()
        self._stopping = False
        self._closed = False
        self._fatal: str | None = None
        self._init_scope: Any = None
        self._http_status: int | None = None
        self._refresh_tasks: set[asyncio.Task[None]] = set()
        self._process: StdioProcess | None = None

    def end_text(self) -> str | None:
        """How a stdio server's process ended (``exited (code 3)``, ``sent a message over 32 MB; stopped``),
        or None while it runs (or for an HTTP server)."""
        return self._process.end_text() if self._process is not None else None

    def status(self) -> ServerStatus:
        """A snapshot of the state for the UI."""
        return ServerStatus(
            name=self.name,
            state=self.state,
            tool_count=len(self.tools) if self.state == "ready" else 0,
            reason=self.reason,
            stderr_tail=self.tail.lines(),
            started_s=self.started_s if self.state == "ready" else None,
        )

    def _set(self, state: ServerState, reason: str | None = None) -> None:
        self.state, self.reason = state, reason
        if state == "failed":
            log.warning("%s", reason)
        try:
            self._on_change(self)
        except Exception:
            log.exception("MCP status callback failed")

    @property
    def running(self) -> bool:
        """True while the owner task exists and has not finished."""
        return self._task is not None and not self._task.done()

    def start(self) -> None:
        """Start the owner task on the running loop (status ``starting`` at once).

        Raises:
            RuntimeError: No running event loop.
        """
        if self.running:
            return
        loop = asyncio.get_running_loop()
        self._stopping = self._closed = False
        self._fatal = None
        self._http_status = None
        self._process = None
        self._wake = asyncio.Event()
        self._set("starting")
        self._task = loop.create_task(self._run(), name=f"mcp-server-{self.name}")

    async def stop(self, reason: str | None = None) -> None:
        """Stop the server (stdio: its process tree is ended) and wait for it, at most ~8 s."""
        task = self._task
        if task is None or task.done():
            if self.state in ("starting", "ready"):
                self._set("stopped", reason)
            return
        self._stopping = True
        self._wake.set()
        for refresh in list(self._refresh_tasks):
            refresh.cancel()
        if self._init_scope is not None:
            self._init_scope.cancel()
        done, _ = await asyncio.wait({task}, timeout=STOP_TIMEOUT_S)
        if not done:
            log.warning('MCP server "%s" did not stop in %.0f s; cancelling it', self.name, STOP_TIMEOUT_S)
            task.cancel()
            await asyncio.wait({task}, timeout=2.0)
        self.session = None
        if self.state != "failed" or reason:
            self._set("stopped", reason)

    # ------------------------------------------------------------------------------------------
    # Called from the SDK's dispatcher task through _WatchedReadStream.

    def _transport_closed(self) -> None:
        self._closed = True
        self._wake.set()
        if self._init_scope is not None and not self._stopping:
            if self._fatal is None:
                self._fatal = f'MCP server "{self.name}" closed the connection before it was ready'
                end = self.end_text()
                if self._process is not None and self._process.fault is not None:
                    self._fatal = f'MCP server "{self.name}" {end}'
                elif end is not None:
                    self._fatal += f"; it {end}"
            self._init_scope.cancel()

    def _bad_input(self, exc: Exception) -> None:
        what = _garbage_text(exc)
        self.tail.add(f"[not JSON-RPC on stdout] {what}")
        if self._init_scope is not None:
            self._fatal = f'MCP server "{self.name}" wrote something that is not JSON-RPC to stdout: {what}'
            self._init_scope.cancel()
        else:
            log.warning('MCP server "%s" wrote something that is not JSON-RPC: %s', self.name, what)

    async def _on_message(self, message: object) -> None:
        """Server notifications: a changed tool list is listed again (in a task of its own)."""
        from mcp_types import ToolListChangedNotification

        if isinstance(message, ToolListChangedNotification) and self.session is not None:
            # Not inline: the dispatcher's read loop is waiting on this handler.
            task = asyncio.get_running_loop().create_task(self._refresh_tools(self.session))
            self._refresh_tasks.add(task)
            task.add_done_callback(self._refresh_tasks.discard)

    async def _refresh_tools(self, session: ClientSession) -> None:
        try:
            tools = await asyncio.wait_for(self._list_tools(session), self._init_timeout)
        except Exception as err:  # noqa: BLE001 - keep the old list, say why
            log.warning('MCP server "%s": listing its changed tools failed: %s', self.name, err)
            return
        if self.session is session and self.state == "ready":
            self.tools = tools
            self._set("ready")

    async def _on_log(self, params: LoggingMessageNotificationParams) -> None:
        data = params.data if isinstance(params.data, str) else repr(params.data)
        self.tail.add(f"[{params.level}] {data}")

    # ------------------------------------------------------------------------------------------

    @contextlib.asynccontextmanager
    async def _transport(self, launch: ResolvedStdio | ResolvedHttp) -> AsyncIterator[TransportStreams]:
        if isinstance(launch, ResolvedStdio):
            errlog = self.tail.open_pipe(self.name)
            cap = int(self.config.max_message_mb * MIB)
            try:
                async with open_stdio(launch, errlog=errlog, max_message=cap) as (read, write, process):
                    errlog.close()  # the child has its own copy; EOF then means the tree has exited
                    self._process = process
                    yield read, write
            finally:
                errlog.close()
            return
        import httpx2

        async def on_response(response: httpx2.Response) -> None:
            if response.status_code >= 400:
                self._http_status = response.status_code

        def make_client(
            headers: dict[str, str] | None = None,
            timeout: httpx2.Timeout | None = None,
            auth: httpx2.Auth | None = None,
        ) -> httpx2.AsyncClient:
            return httpx2.AsyncClient(
                headers={**launch.headers, **(headers or {})},
                timeout=timeout or httpx2.Timeout(30.0, read=300.0),
                auth=auth,
                event_hooks={"response": [on_response]},
            )

        if launch.sse:
            from mcp.client.sse import sse_client

            async with sse_client(launch.url, httpx_client_factory=make_client) as streams:
                yield streams
        else:
            from mcp.client.streamable_http import streamable_http_client

            async with (
                make_client() as client,
                streamable_http_client(
                    launch.url, http_client=client, max_sse_event_size=MAX_SSE_EVENT
                ) as streams,
            ):
                yield streams

    async def _list_tools(self, session: ClientSession) -> list[Tool]:
        from mcp_types import PaginatedRequestParams

        caps = session.server_capabilities
        if caps is not None and caps.tools is None:
            return []
        tools: list[Tool] = []
        cursor: str | None = None
        for _ in range(_MAX_TOOL_PAGES):
            params = PaginatedRequestParams(cursor=cursor) if cursor else None
            result = await session.list_tools(params=params)
            tools.extend(result.tools)
            cursor = result.next_cursor
            if not cursor:
                break
        return tools

    async def _run(self) -> None:
        started = time.perf_counter()
        try:
            launch = resolve_launch(self.config, environ=self._environ, secret_for=self._secret_for)
        except McpConfigError as err:
            self._set("failed", f'MCP server "{self.name}": {err}')
            return
        except Exception as err:  # noqa: BLE001 - secret_for (the keyring) failed; never show its text
            log.debug("secret lookup failed for MCP server %s", self.name, exc_info=True)
            self._set("failed", f'MCP server "{self.name}": could not read its token ({type(err).__name__})')
            return
        try:
            await self._serve(launch, started)
        except asyncio.CancelledError:
            self.session = None
            if self.state in ("starting", "ready"):
                self._set("stopped", None)
            raise
        except BaseException as exc:  # noqa: BLE001 - every failure becomes a status naming the server
            self.session = None
            if self._stopping and not isinstance(exc, _StartFailed):
                log.debug("MCP server %s raised while stopping", self.name, exc_info=True)
                return
            await self._settle_stderr()
            self._set("failed", self._reason_for(exc, launch))
            if isinstance(exc, KeyboardInterrupt | SystemExit):
                raise
        else:
            self.session = None

    async def _settle_stderr(self) -> None:
        """Give the stderr reader a moment to catch the last lines of a server that just died."""
        for _ in range(25):
            if self.tail.join(0):
                return
            await asyncio.sleep(0.02)

    async def _serve(self, launch: ResolvedStdio | ResolvedHttp, started: float) -> None:
        import anyio
        from mcp import ClientSession
        from mcp_types import Implementation

        async with contextlib.AsyncExitStack() as stack:
            read, write = await stack.enter_async_context(self._transport(launch))
            session = await stack.enter_async_context(
                ClientSession(
                    _WatchedReadStream(read, self),
                    write,
                    client_info=Implementation(name=self._client[0], version=self._client[1]),
                    logging_callback=self._on_log,
                    message_handler=self._on_message,
                )
            )
            with anyio.CancelScope() as scope:
                self._init_scope = scope
                try:
                    with anyio.fail_after(self._init_timeout):
                        await session.initialize()
                        tools = await self._list_tools(session)
                except TimeoutError:
                    what = f'did not answer "initialize" within {self._init_timeout:g} s'
                    raise _StartFailed(f'MCP server "{self.name}" {what}') from None
                finally:
                    self._init_scope = None
            if scope.cancelled_caught or self._fatal:
                if self._stopping:
                    return
                raise _StartFailed(self._fatal or f'MCP server "{self.name}" stopped while starting')
            self.tools = tools
            self.session = session
            self.started_s = time.perf_counter() - started
            self._set("ready")
            while not (self._stopping or self._closed):
                await self._wake.wait()
                self._wake.clear()
            self.session = None
            if self._closed and not self._stopping:
                raise _StartFailed(self._exit_reason(launch))

    def _exit_reason(self, launch: ResolvedStdio | ResolvedHttp) -> str:
        if isinstance(launch, ResolvedStdio):
            return f'MCP server "{self.name}" {self.end_text() or "exited (its connection closed)"}'
        return f'MCP server "{self.name}" closed the connection'

    def _reason_for(self, exc: BaseException, launch: ResolvedStdio | ResolvedHttp) -> str:
        """A readable reason naming the server (never a header or env value)."""
        leaves = _flatten(exc)
        for leaf in leaves:
            if isinstance(leaf, _StartFailed):
                if self._process is not None and self._process.fault is not None:
                    return str(leaf)  # stopped by the transport: its stderr says nothing about that
                return self._with_stderr(self._with_http_status(str(leaf)), launch)
        leaf = leaves[0] if leaves else exc
        where = f'MCP server "{self.name}"'
        if isinstance(launch, ResolvedStdio):
            if isinstance(leaf, FileNotFoundError):
                return f"{where} could not start: command not found: {launch.command}"
            if isinstance(leaf, PermissionError):
                return f"{where} could not start: permission denied: {launch.command}"
            if isinstance(leaf, NotADirectoryError | OSError) and launch.cwd and "cwd" in str(leaf).lower():
                return f"{where} could not start: bad working folder {launch.cwd}"
            if isinstance(leaf, OSError):
                return f"{where} could not start: {leaf.strerror or leaf}"
        else:
            status = self._http_status
            if status in (401, 403):
                return f"{where}: {_auth_failed(status)}"
            if status is not None:
                return f"{where}: the server answered HTTP {status} ({_safe_url(launch.url)})"
            name = type(leaf).__name__
            if name in ("ConnectError", "ConnectTimeout"):
                return f"{where}: cannot connect to {_safe_url(launch.url)}"
            if name in ("ReadTimeout", "WriteTimeout", "PoolTimeout"):
                return f"{where}: the connection to {_safe_url(launch.url)} timed out"
        text = str(leaf).splitlines()[0] if str(leaf) else ""
        return f"{where} failed: {type(leaf).__name__}{': ' + text if text else ''}"

    def _with_stderr(self, reason: str, launch: ResolvedStdio | ResolvedHttp) -> str:
        if isinstance(launch, ResolvedStdio):
            last = [line for line in self.tail.lines() if line.strip() and not line.startswith("[")]
            if last:
                return f"{reason}; its last stderr line: {last[-1][:300]}"
        return reason

    def _with_http_status(self, reason: str) -> str:
        status = self._http_status
        if status in (401, 403):
            return f'MCP server "{self.name}": {_auth_failed(status)}'
        return reason
