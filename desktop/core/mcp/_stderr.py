"""The last lines a stdio server wrote to stderr, kept in a bounded ring buffer.

The SDK hands the server's stderr to ``subprocess`` as a file, so it needs a real descriptor: a pipe
whose read end a small daemon thread drains line by line (portable, and it never touches the event
loop). The thread ends at EOF, i.e. when the server and its children have exited.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections import deque
from typing import IO, TextIO

__all__ = ["STDERR_LINES", "StderrTail"]

STDERR_LINES = 50
_MAX_LINE = 1000


class StderrTail:
    """A ring buffer of text lines; also fed with server log notifications and protocol notes."""

    def __init__(self, max_lines: int = STDERR_LINES) -> None:
        self._lines: deque[str] = deque(maxlen=max_lines)
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def add(self, line: str) -> None:
        """Append one line (cut to 1000 characters)."""
        line = line.rstrip("\r\n")
        if len(line) > _MAX_LINE:
            line = line[:_MAX_LINE] + "…"
        with self._lock:
            self._lines.append(line)

    def lines(self, n: int | None = None) -> tuple[str, ...]:
        """The last ``n`` lines (all kept lines when None), oldest first."""
        with self._lock:
            items = tuple(self._lines)
        return items if n is None else items[-n:] if n > 0 else ()

    def open_pipe(self, label: str) -> TextIO:
        """A writable file for the child's stderr; a thread reads the other end into this buffer.

        The caller closes the returned file once the child has started (the child keeps its copy).
        """
        read_fd, write_fd = os.pipe()
        reader = os.fdopen(read_fd, "rb")
        thread = threading.Thread(target=self._drain, args=(reader,), name=f"mcp-stderr-{label}", daemon=True)
        self._thread = thread
        thread.start()
        return os.fdopen(write_fd, "w", encoding="utf-8", errors="replace")

    def _drain(self, reader: IO[bytes]) -> None:
        with contextlib.closing(reader):
            try:
                while True:
                    raw = reader.readline(64 * 1024)
                    if not raw:
                        return
                    self.add(raw.decode("utf-8", "replace"))
            except (OSError, ValueError):
                return

    def join(self, timeout: float) -> bool:
        """Wait for the reader thread to reach EOF; True when it has (or there was none)."""
        thread = self._thread
        if thread is None:
            return True
        thread.join(timeout)
        return not thread.is_alive()
