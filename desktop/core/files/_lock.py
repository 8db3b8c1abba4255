"""An OS advisory lock on a file or a folder (``fcntl.flock`` on POSIX, ``msvcrt.locking`` on Windows).

The lock belongs to one open file description: a second ``FileLock`` on the same path is refused
also inside the same process, and the operating system drops the lock when the holder exits or is
killed. The lock file itself is never deleted (deleting a held lock file would let a second holder
lock a new file of the same name). A lock file that is not a regular file (a FIFO or a device put
there) is never opened: the lock is then ``UNAVAILABLE``.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import sys
import time
import weakref
from enum import Enum
from pathlib import Path

from ._regular import open_regular, read_regular

__all__ = ["FileLock", "LockState"]

log = logging.getLogger(__name__)


class LockState(Enum):
    """The outcome of a lock attempt.

    ``HELD``: this object holds the lock. ``BUSY``: someone else holds it. ``UNAVAILABLE``: the lock
    file could not be opened or locking is not supported there (a read-only or missing folder, a
    file system without locks).
    """

    HELD = "held"
    BUSY = "busy"
    UNAVAILABLE = "unavailable"


def _try_lock(fd: int) -> bool:
    """Lock ``fd`` without waiting; False when another holder has it."""
    if sys.platform == "win32":
        import msvcrt

        try:
            os.lseek(fd, 0, os.SEEK_SET)
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError as exc:
            if exc.errno in (errno.EACCES, errno.EDEADLK):
                return False
            raise
        return True
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    except OSError as exc:
        if exc.errno in (errno.EAGAIN, errno.EACCES):
            return False
        raise
    return True


class FileLock:
    """A non-blocking exclusive lock on ``path``.

    Args:
        path: A lock file (created when missing, with its folder when ``create_parent``), or with
            ``directory`` an existing folder (POSIX only; locked through a read-only descriptor,
            nothing is created).
        directory: ``path`` is a folder to lock.
        create_parent: Create the lock file's folder when it is missing.
        note_pid: Write this process id into the lock file once held (for the "held by" message).
    """

    def __init__(
        self, path: Path, *, directory: bool = False, create_parent: bool = True, note_pid: bool = True
    ) -> None:
        self.path = Path(path)
        self._directory = directory
        self._create_parent = create_parent
        self._note_pid = note_pid and not directory
        self._fd: int | None = None
        self._finalizer: weakref.finalize[..., FileLock] | None = None
        self.last_error: str | None = None

    @property
    def held(self) -> bool:
        """True while this object holds the lock."""
        return self._fd is not None

    def try_acquire(self) -> LockState:
        """Take the lock without waiting (a no-op returning ``HELD`` when already held)."""
        if self._fd is not None:
            return LockState.HELD
        try:
            if self._directory:
                if sys.platform == "win32" or not self.path.is_dir():
                    self.last_error = "folders cannot be locked here, or the folder is missing"
                    return LockState.UNAVAILABLE
                fd = os.open(self.path, os.O_RDONLY)
            else:
                if self._create_parent:
                    self.path.parent.mkdir(parents=True, exist_ok=True)
                fd = open_regular(self.path, os.O_RDWR | os.O_CREAT, 0o644)  # never a FIFO or device
        except OSError as exc:
            self.last_error = f"{type(exc).__name__}: {exc.strerror or exc}"
            return LockState.UNAVAILABLE
        try:
            got = _try_lock(fd)
        except OSError as exc:
            os.close(fd)
            self.last_error = f"{type(exc).__name__}: {exc.strerror or exc}"
            return LockState.UNAVAILABLE
        if not got:
            os.close(fd)
            self.last_error = None
            return LockState.BUSY
        self._fd = fd
        self._finalizer = weakref.finalize(self, os.close, fd)
        self.last_error = None
        if self._note_pid:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, 0)
                os.lseek(fd, 0, os.SEEK_SET)
                os.write(fd, f"{os.getpid()}\n".encode("ascii"))
        return LockState.HELD

    def acquire(self, timeout: float) -> LockState:
        """Try to take the lock for up to ``timeout`` seconds (``BUSY`` when it stayed taken)."""
        deadline = time.monotonic() + timeout
        while True:
            state = self.try_acquire()
            if state is not LockState.BUSY or time.monotonic() >= deadline:
                return state
            time.sleep(0.01)

    def holder_pid(self) -> int | None:
        """The process id the holder wrote into the lock file, when readable."""
        try:
            text = read_regular(self.path, 64).decode("ascii", errors="replace").strip()
        except OSError:
            return None
        return int(text) if text.isdigit() else None

    def release(self) -> None:
        """Drop the lock (closing the descriptor releases it); safe to call when not held."""
        finalizer, self._finalizer, self._fd = self._finalizer, None, None
        if finalizer is not None:
            finalizer()

    def __enter__(self) -> FileLock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
