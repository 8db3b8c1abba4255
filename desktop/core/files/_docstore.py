"""One JSON document on disk, used by the settings, project and grant stores.

What every document gets:

* **Loading never crashes.** Any parse failure (bytes that are not UTF-8, not JSON, nested deeper
  than ``MAX_DEPTH`` or deep enough to hit Python's recursion limit, wrong types anywhere) moves the
  file aside to ``<name>.corrupt-<timestamp>`` (never overwriting anything), then the last good
  ``<name>.bak`` is used when it is valid, else the defaults; the ``LoadResult`` says what happened.
  A file that cannot be read (permissions, or not a regular file: a FIFO or a device is refused
  before it is opened, ``_regular``) is left in place and later saves refuse to overwrite it.
* **Valid Unicode.** Escaped lone surrogates (``"\\ud83d"``) are repaired to U+FFFD on load (the
  result says so) and on save (a save never raises an encoder error).
* **Atomic saves** with a last-good backup (``_atomic.atomic_write_bytes``).
* **Crash debris** (``.<name>.*.tmp`` temp files, backup links) is removed by ``remove_debris``.
* **Change detection:** the store remembers the file's fingerprint (inode, size, mtime) when it
  loads or writes it, so a caller can refuse to overwrite a file someone else changed since.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeAlias, TypeVar

from ..text import repair_surrogates, utf8_bytes
from ._atomic import atomic_write_bytes, move_aside
from ._regular import read_checked

__all__ = [
    "MAX_DEPTH",
    "DocumentCorruptError",
    "DocumentStore",
    "Fingerprint",
    "LoadResult",
    "depth_exceeds",
    "fingerprint",
    "parse_document",
]

log = logging.getLogger(__name__)

MAX_DEPTH = 128
"""Deepest nesting a document may have (ours are about 10 deep); deeper files count as corrupt."""

Fingerprint: TypeAlias = tuple[int, int, int]
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
T = TypeVar("T")


def fingerprint(path: Path) -> Fingerprint | None:
    """``(inode, size, mtime_ns)`` of ``path``, or None when it does not exist or cannot be read."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


class DocumentCorruptError(Exception):
    """A document could not be used; it was kept aside and the user should be told.

    ``ProjectCorruptError`` and ``SettingsCorruptError`` are this error for their files.

    Attributes:
        path: The document file.
        moved_to: Where the bad file now is (``<name>.corrupt-<timestamp>``), or None when it was
            left in place (it could not be read or moved, or another window owns the folder).
        reason: What was wrong.
        recovered_from: The backup the value was restored from, or None.
        fallback: What is used instead when nothing was recovered (``"default settings are in
            use"``), or None to say nothing.
    """

    def __init__(
        self,
        path: Path,
        moved_to: Path | None,
        reason: str,
        recovered_from: Path | None = None,
        fallback: str | None = None,
    ) -> None:
        self.path = path
        self.moved_to = moved_to
        self.reason = reason
        self.recovered_from = recovered_from
        self.fallback = fallback
        super().__init__(self._text())

    def _text(self) -> str:
        where = (
            f"it was kept as {self.moved_to}"
            if self.moved_to is not None
            else "it was left in place and is not overwritten"
        )
        text = f"{self.path} could not be read ({self.reason}); {where}"
        if self.recovered_from is not None:
            text += f"; the last good version was restored from {self.recovered_from.name}"
        elif self.fallback:
            text += f"; {self.fallback}"
        return text

    def __str__(self) -> str:
        return self._text()


@dataclass(frozen=True, slots=True)
class LoadResult(Generic[T]):
    """What loading a document gave and everything the user should be told about it.

    Attributes:
        value: The loaded value (the defaults when the file is missing or bad).
        notices: Readable sentences for a banner (corrupt file kept aside, text repaired...).
        moved_aside: Where a bad file was moved, or None.
        repaired: True when the value differs from the file (lone surrogates replaced, duplicated
            archive messages dropped...); the next save writes the repaired form.
        recovered_from: The backup the value came from, or None.
        error: The corrupt-file error, or None when the file was fine or missing.
        read_only: True when another window or process owns the document; saves are refused.
        read_only_reason: Why it is read-only (who holds the lock), or None.
        missing: True when there was no file (the value is the defaults).
    """

    value: T
    notices: tuple[str, ...] = ()
    moved_aside: Path | None = None
    repaired: bool = False
    recovered_from: Path | None = None
    error: DocumentCorruptError | None = None
    read_only: bool = False
    read_only_reason: str | None = None
    missing: bool = False


