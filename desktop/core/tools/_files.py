"""Blocking implementations of the project tools (the async wrappers run them in a thread)."""

from __future__ import annotations

import codecs
import logging
import os
import stat
from pathlib import Path

from desktop.core._atomic import atomic_write_bytes
from desktop.core.tools._paths import ProjectRoot, ToolError

log = logging.getLogger(__name__)

__all__ = [
    "READ_CAP_BYTES",
    "BINARY_SNIFF_BYTES",
    "LIST_CAP_ENTRIES",
    "SEARCH_MAX_FILE_BYTES",
    "SEARCH_SKIP_DIRS",
    "SEARCH_MAX_RESULTS_LIMIT",
    "SEARCH_MAX_FILES",
    "read_file",
    "list_dir",
    "search_files",
    "write_file",
]

READ_CAP_BYTES = 12 * 1024
BINARY_SNIFF_BYTES = 8 * 1024
LIST_CAP_ENTRIES = 500
SEARCH_MAX_FILE_BYTES = 1024 * 1024
SEARCH_SKIP_DIRS = frozenset({".git", ".venv", "node_modules", ".chatnodes"})
SEARCH_MAX_RESULTS_LIMIT = 500
SEARCH_MAX_FILES = 20_000
_SEARCH_LINE_CHARS = 240


def _is_binary_head(head: bytes) -> bool:
    return b"\x00" in head[:BINARY_SNIFF_BYTES]


def _stat_regular(target: Path, shown: str) -> os.stat_result:
    try:
        st = target.stat()
    except FileNotFoundError:
        raise ToolError(f"file not found: {shown}") from None
    except OSError as exc:
        raise ToolError(f"cannot read {shown}: {exc.strerror or exc}") from None
    if stat.S_ISDIR(st.st_mode):
        raise ToolError(f"{shown} is a directory (use list_dir)")
    if not stat.S_ISREG(st.st_mode):
        raise ToolError(f"{shown} is not a regular file")
    return st


