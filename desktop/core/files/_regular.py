"""Open a file only when it is a regular file, and never block doing it.

Every file a project folder supplies is untrusted (``project.json`` and its backup, ``.mcp.json``,
the history archive, the lock file, whatever the project tools read). A FIFO (named pipe) in its
place blocks ``open`` until some process opens the other end, which on the GUI thread freezes the
window; a device may block or never end. ``open_regular`` refuses them:

1. ``stat`` first: anything that is not a regular file is refused before it is opened (opening a
   device can have effects of its own);
2. ``os.open`` with ``O_NONBLOCK`` (and ``O_NOCTTY``): a FIFO swapped in after the check does not
   block the open;
3. ``fstat`` of the opened descriptor: what was opened is a regular file, or it is closed and
   refused. Blocking mode is then restored (it means nothing for a regular file anyway).

``read_checked`` is the lighter form for files in the user's own folders (``settings.json``,
``grants.json``): step 1 only, then an ordinary read; a swap between the check and the open would
need write access to the user's config folder.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import BinaryIO

__all__ = ["NotRegularFileError", "open_regular", "open_regular_file", "read_checked", "read_regular"]

_NONBLOCK = getattr(os, "O_NONBLOCK", 0)  # POSIX only; Windows has no FIFOs in the file system
_NOCTTY = getattr(os, "O_NOCTTY", 0)


class NotRegularFileError(OSError):
    """The path is a FIFO, a device, a socket or a folder, not a regular file; nothing was read.

    An ``OSError`` (``errno.EINVAL``), so every caller that handles unreadable files handles it;
    ``strerror`` says what the path is (``"a named pipe, not a regular file"``).
    """


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a named pipe"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISDIR(mode):
        return "a folder"
    return "a special file"


def _check(path: str | os.PathLike[str], mode: int) -> None:
    if not stat.S_ISREG(mode):
        raise NotRegularFileError(errno.EINVAL, f"{_kind(mode)}, not a regular file", os.fspath(path))


def open_regular(path: str | os.PathLike[str], flags: int = os.O_RDONLY, mode: int = 0o666) -> int:
    """``os.open`` that only ever opens a regular file, without blocking on anything else.

    Args:
        path: The file (symlinks are followed, like ``open``).
        flags: ``os.open`` flags; with ``O_CREAT`` a missing file is created.
        mode: Permissions of a created file (before the umask).

    Returns:
        The descriptor, in blocking mode.

    Raises:
        NotRegularFileError: ``path`` is a FIFO, device, socket or folder (nothing was opened, or
            what was opened was closed again).
        OSError: Opening failed (``FileNotFoundError`` without ``O_CREAT``, permissions...).
    """
    try:
        _check(path, os.stat(path).st_mode)
    except FileNotFoundError:
        if not flags & os.O_CREAT:
            raise
    fd = os.open(path, flags | _NONBLOCK | _NOCTTY, mode)
    try:
        _check(path, os.fstat(fd).st_mode)
        if _NONBLOCK:
            os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_regular_file(path: str | os.PathLike[str]) -> BinaryIO:
    """A regular file opened for reading in binary mode (see ``open_regular``).

    Raises:
        NotRegularFileError: Not a regular file.
        OSError: It could not be opened.
    """
    return os.fdopen(open_regular(path), "rb")


def read_regular(path: str | os.PathLike[str], limit: int | None = None) -> bytes:
    """The bytes of a regular file (at most ``limit`` when given); see ``open_regular``.

    Raises:
        NotRegularFileError: Not a regular file (nothing was read).
        OSError: It could not be opened or read.
    """
    with open_regular_file(path) as fh:
        return fh.read() if limit is None else fh.read(limit)


def read_checked(path: Path) -> bytes:
    """The bytes of ``path`` after a ``stat`` showed a regular file (see the module doc).

    Raises:
        NotRegularFileError: Not a regular file (it was not opened).
        OSError: It could not be read.
    """
    _check(path, os.stat(path).st_mode)
    return path.read_bytes()
