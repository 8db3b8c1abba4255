"""The loopback provider in a child process, for the benchmarks that measure the app's own process.

A real provider is not in the app's process. ``FakeProvider`` serves from a thread of the process it
runs in: there its Python work (8 paced streams are ~8,000 SSE writes a second, each chat request's
body parsed as JSON) holds the GIL the GUI thread waits for, and its memory (request bodies, parsed
JSON, the heap they fragment) counts in the process's RSS. Measured on the paced 8-node row: in the
heartbeat gaps over 14 ms, the server thread ran 4.8 ms of Python on average, up to 16 ms in one
gap. :class:`RemoteProvider` runs the same ``FakeProvider`` in a spawned process and offers the
part of its API the benchmarks use: ``script``, the base URLs, ``stop``.

Turns are sent to the child once (with the bodies they rendered ahead) and referred to by number
afterwards, so scripting eight copies of the same turn per round costs a few bytes.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from types import TracebackType
from typing import Any

from desktop.testing import Turn

log = logging.getLogger(__name__)

__all__ = ["RemoteProvider"]

_START_TIMEOUT_S = 30.0
_REPO = Path(__file__).resolve().parent.parent


@dataclass
class _Pipes:
    """The two ends one side uses: commands or replies in, the other out."""

    inbox: Connection
    outbox: Connection

    @classmethod
    def of(cls, read_fd: int, write_fd: int) -> _Pipes:
        return cls(Connection(read_fd, writable=False), Connection(write_fd, readable=False))

    def send(self, obj: object) -> None:
        self.outbox.send(obj)

    def recv(self) -> Any:
        return self.inbox.recv()

    def poll(self, timeout: float) -> bool:
        return self.inbox.poll(timeout)

    def close(self) -> None:
        self.outbox.close()
        self.inbox.close()


class RemoteProvider:
    """``FakeProvider`` in its own process (see the module doc); start it with :meth:`start`."""

    def __init__(self) -> None:
        self._conn: _Pipes | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._sent: dict[int, tuple[int, Turn]] = {}  # id(turn) -> (number, turn kept alive)
        self.base_url = ""

    def start(self) -> RemoteProvider:
        """Spawn the child and wait until its server listens. Returns self."""
        # A fresh interpreter (no fork of a process that runs Qt threads); two pipes carry the commands.
        to_child_r, to_child_w = os.pipe()
        from_child_r, from_child_w = os.pipe()
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "benchmarks._remote", str(to_child_r), str(from_child_w)],
            cwd=_REPO, pass_fds=(to_child_r, from_child_w), stdin=subprocess.DEVNULL)
        os.close(to_child_r)
        os.close(from_child_w)
        parent = _Pipes.of(from_child_r, to_child_w)
        self._conn = parent
        if not parent.poll(_START_TIMEOUT_S):
            self.stop()
            raise RuntimeError(f"the provider process did not start within {_START_TIMEOUT_S:.0f} s")
        self.base_url = str(parent.recv())
        return self

    @property
    def openai_base_url(self) -> str:
        """Base URL for OpenAI-compatible clients (``…/v1``)."""
        return self.base_url + "/v1"

    @property
    def anthropic_base_url(self) -> str:
        """Base URL for Anthropic clients."""
        return self.base_url

    def script(self, *turns: Turn) -> None:
        """Queue turns in the child (first in, first out), as ``FakeProvider.script`` does."""
        conn = self._connection()
        numbers: list[int] = []
        for turn in turns:
            known = self._sent.get(id(turn))
            if known is None or known[1] is not turn:
                known = (len(self._sent), turn)
                self._sent[id(turn)] = known
                conn.send(("turn", known[0], turn))
            numbers.append(known[0])
        conn.send(("script", numbers))
        reply = conn.recv()
        if reply != "ok":
            raise RuntimeError(f"the provider process failed: {reply}")

    def stop(self) -> None:
        """Stop the child (idempotent)."""
        conn, proc = self._conn, self._proc
        self._conn = self._proc = None
        self._sent.clear()
        if conn is not None:
            try:
                conn.send(("stop",))
                conn.recv()
            except (OSError, EOFError):
                pass
            conn.close()
        if proc is not None:
            try:
                proc.wait(10.0)
            except subprocess.TimeoutExpired:
                log.warning("the provider process did not stop within 10 s; killing it")
                proc.kill()
                proc.wait(5.0)

    def _connection(self) -> _Pipes:
        if self._conn is None:
            raise RuntimeError("RemoteProvider is not running")
        return self._conn

    def __enter__(self) -> RemoteProvider:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()


def _serve(conn: _Pipes) -> None:
    """The child: run a ``FakeProvider`` and obey the parent's commands until ``stop``."""
    from desktop.testing import FakeProvider

    turns: dict[int, Turn] = {}
    with FakeProvider() as fake:
        conn.send(fake.base_url)
        while True:
            try:
                command = conn.recv()
            except EOFError:
                return  # the parent is gone
            try:
                if command[0] == "turn":
                    turns[command[1]] = command[2]
                    continue
                if command[0] == "script":
                    fake.script(*(turns[n] for n in command[1]))
                    fake.clear_requests()  # the recorded bodies are nobody's: keep the child small
                    conn.send("ok")
                    continue
                conn.send("ok")
                return
            except Exception as exc:  # noqa: BLE001 - the parent raises it
                conn.send(f"{type(exc).__name__}: {exc}")


if __name__ == "__main__":
    _serve(_Pipes.of(int(sys.argv[1]), int(sys.argv[2])))
