"""Recently closed nodes beyond the project's ``MAX_CLOSED``: kept in the history archive, not dropped.

``project.json`` keeps the last ``MAX_CLOSED`` closed nodes (``Project.closed``). When a save finds
more, ``ProjectStore.save`` writes each older one, before ``project.json`` is replaced, to
``.chatnodes/archive/closed/<node-id>.json`` in Chat Nodes' own export format (the one
``desktop.core.importers.export_nodes`` writes: the node exactly as ``project.json`` holds it, with
its archived messages), so File → Import or ``python -m desktop import`` brings it back with nothing
lost. A write that fails keeps the node in ``project.json`` (nothing is ever dropped unwritten).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..chat.conversation import message_to_dict, now_ms
from ..chat.types import ChatMessage
from ..files import atomic_write_bytes
from ..text import repair_surrogates
from ._archive import ARCHIVE_DIR, archive_file_name
from ._format import NodeState, Project, project_to_json

__all__ = ["CLOSED_ARCHIVE_DIR", "closed_node_export", "write_closed_node"]

log = logging.getLogger(__name__)

CLOSED_ARCHIVE_DIR = ARCHIVE_DIR / "closed"
"""Where closed nodes beyond ``MAX_CLOSED`` go, one export file per node."""

# The header of Chat Nodes' export format (``desktop.core.importers._native``, which reads it back).
_EXPORT_FORMAT = "chatnodes-export"
_EXPORT_VERSION = 1


def closed_node_export(node: NodeState, archived: Sequence[ChatMessage]) -> str:
    """The export text of one closed node and its archived messages (see the module doc)."""
    parsed: dict[str, Any] = json.loads(project_to_json(Project(nodes=[node])))
    live = {m.id for m in node.conversation.messages}
    item = {"node": parsed["nodes"][0], "archive": [message_to_dict(m) for m in archived if m.id not in live]}
    doc = {"format": _EXPORT_FORMAT, "version": _EXPORT_VERSION, "exportedAt": now_ms(), "nodes": [item]}
    return json.dumps(doc, ensure_ascii=False, separators=(",", ":")) + "\n"


def write_closed_node(folder: Path, node: NodeState, archived: Sequence[ChatMessage]) -> Path:
    """Write ``node`` (closed, beyond ``MAX_CLOSED``) to the project's archive atomically.

    Args:
        folder: The project folder.
        node: The closed node.
        archived: Its messages in the history archive (``ProjectStore.read_archive``).

    Returns:
        The file written (``.chatnodes/archive/closed/<node-id>.json``).

    Raises:
        OSError: It could not be written (the caller keeps the node).
    """
    name = archive_file_name(node.id).removesuffix(".jsonl") + ".json"
    path = Path(folder) / CLOSED_ARCHIVE_DIR / name
    text, _ = repair_surrogates(closed_node_export(node, archived))
    atomic_write_bytes(path, text.encode("utf-8"))
    log.info("closed node %s moved to %s", node.id, path)
    return path
