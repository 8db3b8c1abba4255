"""What a ``write_file`` approval shows before anything is written: the file there now and the change.

``read_existing`` reads the file a ``write_file`` call names by the project tools' own rules: the path
is confined to the project (``ProjectRoot``), a control file the tool refuses is reported as refused,
only a regular file is opened (``open_regular``: a FIFO never blocks, a device is never opened), and
at most ``PREVIEW_READ_CAP`` bytes are read. A file with a NUL byte near its start or bytes that are
not UTF-8 is reported as binary, never decoded.

``write_diff`` is the unified diff between the file's text and the new content, for files short
enough to compare on the GUI thread (``DIFF_MAX_LINES``; ``difflib`` grows faster than linearly).
"""

from __future__ import annotations

import difflib
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, TypeAlias

from desktop.core.tools._files import BINARY_SNIFF_BYTES, _refuse_protected
from desktop.core.tools._paths import ProjectRoot, ToolError

from ..files import NotRegularFileError, read_regular

__all__ = ["DIFF_MAX_LINES", "PREVIEW_READ_CAP", "ExistingFile", "ExistingState", "WriteDiff",
           "read_existing", "write_diff"]

PREVIEW_READ_CAP = 256 * 1024
"""The most bytes of an existing file a ``write_file`` card reads (a larger file is not compared)."""
DIFF_MAX_LINES = 1000
"""The longest file (old or new, in lines) a card compares; about 0.1 s of ``difflib`` at worst."""

ExistingState: TypeAlias = Literal["absent", "text", "binary", "too_large", "not_regular", "refused",
                                   "unreadable"]
"""What is at the path now: nothing (``absent``, a new file), a text file, a binary file, a file over
the cap, something that is not a regular file (a folder, a FIFO, a device), a path ``write_file``
refuses (outside the project, a control file), or a file that could not be read."""


@dataclass(frozen=True, slots=True)
class ExistingFile:
    """The file a ``write_file`` call would replace.

    Attributes:
        state: See ``ExistingState``.
        path: The project-relative path (the path as given when it was refused before resolving).
        text: The file's text (``state == "text"`` only).
        size: Its size in bytes (when it exists and is a regular file).
        reason: Why it was refused or could not be read (``refused``, ``not_regular``, ``unreadable``).
    """

    state: ExistingState
    path: str
    text: str | None = None
    size: int | None = None
    reason: str | None = None

    @property
    def exists(self) -> bool:
        """True when something is at the path now (the write would replace it)."""
        return self.state not in ("absent", "refused")


def read_existing(root: Path, path: str, *, cap: int = PREVIEW_READ_CAP) -> ExistingFile:
    """What is at ``path`` (relative to the project folder ``root``) now; never raises.

    Args:
        root: The project folder.
        path: The path as the model gave it.
        cap: The most bytes read.
    """
    try:
        sandbox = ProjectRoot(root)
        target = sandbox.resolve(path, allow_root=False)
        shown = sandbox.relative(target)
        _refuse_protected(sandbox, path, target, shown)
    except ToolError as exc:
        return ExistingFile("refused", path, reason=str(exc))
    except OSError as exc:
        return ExistingFile("unreadable", path, reason=exc.strerror or str(exc))
    try:
        st = os.stat(target)
    except FileNotFoundError:
        return ExistingFile("absent", shown)
    except OSError as exc:
        return ExistingFile("unreadable", shown, reason=exc.strerror or str(exc))
    if not stat.S_ISREG(st.st_mode):
        kind = "a folder" if stat.S_ISDIR(st.st_mode) else "a special file"
        return ExistingFile("not_regular", shown, reason=f"{kind}, not a regular file")
    if st.st_size > cap:
        return ExistingFile("too_large", shown, size=st.st_size)
    try:
        data = read_regular(target, cap + 1)
    except NotRegularFileError as exc:
        return ExistingFile("not_regular", shown, reason=exc.strerror or str(exc))
    except OSError as exc:
        return ExistingFile("unreadable", shown, reason=exc.strerror or str(exc))
    size = max(st.st_size, len(data))
    if len(data) > cap:
        return ExistingFile("too_large", shown, size=size)
    if b"\x00" in data[:BINARY_SNIFF_BYTES]:
        return ExistingFile("binary", shown, size=size)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return ExistingFile("binary", shown, size=size)
    return ExistingFile("text", shown, text=text, size=size)


def _lines(text: str) -> list[str]:
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


@dataclass(frozen=True, slots=True)
class WriteDiff:
    """A unified diff of a write.

    Attributes:
        lines: The diff's lines without line ends and without the ``---``/``+++`` header: hunk
            headers (``@@ -a,b +c,d @@``), context lines (`` x``), removed (``-x``) and added
            (``+x``) lines.
        added: Lines added.
        removed: Lines removed.
    """

    lines: tuple[str, ...]
    added: int
    removed: int


def write_diff(old: str, new: str, *, context: int = 3, max_lines: int = DIFF_MAX_LINES) -> WriteDiff | None:
    """The unified diff from ``old`` to ``new``, or None when either has more than ``max_lines`` lines.

    Lines end at ``\n`` only (a ``\r`` before it stays part of the line, so a change of line ends
    shows; a U+2028 or form feed never splits a line). A last line without a line end is compared like
    any other (no "no newline" markers).
    """
    before, after = _lines(old), _lines(new)
    if len(before) > max_lines or len(after) > max_lines:
        return None
    lines: list[str] = []
    added = removed = 0
    for line in difflib.unified_diff(before, after, n=context, lineterm=""):
        if line.startswith(("---", "+++")) and not lines:
            continue  # the two header lines come first, before any hunk
        if line.startswith("+"):
            added += 1
        elif line.startswith("-"):
            removed += 1
        lines.append(line)
    return WriteDiff(tuple(lines), added, removed)
