"""A project folder: ``project.json`` (nodes, geometry, conversations) and the history archive.

``project.json`` (DESIGN §2.5) never holds a secret::

    {"version": 1, "nodes": [{"id", "kind": "chat", "title", "x", "y", "width", "height",
      "data": {"conversation": <the object serialize_conversation writes>, "model", "provider",
               "system", "always_allow": [...]}}]}

Unknown keys (top level, per node and inside ``data``) are kept and written back. Saves are atomic
(temp file in the folder, fsync, ``os.replace``, fsync of the folder) and the previous good file is
kept as ``project.json.bak``. A file that cannot be read is never overwritten: it is moved aside to
``project.json.corrupt-<timestamp>`` and reported with ``ProjectCorruptError``.

Saving applies the history cap (D8/D9): the oldest exchanges of a conversation over the cap are
appended to ``.chatnodes/archive/<node-id>.jsonl`` (one message per line) and a note in the
conversation says how many were moved there.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from ._atomic import atomic_write_bytes, fsync_dir, move_aside
from .chat.conversation import (
    Conversation,
    conversation_to_json,
    create_conversation,
    deserialize_conversation,
    message_from_dict,
    message_to_dict,
    new_id,
    now_ms,
    split_for_cap,
)
from .chat.types import ChatMessage

__all__ = [
    "ARCHIVE_DIR",
    "PROJECT_FILE",
    "PROJECT_VERSION",
    "ArchiveContents",
    "NodeState",
    "Project",
    "ProjectCorruptError",
    "ProjectError",
    "ProjectStore",
    "SaveResult",
    "new_node_state",
    "new_project",
    "project_from_dict",
]

log = logging.getLogger(__name__)

PROJECT_FILE = "project.json"
PROJECT_VERSION = 1
ARCHIVE_DIR = Path(".chatnodes") / "archive"
DEFAULT_NODE_WIDTH = 560
DEFAULT_NODE_HEIGHT = 640

_NODE_KEYS = frozenset({"id", "kind", "title", "x", "y", "width", "height", "data"})
_DATA_KEYS = frozenset({"conversation", "model", "provider", "system", "always_allow"})
_PROJECT_KEYS = frozenset({"version", "nodes"})
_JSON = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
_SAFE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
_ARCHIVE_NOTE_KEY = "archivedCount"


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
        always_allow: Tool names the user allowed without asking in this node.
        extra: Unknown keys of the node object, written back verbatim.
        data_extra: Unknown keys of the node's ``data`` object, written back verbatim.
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


@dataclass(slots=True)
class Project:
    """The contents of ``project.json``.

    Attributes:
        version: Format version (1).
        nodes: The nodes, in window order.
        extra: Unknown top-level keys, written back verbatim.
    """

    version: int = PROJECT_VERSION
    nodes: list[NodeState] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)

    def node(self, node_id: str) -> NodeState | None:
        """Return the node with this id, or None."""
        for n in self.nodes:
            if n.id == node_id:
                return n
        return None


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
# Errors


class ProjectError(Exception):
    """A project folder problem with a readable message."""


class ProjectCorruptError(ProjectError):
    """``project.json`` could not be used; the file was kept aside and the user should be told.

    Attributes:
        path: The project file.
        moved_to: Where the bad file now is (``project.json.corrupt-<timestamp>``), or None when it
            could not be moved (then it stays in place and saves refuse to overwrite it).
        reason: What was wrong.
        recovered_from: Set by ``load_or_recover`` when the last good backup was used.
    """

    def __init__(
        self, path: Path, moved_to: Path | None, reason: str, recovered_from: Path | None = None
    ) -> None:
        self.path = path
        self.moved_to = moved_to
        self.reason = reason
        self.recovered_from = recovered_from
        super().__init__(self._text())

    def _text(self) -> str:
        where = (
            f"it was kept as {self.moved_to}"
            if self.moved_to is not None
            else "it was left in place and is not overwritten"
        )
        text = f"{self.path} could not be read ({self.reason}); {where}"
        if self.recovered_from is not None:
            text += f"; the last good version was restored from {self.recovered_from.name}"
        return text

    def __str__(self) -> str:
        return self._text()


@dataclass(frozen=True, slots=True)
class SaveResult:
    """What a save did besides writing the file.

    Attributes:
        archived: ``{node_id: messages moved to the history archive}`` for nodes over the cap.
    """

    archived: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ArchiveContents:
    """A node's history archive as read back.

    Attributes:
        messages: The archived messages, oldest first.
        bad_lines: Lines that could not be read (skipped).
    """

    messages: list[ChatMessage]
    bad_lines: int = 0


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


def _conversation_from(value: object) -> Conversation:
    if value is None:
        return create_conversation()
    if isinstance(value, dict):
        text = json.dumps(value, ensure_ascii=False)
    elif isinstance(value, str):  # tolerated: a conversation stored as its JSON text
        text = value
    else:
        raise TypeError("must be an object")
    return deserialize_conversation(text)


def _node_from_dict(raw: object, where: str, problems: list[str]) -> NodeState | None:
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
        node.conversation = _conversation_from(data.get("conversation"))
    except TypeError as exc:
        problems.append(f"{dwhere}.conversation: {exc}")
    node.model = _opt_str(data, "model", dwhere, problems)
    node.provider = _opt_str(data, "provider", dwhere, problems)
    node.system = _opt_str(data, "system", dwhere, problems)
    allow = data.get("always_allow", [])
    if not isinstance(allow, list) or not all(isinstance(t, str) for t in allow):
        problems.append(f"{dwhere}.always_allow: must be a list of tool names")
    else:
        node.always_allow = list(allow)
    node.data_extra = {k: v for k, v in data.items() if k not in _DATA_KEYS}
    return node if len(problems) == start else None


def project_from_dict(raw: object) -> Project:
    """Build a project from parsed ``project.json``.

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
    nodes: list[NodeState] = []
    seen: set[str] = set()
    for i, item in enumerate(raw_nodes):
        node = _node_from_dict(item, f"nodes[{i}]", problems)
        if node is None:
            continue
        if node.id in seen:
            problems.append(f"nodes[{i}].id: {node.id!r} is used twice")
            continue
        seen.add(node.id)
        nodes.append(node)
    if problems:
        raise ValueError("; ".join(problems))
    return Project(nodes=nodes, extra={k: v for k, v in raw.items() if k not in _PROJECT_KEYS})


