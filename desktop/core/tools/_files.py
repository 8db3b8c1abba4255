"""Blocking implementations of the project tools (the async wrappers run them in a thread)."""

from __future__ import annotations

import codecs
import logging
import os
import stat
import threading
from pathlib import Path

from desktop.core.tools._paths import ProjectRoot, ToolCancelled, ToolError

from ..files import NotRegularFileError, atomic_write_bytes, open_regular_file, read_regular

log = logging.getLogger(__name__)

__all__ = [
    "READ_CAP_BYTES",
    "BINARY_SNIFF_BYTES",
    "LIST_CAP_ENTRIES",
    "SEARCH_MAX_FILE_BYTES",
    "SEARCH_SKIP_DIRS",
    "SEARCH_MAX_RESULTS_LIMIT",
    "SEARCH_MAX_FILES",
    "OUTSIDE_LINK",
    "PROTECTED_DIRS",
    "PROTECTED_FILES",
    "protected_reason",
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
#: How ``list_dir`` shows the target of a symlink that leads out of the project.
OUTSIDE_LINK = "(link outside the project)"


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
        # Checked again as it opens: a FIFO swapped in after the stat above never blocks the read.
        with open_regular_file(target) as fh:
            size = os.fstat(fh.fileno()).st_size
            head = fh.read(READ_CAP_BYTES)
    except NotRegularFileError:
        raise ToolError(f"{shown} is not a regular file") from None
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


def _entry_line(root: ProjectRoot, entry: os.DirEntry[str]) -> str:
    name = entry.name
    try:
        if entry.is_symlink():
            try:
                kind = "dir" if entry.is_dir() else "file"
            except OSError:
                kind = "broken"
            if not root.contains(Path(os.path.realpath(entry.path))):
                # Never show where it leads: an absolute path outside tells about the user's disk.
                return f"{name}{'/' if kind == 'dir' else ''} -> {OUTSIDE_LINK}"
            target = os.readlink(entry.path)
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
    """Sorted entries of a folder: folders end with ``/``, files show their size; capped.

    A symlink shows its target when it stays inside the project, else ``(link outside the project)``.
    """
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
    lines = [header] + [_entry_line(root, e) for e in entries[:LIST_CAP_ENTRIES]]
    if len(entries) > LIST_CAP_ENTRIES:
        lines.append(f"… and {len(entries) - LIST_CAP_ENTRIES} more")
    return "\n".join(lines)


def _read_text_for_search(file: Path) -> str | None:
    """The file's text, or None when binary (NUL in the first 8 KiB, or not UTF-8).

    Raises:
        NotRegularFileError: It is no longer a regular file (swapped after the walk's stat).
        OSError: It could not be read.
    """
    data = read_regular(file, SEARCH_MAX_FILE_BYTES + 1)
    if _is_binary_head(data):
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _scan_dir(directory: str) -> tuple[list[str], list[str]] | None:
    """(folder names, other names) of one folder, as ``os.walk`` splits them; None when unreadable.

    A symlink to a folder counts as a folder (the caller does not descend into it).
    """
    dirs: list[str] = []
    files: list[str] = []
    try:
        with os.scandir(directory) as it:
            for entry in it:
                try:
                    is_dir = entry.is_dir()
                except OSError:
                    is_dir = False
                (dirs if is_dir else files).append(entry.name)
    except OSError:
        return None
    return dirs, files


def _check_cancel(cancel: threading.Event | None) -> None:
    if cancel is not None and cancel.is_set():
        raise ToolCancelled("search cancelled")


def search_files(
    root: ProjectRoot,
    query: str,
    path: str = ".",
    max_results: int = 50,
    cancel: threading.Event | None = None,
) -> str:
    """Case-insensitive plain-text search through the text files under ``path``.

    Results are ``rel/path:line: text``. Skips the folders in ``SEARCH_SKIP_DIRS``, binary files,
    files over 1 MB and symlinks leading outside the project, and says what it skipped. The walk
    is iterative (any folder depth), top-down, in sorted order.

    Args:
        root: The project root.
        query: The text to find.
        path: The folder to search, relative to the root.
        max_results: The most matching lines returned (capped at ``SEARCH_MAX_RESULTS_LIMIT``).
        cancel: Checked before each folder and file; once set, the search stops.

    Raises:
        ToolError: Bad arguments or a missing folder.
        ToolCancelled: ``cancel`` was set.
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
    pending = [str(start)]  # folders still to visit; the next one is on top
    while pending and not (capped or files_capped):
        _check_cancel(cancel)
        dirpath = pending.pop()
        listing = _scan_dir(dirpath)
        if listing is None:
            continue
        dirnames, filenames = listing
        for name in dirnames:
            if name in SEARCH_SKIP_DIRS:
                skipped_dirs.add(name)
        linked = [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]
        skipped["linked_dirs"] += len(linked)  # never followed (loops, escapes)
        children = sorted(d for d in dirnames if d not in SEARCH_SKIP_DIRS and d not in linked)
        for name in sorted(filenames):
            _check_cancel(cancel)
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
            except NotRegularFileError:
                continue  # like any FIFO or device: not a file to search
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
        pending.extend(os.path.join(dirpath, d) for d in reversed(children))
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


#: Folders whose content configures tools that run code (or the project itself); never written.
PROTECTED_DIRS = frozenset({
    ".git", ".chatnodes", ".vscode", ".idea", ".hg", ".svn", ".husky", ".devcontainer",
})
#: File names, at any depth, that configure the project or tools that run code; never written.
PROTECTED_FILES = frozenset({
    "project.json", ".mcp.json", ".envrc", ".pre-commit-config.yaml", ".gitattributes", ".gitmodules",
    ".gitconfig", ".lfsconfig", ".git",
})


def _fold(part: str) -> str:
    """A path component as a case-insensitive filesystem (and Windows) sees it."""
    return part.split(":", 1)[0].rstrip(" .").lower() or part.lower()


def protected_reason(relative: str) -> str | None:
    """Why ``write_file`` refuses the project-relative POSIX path ``relative``, or None.

    Compared lower-cased (the project may be on a case-insensitive filesystem), with Windows'
    trailing dots/spaces and ``:stream`` suffixes ignored.
    """
    parts = [_fold(p) for p in relative.replace("\\", "/").split("/") if p not in ("", ".")]
    for part in parts[:-1]:
        if part in PROTECTED_DIRS:
            return f"files inside {part}/ configure the project or tools that run code"
    if parts:
        last = parts[-1]
        if last in PROTECTED_DIRS or last in PROTECTED_FILES:
            return f"{last} configures the project or tools that run code"
    return None


def _refuse_protected(root: ProjectRoot, path: str, target: Path, shown: str) -> None:
    for candidate in (path.strip(), root.relative(target)):
        reason = protected_reason(candidate)
        if reason is not None:
            raise ToolError(f"write_file refuses {shown}: {reason}; the user can edit it outside the app")


def write_file(root: ProjectRoot, path: str, content: str, cancel: threading.Event | None = None) -> str:
    """Write ``content`` (UTF-8) atomically: temp file in the same folder, fsync, ``os.replace``.

    Control files (see ``protected_reason``) are refused, as given and as resolved (a symlink
    inside the project that leads to one is refused too). Nothing is written once ``cancel`` is set.
    """
    if not isinstance(content, str):
        raise ToolError("content must be a string")
    target = root.resolve(path, allow_root=False)
    shown = root.relative(target)
    _refuse_protected(root, path, target, shown)
    if cancel is not None and cancel.is_set():
        raise ToolCancelled("write cancelled")
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