def depth_exceeds(obj: object, limit: int) -> bool:
    """True when ``obj`` nests lists/objects deeper than ``limit`` (iterative)."""
    stack: list[tuple[Any, int]] = [(obj, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return True
        children = item.values() if isinstance(item, dict) else item
        for child in children:
            if isinstance(child, (dict, list)) and child:
                stack.append((child, depth + 1))
    return False


def parse_document(data: bytes, max_depth: int | None = MAX_DEPTH) -> tuple[object, int]:
    """Decode a JSON document's bytes; never raises anything but ``ValueError``.

    Args:
        data: The file's bytes.
        max_depth: The deepest nesting accepted; None leaves the check to the caller (a document
            whose older form nests deeper and is made flat by its decoder, which checks after).

    Returns:
        ``(value, repaired)``: the parsed value and how many strings had lone surrogates replaced.

    Raises:
        ValueError: A readable reason (not UTF-8, not JSON, nested too deeply).
    """
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    if text.startswith("\ufeff"):
        text = text[1:]
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})") from None
    except RecursionError:
        raise ValueError("not valid JSON (nested too deeply)") from None
    if max_depth is not None and isinstance(raw, (dict, list)):
        if data.count(b"[") + data.count(b"{") > max_depth and depth_exceeds(raw, max_depth):
            raise ValueError(f"nested more than {max_depth} levels deep")
    if _SURROGATE_ESCAPE.search(text) is not None:  # from valid UTF-8 only escapes make surrogates
        raw, repaired = repair_surrogates(raw)
        return raw, repaired
    return raw, 0


def _repair_notice(path: Path, count: int) -> str:
    return (
        f"{path.name}: {count} text{'s' if count != 1 else ''} held invalid Unicode (a lone surrogate, "
        "e.g. half of an emoji); the bad characters were replaced with \ufffd"
    )


