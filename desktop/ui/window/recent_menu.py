"""File → Recent projects: the projects opened before, most recent first, one click to reopen.

The list lives in the config folder (``desktop.core.store.RecentProjects``,
``recent-projects.json``). :class:`RecentMenu` fills the submenu each time it opens: the last
``MENU_ENTRIES`` folders, a folder that no longer holds a project shown greyed out with "(missing)",
and "Remove missing projects" to forget those. The window calls :meth:`RecentMenu.remember` when a
project opens.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu

from desktop.ui.window.chrome import display_path

if TYPE_CHECKING:
    from desktop.core.store import RecentProjects

log = logging.getLogger(__name__)

__all__ = ["MENU_ENTRIES", "RecentMenu"]

MENU_ENTRIES = 10
"""How many projects the menu lists."""


class RecentMenu:
    """Fills ``menu`` (object name ``recentProjectsMenu``) from the config folder's recent projects.

    Args:
        menu: The File menu's "Recent projects" submenu.
        config_dir: Where the list lives (the context's config folder), or None until it is known.
        open_project: Opens a folder as the window's project.
    """

    def __init__(self, menu: QMenu, config_dir: Callable[[], Path | None],
                 open_project: Callable[[Path], object]) -> None:
        self._menu = menu
        self._config_dir = config_dir
        self._open = open_project
        menu.aboutToShow.connect(self.fill)

    def _store(self) -> RecentProjects | None:
        folder = self._config_dir()
        if folder is None:
            return None
        from desktop.core.store import RecentProjects

        return RecentProjects(folder)

    def remember(self, folder: Path) -> None:
        """Put ``folder`` first in the list (a project was opened); a write that fails is only logged."""
        store = self._store()
        if store is None:
            return
        try:
            store.add(folder)
        except OSError as exc:
            log.warning("could not remember %s among the recent projects: %s", folder, exc)

    def fill(self) -> None:
        """Rebuild the submenu from the file (called each time it opens)."""
        menu = self._menu
        menu.clear()
        store = self._store()
        entries = store.entries(MENU_ENTRIES) if store is not None else []
        if not entries:
            none = menu.addAction("No recent projects")
            none.setEnabled(False)
            return
        missing = False
        for entry in entries:
            exists = entry.exists
            missing = missing or not exists
            text = display_path(entry.path).replace("&", "&&") + ("" if exists else "  (missing)")
            action = QAction(text, menu)
            action.setObjectName("recentProjectAction")
            action.setData(str(entry.path))
            action.setEnabled(exists)
            action.setToolTip(str(entry.path) if exists else f"{entry.path} no longer holds a project")
            action.triggered.connect(lambda _checked=False, path=entry.path: self._open(path))
            menu.addAction(action)
        menu.addSeparator()
        prune = menu.addAction("Remove missing projects")
        prune.setObjectName("pruneRecentAction")
        prune.setEnabled(missing)
        prune.triggered.connect(self.prune)

    def prune(self) -> None:
        """Forget the listed folders that no longer hold a project."""
        store = self._store()
        if store is None:
            return
        try:
            store.prune()
        except OSError as exc:
            log.warning("could not update the recent projects: %s", exc)
