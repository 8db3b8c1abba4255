"""The project model and the ``project.json`` format.

``project.json`` (DESIGN §2.5) never holds a secret and never holds a permission::

    {"version": 1, "nodes": [{"id", "kind": "chat", "title", "x", "y", "width", "height",
      "data": {"conversation": <the object serialize_conversation writes>, "model", "provider",
               "system", "always_allow": []}}],
     "closed": [<a node object as in "nodes", plus "closedAt": epoch ms>, ...]}

Unknown keys (top level, per node and inside ``data``) are kept and written back.

``closed`` (written only when not empty) holds the recently closed nodes, most recently closed
first, each with its whole conversation (versions included) and geometry, so closing a node never
loses it and reopening puts it back where it was. The store keeps ``MAX_CLOSED`` of them; older ones
go to the history archive (``ProjectStore.save``). An older build keeps ``closed`` as an unknown
top-level key and writes it back unchanged (it does not show those nodes).

Versions (``desktop.core.chat.versions``) ride in the messages' unknown fields: the records and
the flat table of stored tails (``versionTails``) on the active path's messages. A conversation
whose versions are in the older nested form (each stored tail inside its record, 4 JSON levels
deeper with every version) is flattened as it loads (``decode_project`` says how many tails it
moved), so the next save writes the flat form.

``always_allow`` is data, not a grant: a list found in a file is kept only as the node's
``requested_always_allow`` (the UI may show "this project asks for ...") and the file is always
written with an empty list. What the user allowed lives in ``permissions.GrantStore``.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from typing import Any, cast

from ..chat.conversation import (
    Conversation,
    conversation_from_dict,
    conversation_to_json,
    create_conversation,
    new_id,
)
from ..chat.versions import flatten_raw_messages
from ..text import repair_surrogates

__all__ = [
    "DEFAULT_NODE_HEIGHT",
    "DEFAULT_NODE_WIDTH",
    "CLOSED_AT_KEY",
    "MAX_CLOSED",
    "PARKED_KEY",
    "PROJECT_FILE",
    "PROJECT_VERSION",
    "NodeState",
    "Project",
    "conversation_from_dict",
    "decode_project",
    "is_parked",
    "new_node_state",
    "new_project",
    "project_from_dict",
    "project_to_json",
]

log = logging.getLogger(__name__)

PROJECT_FILE = "project.json"
PROJECT_VERSION = 1
DEFAULT_NODE_WIDTH = 560
DEFAULT_NODE_HEIGHT = 640

_NODE_KEYS = frozenset({"id", "kind", "title", "x", "y", "width", "height", "data"})
_DATA_KEYS = frozenset({"conversation", "model", "provider", "system", "always_allow"})
_PROJECT_KEYS = frozenset({"version", "nodes", "closed"})
MAX_CLOSED = 20
"""How many recently closed nodes ``project.json`` keeps (older ones go to the history archive)."""
CLOSED_AT_KEY = "closedAt"
"""Node key (kept in ``NodeState.extra``) of a closed node: when it was closed, epoch milliseconds."""
PARKED_KEY = "importParked"
"""Node key (kept in ``NodeState.extra``, value ``true``) of a node imported into ``Project.closed``
without ever being opened: listed under "Imported" in the sidebar, never moved to the archive by the
``MAX_CLOSED`` cap, and not what Ctrl+Shift+T reopens. Opening it drops the key."""
_JSON = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


# ---------------------------------------------------------------------------------------------
# Model


@dataclass(slots=True)
class NodeState:
    """One node of a project: where it sits and what it holds.

    Attributes:
        id: Stable node id (also names its history archive).
        kind: ``chat``; other kinds are kept as they are (their ``data`` stays in ``data_extra``).
        title: Window title.
        x, y, width, height: Geometry in the main window's area.
        conversation: The node's conversation.
        model: Model id picked in the node, or None for the provider's default.
        provider: Provider id picked in the node, or None for the default provider.
        system: The node's system prompt, or None.
        always_allow: Tool names the user allowed without asking in this node. Never read from or
            written to ``project.json``: the project store fills it from the user's
            ``permissions.GrantStore`` and saves it there.
        extra: Unknown keys of the node object, written back verbatim.
        data_extra: Unknown keys of the node's ``data`` object, written back verbatim.
        requested_always_allow: The ``always_allow`` list found in ``project.json``: what the
            project asks for, not a grant (nothing is allowed by it; it is not written back).
    """

    id: str
    kind: str = "chat"
    title: str = "Chat"
    x: int = 0
    y: int = 0
    width: int = DEFAULT_NODE_WIDTH
    height: int = DEFAULT_NODE_HEIGHT
    conversation: Conversation = field(default_factory=create_conversation)
    model: str | None = None
    provider: str | None = None
    system: str | None = None
    always_allow: list[str] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)
    data_extra: dict[str, Any] = field(default_factory=dict)
    requested_always_allow: list[str] = field(default_factory=list)


@dataclass(slots=True)
class Project:
    """The contents of ``project.json``.

    Attributes:
        version: Format version (1).
        nodes: The nodes, in window order.
        extra: Unknown top-level keys, written back verbatim.
        closed: The recently closed nodes, most recently closed first (``CLOSED_AT_KEY`` in each
            one's ``extra`` says when).
    """

    version: int = PROJECT_VERSION
    nodes: list[NodeState] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)
    closed: list[NodeState] = field(default_factory=list)

    def all_nodes(self) -> list[NodeState]:
        """The open nodes, then the closed ones (imported ones never opened included)."""
        return [*self.nodes, *self.closed]

    def node(self, node_id: str) -> NodeState | None:
        """Return the node with this id, or None."""
        for n in self.nodes:
            if n.id == node_id:
                return n
        return None


def is_parked(node: NodeState) -> bool:
    """True for a node imported into the closed list and never opened (``PARKED_KEY``)."""
    return node.extra.get(PARKED_KEY) is True


def new_node_state(
    title: str = "Chat",
    *,
    x: int = 0,
    y: int = 0,
    width: int = DEFAULT_NODE_WIDTH,
    height: int = DEFAULT_NODE_HEIGHT,
    model: str | None = None,
    provider: str | None = None,
    system: str | None = None,
    node_id: str | None = None,
) -> NodeState:
    """Return a new chat node with a fresh id and an empty conversation."""
    return NodeState(
        id=node_id or new_id("n"),
        title=title,
        x=x,
        y=y,
        width=width,
        height=height,
        model=model,
        provider=provider,
        system=system,
    )


def new_project() -> Project:
    """Return a new project with one empty chat node."""
    return Project(nodes=[new_node_state()])


# ---------------------------------------------------------------------------------------------
# JSON mapping


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value == value  # not NaN


def _opt_str(data: dict[str, Any], key: str, where: str, problems: list[str]) -> str | None:
    value = data.get(key)
    if value is not None and not isinstance(value, str):
        problems.append(f"{where}.{key}: must be a string or null")
        return None
    return value


def _conversation_from(value: object, flattened: list[int]) -> Conversation:
    """The conversation of a node's ``data``; nested versions are flattened first (in ``value``).

    Args:
        value: The parsed ``conversation`` value (changed in place when its versions are nested).
        flattened: Gets how many nested version tails were moved into tables.
    """
    if value is None:
        return create_conversation()
    if isinstance(value, str):  # tolerated: a conversation stored as its JSON text
        try:
            value, _ = repair_surrogates(json.loads(value))
        except (ValueError, RecursionError) as exc:
            raise TypeError(f"conversation is not valid JSON: {exc}") from None
    if isinstance(value, dict) and isinstance(value.get("messages"), list):
        flattened.append(flatten_raw_messages(value["messages"]))
    return conversation_from_dict(value)


def _node_from_dict(raw: object, where: str, problems: list[str], flattened: list[int]) -> NodeState | None:
    if not isinstance(raw, dict):
        problems.append(f"{where}: must be an object")
        return None
    start = len(problems)
    node_id = raw.get("id")
    if not isinstance(node_id, str) or not node_id:
        problems.append(f"{where}.id: must be a non-empty string")
    kind = raw.get("kind", "chat")
    if not isinstance(kind, str) or not kind:
        problems.append(f"{where}.kind: must be a non-empty string")
    title = raw.get("title", "Chat")
    if not isinstance(title, str):
        problems.append(f"{where}.title: must be a string")
    geometry: dict[str, int] = {}
    for key, default in (("x", 0), ("y", 0), ("width", DEFAULT_NODE_WIDTH), ("height", DEFAULT_NODE_HEIGHT)):
        value = raw.get(key, default)
        if not _is_number(value) or abs(cast(float, value)) > 1e7:
            problems.append(f"{where}.{key}: must be a number")
            continue
        geometry[key] = round(cast(float, value))
        if key in ("width", "height") and geometry[key] < 1:
            problems.append(f"{where}.{key}: must be positive")
    data = raw.get("data", {})
    if not isinstance(data, dict):
        problems.append(f"{where}.data: must be an object")
        return None
    if len(problems) > start:
        return None
    node_id = cast(str, node_id)
    node = NodeState(
        id=node_id,
        kind=cast(str, kind),
        title=cast(str, title),
        x=geometry["x"],
        y=geometry["y"],
        width=geometry["width"],
        height=geometry["height"],
        extra={k: v for k, v in raw.items() if k not in _NODE_KEYS},
    )
    if kind != "chat":
        node.data_extra = dict(data)
        return node
    dwhere = f"{where}.data"
    try:
        node.conversation = _conversation_from(data.get("conversation"), flattened)
    except TypeError as exc:
        problems.append(f"{dwhere}.conversation: {exc}")
    node.model = _opt_str(data, "model", dwhere, problems)
    node.provider = _opt_str(data, "provider", dwhere, problems)
    node.system = _opt_str(data, "system", dwhere, problems)
    allow = data.get("always_allow", [])
    if not isinstance(allow, list) or not all(isinstance(t, str) for t in allow):
        problems.append(f"{dwhere}.always_allow: must be a list of tool names")
    else:
        node.requested_always_allow = list(dict.fromkeys(allow))  # a request, never a grant
    node.data_extra = {k: v for k, v in data.items() if k not in _DATA_KEYS}
    return node if len(problems) == start else None


def project_from_dict(raw: object) -> Project:
    """Build a project from parsed ``project.json``.

    ``data.always_allow`` lands in ``requested_always_allow``; ``always_allow`` stays empty.
    Versions in the older nested form are flattened (see ``decode_project``).

    Raises:
        ValueError: Naming every problem found (``nodes[1].data.conversation: message 3: ...``).
    """
    return decode_project(raw)[0]


def decode_project(raw: object) -> tuple[Project, int]:
    """``project_from_dict``, and how many nested version tails it flattened.

    ``raw`` is changed in place where versions were nested: afterwards it is as deep as the flat
    form, so a caller may check the depth of the document it parsed only then (a file of the
    older form nests 4 levels deeper with every version).

    Returns:
        ``(project, moved)``: ``moved`` > 0 when the file stored versions in the older form.

    Raises:
        ValueError: Naming every problem found (``nodes[1].data.conversation: message 3: ...``).
    """
    if not isinstance(raw, dict):
        raise ValueError("the file must hold a JSON object")
    problems: list[str] = []
    version = raw.get("version")
    if version != PROJECT_VERSION or isinstance(version, bool):
        problems.append(f"version: {version!r} is not supported (this app reads version {PROJECT_VERSION})")
    raw_nodes = raw.get("nodes")
    if not isinstance(raw_nodes, list):
        problems.append("nodes: must be a list")
        raw_nodes = []
    raw_closed = raw.get("closed", [])
    if not isinstance(raw_closed, list):
        problems.append("closed: must be a list")
        raw_closed = []
    seen: set[str] = set()
    flattened: list[int] = []
    nodes = _nodes_from_list(raw_nodes, "nodes", seen, problems, flattened)
    closed = _nodes_from_list(raw_closed, "closed", seen, problems, flattened)
    if problems:
        raise ValueError("; ".join(problems))
    project = Project(nodes=nodes, extra={k: v for k, v in raw.items() if k not in _PROJECT_KEYS},
                      closed=closed)
    return project, sum(flattened)


def _nodes_from_list(items: list[Any], where: str, seen: set[str], problems: list[str],
                     flattened: list[int]) -> list[NodeState]:
    """The nodes of ``nodes`` or ``closed``; an id may appear once in the two lists together."""
    nodes: list[NodeState] = []
    for i, item in enumerate(items):
        node = _node_from_dict(item, f"{where}[{i}]", problems, flattened)
        if node is None:
            continue
        if node.id in seen:
            problems.append(f"{where}[{i}].id: {node.id!r} is used twice")
            continue
        seen.add(node.id)
        nodes.append(node)
    return nodes


def _embed(obj: dict[str, Any], key: str, raw_json: str) -> str:
    """Encode ``obj`` as JSON with ``key: <raw_json>`` added as its last member (no re-parsing)."""
    head = _JSON.encode(obj)[:-1]
    sep = "," if obj else ""
    return f"{head}{sep}{_JSON.encode(key)}:{raw_json}}}"


def _node_to_json(node: NodeState) -> str:
    if node.kind != "chat":
        data_text = _JSON.encode(node.data_extra)
    else:
        conv_text = conversation_to_json(node.conversation)  # the store applied the cap already
        data: dict[str, Any] = {
            "model": node.model,
            "provider": node.provider,
            "system": node.system,
            "always_allow": [],  # grants live in the user's GrantStore, never in the project
        }
        for k, v in node.data_extra.items():
            if k not in data and k != "conversation":
                data[k] = v
        rest = _JSON.encode(data)
        data_text = '{"conversation":' + conv_text + "," + rest[1:]
    head: dict[str, Any] = {
        "id": node.id,
        "kind": node.kind,
        "title": node.title,
        "x": node.x,
        "y": node.y,
        "width": node.width,
        "height": node.height,
    }
    for k, v in node.extra.items():
        if k not in head and k != "data":
            head[k] = v
    return _embed(head, "data", data_text)


def project_to_json(project: Project) -> str:
    """Return the ``project.json`` text of ``project`` (compact, UTF-8 kept)."""
    top: dict[str, Any] = {"version": project.version}
    for k, v in project.extra.items():
        if k not in _PROJECT_KEYS:
            top[k] = v
    text = _embed(top, "nodes", "[" + ",".join(_node_to_json(n) for n in project.nodes) + "]")
    if project.closed:
        text = text[:-1] + ',"closed":[' + ",".join(_node_to_json(n) for n in project.closed) + "]}"
    return text + "\n"


