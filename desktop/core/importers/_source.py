"""Where an export's conversation files are: a ``.zip``, an unzipped folder or a bare ``.json``.

Nothing is ever extracted to disk: members are read as streams straight from the zip. Before a
byte is decompressed the zip is checked:

* entries whose names could escape a folder (absolute, ``..``, drive letters, backslashes, NUL) are
  never read, and said so;
* encrypted entries and unknown compression methods are refused with a clear message;
* the members to read must declare at most ``Limits.max_uncompressed`` bytes in all, and a large
  member may not expand more than ``Limits.max_ratio`` times (a zip bomb);
* while reading, a member that produces more bytes than it declared, or more than the cap in all,
  stops the import (``LimitedReader``).

The conversation files of a ChatGPT export are ``conversations.json`` or, in newer exports, the
shards ``conversations-NNN.json`` listed in ``export_manifest.json``; a shard the manifest lists
but the zip lacks is reported (its conversations are missing), never silently ignored.
"""

from __future__ import annotations

import json
import logging
import re
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import IO, Any

from ._model import ImportFailed

__all__ = ["Limits", "LimitedReader", "Member", "ExportFiles", "open_export_files"]

log = logging.getLogger(__name__)

MANIFEST = "export_manifest.json"
CONVERSATIONS = "conversations.json"
_SHARD = re.compile(r"^conversations-(\d+)\.json$")
_DRIVE = re.compile(r"^[A-Za-z]:")
_PK = (b"PK\x03\x04", b"PK\x05\x06", b"PK\x07\x08")


@dataclass(frozen=True, slots=True)
class Limits:
    """Caps that keep a hostile or broken export from exhausting the machine.

    Attributes:
        max_uncompressed: Bytes of conversation files read in all (declared and actual).
        max_ratio: Largest expansion of one zip member over ``ratio_floor`` bytes.
        ratio_floor: Members smaller than this are not ratio-checked (tiny files compress well).
        max_entries: Entries a zip may list.
    """

    max_uncompressed: int = 8 * 1024**3
    max_ratio: float = 200.0
    ratio_floor: int = 16 * 1024**2
    max_entries: int = 500_000


@dataclass(frozen=True, slots=True)
class Member:
    """One conversation file of an export.

    Attributes:
        name: Its name as messages show it (``conversations-001.json``).
        size: Its uncompressed size in bytes, as declared, or None.
        open: Opens it for reading (binary).
    """

    name: str
    size: int | None
    open: Callable[[], IO[bytes]]


class LimitedReader:
    """A binary reader that counts what it gives and refuses to give more than allowed.

    Args:
        raw: The stream to read.
        name: The member's name (for the message).
        declared: Bytes the member declared (a zip); more is refused. None: no per-member limit.
        budget: A shared one-item list with the bytes left for the whole import.
        on_read: Called with the bytes read so far (all members), after each read.
        start: Bytes read before this member.
    """

    def __init__(self, raw: IO[bytes], name: str, declared: int | None, budget: list[int],
                 on_read: Callable[[int], None] | None = None, start: int = 0) -> None:
        self._raw = raw
        self._name = name
        self._declared = declared
        self._budget = budget
        self._on_read = on_read
        self.start = start
        self.count = 0
        self._first = True

    def read(self, n: int = -1) -> bytes:
        """Read up to ``n`` bytes (a UTF-8 byte order mark at the start is dropped).

        Raises:
            ImportFailed: The member gave more than it declared, or the import more than its cap.
        """
        try:
            data = self._raw.read(n if n is not None and n >= 0 else 1 << 20)
        except (zipfile.BadZipFile, zlib.error, EOFError, OSError, RuntimeError, NotImplementedError) as exc:
            raise ImportFailed(f"{self._name}: the file is damaged and cannot be read ({exc}); "
                               "nothing was imported") from None
        if self._first and data:  # (a read(0) probing the stream's type does not count)
            self._first = False
            if data.startswith(b"\xef\xbb\xbf"):
                data = data[3:]
                self.count += 3
        self.count += len(data)
        self._budget[0] -= len(data)
        if self._declared is not None and self.count > self._declared:
            raise ImportFailed(f"{self._name}: the zip entry holds more data than it declares "
                               "(a damaged or hostile zip); nothing was imported from it")
        if self._budget[0] < 0:
            raise ImportFailed(f"{self._name}: the export is larger than the import limit "
                               f"({_mib(self._budget_total())}); nothing more was read")
        if self._on_read is not None:
            self._on_read(self.start + self.count)
        return data

    def _budget_total(self) -> int:
        return self.count - self._budget[0]


