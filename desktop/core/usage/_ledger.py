"""The usage ledger: one JSON line per model response in ``<config dir>/usage.jsonl``.

Writing: each record is one line, written with one ``os.write`` on a file descriptor opened with
``O_APPEND``, so lines appended by two windows or two processes at once never interleave within a line
(POSIX appends to a regular file are atomic with respect to the file offset; lines are far below a
page). ``os.write`` bypasses every user-space buffer, so a record is in the kernel (safe from a crash of
the app) when ``append`` returns; ``fsync`` (off by default, a response is not worth a disk flush) also
makes it survive a power cut. If the file does not end with a newline (a torn line left by a crash),
the new line starts with one, so the damage stays confined to the torn line. Writers hold an advisory
``flock`` from that check to the end of their write (the lock is released with the descriptor, also
when a process dies); readers take no lock and treat an unfinished last line as torn.

A line is written whole or not at all: when the disk is full (``ENOSPC``), the file would grow past
``RLIMIT_FSIZE`` (``EFBIG``) or a write is short for any other reason, the rest is tried once more and,
failing that, the file is cut back to its size before the append (still under the lock), so a failed
append leaves no torn line and raises ``OSError``. ``UsageLedger.append`` tries a record
``APPEND_ATTEMPTS`` times at once (no sleeping: it runs on the GUI thread, and each attempt is one open,
lock, write and, on failure, truncate) and then returns False with ``last_error`` set; keeping the
record for a later try is the caller's choice (``UsageRecorder`` keeps it and tries again with the next
response).

Reading never fails on content (see ``_lines`` for the one validity rule both readers share): a torn
last line (no newline yet) is skipped and reported, a corrupt line anywhere else is skipped and counted.
Reads go through the block index beside the ledger (``_index``), so a month or a dashboard window
reads only the blocks that can hold it.

On Windows ``O_APPEND`` is emulated by the C runtime (seek, then write), so concurrent appends from two
processes are only as safe as that emulation.
"""

from __future__ import annotations

import errno
import logging
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

from ._index import BlockScan, LedgerIndex, totals_for
from ._lines import sum_lines
from ._record import (
    MAX_TITLE_CHARS,
    Totals,
    UsageRecord,
    normalize_project,
    project_key,
    record_for,
    saved_by_cache,
)

log = logging.getLogger(__name__)

__all__ = [
    "APPEND_ATTEMPTS",
    "LEDGER_FILE",
    "MAX_TITLE_CHARS",
    "UsageRecord",
    "LedgerScan",
    "Totals",
    "UsageLedger",
    "ledger_path",
    "normalize_project",
    "project_key",
    "record_for",
    "saved_by_cache",
    "append_record",
    "read_records",
    "sum_lines",
    "totals",
]

LEDGER_FILE = "usage.jsonl"
"""File name of the ledger inside the config folder."""

APPEND_ATTEMPTS = 2
"""``UsageLedger.append`` tries a record this many times in a row before reporting a failure."""


def ledger_path(config_dir: Path) -> Path:
    """``config_dir / "usage.jsonl"``."""
    return Path(config_dir) / LEDGER_FILE


def append_record(path: Path, record: UsageRecord, *, fsync: bool = False) -> None:
    """Append ``record`` as one whole line, or leave the file as it was (see the module docstring).

    Args:
        path: The ledger file (created with mode 0600, its folder too when missing).
        record: The record.
        fsync: Also flush the line to disk.

    Raises:
        OSError: The folder or file cannot be created or written; the file is unchanged (should even the
            cut-back fail, which is logged, the partial line stays unfinished and the next append starts
            on a fresh line, so only that line is lost).
    """
    line = record.to_line()
    path.parent.mkdir(parents=True, exist_ok=True)
    flags = os.O_RDWR | os.O_APPEND | os.O_CREAT | getattr(os, "O_BINARY", 0)
    fd = os.open(path, flags, 0o600)
    try:
        if fcntl is not None:
            # Only for the fresh-line check and the cut-back: without it, a writer could read the size of
            # another writer's line half-copied into the page cache and start a needless empty line.
            fcntl.flock(fd, fcntl.LOCK_EX)
        size = os.fstat(fd).st_size
        if size and _last_byte(fd, size) != b"\n":
            line = b"\n" + line  # a crash left a torn line: start ours on a fresh one
        try:
            _write_whole(fd, line)
            if fsync:
                os.fsync(fd)
        except OSError as exc:
            _cut_back(fd, size, path, exc)
            raise
    finally:
        os.close(fd)  # also releases the lock


