"""The stdio transport: spawns a server, watches its process, and caps the size of a message.

Used instead of the SDK's ``stdio_client`` (same streams for ``ClientSession``, same kill escalation)
for two reasons:

* **A dead server is noticed by its exit, not only by the end of stdout.** The SDK learns of a crash
  only when stdout reaches EOF; a child that inherited stdout (a shell wrapper's child, a forked
  worker) keeps it open, so the server looked ready and every call waited out its timeout. Here the
  subprocess protocol's ``process_exited`` (asyncio's child watcher on POSIX, the process handle on
  Windows: no polling, on plain asyncio and qasync alike) ends the connection: what is already in the
  pipe is delivered for :data:`EXIT_DRAIN_S`, then the session sees end of stream, so a pending call
  fails at once and :attr:`StdioProcess.returncode` says how it ended.
* **A line is capped before it is parsed.** The SDK's reader rebuilds its buffer for every chunk
  (quadratic: a 50 MB line cost 17 s of CPU on the GUI loop, 100 MB 77 s). Here stdout arrives as bytes
  chunks, a line is joined once, and a line over ``max_message`` bytes (even one without a newline)
  kills the server's process group at once: :attr:`StdioProcess.fault` says why.

Windows (in principle; the tests run on POSIX): the process is spawned the same way (the proactor loop,
which qasync uses there, supports subprocesses; ``SelectorEventLoop`` does not and the start fails),
``process_exited`` comes from the process handle, and the tree is ended through the SDK's Job Object
helpers instead of process-group signals (no SIGTERM step: termination is immediate).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
    from mcp.shared.message import SessionMessage

    from desktop.core.mcp._config import ResolvedStdio

__all__ = ["StdioProcess", "open_stdio", "end_process_group", "exit_text", "EXIT_DRAIN_S", "MIB"]

log = logging.getLogger(__name__)

MIB = 1024 * 1024
EXIT_DRAIN_S = 0.1
"""After the server process exited with stdout still open (a child holds it): how long what is already
in the pipe may still arrive before the connection ends."""
EOF_EXIT_WAIT_S = 0.5
"""After stdout reached EOF: how long to wait for the process to exit (to report its exit code)."""
TERMINATION_S = 2.0
"""On stop: how long the server has to exit after its stdin closed (the SDK's value)."""
FORCE_KILL_S = 2.0
"""On stop, POSIX: between SIGTERM and SIGKILL to a server that ignored its stdin closing."""
GROUP_GRACE_S = 1.0
"""After a stdio server ended: how long its leftover children get between SIGTERM and SIGKILL."""
REAP_S = 2.0
"""After the kill: how long to wait until the loop has seen the process end."""
WRITER_FLUSH_S = 0.5
"""On stop: how long messages already accepted may take to reach the server's stdin."""
QUEUE_BYTES = 1 * MIB
"""Complete lines waiting for the session beyond this many bytes pause reading stdout."""


def exit_text(code: int) -> str:
    """``exited (code 3)``, or ``exited (killed by SIGKILL)`` for a POSIX signal."""
    if code < 0 and sys.platform != "win32":
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"exited (killed by {name})"
    if code > 0xFFFF:  # a Windows status such as 0xC0000005
        return f"exited (code 0x{code:08X})"
    return f"exited (code {code})"


def _megabytes(size: int) -> str:
    return f"{size / MIB:g} MB"


async def end_process_group(pgid: int, grace: float = GROUP_GRACE_S) -> None:
    """End what is left of a stdio server's process group: SIGTERM, up to ``grace`` s, SIGKILL.

    POSIX only (Windows ends the tree through its Job Object). Never raises.
    """
    if sys.platform == "win32":  # pragma: no cover - the Job Object does it
        return
    try:
        os.killpg(pgid, signal.SIGTERM)
    except (ProcessLookupError, PermissionError):
        return  # nothing left (or the id now belongs to someone else's group)
    except OSError:
        log.debug("killpg(%d) failed", pgid, exc_info=True)
        return
    log.info("ended leftover processes of MCP server group %d", pgid)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        await asyncio.sleep(0.02)
        try:
            os.killpg(pgid, 0)
        except OSError:
            return
    with contextlib.suppress(OSError):
        os.killpg(pgid, signal.SIGKILL)


class StdioProcess(asyncio.SubprocessProtocol):
    """One server process: its pipes (as an asyncio subprocess protocol), its end, its shutdown.

    Attributes:
        pid: The server's process id (POSIX: also its process group id).
        returncode: Its exit status once it has exited (negative: killed by that signal, POSIX), else None.
        fault: Why the transport stopped the server (``sent a message over 32 MB; stopped``), else None.
    """

    def __init__(self, max_message: int, loop: asyncio.AbstractEventLoop) -> None:
        self.pid = 0
        self.returncode: int | None = None
        self.fault: str | None = None
        self._max = max_message
        self._loop = loop
        self._transport: asyncio.SubprocessTransport | None = None
        self._parts: list[bytes] = []  # the line being read, in chunks
        self._partial = 0
        self._lines: collections.deque[bytes] = collections.deque()
        self._queued = 0
        self._paused = False
        self._eof = False
        self._ended = False  # no more lines: the session gets end of stream once the queue is empty
        self._timer: asyncio.TimerHandle | None = None
        self._wake = asyncio.Event()
        self._exited = asyncio.Event()
        self._writable = asyncio.Event()
        self._writable.set()
        self._stdin_lost = False
        self._writer_done = asyncio.Event()

    def end_text(self) -> str | None:
        """How the server ended, for messages: the fault, ``exited (code N)``, or None (still running)."""
        if self.fault is not None:
            return self.fault
        return exit_text(self.returncode) if self.returncode is not None else None

    # -- asyncio protocol callbacks (on the loop) --------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.SubprocessTransport)
        self._transport = transport
        self.pid = transport.get_pid()

    def pipe_data_received(self, fd: int, data: bytes) -> None:
        if fd != 1 or self._ended:
            return
        start = 0
        while (newline := data.find(b"\n", start)) >= 0:
            piece = data[start:newline]
            start = newline + 1
            if self._parts:
                self._parts.append(piece)
                line, self._parts, self._partial = b"".join(self._parts), [], 0
            else:
                line = piece
            if len(line) > self._max:
                self._too_long()
                return
            self._lines.append(line)
            self._queued += len(line)
        rest = data[start:] if start else data
        if rest:
            self._parts.append(rest)
            self._partial += len(rest)
            if self._partial > self._max:
                self._too_long()
                return
        if self._lines:
            self._wake.set()
            if self._queued > QUEUE_BYTES:
                self._pause(True)

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        if fd == 0:
            self._stdin_lost = True
            self._writable.set()
            self._wake.set()
        elif fd == 1:
            self._eof = True
            self._parts, self._partial = [], 0  # an unfinished last line is dropped (as the SDK does)
            if self.returncode is not None:
                self._end()
            else:
                self._end_later(EOF_EXIT_WAIT_S)

    def process_exited(self) -> None:
        transport = self._transport
        code = transport.get_returncode() if transport is not None else None
        self.returncode = code if code is not None else -1
        self._exited.set()
        if self._eof:
            self._end()
        else:
            log.info("MCP server process %d exited while its stdout is still open", self.pid)
            self._end_later(EXIT_DRAIN_S)

    def pause_writing(self) -> None:
        self._writable.clear()

    def resume_writing(self) -> None:
        self._writable.set()

    # -- internals --------------------------------------------------------------------------------

    def _pause(self, pause: bool) -> None:
        if pause == self._paused or self._transport is None:
            return
        pipe = self._transport.get_pipe_transport(1)
        if isinstance(pipe, asyncio.ReadTransport):
            with contextlib.suppress(RuntimeError, OSError):
                pipe.pause_reading() if pause else pipe.resume_reading()
            self._paused = pause

    def _end_later(self, delay: float) -> None:
        if self._ended:
            return
        if self._timer is not None:
            self._timer.cancel()
        self._timer = self._loop.call_later(delay, self._end)

    def _end(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._ended = True
        self._wake.set()

    def _too_long(self) -> None:
        self.fault = f"sent a message over {_megabytes(self._max)}; stopped"
        log.warning("MCP server process %d %s", self.pid, self.fault)
        self._parts, self._partial = [], 0
        self._pause(True)
        self._kill_now()
        self._end()

    def _kill_now(self) -> None:
        """Kill the server's whole tree at once (POSIX: SIGKILL to its group)."""
        if sys.platform == "win32":  # pragma: no cover
            self.terminate()
            return
        if self.pid > 0:
            with contextlib.suppress(OSError):
                os.killpg(self.pid, signal.SIGKILL)

    def terminate(self) -> None:
        """Kill the process itself (what the SDK's Windows tree helper calls after the Job Object)."""
        if self._transport is not None and self.returncode is None:
            with contextlib.suppress(ProcessLookupError, OSError):
                self._transport.kill()

    # -- tasks -------------------------------------------------------------------------------------

    async def pump(self, sink: MemoryObjectSendStream[SessionMessage | Exception]) -> None:
        """Hand complete lines to the session, one at a time; end its stream when the server ended."""
        import anyio
        from mcp.shared.message import SessionMessage
        from mcp_types import jsonrpc_message_adapter

        async with sink:
            while True:
                while self._lines:
                    line = self._lines.popleft()
                    self._queued -= len(line)
                    if not line.strip():
                        continue
                    item: SessionMessage | Exception
                    try:
                        item = SessionMessage(jsonrpc_message_adapter.validate_json(line, by_name=False))
                    except ValueError as exc:  # pydantic's ValidationError: bad JSON, bad UTF-8, not JSON-RPC
                        item = exc  # a value: the session reports it
                    try:
                        await sink.send(item)
                    except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                        return  # the session is gone
                if self._ended:
                    return  # the session sees end of stream
                self._pause(False)
                self._wake.clear()
                await self._wake.wait()

    async def write(self, source: MemoryObjectReceiveStream[SessionMessage]) -> None:
        """Write the session's messages to the server's stdin, one line each."""
        try:
            async with source:
                async for message in source:
                    data = message.message.model_dump_json(by_alias=True, exclude_unset=True) + "\n"
                    pipe = self._transport.get_pipe_transport(0) if self._transport is not None else None
                    if self._stdin_lost or not isinstance(pipe, asyncio.WriteTransport) or pipe.is_closing():
                        self._end()  # the server closed its stdin: the session sees the connection end
                        return
                    pipe.write(data.encode("utf-8"))
                    await self._writable.wait()
        finally:
            self._writer_done.set()

    async def wait_exit(self, timeout: float) -> bool:
        """Wait up to ``timeout`` s for the process to exit; True when it has."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._exited.wait(), timeout)
        return self._exited.is_set()

    async def shutdown(self) -> None:
        """Stop the server as the SDK does: flush, close stdin, wait, end the tree; then close the pipes.

        Call with cancellation shielded; every wait is bounded.
        """
        self._end()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._writer_done.wait(), WRITER_FLUSH_S)
        transport = self._transport
        if transport is None:
            return
        stdin = transport.get_pipe_transport(0)
        if stdin is not None:
            stdin.close()
        exited = await self.wait_exit(TERMINATION_S)
        if sys.platform == "win32":  # pragma: no cover
            await _end_windows_tree(self, exited)
        else:
            await end_process_group(self.pid, GROUP_GRACE_S if exited else FORCE_KILL_S)
        transport.close()  # closes the pipes (a leftover's open stdout no longer matters); kills a survivor
        if not await self.wait_exit(REAP_S):
            log.warning("MCP server process %d is still alive after the kill; abandoning it", self.pid)


def _windows_job(process: StdioProcess) -> None:  # pragma: no cover - Windows
    """Put the process in a Job Object (the SDK's helpers), so its whole tree can be ended."""
    from mcp.os.win32 import utilities as win

    create = getattr(win, "_create_job_object", None)
    assign = getattr(win, "_maybe_assign_process_to_job", None)
    if create is None or assign is None:
        log.warning("the MCP SDK has no Job Object helpers any more: only the server process is ended")
        return
    assign(process, create())


async def _end_windows_tree(process: StdioProcess, exited: bool) -> None:  # pragma: no cover - Windows
    from mcp.os.win32 import utilities as win

    if exited:
        win.close_process_job(process)  # type: ignore[arg-type]  # KILL_ON_JOB_CLOSE ends what is left
    else:
        await win.terminate_windows_process_tree(process)  # type: ignore[arg-type]


@contextlib.asynccontextmanager
async def open_stdio(
    launch: ResolvedStdio, *, errlog: TextIO, max_message: int
) -> AsyncIterator[tuple[Any, Any, StdioProcess]]:
    """Start the server and yield ``(read_stream, write_stream, process)``; stop it on leaving.

    Args:
        launch: The resolved command line, environment and working folder.
        errlog: The file the server's stderr goes to (the caller may close its copy once spawned).
        max_message: The longest stdout line accepted, in bytes; past it the server is killed.

    Raises:
        OSError: The server could not be spawned (missing command, bad working folder...).
        NotImplementedError: The running loop cannot run subprocesses (Windows ``SelectorEventLoop``).
    """
    import anyio
    from mcp.client.stdio import get_default_environment
    from mcp.shared.message import SessionMessage

    loop = asyncio.get_running_loop()
    command = launch.command
    extra: dict[str, Any] = {}
    if sys.platform == "win32":  # pragma: no cover
        from mcp.os.win32.utilities import get_windows_executable_command

        command = await asyncio.to_thread(get_windows_executable_command, command)
        extra["creationflags"] = getattr(subprocess, "CREATE_NO_WINDOW", 0)
    else:
        extra["start_new_session"] = True  # its own process group: the whole tree can be ended
    process = StdioProcess(max_message, loop)
    await loop.subprocess_exec(
        lambda: process,
        command,
        *launch.args,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=errlog,
        env=get_default_environment() | dict(launch.env or {}),
        cwd=launch.cwd,
        **extra,
    )
    # Spawned: no await until the shutdown is guaranteed, or a cancellation would leak the process.
    if sys.platform == "win32":  # pragma: no cover
        _windows_job(process)
    read_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, write_reader = anyio.create_memory_object_stream[SessionMessage](0)
    try:
        async with anyio.create_task_group() as group:
            group.start_soon(process.pump, read_writer)
            group.start_soon(process.write, write_reader)
            try:
                yield read_stream, write_stream, process
            finally:
                with anyio.CancelScope(shield=True):
                    read_stream.close()  # a pump blocked on a delivery returns
                    write_stream.close()  # the writer flushes what it has, then returns
                    await process.shutdown()
                group.cancel_scope.cancel()
    finally:
        for stream in (read_stream, write_stream, read_writer, write_reader):
            stream.close()