def _mib(n: int) -> str:
    return f"{n / 1024**2:,.0f} MiB"


@dataclass(slots=True)
class ExportFiles:
    """The conversation files of one export, and what was noticed while finding them.

    Attributes:
        path: The export as given.
        members: The conversation files, in order.
        notices: Things the user should know that did not stop the import (unsafe names ignored).
        problems: Parts of the export that cannot be imported (shards missing from the zip).
        total: Bytes to read in all (uncompressed), or None when unknown.
    """

    path: Path
    members: list[Member] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    problems: list[tuple[str, str]] = field(default_factory=list)
    total: int | None = None
    _zip: zipfile.ZipFile | None = None

    def close(self) -> None:
        """Close the zip, when there is one."""
        if self._zip is not None:
            self._zip.close()
            self._zip = None

    def __enter__(self) -> ExportFiles:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _unsafe(name: str) -> bool:
    if not name or "\x00" in name or "\\" in name or name.startswith("/") or _DRIVE.match(name):
        return True
    return any(part == ".." for part in PurePosixPath(name).parts)


def _pick(names: list[str], manifest: dict[str, Any] | None, where: str,
          files: ExportFiles) -> list[str]:
    """The conversation files among ``names`` (relative to the export's top folder)."""
    present = set(names)
    if manifest is not None:
        logical = manifest.get("logical_files")
        entry = logical.get(CONVERSATIONS) if isinstance(logical, dict) else None
        listed = entry.get("files") if isinstance(entry, dict) else None
        if isinstance(listed, list) and listed and all(isinstance(n, str) for n in listed):
            found = [n for n in listed if n in present]
            for n in listed:
                if n not in present:
                    files.problems.append((n, f"listed in {MANIFEST} but missing from {where}: "
                                              "the conversations in it were not imported"))
            return found
        files.notices.append(f"{MANIFEST}: 'logical_files.{CONVERSATIONS}.files' is missing or not a list "
                             "of names; the conversation files were found by their names instead")
    if CONVERSATIONS in present:
        return [CONVERSATIONS]
    shards = sorted((int(m.group(1)), n) for n in names if (m := _SHARD.match(n)))
    if shards:
        return [n for _, n in shards]
    jsons = [n for n in names if n.endswith(".json") and "/" not in n and n != MANIFEST]
    return jsons if len(jsons) == 1 else []


def _read_manifest(data: bytes, files: ExportFiles) -> dict[str, Any] | None:
    try:
        manifest = json.loads(data.decode("utf-8-sig"))
    except (ValueError, UnicodeDecodeError) as exc:
        files.notices.append(f"{MANIFEST} is not valid JSON ({exc}); the conversation files were found by "
                             "their names instead")
        return None
    if not isinstance(manifest, dict):
        files.notices.append(f"{MANIFEST} is not a JSON object; the conversation files were found by their "
                             "names instead")
        return None
    version = manifest.get("version")
    if isinstance(version, int) and not isinstance(version, bool):
        if version != 1:
            files.notices.append(f"{MANIFEST}: version {version} is newer than the one this app knows (1); "
                                 "the import reads what it understands and reports the rest")
    return manifest


def _open_zip(path: Path, limits: Limits) -> ExportFiles:
    files = ExportFiles(path)
    try:
        zf = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
        raise ImportFailed(f"{path.name}: not a readable zip file ({exc})") from None
    files._zip = zf
    infos = zf.infolist()
    if len(infos) > limits.max_entries:
        files.close()
        raise ImportFailed(f"{path.name}: the zip lists {len(infos):,} entries, more than an export holds "
                           f"({limits.max_entries:,}); nothing was imported")
    unsafe = [i.filename for i in infos if _unsafe(i.filename)]
    if unsafe:
        files.notices.append(f"{len(unsafe)} zip entr{'y' if len(unsafe) == 1 else 'ies'} with unsafe names "
                             f"(for example {unsafe[0]!r}) were ignored")
    safe = {i.filename: i for i in infos if not _unsafe(i.filename) and not i.is_dir()}
    tops = {n.split("/", 1)[0] for n in safe}
    prefix = ""
    if len(tops) == 1 and all("/" in n for n in safe):  # zipped as one folder
        prefix = next(iter(tops)) + "/"
    names = {n[len(prefix):]: n for n in safe if n.startswith(prefix)}
    manifest = None
    if MANIFEST in names:
        info = safe[names[MANIFEST]]
        if info.file_size > 16 * 1024**2:
            files.notices.append(f"{MANIFEST} is implausibly large and was not read")
        else:
            manifest = _read_manifest(_read_small(zf, info, path), files)
    chosen = _pick(list(names), manifest, path.name, files)
    if not chosen:
        files.close()
        raise ImportFailed(f"{path.name}: no {CONVERSATIONS} (nor conversations-NNN.json shards) in the zip; "
                           "is this a ChatGPT or Claude data export?")
    total = 0
    for short in chosen:
        info = safe[names[short]]
        _check_entry(info, short, path, limits, files)
        total += info.file_size
    if total > limits.max_uncompressed:
        files.close()
        raise ImportFailed(f"{path.name}: the conversations would take {_mib(total)} uncompressed, more than "
                           f"the import limit of {_mib(limits.max_uncompressed)}; nothing was imported")
    for short in chosen:
        info = safe[names[short]]
        files.members.append(Member(short, info.file_size, lambda i=info: zf.open(i)))  # type: ignore[misc]
    files.total = total
    return files


