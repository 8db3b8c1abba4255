"""Reading a file the user attached: regular files only, never more than the size cap.

The file is opened first and checked on the open descriptor (``fstat``), so a path that is a folder,
a device, a socket or a pipe is refused without blocking (a FIFO is opened non-blocking) and a file
swapped for something else between a check and the open is still caught. Symbolic links are
followed: dropping a link to a file attaches the file.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from desktop.core.chat.attachment_ref import format_size

__all__ = ["MAX_ATTACHMENT_BYTES", "AttachmentError", "read_regular_file", "too_large"]

#: The largest file that can be attached: 50 MiB (the providers' request limits are 32-50 MB; a
#: larger image is downscaled before it is sent, a larger text is cut, a larger PDF is sent as text).
MAX_ATTACHMENT_BYTES = 50 * 1024 * 1024

_READ_PIECE = 1024 * 1024
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)  # a FIFO opens without waiting for a writer
_BINARY = getattr(os, "O_BINARY", 0)
_NOCTTY = getattr(os, "O_NOCTTY", 0)


class AttachmentError(Exception):
    """A file cannot be attached; ``str(err)`` says why, for a person (no path inside)."""


def too_large(size: int, limit: int = MAX_ATTACHMENT_BYTES) -> str:
    """The reason given for a file over ``limit``."""
    return f"too large: {format_size(size)} (the limit is {format_size(limit)})"


def read_regular_file(path: Path, limit: int = MAX_ATTACHMENT_BYTES) -> bytes:
    """The bytes of the regular file at ``path`` (symbolic links followed).

    Raises:
        AttachmentError: Not a regular file, larger than ``limit``, or unreadable.
    """
    flags = os.O_RDONLY | _NONBLOCK | _BINARY | _NOCTTY
    try:
        fd = os.open(path, flags)
    except IsADirectoryError:
        raise AttachmentError("a folder, not a file") from None
    except FileNotFoundError:
        raise AttachmentError("the file does not exist (any more)") from None
    except PermissionError:
        raise AttachmentError("the file cannot be read (permission denied)") from None
    except OSError as exc:
        raise AttachmentError(f"the file cannot be read ({exc.strerror or type(exc).__name__})") from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise AttachmentError("a folder, not a file")
        if not stat.S_ISREG(info.st_mode):
            raise AttachmentError("not a regular file (a device, pipe or socket)")
        if info.st_size > limit:
            raise AttachmentError(too_large(info.st_size, limit))
        parts: list[bytes] = []
        total = 0
        while True:
            piece = os.read(fd, _READ_PIECE)
            if not piece:
                break
            total += len(piece)
            if total > limit:  # the file grew while it was read
                raise AttachmentError(too_large(total, limit))
            parts.append(piece)
        return b"".join(parts)
    except OSError as exc:
        raise AttachmentError(f"the file cannot be read ({exc.strerror or type(exc).__name__})") from None
    finally:
        os.close(fd)
