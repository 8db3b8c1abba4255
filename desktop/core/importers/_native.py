"""Our own export: nodes of a project as one JSON file, and reading them back with nothing lost.

The file::

    {"format": "chatnodes-export", "version": 1, "exportedAt": <epoch ms>,
     "nodes": [{"node": <the node exactly as project.json writes it>, "archive": [<messages>]}]}

``node`` is the ``project.json`` node object (conversation with every version record, forks'
``forkedFrom``, usage, models, system prompt, node data, unknown keys: ``extra`` is written
verbatim), ``archive`` the node's history archive (messages the history cap moved out of
``project.json``). Reading it back gives the node with its archived messages first again, a fresh
node id and ``extra["importedFrom"] = {"source": "chatnodes", "id": <the exported node's id>}``;
message ids are kept, so forks between nodes still name their originals. Costs come from each
message's usage and model, so they are what they were.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from desktop.core.chat.conversation import message_from_dict, message_to_dict, now_ms
from desktop.core.chat.types import ChatMessage
from desktop.core.chat.versions import stored_versions
from desktop.core.text import repair_surrogates

from ..files import atomic_write_bytes
from ..store import NodeState, Project, project_from_dict, project_to_json
from ._model import ImportFailed, ImportProblem

__all__ = [
    "IMPORTED_FROM_KEY",
    "NATIVE_FORMAT",
    "NATIVE_VERSION",
    "NativeNode",
    "check_native_header",
    "export_nodes",
    "export_nodes_json",
    "parse_native_node",
]

log = logging.getLogger(__name__)

NATIVE_FORMAT = "chatnodes-export"
NATIVE_VERSION = 1
IMPORTED_FROM_KEY = "importedFrom"
"""Node ``extra`` key of a node read from a Chat Nodes export: ``{"source": "chatnodes", "id": ...}``."""
_MAX_DEPTH = 96  # the project loader refuses documents nested deeper than 128


@dataclass(slots=True)
class NativeNode:
    """One node read from a Chat Nodes export.

    Attributes:
        original_id: The node's id in the export.
        title: Its title.
        created_at: Its conversation's creation time, epoch milliseconds.
        node: The node, archive merged in front of its conversation, its id as exported.
        messages: Messages in it, stored versions included.
        branches: Versions in it (1 without any).
    """

    original_id: str
    title: str
    created_at: int
    node: NodeState
    messages: int
    branches: int


def _node_object(node: NodeState) -> dict[str, Any]:
    parsed = json.loads(project_to_json(Project(nodes=[node])))
    result: dict[str, Any] = parsed["nodes"][0]
    return result


def export_nodes_json(
    nodes: Sequence[NodeState], archive_of: Callable[[str], Sequence[ChatMessage]] | None = None
) -> str:
    """The export text of ``nodes`` (see the module doc).

    Args:
        nodes: The nodes to export, in order.
        archive_of: The archived messages of a node id (``ProjectStore.read_archive``), or None.
    """
    items: list[dict[str, Any]] = []
    for node in nodes:
        archived = list(archive_of(node.id)) if archive_of is not None and node.kind == "chat" else []
        live = {m.id for m in node.conversation.messages}
        items.append({"node": _node_object(node),
                      "archive": [message_to_dict(m) for m in archived if m.id not in live]})
    doc = {"format": NATIVE_FORMAT, "version": NATIVE_VERSION, "exportedAt": now_ms(), "nodes": items}
    return json.dumps(doc, ensure_ascii=False, separators=(",", ":")) + "\n"


def export_nodes(
    path: Path, nodes: Sequence[NodeState], archive_of: Callable[[str], Sequence[ChatMessage]] | None = None
) -> int:
    """Write ``nodes`` (with their archives) to ``path`` atomically.

    Returns:
        Bytes written.

    Raises:
        OSError: Writing failed; a previous file at ``path`` is unchanged.
    """
    text, _ = repair_surrogates(export_nodes_json(nodes, archive_of))
    data = text.encode("utf-8")
    atomic_write_bytes(Path(path), data)
    return len(data)


def check_native_header(header: dict[str, Any], name: str) -> None:
    """Refuse a file that is not a Chat Nodes export of a version this app reads.

    Raises:
        ImportFailed: Naming the field (``format`` or ``version``).
    """
    fmt = header.get("format")
    if fmt != NATIVE_FORMAT:
        raise ImportFailed(f"{name}: 'format' is {fmt!r}, not {NATIVE_FORMAT!r}: not a Chat Nodes export")
    version = header.get("version")
    if isinstance(version, float) and version.is_integer():
        version = int(version)
    if not isinstance(version, int) or isinstance(version, bool):
        raise ImportFailed(f"{name}: 'version' is missing or not a number (it must come before 'nodes')")
    if version != NATIVE_VERSION:
        raise ImportFailed(f"{name}: Chat Nodes export version {version} is not known to this app (it reads "
                           f"version {NATIVE_VERSION}); update Chat Nodes to import it")


def _too_deep(obj: object, limit: int) -> bool:
    stack: list[tuple[object, int]] = [(obj, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return True
        if isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values() if isinstance(v, (dict, list)))
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item if isinstance(v, (dict, list)))
    return False


def _count(messages: Iterable[ChatMessage]) -> tuple[int, int]:
    msgs = list(messages)
    total, branches = len(msgs), 1
    for _, tail in stored_versions(msgs):
        total += len(tail)
        branches += 1
    return total, branches


def parse_native_node(obj: object, index: int) -> NativeNode | ImportProblem:
    """Read one item of a Chat Nodes export's ``nodes`` array.

    Returns:
        The node, or a problem naming the node and the field.
    """
    raw = obj.get("node") if isinstance(obj, dict) else None
    title = raw.get("title") if isinstance(raw, dict) else None
    where = f"node {index + 1}" + (f" '{title}'" if isinstance(title, str) else "")
    if not isinstance(raw, dict):
        return ImportProblem(where, "'node' must be an object")
    assert isinstance(obj, dict)
    if _too_deep(obj, _MAX_DEPTH):
        return ImportProblem(where, f"nested more than {_MAX_DEPTH} levels deep: it could not be saved")
    item: dict[str, Any] = repair_surrogates(obj)[0]
    raw = item["node"]
    try:
        project = project_from_dict({"version": 1, "nodes": [raw]})
    except ValueError as exc:
        return ImportProblem(where, str(exc).replace("nodes[0].", "node."))
    node = project.nodes[0]
    archive = item.get("archive", [])
    if not isinstance(archive, list):
        return ImportProblem(where, "'archive' must be an array of messages")
    try:
        archived = [message_from_dict(m, i) for i, m in enumerate(archive)]
    except TypeError as exc:
        return ImportProblem(where, f"archive: {exc}")
    if node.kind != "chat":
        return NativeNode(node.id, node.title, 0, node, 0, 0)
    live = {m.id for m in node.conversation.messages}
    node.conversation.messages[:0] = [m for m in archived if m.id not in live]
    node.always_allow = []
    messages, branches = _count(node.conversation.messages)
    return NativeNode(node.id, node.title, node.conversation.created_at, node, messages, branches)