def read_file(root: ProjectRoot, path: str) -> str:
    """Text of a file, capped at ``READ_CAP_BYTES`` with a ``[truncated N bytes]`` marker.

    Binary files (a NUL byte in the first 8 KiB, or bytes that are not UTF-8) are described, not shown.
    """
    target = root.resolve(path, allow_root=False)
    shown = root.relative(target)
    _stat_regular(target, shown)
    try:
        with target.open("rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            head = fh.read(READ_CAP_BYTES)
    except OSError as exc:
        raise ToolError(f"cannot read {shown}: {exc.strerror or exc}") from None
    size = max(size, len(head))
    if _is_binary_head(head):
        return f"binary file ({size} bytes), not shown"
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    truncated = size > len(head)
    try:
        # final=False keeps a multi-byte character cut by the cap pending instead of failing on it.
        text = decoder.decode(head, final=not truncated)
    except UnicodeDecodeError:
        return f"binary file ({size} bytes), not shown"
    pending = len(decoder.getstate()[0])
    omitted = size - (len(head) - pending)
    if omitted > 0:
        return f"{text}\n[truncated {omitted} bytes]"
    return text


def _entry_line(entry: os.DirEntry[str]) -> str:
    name = entry.name
    try:
        if entry.is_symlink():
            target = os.readlink(entry.path)
            try:
                kind = "dir" if entry.is_dir() else "file"
            except OSError:
                kind = "broken"
            if kind == "broken" or not os.path.exists(entry.path):
                return f"{name} -> {target} (broken symlink)"
            return f"{name}{'/' if kind == 'dir' else ''} -> {target} (symlink)"
        if entry.is_dir(follow_symlinks=False):
            return f"{name}/"
        if entry.is_file(follow_symlinks=False):
            return f"{name}  ({entry.stat(follow_symlinks=False).st_size:,} bytes)"
        return f"{name}  (special file)"
    except OSError as exc:
        return f"{name}  (unreadable: {exc.strerror or exc})"


def list_dir(root: ProjectRoot, path: str = ".") -> str:
    """Sorted entries of a folder: folders end with ``/``, files show their size; capped."""
    target = root.resolve(path or ".")
    shown = root.relative(target)
    try:
        with os.scandir(target) as it:
            entries = sorted(it, key=lambda e: (e.name.casefold(), e.name))
    except FileNotFoundError:
        raise ToolError(f"folder not found: {shown}") from None
    except NotADirectoryError:
        raise ToolError(f"{shown} is not a directory (use read_file)") from None
    except OSError as exc:
        raise ToolError(f"cannot list {shown}: {exc.strerror or exc}") from None
    header = f"{shown}/ ({len(entries)} entries)" if shown != "." else f"./ ({len(entries)} entries)"
    if not entries:
        return f"{header}\n(empty folder)"
    lines = [header] + [_entry_line(e) for e in entries[:LIST_CAP_ENTRIES]]
    if len(entries) > LIST_CAP_ENTRIES:
        lines.append(f"… and {len(entries) - LIST_CAP_ENTRIES} more")
    return "\n".join(lines)


def _read_text_for_search(file: Path) -> str | None:
    """The file's text, or None when binary (NUL in the first 8 KiB, or not UTF-8)."""
    data = file.read_bytes()
    if _is_binary_head(data):
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def search_files(root: ProjectRoot, query: str, path: str = ".", max_results: int = 50) -> str:
    """Case-insensitive plain-text search through the text files under ``path``.

    Results are ``rel/path:line: text``. Skips the folders in ``SEARCH_SKIP_DIRS``, binary files,
    files over 1 MB and symlinks leading outside the project, and says what it skipped.
    """
    if not isinstance(query, str) or not query.strip():
        raise ToolError("query must be a non-empty string")
    if isinstance(max_results, bool) or not isinstance(max_results, int) or max_results < 1:
        raise ToolError("max_results must be a positive integer")
    max_results = min(max_results, SEARCH_MAX_RESULTS_LIMIT)
    start = root.resolve(path or ".")
    if not start.is_dir():
        if start.exists():
            raise ToolError(f"{root.relative(start)} is not a directory")
        raise ToolError(f"folder not found: {root.relative(start)}")
    needle = query.casefold()
    results: list[str] = []
    skipped = {"binary": 0, "large": 0, "outside": 0, "unreadable": 0, "linked_dirs": 0}
    skipped_dirs: set[str] = set()
    scanned = 0
    capped = files_capped = False
    for dirpath, dirnames, filenames in os.walk(start, followlinks=False):
        for name in list(dirnames):
            if name in SEARCH_SKIP_DIRS:
                skipped_dirs.add(name)
        linked = [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]
        skipped["linked_dirs"] += len(linked)  # os.walk does not descend into them (loops, escapes)
        dirnames[:] = sorted(d for d in dirnames if d not in SEARCH_SKIP_DIRS and d not in linked)
        for name in sorted(filenames):
            file = Path(dirpath) / name
            if file.is_symlink():
                real = Path(os.path.realpath(file))
                if not root.contains(real):
                    skipped["outside"] += 1
                    continue
            if scanned >= SEARCH_MAX_FILES:
                files_capped = True
                break
            scanned += 1
            try:
                st = file.stat()
                if not stat.S_ISREG(st.st_mode):
                    continue
                if st.st_size > SEARCH_MAX_FILE_BYTES:
                    skipped["large"] += 1
                    continue
                text = _read_text_for_search(file)
            except OSError:
                skipped["unreadable"] += 1
                continue
            if text is None:
                skipped["binary"] += 1
                continue
            if needle not in text.casefold():
                continue
            rel = file.relative_to(root.path).as_posix()
            for number, line in enumerate(text.splitlines(), start=1):
                if needle in line.casefold():
                    snippet = line.strip()
                    if len(snippet) > _SEARCH_LINE_CHARS:
                        snippet = snippet[:_SEARCH_LINE_CHARS] + "…"
                    results.append(f"{rel}:{number}: {snippet}")
                    if len(results) >= max_results:
                        capped = True
                        break
            if capped:
                break
        if capped or files_capped:
            break
    lines = results or [f"no matches for {query!r}"]
    if capped:
        lines.append(f"[results capped at {max_results}; narrow the query or the path for more]")
    if files_capped:
        lines.append(f"[search stopped after {SEARCH_MAX_FILES} files; narrow the path]")
    notes = []
    if skipped_dirs:
        notes.append("folders " + ", ".join(sorted(skipped_dirs)))
    if skipped["binary"]:
        notes.append(f"{skipped['binary']} binary file(s)")
    if skipped["large"]:
        notes.append(f"{skipped['large']} file(s) over 1 MB")
    if skipped["outside"]:
        notes.append(f"{skipped['outside']} symlink(s) leading outside the project")
    if skipped["linked_dirs"]:
        notes.append(f"{skipped['linked_dirs']} symlinked folder(s) not followed")
    if skipped["unreadable"]:
        notes.append(f"{skipped['unreadable']} unreadable file(s)")
    if notes:
        lines.append("[skipped: " + "; ".join(notes) + "]")
    return "\n".join(lines)


def write_file(root: ProjectRoot, path: str, content: str) -> str:
    """Write ``content`` (UTF-8) atomically: temp file in the same folder, fsync, ``os.replace``."""
    if not isinstance(content, str):
        raise ToolError("content must be a string")
    target = root.resolve(path, allow_root=False)
    shown = root.relative(target)
    if target.is_dir():
        raise ToolError(f"{shown} is a directory")
    parent = target.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise ToolError(f"cannot create folder for {shown}: a file is in the way") from None
    except OSError as exc:
        raise ToolError(f"cannot create folder for {shown}: {exc.strerror or exc}") from None
    # The folder may have been swapped for a symlink between resolving and creating: check again.
    if not root.contains(Path(os.path.realpath(parent))):
        raise ToolError(f"path escapes the project folder: {path!r}")
    data = content.encode("utf-8")
    try:
        atomic_write_bytes(target, data)  # keeps an existing file's permissions
    except OSError as exc:
        raise ToolError(f"cannot write {shown}: {exc.strerror or exc}") from None
    return f"wrote {len(data)} bytes to {shown}"
