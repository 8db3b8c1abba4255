"""The project's attachment files: content-addressed, written atomically, verified when read.

Layout (inside the project folder)::

    .chatnodes/attachments/<sha256>.<ext>                       the files as attached (originals)
    .chatnodes/attachments/prepared/<sha256>.<tag>.<sha256'>.<ext>   derived variants (downscaled
                                                                images, a PDF's extracted text)

A file's name is the SHA-256 of its bytes, so the same file attached twice is stored once; a
variant's name also holds its own SHA-256, so a damaged variant is noticed and made again. A file
is written with ``atomic_write_bytes`` (temp file, fsync, replace) before the message that refers to
it is saved. Files are never deleted by the app: a reference may live on in a version, a fork or
the history archive.

Everything in a project folder is untrusted. A read opens the file without following a symbolic link
(``O_NOFOLLOW``), refuses anything but a regular file, and checks the SHA-256, so a hostile project
cannot make a send read a file outside the project (``attachments/<sha>.png -> ~/.ssh/id_rsa``). A
missing or damaged file is reported (``AttachmentUnavailable``), never raised past the caller: the
resolver sends a note instead. A damaged file found where a new attachment goes is kept aside
(``move_aside``), never overwritten.
"""

from __future__ import annotations

import hashlib
import logging
import os
import stat
import threading
from pathlib import Path
from typing import Literal

from desktop.core.chat.attachment_ref import AttachmentRef, clean_name

from ..files import atomic_write_bytes, move_aside
from ._classify import classify_bytes
from ._files import MAX_ATTACHMENT_BYTES, AttachmentError, read_regular_file, too_large

log = logging.getLogger(__name__)

__all__ = ["ATTACHMENTS_DIR", "AttachmentStore", "AttachmentUnavailable", "UnavailableReason"]

#: The store's folder, relative to the project folder.
ATTACHMENTS_DIR = Path(".chatnodes") / "attachments"
_PREPARED = "prepared"
_READ_LIMIT = MAX_ATTACHMENT_BYTES + 1024  # an original is at most the cap; a little slack is harmless
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_BINARY = getattr(os, "O_BINARY", 0)

UnavailableReason = Literal["missing", "corrupt", "unreadable"]


