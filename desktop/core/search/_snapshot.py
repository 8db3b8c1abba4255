"""What the indexer is given: a project's saved state, taken on the GUI thread or read from disk.

:func:`snapshot_project` is all the GUI thread does per save: it copies the list of each node's
messages (references, no text) into frozen :class:`ProjectSnapshot` objects the indexer thread can
read while the nodes go on changing. That is safe because the indexer only reads attributes (each
read is atomic), message texts are immutable strings, and version records are replaced, never
changed in place (``chat.versions``). A message still streaming is indexed as far as it got; the
next save brings the rest.

:func:`_projectfile.read_project` builds the same snapshot from a project folder on disk.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from operator import attrgetter
from pathlib import Path

from ..chat.types import ChatMessage
from ..store import Project

__all__ = [
    "NodeSnapshot",
    "ProjectSnapshot",
    "snapshot_project",
    "project_key",
    "node_fingerprint",
    "MESSAGE_FIELDS",
]

log = logging.getLogger(__name__)

@dataclass(frozen=True, slots=True)
class NodeSnapshot:
    """One chat node as saved.

    Attributes:
        node_id: The node's id (also names its history archive).
        title: Its title.
        messages: Its conversation's active path (the message objects, shared, only read).
    """

    node_id: str
    title: str
    messages: tuple[ChatMessage, ...]


@dataclass(frozen=True, slots=True)
class ProjectSnapshot:
    """A project as saved: every chat node, open or closed (imported ones never opened included; nodes
    of other kinds hold no messages).

    Attributes:
        folder: The project folder.
        nodes: Its chat nodes. A node of the index that is not here was deleted.
    """

    folder: Path
    nodes: tuple[NodeSnapshot, ...]


def project_key(folder: Path) -> str:
    """How the index names a project: its resolved absolute path."""
    return str(Path(folder).expanduser().resolve())


def snapshot_project(folder: Path, project: Project) -> ProjectSnapshot:
    """Take what the indexer needs of ``project`` (cheap: no text is copied). Call it where the
    project is changed (the GUI thread), right after a save; hand the result to the indexer."""
    nodes = tuple(
        NodeSnapshot(n.id, n.title, tuple(n.conversation.messages)) for n in project.all_nodes()
        if n.kind == "chat"
    )
    return ProjectSnapshot(Path(folder), nodes)


MESSAGE_FIELDS = attrgetter("id", "role", "content", "ts", "model", "extra")
"""What of a message the index depends on (``extra`` holds the version records)."""
_CONTENT = attrgetter("content")
_EXTRA = attrgetter("extra")
_MODEL = attrgetter("model")


def node_fingerprint(node: NodeSnapshot) -> tuple[object, ...]:
    """What decides whether a node changed since it was last indexed in this process.

    The title, the message objects, and the fields the index reads that change in place: the text
    (streaming grows it), the model (set when usage arrives) and ``extra``, which holds the version
    records and which ``chat.versions`` replaces (never changes in place) when a record changes.
    Id, role and time never change on a message object. All compared by reference first: an
    unchanged node costs a few pointer comparisons per message (single-attribute getters: 3× faster
    than one getter of six). Messages loaded again from disk compare equal by value. Keeping the
    text of a message that is still streaming costs it one copy at its next delta (the streaming
    appender grows a string in place only while nothing else holds it): once per save, not per
    delta.
    """
    msgs = node.messages
    return (node.title, msgs, tuple(map(_CONTENT, msgs)), tuple(map(_EXTRA, msgs)), tuple(map(_MODEL, msgs)))