def _embed(obj: dict[str, Any], key: str, raw_json: str) -> str:
    """Encode ``obj`` as JSON with ``key: <raw_json>`` added as its last member (no re-parsing)."""
    head = _JSON.encode(obj)[:-1]
    sep = "," if obj else ""
    return f"{head}{sep}{_JSON.encode(key)}:{raw_json}}}"


def _node_to_json(node: NodeState) -> str:
    if node.kind != "chat":
        data_text = _JSON.encode(node.data_extra)
    else:
        conv_text = conversation_to_json(node.conversation)  # save() applied the cap already
        data: dict[str, Any] = {
            "model": node.model,
            "provider": node.provider,
            "system": node.system,
            "always_allow": list(node.always_allow),
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
    return _embed(top, "nodes", "[" + ",".join(_node_to_json(n) for n in project.nodes) + "]") + "\n"


def _parse_project_bytes(data: bytes) -> Project:
    try:
        raw = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ValueError(f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})") from None
    except RecursionError:
        raise ValueError("not valid JSON (nested too deeply)") from None
    return project_from_dict(raw)


# ---------------------------------------------------------------------------------------------
# Store


def _archive_note_count(msg: ChatMessage) -> int:
    """The count carried by a note this store wrote about trimmed history, else 0."""
    if msg.role != "note":
        return 0
    value = msg.extra.get(_ARCHIVE_NOTE_KEY)
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _archive_file_name(node_id: str) -> str:
    """A safe file name for a node's archive; ids that are not plain names get a hashed form."""
    if _SAFE_ID.fullmatch(node_id) and ".." not in node_id:
        return f"{node_id}.jsonl"
    digest = hashlib.sha256(node_id.encode("utf-8")).hexdigest()[:16]
    stem = re.sub(r"[^A-Za-z0-9_-]", "_", node_id)[:40].strip("_") or "node"
    return f"{stem}-{digest}.jsonl"