def _write_whole(fd: int, line: bytes) -> None:
    """Write all of ``line``: one write, and at most one more for the rest of a short one."""
    done = os.write(fd, line)
    if done < len(line):
        log.warning("usage ledger: short write (%d of %d bytes)", done, len(line))
        rest = os.write(fd, line[done:]) if done > 0 else 0
        if done + rest < len(line):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def _cut_back(fd: int, size: int, path: Path, exc: OSError) -> None:
    """Remove what a failed append wrote (the file ends as it did before it)."""
    try:
        if os.fstat(fd).st_size > size:
            os.ftruncate(fd, size)
    except OSError as cut:
        # Left as a torn line: the next append starts on a fresh line, so only that line is lost.
        log.error("usage ledger: cannot remove a partial line from %s after %s: %s", path,
                  exc.strerror or exc, cut.strerror or cut)


def _last_byte(fd: int, size: int) -> bytes:
    if hasattr(os, "pread"):
        return os.pread(fd, 1, size - 1)
    os.lseek(fd, size - 1, os.SEEK_SET)  # pragma: no cover - Windows
    return os.read(fd, 1)  # pragma: no cover - Windows


# --- reading -------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LedgerScan:
    """What a read found.

    Attributes:
        records: The valid records in the asked period, in file order.
        corrupt: Lines (anywhere but the end) that were not a valid record; skipped.
        torn_tail: The file ended in an unfinished line (a crash, or a write in progress); skipped.
    """

    records: list[UsageRecord]
    corrupt: int = 0
    torn_tail: bool = False


def read_records(path: Path, start_ms: int | None = None, end_ms: int | None = None) -> LedgerScan:
    """All valid records with ``start_ms <= ts < end_ms`` (open bounds when None); never raises on content.

    Raises:
        OSError: The file exists but cannot be read.
    """
    return LedgerScan(*LedgerIndex(Path(path)).read(start_ms, end_ms))


def totals(
    path: Path,
    start_ms: int | None = None,
    end_ms: int | None = None,
    project: str | os.PathLike[str] | None = None,
) -> Totals:
    """Sums of the records with ``start_ms <= ts < end_ms``, optionally of one project only.

    This is the fast path (a month's totals, budgets): blocks wholly inside the period are summed from
    the index, the others are matched with one regular expression and a tight loop.

    Raises:
        OSError: The file exists but cannot be read.
    """
    return totals_for(LedgerIndex(Path(path)), start_ms, end_ms, project)


class UsageLedger:
    """The ledger file of one config folder.

    Args:
        path: The ledger file (``ledger_path(config_dir)``).
        fsync: Also flush each line to disk (survives a power cut; costs a disk flush per response).
    """

    def __init__(self, path: Path, *, fsync: bool = False) -> None:
        self.path = Path(path)
        self.fsync = fsync
        self._index = LedgerIndex(self.path)
        self.last_error: str | None = None
        """Why the last ``append`` failed (a sentence for the status bar), None after a success."""

    def append(self, record: UsageRecord) -> bool:
        """Append one record, whole or not at all; False (logged, never raised) when it was not written.

        Tries ``APPEND_ATTEMPTS`` times in a row without waiting; on failure ``last_error`` says why.
        """
        error: OSError | None = None
        for _ in range(APPEND_ATTEMPTS):
            try:
                append_record(self.path, record, fsync=self.fsync)
            except OSError as exc:
                error = exc
                continue
            self.last_error = None
            return True
        assert error is not None
        reason = error.strerror or str(error) or type(error).__name__
        log.warning("usage ledger: cannot append to %s: %s", self.path, reason)
        self.last_error = f"Usage not saved to {self.path}: {reason}"
        return False

    def read(self, start_ms: int | None = None, end_ms: int | None = None) -> LedgerScan:
        """``read_records`` of this ledger; an unreadable file reads as empty (logged)."""
        try:
            return LedgerScan(*self._index.read(start_ms, end_ms))
        except OSError as exc:
            log.warning("usage ledger: cannot read %s: %s", self.path, exc.strerror or exc)
            return LedgerScan([])

    def scans(self, start_ms: int | None = None, end_ms: int | None = None) -> Iterator[BlockScan]:
        """The records of ``[start_ms, end_ms)`` one piece of the file at a time (e.g. for an export).

        Raises:
            OSError: The file cannot be read, or changed while it was read.
        """
        return self._index.scans(start_ms, end_ms)

    def totals(
        self,
        start_ms: int | None = None,
        end_ms: int | None = None,
        project: str | os.PathLike[str] | None = None,
    ) -> Totals:
        """``totals`` of this ledger; an unreadable file gives zero totals (logged)."""
        try:
            return totals_for(self._index, start_ms, end_ms, project)
        except OSError as exc:
            log.warning("usage ledger: cannot read %s: %s", self.path, exc.strerror or exc)
            return Totals()
