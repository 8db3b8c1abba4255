"""Every project the user has opened: for File → Recent projects and for the search index.

``<config>/recent-projects.json``, most recent first::

    {"version": 1, "projects": [{"path": "/home/me/notes", "opened": 1764547200000}, ...]}

The app calls :meth:`RecentProjects.add` when a project opens. The search index indexes every
project listed here (and forgets those whose folder is gone); a Recent menu shows the first few
``entries()`` and can grey out or :meth:`prune` the folders that are missing.

The file follows the document store rules (atomic writes, a bad file is moved aside and the list
starts empty); every change re-reads it under the config folder's lock, so two app instances never
drop each other's entries. Paths are stored resolved; at most ``MAX_ENTRIES`` are kept.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..files import DocumentCorruptError, DocumentStore, FileLock, LoadResult
from ._format import PROJECT_FILE

__all__ = ["RECENT_FILE", "MAX_ENTRIES", "RecentProject", "RecentProjects", "RecentCorruptError"]

log = logging.getLogger(__name__)

RECENT_FILE = "recent-projects.json"
RECENT_VERSION = 1
MAX_ENTRIES = 500
"""Oldest entries beyond this many are dropped (their index rows stay until the folder is gone)."""


@dataclass(frozen=True, slots=True)
class RecentProject:
    """One opened project.

    Attributes:
        path: The project folder (resolved).
        opened: When it was last opened, epoch milliseconds.
    """

    path: Path
    opened: int

    @property
    def exists(self) -> bool:
        """True while the folder still holds a project (``project.json``)."""
        return (self.path / PROJECT_FILE).is_file()


class RecentCorruptError(DocumentCorruptError):
    """``recent-projects.json`` could not be used; it was kept aside and the list starts empty."""


def _decode(raw: object) -> list[RecentProject]:
    if not isinstance(raw, dict):
        raise ValueError("the file must hold a JSON object")
    if raw.get("version") != RECENT_VERSION or isinstance(raw.get("version"), bool):
        raise ValueError(f"version: {raw.get('version')!r} is not supported")
    items = raw.get("projects", [])
    if not isinstance(items, list):
        raise ValueError("projects: must be a list")
    out: list[RecentProject] = []
    seen: set[str] = set()
    for i, item in enumerate(items):
        if not isinstance(item, dict) or not isinstance(item.get("path"), str) or not item["path"]:
            raise ValueError(f"projects[{i}]: must be an object with a non-empty path")
        opened = item.get("opened", 0)
        if not isinstance(opened, int) or isinstance(opened, bool):
            raise ValueError(f"projects[{i}].opened: must be an integer")
        if item["path"] not in seen:
            seen.add(item["path"])
            out.append(RecentProject(Path(item["path"]), opened))
    return out


def _encode(entries: list[RecentProject]) -> str:
    items = [{"path": str(e.path), "opened": e.opened} for e in entries]
    return json.dumps({"version": RECENT_VERSION, "projects": items}, ensure_ascii=False, indent=1) + "\n"


class RecentProjects:
    """The list of opened projects in the config folder.

    Args:
        config_dir: The config folder (``settings.default_config_dir()`` in the app).
        clock: Epoch milliseconds now (tests pass their own).

    Attributes:
        path: ``config_dir / "recent-projects.json"``.
        last_load: The result of the last read of the file (notices about a bad file), or None.
    """

    def __init__(self, config_dir: Path, *, clock: Callable[[], int] | None = None) -> None:
        self.config_dir = Path(config_dir)
        self.path = self.config_dir / RECENT_FILE
        self.last_load: LoadResult[list[RecentProject]] | None = None
        self._clock = clock or (lambda: int(time.time() * 1000))
        self._doc: DocumentStore[list[RecentProject]] = DocumentStore(
            self.path,
            decode=_decode,
            encode=_encode,
            default=list,
            error_type=RecentCorruptError,
            fallback="the list of recent projects starts again",
        )

    @staticmethod
    def key(folder: Path) -> Path:
        """How a folder is stored: resolved and absolute."""
        return Path(folder).expanduser().resolve()

    def _read(self) -> list[RecentProject]:
        result = self._doc.load(recover=True)
        self.last_load = result
        return list(result.value)

    def entries(self, limit: int | None = None) -> list[RecentProject]:
        """The opened projects, most recent first (missing folders included: check ``exists``)."""
        items = self._read()
        return items if limit is None else items[:limit]

    def folders(self, *, existing_only: bool = True) -> list[Path]:
        """The folders, most recent first; without those that no longer hold a project by default."""
        return [e.path for e in self._read() if not existing_only or e.exists]

    def _update(self, change: Callable[[list[RecentProject]], list[RecentProject] | None]) -> bool:
        """Re-read the file under the config folder's lock, apply ``change`` (None: no change), write.

        Raises:
            OSError: The file could not be written.
        """
        self.config_dir.mkdir(parents=True, exist_ok=True)
        lock = FileLock(self.config_dir, directory=True)
        lock.acquire(timeout=2.0)
        try:
            after = change(self._read())
            if after is None:
                return False
            self._doc.write(after[:MAX_ENTRIES])
            return True
        finally:
            lock.release()

    def add(self, folder: Path) -> None:
        """Put ``folder`` first (a project was opened).

        Raises:
            OSError: The file could not be written.
        """
        key = self.key(folder)
        now = self._clock()
        self._update(lambda items: [RecentProject(key, now), *(e for e in items if e.path != key)])

    def remove(self, folder: Path) -> bool:
        """Forget ``folder``; True when it was listed.

        Raises:
            OSError: The file could not be written.
        """
        key = self.key(folder)

        def change(items: list[RecentProject]) -> list[RecentProject] | None:
            kept = [e for e in items if e.path != key]
            return kept if len(kept) != len(items) else None

        return self._update(change)

    def prune(self) -> list[Path]:
        """Forget every folder that no longer holds a project; returns them.

        Raises:
            OSError: The file could not be written.
        """
        gone: list[Path] = []

        def change(items: list[RecentProject]) -> list[RecentProject] | None:
            gone.extend(e.path for e in items if not e.exists)
            return [e for e in items if e.exists] if gone else None

        self._update(change)
        return gone
