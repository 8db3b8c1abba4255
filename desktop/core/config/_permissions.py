"""Permissions are the user's, not the project's: always-allow grants kept in the config folder.

A cloned repository can ship any ``project.json``; if that file could grant "always allow
write_file", opening the project would let a model rewrite ``.git/config`` without a card. So
grants live in ``<config>/grants.json``, written only when this user clicks "Always allow", keyed
by the resolved project folder and the node id::

    {"version": 1,
     "projects": {"/home/me/proj": {"nodes": {"n-1": {"tools": ["write_file"], "servers": ["fs"]}}}}}

``servers`` holds always-allowed MCP servers (for the MCP feature). The file follows the document
store rules (atomic writes, a bad file is moved aside and then no grant is assumed). Every change
re-reads the file under a lock on the config folder, so two app instances never drop each other's
grants.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeAlias

from ..files import DocumentCorruptError, DocumentStore, FileLock, LoadResult

__all__ = ["GRANTS_FILE", "GrantStore", "GrantsCorruptError", "NodeGrants"]

log = logging.getLogger(__name__)

GRANTS_FILE = "grants.json"
GRANTS_VERSION = 1


@dataclass(frozen=True, slots=True)
class NodeGrants:
    """What the user always allows in one node.

    Attributes:
        tools: Tool names approved without a card.
        servers: MCP server names whose tools are approved without a card.
    """

    tools: tuple[str, ...] = ()
    servers: tuple[str, ...] = ()


Grants: TypeAlias = dict[str, dict[str, NodeGrants]]
"""``{project key: {node id: NodeGrants}}``."""


class GrantsCorruptError(DocumentCorruptError):
    """``grants.json`` could not be used; it was kept aside and no grant is assumed."""


def _names(value: object, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ValueError(f"{where}: must be a list of names")
    return tuple(dict.fromkeys(value))


def _decode(raw: object) -> Grants:
    if not isinstance(raw, dict):
        raise ValueError("the file must hold a JSON object")
    if raw.get("version") != GRANTS_VERSION or isinstance(raw.get("version"), bool):
        raise ValueError(f"version: {raw.get('version')!r} is not supported")
    projects = raw.get("projects", {})
    if not isinstance(projects, dict):
        raise ValueError("projects: must be an object")
    out: Grants = {}
    for key, entry in projects.items():
        nodes = entry.get("nodes", {}) if isinstance(entry, dict) else None
        if not isinstance(nodes, dict):
            raise ValueError(f"projects[{key!r}].nodes: must be an object")
        per_node: dict[str, NodeGrants] = {}
        for node_id, grants in nodes.items():
            where = f"projects[{key!r}].nodes[{node_id!r}]"
            if not isinstance(grants, dict):
                raise ValueError(f"{where}: must be an object")
            per_node[node_id] = NodeGrants(
                _names(grants.get("tools", []), f"{where}.tools"),
                _names(grants.get("servers", []), f"{where}.servers"),
            )
        out[key] = per_node
    return out


def _encode(grants: Grants) -> str:
    projects: dict[str, Any] = {}
    for key in sorted(grants):
        nodes = {
            node_id: {"tools": list(g.tools), "servers": list(g.servers)}
            for node_id, g in sorted(grants[key].items())
            if g.tools or g.servers
        }
        if nodes:
            projects[key] = {"nodes": nodes}
    return json.dumps({"version": GRANTS_VERSION, "projects": projects}, ensure_ascii=False, indent=2) + "\n"


class GrantStore:
    """The user's always-allow grants, per project folder and node.

    Args:
        config_dir: The config folder (``settings.default_config_dir()`` in the app).

    Attributes:
        path: ``config_dir / "grants.json"``.
        last_load: The result of the last read of the file (notices about a bad file), or None.
    """

    def __init__(self, config_dir: Path) -> None:
        self.config_dir = Path(config_dir)
        self.path = self.config_dir / GRANTS_FILE
        self.last_load: LoadResult[Grants] | None = None
        self._doc: DocumentStore[Grants] = DocumentStore(
            self.path,
            decode=_decode,
            encode=_encode,
            default=dict,
            error_type=GrantsCorruptError,
            fallback="no tool is always allowed until you allow it again",
        )
        self._data: Grants | None = None
        self._mutex = threading.RLock()  # the project's background save syncs grants on its worker

    @staticmethod
    def project_key(folder: Path) -> str:
        """The key of a project folder: its resolved absolute path."""
        return str(Path(folder).expanduser().resolve())

    # -- reading -------------------------------------------------------------------------------

    def _current(self) -> Grants:
        with self._mutex:
            if self._data is None or self._doc.changed_since_seen():
                result = self._doc.load(recover=False)
                self.last_load = result
                self._data = result.value
            return self._data

    def for_project(self, folder: Path) -> dict[str, NodeGrants]:
        """Every node's grants in the project at ``folder`` (a copy)."""
        return dict(self._current().get(self.project_key(folder), {}))

    def node(self, folder: Path, node_id: str) -> NodeGrants:
        """The grants of one node (empty when none)."""
        return self._current().get(self.project_key(folder), {}).get(node_id, NodeGrants())

    def tools(self, folder: Path, node_id: str) -> list[str]:
        """The tools always allowed in this node."""
        return list(self.node(folder, node_id).tools)

    def servers(self, folder: Path, node_id: str) -> list[str]:
        """The MCP servers always allowed in this node."""
        return list(self.node(folder, node_id).servers)

    # -- changing ------------------------------------------------------------------------------

    def _update(self, change: Callable[[Grants], bool]) -> bool:
        """Re-read the file under the config-folder lock, apply ``change``, write when it changed.

        Raises:
            OSError: The file could not be written (the grant is not kept).
        """
        self.config_dir.mkdir(parents=True, exist_ok=True)
        with self._mutex:
            lock = FileLock(self.config_dir, directory=True)
            lock.acquire(timeout=2.0)
            try:
                self._data = None  # always start from what is on disk now
                data = self._current()
                if not change(data):
                    return False
                self._doc.write(data)
                return True
            finally:
                lock.release()

    def _edit_node(self, folder: Path, node_id: str, edit: Callable[[NodeGrants], NodeGrants]) -> bool:
        key = self.project_key(folder)

        def change(data: Grants) -> bool:
            nodes = data.setdefault(key, {})
            before = nodes.get(node_id, NodeGrants())
            after = edit(before)
            if after == before:
                return False
            if after.tools or after.servers:
                nodes[node_id] = after
            else:
                nodes.pop(node_id, None)
            if not nodes:
                data.pop(key, None)
            return True

        return self._update(change)

    def allow_tool(self, folder: Path, node_id: str, tool: str) -> bool:
        """Always allow ``tool`` in this node; True when it was not allowed yet."""
        return self._edit_node(
            folder, node_id, lambda g: g if tool in g.tools else NodeGrants((*g.tools, tool), g.servers)
        )

    def allow_server(self, folder: Path, node_id: str, server: str) -> bool:
        """Always allow the MCP server ``server`` in this node; True when it was not allowed yet."""
        return self._edit_node(
            folder, node_id, lambda g: g if server in g.servers else NodeGrants(g.tools, (*g.servers, server))
        )

    def revoke_server(self, folder: Path, node_id: str, server: str) -> bool:
        """Stop always allowing the MCP server ``server`` in this node; True when it was allowed."""
        return self._edit_node(
            folder, node_id, lambda g: NodeGrants(g.tools, tuple(s for s in g.servers if s != server))
        )

    def sync_tools(
        self, folder: Path, tools_by_node: Mapping[str, Iterable[str]], *, forget_others: bool = False
    ) -> bool:
        """Set the always-allowed tools of these nodes (server grants are kept).

        Args:
            folder: The project folder.
            tools_by_node: ``{node id: tools}``, e.g. what the nodes on screen allow now.
            forget_others: Also drop every grant of nodes not listed (they were deleted).

        Returns:
            True when the file changed.

        Raises:
            OSError: The file could not be written.
        """
        key = self.project_key(folder)
        wanted = {node_id: tuple(dict.fromkeys(tools)) for node_id, tools in tools_by_node.items()}

        def change(data: Grants) -> bool:
            nodes = data.get(key, {})
            updated = {} if forget_others else dict(nodes)
            for node_id, tools in wanted.items():
                updated[node_id] = NodeGrants(tools, nodes.get(node_id, NodeGrants()).servers)
            updated = {n: g for n, g in updated.items() if g.tools or g.servers}
            current = {n: g for n, g in nodes.items() if g.tools or g.servers}
            if updated == current:
                return False
            if updated:
                data[key] = updated
            else:
                data.pop(key, None)
            return True

        return self._update(change)

    def forget_node(self, folder: Path, node_id: str) -> bool:
        """Drop every grant of a node (when it is deleted); True when it had any."""
        key = self.project_key(folder)

        def change(data: Grants) -> bool:
            nodes = data.get(key, {})
            found = nodes.pop(node_id, None) is not None
            if not nodes:
                data.pop(key, None)
            return found

        return self._update(change)
