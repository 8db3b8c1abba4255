"""The project store: ``project.json``, its format, the history archive, closed nodes, recent projects.

Qt-free. ``ProjectStore`` loads and saves one project folder (``_project``) in the format of
``_format`` (see docs/DESIGN.md); messages past the cap move to ``.chatnodes/archive/``
(``_archive``); a closed node's history is kept (``_closed``); the projects the user opened are
listed in the config folder (``_recent``). Imports ``files``, ``chat`` and ``config`` (the
per-machine grants a project never holds).
"""

from __future__ import annotations

from ._archive import (
    ARCHIVE_DIR,
    ArchiveContents,
    HistoryArchive,
    TrimInfo,
    apply_trim,
    archive_file_name,
    archive_note_count,
    drop_archived,
    plan_trim,
)
from ._closed import CLOSED_ARCHIVE_DIR, closed_node_export, write_closed_node
from ._format import (
    CLOSED_AT_KEY,
    DEFAULT_NODE_HEIGHT,
    DEFAULT_NODE_WIDTH,
    MAX_CLOSED,
    PARKED_KEY,
    PROJECT_FILE,
    PROJECT_VERSION,
    NodeState,
    Project,
    decode_project,
    is_parked,
    new_node_state,
    new_project,
    project_from_dict,
    project_to_json,
)
from ._project import (
    LOCK_FILE,
    PRE_FLAT_SUFFIX,
    ProjectChangedError,
    ProjectCorruptError,
    ProjectError,
    ProjectReadOnlyError,
    ProjectStore,
    SaveResult,
)
from ._recent import MAX_ENTRIES, RECENT_FILE, RecentCorruptError, RecentProject, RecentProjects
from ._snapshot import detached_project

__all__ = [
    "ARCHIVE_DIR",
    "ArchiveContents",
    "CLOSED_ARCHIVE_DIR",
    "CLOSED_AT_KEY",
    "DEFAULT_NODE_HEIGHT",
    "DEFAULT_NODE_WIDTH",
    "HistoryArchive",
    "LOCK_FILE",
    "MAX_CLOSED",
    "PARKED_KEY",
    "MAX_ENTRIES",
    "NodeState",
    "PRE_FLAT_SUFFIX",
    "PROJECT_FILE",
    "PROJECT_VERSION",
    "Project",
    "ProjectChangedError",
    "ProjectCorruptError",
    "ProjectError",
    "ProjectReadOnlyError",
    "ProjectStore",
    "RECENT_FILE",
    "RecentCorruptError",
    "RecentProject",
    "RecentProjects",
    "SaveResult",
    "TrimInfo",
    "apply_trim",
    "archive_file_name",
    "archive_note_count",
    "closed_node_export",
    "decode_project",
    "detached_project",
    "is_parked",
    "drop_archived",
    "new_node_state",
    "new_project",
    "plan_trim",
    "project_from_dict",
    "project_to_json",
    "write_closed_node",
]
