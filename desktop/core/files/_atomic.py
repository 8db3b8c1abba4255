"""Crash-safe file helpers shared by the settings and project stores.

* ``atomic_write_bytes``: temp file in the same folder, fsync, optional last-good backup, ``os.replace``,
  fsync of the folder. A failure at any step leaves the previous file untouched and no temp file behind.
* ``move_aside``: renames a bad file to ``<name>.corrupt-<timestamp>`` without ever overwriting anything.
* ``keep_copy``: keeps a copy of a file under a new name (``-2``, ``-3``... if taken), never
  overwriting anything, before the file is replaced by a newer format.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from ._regular import read_regular

__all__ = ["atomic_write_bytes", "fsync_dir", "keep_copy", "move_aside"]

log = logging.getLogger(__name__)


def fsync_dir(folder: Path) -> None:
    """Flush a folder's entries to disk (no-op where folders cannot be opened, e.g. Windows)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _new_file_mode() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def _write_temp(folder: Path, prefix: str, data: bytes, mode: int) -> Path:
    fd, name = tempfile.mkstemp(prefix=prefix, suffix=".tmp", dir=folder)
    tmp = Path(name)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        with contextlib.suppress(OSError):
            os.chmod(tmp, mode)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    return tmp


def _make_backup(path: Path, backup: Path, mode: int) -> None:
    """Make ``backup`` a copy of ``path`` atomically (hard link when possible, else a byte copy)."""
    folder = path.parent
    link_tmp = folder / f".{backup.name}.{os.getpid()}.{time.monotonic_ns()}.lnk"
    try:
        os.link(path, link_tmp)
    except OSError:
        data = read_regular(path)
        tmp = _write_temp(folder, f".{backup.name}.", data, mode)
        try:
            os.replace(tmp, backup)
        except BaseException:
            with contextlib.suppress(OSError):
                tmp.unlink()
            raise
        return
    try:
        os.replace(link_tmp, backup)
    except BaseException:
        with contextlib.suppress(OSError):
            link_tmp.unlink()
        raise


def atomic_write_bytes(
    path: Path,
    data: bytes,
    *,
    backup: Path | None = None,
    backup_if: Callable[[Path], bool] | None = None,
) -> None:
    """Replace ``path`` with ``data`` atomically and durably.

    Args:
        path: The file to write; its folder is created when missing.
        data: The complete new contents.
        backup: When given and ``path`` exists, the current file becomes this backup first.
        backup_if: Called with ``path`` before backing it up; when it returns False the current file
            is not good and the previous backup is kept instead.

    Raises:
        OSError: Writing failed; ``path`` (and ``backup``) are unchanged and no temp file is left.
    """
    folder = path.parent
    folder.mkdir(parents=True, exist_ok=True)
    try:
        mode = os.stat(path).st_mode & 0o777
        exists = True
    except FileNotFoundError:
        mode = _new_file_mode()
        exists = False
    tmp = _write_temp(folder, f".{path.name}.", data, mode)
    try:
        if backup is not None and exists and (backup_if is None or backup_if(path)):
            _make_backup(path, backup, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    fsync_dir(folder)


def move_aside(path: Path, label: str = "corrupt") -> Path:
    """Rename ``path`` to ``<name>.<label>-<timestamp>`` (``-2``, ``-3``... if taken); never overwrites.

    Returns:
        The new path of the file.

    Raises:
        OSError: The file could not be moved.
    """
    stamp = time.strftime("%Y%m%d-%H%M%S")
    base = f"{path.name}.{label}-{stamp}"
    for n in range(1, 1000):
        target = path.with_name(base if n == 1 else f"{base}-{n}")
        try:
            os.link(path, target)
        except FileExistsError:
            continue
        except OSError as exc:
            if exc.errno == errno.ENOENT:
                raise
            # No hard links here (some network or FAT file systems): check, then rename.
            if target.exists():
                continue
            os.rename(path, target)
        else:
            os.unlink(path)
        fsync_dir(path.parent)
        log.warning("kept a bad file aside: %s -> %s", path, target)
        return target
    raise OSError(f"no free name to keep {path} aside")


def keep_copy(path: Path, target: Path) -> Path:
    """Keep the current ``path`` as ``target`` (``-2``, ``-3``... when taken); never overwrites.

    A hard link when the file system has them (the copy survives ``path`` being replaced), else a
    byte copy written atomically.

    Returns:
        The copy.

    Raises:
        OSError: No copy could be made (``path`` is unchanged).
    """
    for n in range(1, 1000):
        candidate = target if n == 1 else target.with_name(f"{target.name}-{n}")
        try:
            os.link(path, candidate)
        except FileExistsError:
            continue
        except OSError as exc:
            if exc.errno == errno.ENOENT:
                raise
            if candidate.exists():
                continue
            atomic_write_bytes(candidate, read_regular(path))  # no hard links here: copy the bytes
            return candidate
        fsync_dir(candidate.parent)
        return candidate
    raise OSError(f"no free name to keep a copy of {path} as {target.name}")
