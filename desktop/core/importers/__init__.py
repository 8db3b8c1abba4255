"""Bring conversations in: ChatGPT and Claude data exports, and Chat Nodes' own export.

Public API (Qt-free; the import dialog and ``python -m desktop import`` are built on it):

* ``preview_export(path, existing=...)`` → ``ExportPreview``: each conversation's title, date,
  message and branch counts, streamed.
* ``convert_export(path, existing=..., options=ImportOptions(...))`` → ``ImportOutcome``: the new
  nodes and an ``ImportReport`` (imported, skipped, problems); ``ImportJob`` runs it in a worker
  thread with progress callbacks and cancellation.
* ``import_into_project(store, path)``: the same into a project folder through ``ProjectStore``
  (its lock; ``ProjectLockedError`` while a window holds the project), saved once.
* ``existing_imports(project)``: what a project already holds, by original id (re-imports skip it).
* ``export_nodes(path, nodes, archive_of)`` / ``export_nodes_json``: our own format, read back by
  the same import with nothing lost.
* ``build_versions(tree, active_leaf)``: a message tree to an active path with versions.

Every conversation becomes a node titled like the original; the path the original app showed is
the active path and every other branch is a version at the message where it forks
(``desktop.core.chat.versions``). Imported messages carry no usage and are marked
``extra["imported"] = {"source": "chatgpt"|"claude", "id": <original id>}`` (images noted as
``[image: name — not imported]``, their pointers kept in ``extra["imported"]["assets"]`` for the
attachments import to pick up).
"""

from ._common import IMPORTED_KEY, UNTITLED, image_placeholder
from ._job import (
    OPEN_AT_MOST,
    ExportPreview,
    ImportJob,
    ImportOptions,
    ImportOutcome,
    ProjectLockedError,
    convert_export,
    existing_imports,
    import_into_project,
    place_nodes,
    preview_export,
    split_recent,
)
from ._model import (
    ExportFormat,
    ImportCancelled,
    ImportedItem,
    ImportFailed,
    ImportProblem,
    ImportProgress,
    ImportReport,
    ParsedConversation,
    PreviewEntry,
    SkippedItem,
)
from ._native import IMPORTED_FROM_KEY, NATIVE_FORMAT, NATIVE_VERSION, export_nodes, export_nodes_json
from ._reader import ExportStream, read_export
from ._source import Limits
from ._tree import BuiltTree, TreeError, TreeNode, build_versions

__all__ = [
    "BuiltTree",
    "ExportFormat",
    "ExportPreview",
    "ExportStream",
    "IMPORTED_FROM_KEY",
    "IMPORTED_KEY",
    "ImportCancelled",
    "ImportFailed",
    "ImportJob",
    "ImportOptions",
    "ImportOutcome",
    "ImportProblem",
    "ImportProgress",
    "ImportReport",
    "ImportedItem",
    "Limits",
    "NATIVE_FORMAT",
    "NATIVE_VERSION",
    "ParsedConversation",
    "PreviewEntry",
    "ProjectLockedError",
    "SkippedItem",
    "TreeError",
    "TreeNode",
    "UNTITLED",
    "build_versions",
    "convert_export",
    "existing_imports",
    "export_nodes",
    "export_nodes_json",
    "image_placeholder",
    "import_into_project",
    "place_nodes",
    "split_recent",
    "OPEN_AT_MOST",
    "preview_export",
    "read_export",
]
