"""The importers' data: errors, a parsed conversation, preview entries, progress and the report."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from ._tree import TreeNode, count_leaves

__all__ = [
    "ExportFormat",
    "ImportCancelled",
    "ImportFailed",
    "ImportProblem",
    "ImportProgress",
    "ImportReport",
    "ImportedItem",
    "ParsedConversation",
    "PreviewEntry",
    "SkippedItem",
    "Source",
]

Source = Literal["chatgpt", "claude", "chatnodes"]
ExportFormat = Literal["chatgpt", "claude", "chatnodes", "empty"]


class ImportFailed(Exception):
    """An export cannot be read at all (not a zip or JSON we know, a zip bomb, an unknown version).

    ``str(err)`` is the message for the user; it names the file and, where it can, the field.
    """


class ImportCancelled(Exception):
    """The import or preview was cancelled (nothing more is read)."""


@dataclass(slots=True)
class ParsedConversation:
    """One conversation of an export, converted to a message tree (no versions built yet).

    Attributes:
        source: Where it comes from.
        original_id: Its id in the export (what a re-import recognises).
        title: Its title as the export gives it.
        created_at: Creation time, epoch milliseconds.
        updated_at: Last change, epoch milliseconds, or None.
        nodes: The kept messages with their parents.
        active_leaf: The message the original app showed last, or None (newest leaf).
        notes: What was noted while converting (content shown as notes, skipped messages).
    """

    source: Source
    original_id: str
    title: str
    created_at: int
    updated_at: int | None
    nodes: list[TreeNode]
    active_leaf: str | None
    notes: list[str] = field(default_factory=list)

    @property
    def branches(self) -> int:
        """How many branches (leaves) the conversation has."""
        return count_leaves(self.nodes)


@dataclass(frozen=True, slots=True)
class PreviewEntry:
    """One conversation as the import dialog lists it.

    Attributes:
        original_id: The conversation's id in the export.
        title: Its title.
        created_at: Creation time, epoch milliseconds.
        updated_at: Last change, epoch milliseconds, or None.
        messages: Messages that will be imported (every branch).
        branches: Branches (1 for a conversation never edited or regenerated).
        error: Why it cannot be imported, or None.
    """

    original_id: str
    title: str
    created_at: int
    updated_at: int | None
    messages: int
    branches: int
    error: str | None = None


@dataclass(frozen=True, slots=True)
class ImportProgress:
    """Where an import or preview is.

    Attributes:
        conversations: Conversations read so far.
        bytes_read: Bytes of the export read so far (uncompressed).
        bytes_total: Bytes to read in all (uncompressed), or None when unknown.
        title: The conversation just read.
    """

    conversations: int
    bytes_read: int
    bytes_total: int | None
    title: str = ""

    @property
    def fraction(self) -> float | None:
        """Share done, 0..1, or None when the total is unknown."""
        if not self.bytes_total:
            return None
        return min(1.0, self.bytes_read / self.bytes_total)


@dataclass(frozen=True, slots=True)
class ImportedItem:
    """A conversation that was imported.

    Attributes:
        original_id: Its id in the export.
        title: Its title.
        node_ids: The nodes made (the first is the conversation; more only when its opening
            messages, before any user message, have alternatives: each becomes a node of its own).
        messages: Messages imported, every branch.
        branches: Branches kept.
        notes: What the conversion noted.
    """

    original_id: str
    title: str
    node_ids: tuple[str, ...]
    messages: int
    branches: int
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class SkippedItem:
    """A conversation that was not imported and why (``already imported``, not selected)."""

    original_id: str
    title: str
    reason: str


@dataclass(frozen=True, slots=True)
class ImportProblem:
    """A conversation (or part of the file) that could not be imported.

    Attributes:
        where: The conversation (``'Trip plans' (id abc)``) or the part of the file.
        message: What is wrong, naming the field.
    """

    where: str
    message: str

    def __str__(self) -> str:
        return f"{self.where}: {self.message}"


@dataclass(slots=True)
class ImportReport:
    """What an import did.

    Attributes:
        path: The export file.
        format: What it was.
        imported: The conversations imported.
        skipped: The conversations left out on purpose.
        problems: What could not be imported, each naming the conversation or the part of the file.
        replaced_node_ids: Nodes removed because their conversation was imported again (replace).
        cancelled: The import was cancelled; what is in ``imported`` is whole.
    """

    path: str
    format: ExportFormat | None = None
    imported: list[ImportedItem] = field(default_factory=list)
    skipped: list[SkippedItem] = field(default_factory=list)
    problems: list[ImportProblem] = field(default_factory=list)
    replaced_node_ids: list[str] = field(default_factory=list)
    cancelled: bool = False

    @property
    def ok(self) -> bool:
        """True when nothing failed and the import was not cancelled."""
        return not self.problems and not self.cancelled