def _check_entry(info: zipfile.ZipInfo, short: str, path: Path, limits: Limits, files: ExportFiles) -> None:
    problem = None
    if info.flag_bits & 0x1:
        problem = "is encrypted; export again without a password"
    elif info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2,
                                    zipfile.ZIP_LZMA):
        problem = f"uses compression method {info.compress_type}, which this app cannot read"
    elif info.file_size > max(limits.ratio_floor, limits.max_ratio * max(info.compress_size, 1)):
        problem = (f"would expand {info.file_size / max(info.compress_size, 1):,.0f} times "
                   f"({_mib(info.compress_size)} to {_mib(info.file_size)}): this looks like a zip bomb")
    if problem is not None:
        files.close()
        raise ImportFailed(f"{path.name}: {short} {problem}; nothing was imported")


def _read_small(zf: zipfile.ZipFile, info: zipfile.ZipInfo, path: Path) -> bytes:
    try:
        with zf.open(info) as fh:
            return fh.read(info.file_size + 1)[: info.file_size]
    except (zipfile.BadZipFile, OSError, NotImplementedError, RuntimeError, EOFError) as exc:
        log.info("%s: cannot read %s: %s", path, info.filename, exc)
        return b""


def _open_folder(path: Path, limits: Limits) -> ExportFiles:
    files = ExportFiles(path)
    try:
        names = sorted(p.name for p in path.iterdir() if p.is_file())
    except OSError as exc:
        raise ImportFailed(f"{path}: cannot list the folder ({exc.strerror or exc})") from None
    manifest = None
    if MANIFEST in names:
        try:
            manifest = _read_manifest((path / MANIFEST).read_bytes()[: 16 * 1024**2], files)
        except OSError as exc:
            files.notices.append(f"{MANIFEST} could not be read ({exc.strerror or exc})")
    chosen = _pick(names, manifest, path.name, files)
    if not chosen:
        raise ImportFailed(f"{path}: no {CONVERSATIONS} in the folder; is this an unzipped ChatGPT or Claude "
                           "data export?")
    for name in chosen:
        files.members.append(_file_member(path / name, name))
    files.total = sum(m.size or 0 for m in files.members)
    return files


def _file_member(path: Path, name: str) -> Member:
    try:
        size: int | None = path.stat().st_size
    except OSError:
        size = None
    return Member(name, size, lambda: open(path, "rb"))  # noqa: SIM115 - the caller closes it


def open_export_files(path: Path, limits: Limits | None = None) -> ExportFiles:
    """Find the conversation files of an export (a zip, an unzipped folder or a ``.json`` file).

    Raises:
        ImportFailed: The file is missing, unreadable, not a zip or JSON, a zip bomb, encrypted, or
            holds no conversation file; the message says which.
    """
    limits = limits or Limits()
    path = Path(path)
    if path.is_dir():
        return _open_folder(path, limits)
    try:
        with open(path, "rb") as fh:
            head = fh.read(4)
    except FileNotFoundError:
        raise ImportFailed(f"{path}: no such file") from None
    except OSError as exc:
        raise ImportFailed(f"{path}: cannot be read ({exc.strerror or exc})") from None
    if head in _PK:
        return _open_zip(path, limits)
    files = ExportFiles(path)
    files.members.append(_file_member(path, path.name))
    files.total = files.members[0].size
    if files.total is not None and files.total > limits.max_uncompressed:
        raise ImportFailed(f"{path.name}: {_mib(files.total)} is more than the import limit of "
                           f"{_mib(limits.max_uncompressed)}; nothing was imported")
    return files