def _fingerprint(path: Path) -> tuple[int, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


class ProjectStore:
    """Loads and saves a project folder.

    Args:
        folder: The project folder (created on first save).
        history_cap_bytes: Per-node conversation budget in ``project.json`` (settings'
            ``history_cap_kib`` × 1024); older exchanges go to the history archive. Can be changed
            later through the attribute of the same name.

    Attributes:
        folder: The project folder.
        path: ``folder / "project.json"``.
        backup_path: ``project.json.bak``, the last good file.
        archive_dir: ``folder / ".chatnodes/archive"``.
        history_cap_bytes: The per-node cap applied by ``save``.
    """

    def __init__(self, folder: Path, *, history_cap_bytes: int = 200 * 1024) -> None:
        self.folder = Path(folder)
        self.path = self.folder / PROJECT_FILE
        self.backup_path = self.folder / (PROJECT_FILE + ".bak")
        self.archive_dir = self.folder / ARCHIVE_DIR
        self.history_cap_bytes = history_cap_bytes
        self._known_good: tuple[int, int, int] | None = None
        self._blocked: str | None = None
        self._archive_ids: dict[str, set[str]] = {}

    # ------------------------------------------------------------------------------------------
    # Loading

    def load(self) -> Project:
        """Return the project in the folder.

        A missing ``project.json`` gives a new project with one empty chat node (nothing written).

        Raises:
            ProjectCorruptError: The file is not valid; it was moved aside to
                ``project.json.corrupt-<timestamp>`` (never overwritten, never deleted). When it cannot
                be read or moved it stays in place and later saves refuse to overwrite it.
        """
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            self._blocked = None
            return new_project()
        except OSError as exc:
            reason = f"{type(exc).__name__}: {exc.strerror or exc}"
            self._blocked = reason
            raise ProjectCorruptError(self.path, None, reason) from None
        try:
            project = _parse_project_bytes(data)
        except ValueError as exc:
            reason = str(exc)
        else:
            self._blocked = None
            self._known_good = _fingerprint(self.path)
            return project
        try:
            moved_to: Path | None = move_aside(self.path)
            self._blocked = None
        except OSError as exc:
            log.error("could not move the bad project file aside: %s", exc)
            moved_to = None
            self._blocked = reason
        err = ProjectCorruptError(self.path, moved_to, reason)
        log.warning("%s", err)
        raise err

    def load_or_recover(self) -> tuple[Project, ProjectCorruptError | None]:
        """Load the project; on a bad file, fall back instead of raising.

        Returns:
            ``(project, None)`` normally. When ``project.json`` was bad: the project from the last
            good ``project.json.bak`` when it is valid (the error's ``recovered_from`` says so), else
            a new project; with the error, so the UI can show a banner.
        """
        try:
            return self.load(), None
        except ProjectCorruptError as err:
            try:
                project = _parse_project_bytes(self.backup_path.read_bytes())
            except (OSError, ValueError):
                return new_project(), err
            err.recovered_from = self.backup_path
            log.warning("recovered %s from %s", self.path.name, self.backup_path.name)
            return project, err

    # ------------------------------------------------------------------------------------------
    # Saving

    def save(self, project: Project) -> SaveResult:
        """Write ``project`` atomically; the previous good file becomes ``project.json.bak``.

        Chat conversations over ``history_cap_bytes`` are trimmed in place first: whole oldest
        exchanges are appended to the node's history archive and a note says how many moved there.
        When the archive cannot be written the node is saved whole instead (nothing is ever lost).

        Raises:
            ProjectError: The current ``project.json`` could not be read and was not moved aside; it
                is not overwritten.
            OSError: Writing failed; the previous file is unchanged.
        """
        if self._blocked is not None:
            raise ProjectError(
                f"{self.path} could not be read earlier ({self._blocked}) and is not overwritten; "
                "move it away or fix it, then open the project again"
            )
        archived: dict[str, int] = {}
        for node in project.nodes:
            if node.kind == "chat":
                count = self._apply_cap(node)
                if count:
                    archived[node.id] = count
        text = project_to_json(project)
        atomic_write_bytes(
            self.path, text.encode("utf-8"), backup=self.backup_path, backup_if=self._is_good_file
        )
        self._known_good = _fingerprint(self.path)
        return SaveResult(archived)

    def _apply_cap(self, node: NodeState) -> int:
        conv = node.conversation
        kept, dropped = split_for_cap(conv.messages, self.history_cap_bytes)
        if not dropped:
            return 0
        earlier = sum(_archive_note_count(m) for m in dropped)
        trimmed = [m for m in dropped if _archive_note_count(m) == 0]
        try:
            self.archive_messages(node.id, trimmed)
        except OSError as exc:
            log.error("could not archive %d messages of node %s (kept): %s", len(trimmed), node.id, exc)
            return 0
        total = earlier + len(trimmed)
        note = ChatMessage(
            id=new_id(),
            role="note",
            content=(
                f"{total} earlier message{'s' if total != 1 else ''} moved to the history archive "
                f"({(ARCHIVE_DIR / _archive_file_name(node.id)).as_posix()})"
            ),
            ts=now_ms(),
            extra={_ARCHIVE_NOTE_KEY: total},
        )
        lead = 0
        while lead < len(kept) and kept[lead].role == "system":
            lead += 1
        kept.insert(lead, note)
        conv.messages[:] = kept
        log.info("node %s: %d messages moved to the history archive", node.id, len(trimmed))
        return len(trimmed)

    def _is_good_file(self, path: Path) -> bool:
        """True when ``path`` is the file this store last loaded or wrote, or parses as a project."""
        if self._known_good is not None and _fingerprint(path) == self._known_good:
            return True
        try:
            _parse_project_bytes(path.read_bytes())
        except (OSError, ValueError):
            return False
        return True

    # ------------------------------------------------------------------------------------------
    # History archive

    def archive_path(self, node_id: str) -> Path:
        """The archive file of ``node_id`` (``.chatnodes/archive/<node-id>.jsonl``)."""
        return self.archive_dir / _archive_file_name(node_id)

    def archive_messages(self, node_id: str, messages: Sequence[ChatMessage]) -> int:
        """Append ``messages`` to the node's archive, one JSON object per line, and fsync.

        Messages already in the archive (same id) are skipped, so archiving the same trimmed
        history twice never duplicates it.

        Returns:
            How many messages were written.

        Raises:
            OSError: The archive could not be written.
        """
        known = self._archived_ids(node_id)
        fresh: list[ChatMessage] = []
        for m in messages:
            if m.id not in known:
                known.add(m.id)
                fresh.append(m)
        if not fresh:
            return 0
        path = self.archive_path(node_id)
        try:
            created = not path.exists()
            path.parent.mkdir(parents=True, exist_ok=True)
            lines = "".join(_JSON.encode(message_to_dict(m)) + "\n" for m in fresh).encode("utf-8")
            with open(path, "ab") as fh:
                if fh.tell() > 0:
                    with open(path, "rb") as check:
                        check.seek(-1, os.SEEK_END)
                        if check.read(1) != b"\n":  # a torn last line from a crash: start a fresh line
                            lines = b"\n" + lines
                fh.write(lines)
                fh.flush()
                os.fsync(fh.fileno())
        except BaseException:
            for m in fresh:
                known.discard(m.id)
            raise
        if created:
            fsync_dir(path.parent)
        return len(fresh)

    def _archived_ids(self, node_id: str) -> set[str]:
        ids = self._archive_ids.get(node_id)
        if ids is None:
            ids = {m.id for m in self.read_archive_contents(node_id).messages}
            self._archive_ids[node_id] = ids
        return ids

    def read_archive_contents(self, node_id: str) -> ArchiveContents:
        """Read a node's archive back; unreadable lines are skipped and counted, never raised."""
        path = self.archive_path(node_id)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return ArchiveContents([], 0)
        except OSError as exc:
            log.warning("could not read the history archive %s: %s", path, exc)
            return ArchiveContents([], 0)
        messages: list[ChatMessage] = []
        bad = 0
        for n, line in enumerate(data.split(b"\n"), start=1):
            if not line.strip():
                continue
            try:
                messages.append(message_from_dict(json.loads(line.decode("utf-8"))))
            except (ValueError, TypeError, UnicodeDecodeError, RecursionError) as exc:
                bad += 1
                log.debug("skipping line %d of %s: %s", n, path, exc)
        if bad:
            log.warning("skipped %d unreadable line(s) in %s", bad, path)
        return ArchiveContents(messages, bad)

    def read_archive(self, node_id: str) -> list[ChatMessage]:
        """Return a node's archived messages, oldest first (bad lines skipped)."""
        return self.read_archive_contents(node_id).messages

    def delete_archive(self, node_id: str) -> bool:
        """Remove a node's archive (when the user deletes the node); True when one existed."""
        self._archive_ids.pop(node_id, None)
        with contextlib.suppress(FileNotFoundError):
            self.archive_path(node_id).unlink()
            return True
        return False