class AttachmentUnavailable(Exception):
    """A referenced file cannot be used.

    Attributes:
        reason: ``missing`` (no such file), ``corrupt`` (its bytes do not match its SHA-256) or
            ``unreadable`` (not a regular file, a symbolic link, permissions...).
        message: What to tell the user (no path but the store's own relative one).
    """

    def __init__(self, reason: UnavailableReason, message: str) -> None:
        super().__init__(message)
        self.reason: UnavailableReason = reason
        self.message = message

    def __str__(self) -> str:
        return self.message


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class AttachmentStore:
    """The attachment files of one project folder (see the module doc). Safe to use from threads.

    Every method does file I/O; adding a file also hashes it, reads a PDF's first pages with pypdf
    and fsyncs: a UI calls ``add_file`` / ``add_bytes`` off its event thread.

    Args:
        project_dir: The project folder.
    """

    def __init__(self, project_dir: Path) -> None:
        self.project_dir = Path(project_dir)
        self.folder = self.project_dir / ATTACHMENTS_DIR
        self._lock = threading.Lock()
        self._verified: dict[str, tuple[int, int]] = {}  # file name -> (size, mtime_ns) last verified

    def __repr__(self) -> str:
        return f"AttachmentStore({str(self.project_dir)!r})"

    # -- adding -------------------------------------------------------------------------------

    def add_file(self, path: Path, name: str | None = None) -> AttachmentRef:
        """Store the regular file at ``path`` (links followed) and return its reference.

        Args:
            path: The file the user attached.
            name: The name to show (default: the file's own name).

        Raises:
            AttachmentError: Not a regular file, over ``MAX_ATTACHMENT_BYTES``, unreadable, or the
                project folder cannot be written.
        """
        data = read_regular_file(Path(path))
        return self.add_bytes(data, name if name is not None else Path(path).name)

    def add_bytes(self, data: bytes, name: str) -> AttachmentRef:
        """Store ``data`` (a pasted image, a dropped file's bytes) under the name ``name``.

        The file is classified by content (``classify_bytes``): the reference carries its kind,
        media type, pixel size or page count, and the chip's note. A file already stored (same
        SHA-256, intact) is not written again.

        Raises:
            AttachmentError: Over ``MAX_ATTACHMENT_BYTES``, or the file cannot be written.
        """
        if len(data) > MAX_ATTACHMENT_BYTES:
            raise AttachmentError(too_large(len(data)))
        found = classify_bytes(data)
        ref = AttachmentRef(
            name=clean_name(name),
            media_type=found.media_type,
            size=len(data),
            sha256=_sha256(data),
            kind=found.kind,
            width=found.width,
            height=found.height,
            pages=found.pages,
            note=found.chip_note,
        )
        self._write(ref.file_name, data, ref.sha256)
        return ref

    def _write(self, file_name: str, data: bytes, sha: str) -> None:
        path = self.folder / file_name
        try:
            self._check_folder(self.folder)
            if self._intact(path, sha):
                return
            if os.path.lexists(path):
                move_aside(path)  # damaged (or not a file): kept aside, never overwritten
            atomic_write_bytes(path, data)
            info = os.stat(path)
        except AttachmentUnavailable as exc:
            raise AttachmentError(f"the project's attachments cannot be written: {exc}") from None
        except OSError as exc:
            raise AttachmentError(f"the project folder cannot be written ({exc.strerror or exc})") from None
        with self._lock:
            self._verified[file_name] = (info.st_size, info.st_mtime_ns)

    def _intact(self, path: Path, sha: str) -> bool:
        try:
            return _sha256(self._read_file(path)) == sha
        except AttachmentUnavailable:
            return False

    def _check_folder(self, folder: Path) -> None:
        """Refuse a store folder that resolves outside the project (a symbolic link planted there)."""
        real = os.path.realpath(folder)
        inside = folder.relative_to(self.project_dir).parts
        expected = os.path.join(os.path.realpath(self.project_dir), *inside)
        if os.path.normcase(real) != os.path.normcase(expected):
            raise AttachmentUnavailable("unreadable", "the attachments folder is a link out of the project")

    # -- reading ------------------------------------------------------------------------------

    def path_for(self, ref: AttachmentRef) -> Path:
        """Where ``ref``'s file is (it may be missing)."""
        return self.folder / ref.file_name

    def _read_file(self, path: Path) -> bytes:
        flags = os.O_RDONLY | _NOFOLLOW | _NONBLOCK | _BINARY
        try:
            if not _NOFOLLOW and os.path.islink(path):  # pragma: no cover - Windows
                raise AttachmentUnavailable("unreadable", "the file is a link, not a file")
            fd = os.open(path, flags)
        except FileNotFoundError:
            raise AttachmentUnavailable("missing", "the file is missing from the project") from None
        except OSError as exc:
            raise _unreadable(exc) from None
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise AttachmentUnavailable("unreadable", "not a regular file")
            if info.st_size > _READ_LIMIT:
                raise AttachmentUnavailable("corrupt", "the file is larger than any attachment can be")
            with os.fdopen(os.dup(fd), "rb") as fh:
                return fh.read(_READ_LIMIT + 1)
        except OSError as exc:
            raise _unreadable(exc) from None
        finally:
            os.close(fd)

    def read(self, ref: AttachmentRef) -> bytes:
        """The bytes of ``ref``'s file, checked against its SHA-256.

        Raises:
            AttachmentUnavailable: Missing, damaged (hash mismatch) or unreadable.
        """
        self._check_folder(self.folder)
        path = self.path_for(ref)
        data = self._read_file(path)
        if _sha256(data) != ref.sha256:
            log.warning("attachment %s does not match its SHA-256", ref.file_name)
            raise AttachmentUnavailable("corrupt", "the file in the project was changed or damaged "
                                                   "(its content no longer matches the attachment)")
        with self._lock:
            self._verified[ref.file_name] = (len(data), _mtime(path))
        return data

    def check(self, ref: AttachmentRef, *, verify: bool = False) -> AttachmentUnavailable | None:
        """The problem with ``ref``'s file, or None when it is there.

        Without ``verify`` only a file's presence, type and size are checked (cheap: a transcript
        checks every reference it shows); a file verified before and unchanged since counts as
        intact. With ``verify`` the bytes are hashed.
        """
        try:
            self._check_folder(self.folder)
            path = self.path_for(ref)
            info = os.lstat(path)
        except FileNotFoundError:
            return AttachmentUnavailable("missing", "the file is missing from the project")
        except AttachmentUnavailable as exc:
            return exc
        except OSError as exc:
            return _unreadable(exc)
        if not stat.S_ISREG(info.st_mode):
            return AttachmentUnavailable("unreadable", "not a regular file")
        if info.st_size != ref.size:
            return AttachmentUnavailable("corrupt", "the file in the project was changed or damaged "
                                                    "(its size no longer matches the attachment)")
        with self._lock:
            known = self._verified.get(ref.file_name) == (info.st_size, info.st_mtime_ns)
        if verify and not known:
            try:
                self.read(ref)
            except AttachmentUnavailable as exc:
                return exc
        return None

    def link(self, ref: AttachmentRef, relative_to: Path | None = None) -> str | None:
        """A link to ``ref``'s file for a Markdown export: relative to ``relative_to`` (the folder of
        the exported file; default the project folder), with ``/`` separators; None when missing."""
        path = self.path_for(ref)
        if not path.is_file():
            return None
        base = relative_to if relative_to is not None else self.project_dir
        try:
            rel = os.path.relpath(path, base)
        except ValueError:  # another drive (Windows)
            return path.resolve().as_uri()
        return rel.replace(os.sep, "/")

    # -- prepared variants --------------------------------------------------------------------

    def prepared(self, sha: str, tag: str) -> tuple[bytes, str] | None:
        """A variant of ``sha`` made for ``tag`` (bytes, extension), or None (none, or damaged)."""
        folder = self.folder / _PREPARED
        prefix = f"{sha}.{tag}."
        try:
            self._check_folder(folder)
            names = [e.name for e in os.scandir(folder) if e.name.startswith(prefix)]
        except (OSError, AttachmentUnavailable):
            return None
        for name in names:
            parts = name[len(prefix):].split(".")
            if len(parts) != 2:
                continue
            try:
                data = self._read_file(folder / name)
            except AttachmentUnavailable:
                continue
            if _sha256(data) == parts[0]:
                return data, parts[1]
            log.warning("prepared attachment %s is damaged; it will be made again", name)
        return None

    def put_prepared(self, sha: str, tag: str, data: bytes, ext: str) -> None:
        """Keep a variant of ``sha`` made for ``tag`` (best effort: a failure is only logged)."""
        folder = self.folder / _PREPARED
        try:
            self._check_folder(folder)
            path = folder / f"{sha}.{tag}.{_sha256(data)}.{ext}"
            if not path.exists():
                atomic_write_bytes(path, data)
        except (OSError, AttachmentUnavailable) as exc:
            log.info("could not keep a prepared attachment: %s", exc)


def _unreadable(exc: OSError) -> AttachmentUnavailable:
    return AttachmentUnavailable("unreadable", f"the file cannot be read ({exc.strerror or exc})")


def _mtime(path: Path) -> int:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return 0
