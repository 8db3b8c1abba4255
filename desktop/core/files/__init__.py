"""Shared file primitives of the core: atomic writes, locks, regular-file opens, JSON documents.

Qt-free. Every store of the app (the project, the settings, grants, recent projects, the ledger,
attachments, MCP trust) writes through these: a write is atomic (temp file, fsync, rename), a folder
is locked against a second instance, a file is opened only when it is a regular file (never a FIFO),
a bad document is moved aside, never overwritten. Imports nothing else of ``desktop``.
"""

from __future__ import annotations

from ._atomic import atomic_write_bytes, fsync_dir, keep_copy, move_aside
from ._docstore import (
    MAX_DEPTH,
    DocumentCorruptError,
    DocumentStore,
    Fingerprint,
    LoadResult,
    depth_exceeds,
    fingerprint,
    parse_document,
)
from ._lock import FileLock, LockState
from ._regular import NotRegularFileError, open_regular, open_regular_file, read_checked, read_regular

__all__ = [
    "DocumentCorruptError",
    "DocumentStore",
    "FileLock",
    "Fingerprint",
    "LoadResult",
    "LockState",
    "MAX_DEPTH",
    "NotRegularFileError",
    "atomic_write_bytes",
    "depth_exceeds",
    "fingerprint",
    "fsync_dir",
    "keep_copy",
    "move_aside",
    "open_regular",
    "open_regular_file",
    "parse_document",
    "read_checked",
    "read_regular",
]
