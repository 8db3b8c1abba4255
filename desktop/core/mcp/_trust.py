"""Trust for project servers: ``<project>/.mcp.json`` never starts a server until the user trusts it.

Decisions live in the user's config folder (``mcp-trust.json``), never in the project: each is keyed
by the resolved project folder and holds the SHA-256 of the exact bytes the user saw, so a changed
file is untrusted again. The file's bytes are read once and both hashed and parsed, so what is
started is exactly what was trusted.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from desktop.core.mcp._config import McpConfigError, McpServerConfig, parse_mcp_file
from desktop.core.visible import visible_text

from ..files import atomic_write_bytes, move_aside, read_regular

__all__ = ["PROJECT_FILE", "TRUST_FILE", "ProjectServers", "TrustStore", "read_project_servers"]

log = logging.getLogger(__name__)

PROJECT_FILE = ".mcp.json"
TRUST_FILE = "mcp-trust.json"
_MAX_FILE = 1024 * 1024


@dataclass(frozen=True, slots=True)
class ProjectServers:
    """What a project's ``.mcp.json`` asks to run.

    Attributes:
        project: The resolved project folder.
        path: The ``.mcp.json`` file.
        digest: SHA-256 (hex) of the file's bytes.
        servers: The parsed servers (``base_dir`` is the project folder).
    """

    project: Path
    path: Path
    digest: str
    servers: dict[str, McpServerConfig]

    def banner_lines(self) -> list[tuple[str, str]]:
        """``(name, command line or URL)`` for each server, in file order, for the trust banner.

        Both come from the project's file: they are made visible (``visible_text``: a newline, a
        bidi override or a zero-width character shows as an escape), so a name cannot add a line
        that hides or disguises another server's command.
        """
        return [(visible_text(name), visible_text(cfg.describe())) for name, cfg in self.servers.items()]


def read_project_servers(project_dir: Path) -> ProjectServers | None:
    """Read ``<project>/.mcp.json``; None when the project has none.

    Raises:
        McpConfigError: The file is unreadable (a FIFO, device or folder included: it is refused
            before it is opened), too big, not JSON or invalid (the message names it).
    """
    project = Path(project_dir).resolve()
    path = project / PROJECT_FILE
    try:
        data = read_regular(path, _MAX_FILE + 1)  # a FIFO or device is refused, never waited on
    except FileNotFoundError:
        return None
    except OSError as err:
        raise McpConfigError([f"{path}: cannot read ({err.strerror or err})"]) from None
    if len(data) > _MAX_FILE:
        raise McpConfigError([f"{path}: larger than {_MAX_FILE // 1024} KiB"])
    servers = parse_mcp_file(data, source=str(path), base_dir=str(project))
    return ProjectServers(project, path, hashlib.sha256(data).hexdigest(), servers)


class TrustStore:
    """The user's trust decisions for project servers (``<config>/mcp-trust.json``).

    Attributes:
        path: The trust file.
    """

    def __init__(self, config_dir: Path) -> None:
        self.path = Path(config_dir) / TRUST_FILE

    def _load(self) -> dict[str, Any]:
        try:
            doc = json.loads(read_regular(self.path))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError, RecursionError) as err:
            log.warning("ignoring unreadable %s: %s", self.path, err)
            return {}
        projects = doc.get("projects") if isinstance(doc, dict) else None
        return projects if isinstance(projects, dict) else {}

    def _save(self, projects: dict[str, Any]) -> None:
        if self.path.exists() and not self._is_good_file():
            with contextlib.suppress(OSError):
                kept = move_aside(self.path)
                log.warning("moved the unreadable trust file aside to %s", kept)
        data = json.dumps({"version": 1, "projects": projects}, indent=2, sort_keys=True).encode()
        atomic_write_bytes(self.path, data + b"\n")

    def _is_good_file(self) -> bool:
        try:
            doc = json.loads(read_regular(self.path))
        except (OSError, ValueError, RecursionError):
            return False
        return isinstance(doc, dict) and isinstance(doc.get("projects"), dict)

    @staticmethod
    def _key(project_dir: Path) -> str:
        return str(Path(project_dir).resolve())

    def is_trusted(self, request: ProjectServers) -> bool:
        """True when the user trusted exactly this file content for this project."""
        entry = self._load().get(self._key(request.project))
        return isinstance(entry, dict) and entry.get("sha256") == request.digest

    def trust(self, request: ProjectServers) -> None:
        """Record that the user trusts this content ("Trust and start").

        Raises:
            OSError: The trust file could not be written (nothing changed).
        """
        projects = self._load()
        projects[self._key(request.project)] = {"sha256": request.digest, "trusted_at": int(time.time())}
        self._save(projects)

    def revoke(self, project_dir: Path) -> None:
        """Forget the decision for a project (its servers ask again).

        Raises:
            OSError: The trust file could not be written.
        """
        projects = self._load()
        if projects.pop(self._key(project_dir), None) is not None:
            self._save(projects)

    def pending(self, project_dir: Path) -> ProjectServers | None:
        """The project's servers when the file exists and is NOT trusted (the banner's content), else None.

        Raises:
            McpConfigError: The project's file is invalid.
        """
        request = read_project_servers(project_dir)
        if request is None or not request.servers or self.is_trusted(request):
            return None
        return request

    def trusted_servers(self, project_dir: Path) -> dict[str, McpServerConfig]:
        """The project's servers that may start: all of them when trusted, none otherwise.

        The file is read once; the content parsed is the content whose hash was checked.

        Raises:
            McpConfigError: The project's file is invalid.
        """
        request = read_project_servers(project_dir)
        if request is None or not self.is_trusted(request):
            return {}
        return request.servers