class DocumentStore(Generic[T]):
    """Loads and saves one JSON document with the rules of this module.

    Args:
        path: The document file.
        decode: Builds the value from the parsed JSON; raises ``ValueError``/``TypeError`` (any
            exception counts as a bad file) naming what is wrong.
        encode: The document text of a value.
        default: The value for a missing or unusable file.
        error_type: The corrupt-file error to report (a ``DocumentCorruptError`` subclass).
        blocked_error: Builds the error ``write`` raises while the file could not be read.
        fallback: Passed to ``error_type`` (what is used when nothing was recovered).
        max_depth: Passed to ``parse_document`` (None: ``decode`` checks the depth itself).
        read: Reads the document or its backup; anything that is not a regular file must be
            refused (an ``OSError``). ``_regular.read_regular`` for files of a folder others may
            write (a project), the default ``read_checked`` for the user's own.

    Attributes:
        path: The document file.
        backup_path: ``<name>.bak``, the last good file.
        blocked: Why saves are refused (the file could not be read and was left in place), or None.
        seen: True once the file was loaded or written (``known`` is then meaningful).
        known: The fingerprint of the file as last loaded or written (None: it did not exist).
    """

    def __init__(
        self,
        path: Path,
        *,
        decode: Callable[[object], T],
        encode: Callable[[T], str],
        default: Callable[[], T],
        error_type: type[DocumentCorruptError] = DocumentCorruptError,
        blocked_error: Callable[[str], Exception] = OSError,
        fallback: str | None = None,
        max_depth: int | None = MAX_DEPTH,
        read: Callable[[Path], bytes] = read_checked,
    ) -> None:
        self.path = Path(path)
        self._max_depth = max_depth
        self._read = read
        self.backup_path = self.path.with_name(self.path.name + ".bak")
        self._decode = decode
        self._encode = encode
        self._default = default
        self._error_type = error_type
        self._blocked_error = blocked_error
        self._fallback = fallback
        self.blocked: str | None = None
        self.seen = False
        self.known: Fingerprint | None = None

    # ------------------------------------------------------------------------------------------

    def parse(self, data: bytes) -> tuple[T, int]:
        """Build the value from a file's bytes.

        Returns:
            ``(value, repaired)``: how many strings had lone surrogates replaced.

        Raises:
            ValueError: Anything wrong, with a readable reason.
        """
        raw, repaired = parse_document(data, self._max_depth)
        try:
            return self._decode(raw), repaired
        except RecursionError:
            raise ValueError("nested too deeply") from None
        except ValueError:
            raise
        except Exception as exc:  # wrong types anywhere must not crash the app
            raise ValueError(f"{type(exc).__name__}: {exc}") from None

    def load(self, *, may_write: bool = True, recover: bool = True) -> LoadResult[T]:
        """Read the document; never raises.

        Args:
            may_write: False when another owner has the folder: a bad file is then left in place
                (not moved aside) and saves are refused by the caller anyway.
            recover: Use the last good backup when the file is bad (else the defaults).
        """
        self.blocked = None
        try:
            data = self._read(self.path)  # a FIFO or device in its place is refused, never waited on
        except FileNotFoundError:
            self.seen, self.known = True, None
            return LoadResult(self._default(), missing=True)
        except OSError as exc:
            reason = f"{type(exc).__name__}: {exc.strerror or exc}"
            self.blocked = reason
            self.seen, self.known = True, fingerprint(self.path)
            err = self._error_type(self.path, None, reason, fallback=self._fallback)
            log.warning("%s", err)
            return LoadResult(self._default(), (str(err),), error=err)
        stamp = fingerprint(self.path)
        try:
            value, repaired = self.parse(data)
        except ValueError as exc:
            reason = str(exc)
        else:
            self.seen, self.known = True, stamp
            notices = (_repair_notice(self.path, repaired),) if repaired else ()
            return LoadResult(value, notices, repaired=bool(repaired))
        return self._bad_file(reason, may_write=may_write, recover=recover)

    def _bad_file(self, reason: str, *, may_write: bool, recover: bool) -> LoadResult[T]:
        moved_to: Path | None = None
        self.seen = True
        if may_write:
            try:
                moved_to = move_aside(self.path)
                self.known = None
            except OSError as exc:
                log.error("could not move the bad file %s aside: %s", self.path, exc)
                self.blocked = reason
                self.known = fingerprint(self.path)
        else:
            self.known = fingerprint(self.path)
        value: T | None = None
        repaired = 0
        if recover:
            try:
                value, repaired = self.parse(self._read(self.backup_path))
            except (OSError, ValueError):
                value = None
        err = self._error_type(
            self.path,
            moved_to,
            reason,
            recovered_from=self.backup_path if value is not None else None,
            fallback=self._fallback,
        )
        log.warning("%s", err)
        notices = [str(err)]
        if repaired and value is not None:
            notices.append(_repair_notice(self.backup_path, repaired))
        return LoadResult(
            value if value is not None else self._default(),
            tuple(notices),
            moved_aside=moved_to,
            repaired=bool(repaired),
            recovered_from=err.recovered_from,
            error=err,
        )

    # ------------------------------------------------------------------------------------------

    def changed_since_seen(self) -> bool:
        """True when the file is not the one last loaded or written (always False before that)."""
        return self.seen and fingerprint(self.path) != self.known

    def is_good_file(self, path: Path) -> bool:
        """True when ``path`` is the file last loaded or written, or parses as a valid document."""
        if self.seen and self.known is not None and fingerprint(path) == self.known:
            return True
        try:
            self.parse(self._read(path))
        except (OSError, ValueError):
            return False
        return True

    def encode_value(self, value: T) -> tuple[bytes, bool]:
        """The file bytes of ``value`` and whether lone surrogates had to be replaced."""
        return utf8_bytes(self._encode(value))

    def check_writable(self) -> None:
        """Raise ``blocked_error`` while the file could not be read and was left in place."""
        if self.blocked is not None:
            raise self._blocked_error(
                f"{self.path} could not be read earlier ({self.blocked}) and is not overwritten; "
                "fix or move it, then open it again"
            )

    def write(self, value: T) -> bool:
        """Write ``value`` atomically; the previous good file becomes ``<name>.bak``.

        Returns:
            True when lone surrogates had to be replaced to encode it (logged).

        Raises:
            Exception: ``blocked_error`` while the file could not be read and was left in place.
            OSError: Writing failed; the previous file is unchanged.
        """
        self.check_writable()
        data, repaired = self.encode_value(value)
        if repaired:
            log.warning("%s: invalid Unicode (lone surrogates) replaced with U+FFFD on save", self.path.name)
        atomic_write_bytes(self.path, data, backup=self.backup_path, backup_if=self.is_good_file)
        self.seen, self.known = True, fingerprint(self.path)
        return repaired

    def remove_debris(self, *, min_age: float = 0.0) -> list[Path]:
        """Delete temp files left by interrupted saves (``.<name>.*.tmp`` and backup links).

        Args:
            min_age: Only files older than this many seconds (when no lock keeps writers out).

        Returns:
            The files removed.
        """
        prefix = f".{self.path.name}."
        removed: list[Path] = []
        try:
            entries = list(os.scandir(self.path.parent))
        except OSError:
            return removed
        now = time.time()
        for entry in entries:
            name = entry.name
            if not (name.startswith(prefix) and name.endswith((".tmp", ".lnk"))):
                continue
            with contextlib.suppress(OSError):
                if not entry.is_file(follow_symlinks=False):
                    continue
                if min_age > 0 and now - entry.stat(follow_symlinks=False).st_mtime < min_age:
                    continue
                os.unlink(entry.path)
                removed.append(Path(entry.path))
        if removed:
            log.info("removed %d temp file(s) of an interrupted save in %s", len(removed), self.path.parent)
        return removed
