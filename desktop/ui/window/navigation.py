"""Finding one's way among the nodes: the sidebar, Reopen / Rename / Delete, recent projects, shortcuts.

:class:`Navigation` wires the window's parts for these: the sidebar (``sidebar.Sidebar``) shows the
node area's nodes and the project controller's recently closed ones and sends the user's picks back
(focus a node, reopen, delete after asking); Node → Reopen closed node, Rename node and Delete node…;
File → Recent projects (``recent_menu.RecentMenu``); Help → Keyboard shortcuts
(``shortcuts.ShortcutsDialog``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt, QTimer
from PySide6.QtWidgets import QMainWindow

from desktop.ui.window.chrome import WindowActions
from desktop.ui.window.closed_nodes import confirm_delete
from desktop.ui.window.node_area import NodeArea
from desktop.ui.window.project_controller import ProjectController
from desktop.ui.window.recent_menu import RecentMenu
from desktop.ui.window.sidebar import Sidebar, closed_row, imported_row, node_row

if TYPE_CHECKING:
    from desktop.core.config import Settings
    from desktop.core.store import NodeState
    from desktop.ui.node.chat_node import ChatNodeWidget

log = logging.getLogger(__name__)

__all__ = ["Navigation"]


class Navigation(QObject):
    """The sidebar, the closed nodes' actions, recent projects and the shortcuts list of one window.

    Args:
        window: The main window.
        actions: Its actions (the sidebar's checkable action, the Recent projects submenu).
        area: Its node area.
        projects: Its project controller (closed nodes, reopen, delete, open).
        config_dir: The config folder (where the recent projects are listed), None until known.
        settings: The settings in use, None until known (a closed node's row names the model its
            provider would use, as an open node's row does).
    """

    def __init__(self, window: QMainWindow, actions: WindowActions, area: NodeArea,
                 projects: ProjectController, config_dir: Callable[[], Path | None],
                 settings: Callable[[], Settings | None] = lambda: None) -> None:
        super().__init__(window)
        self._settings = settings
        self._window = window
        self._area = area
        self._projects = projects
        self._sidebar_action = actions.sidebar
        self.sidebar = Sidebar(window)
        window.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, self.sidebar)
        self.sidebar.hide()
        self.sidebar.visibilityChanged.connect(self._sync_action)  # also its own × closes it
        self.sidebar.focus_requested.connect(self.focus_node)
        self.sidebar.reopen_requested.connect(self.reopen)
        self.sidebar.delete_requested.connect(self.ask_delete_closed)
        self.sidebar.shown.connect(self.refresh)
        self._refresh = QTimer(self)
        self._refresh.setSingleShot(True)
        self._refresh.setInterval(0)
        self._refresh.timeout.connect(self.refresh)
        for signal in (area.nodes_changed, area.changed, area.cost_changed, projects.closed.changed,
                       area.mdi.subWindowActivated):
            signal.connect(self._refresh_soon)
        self.recent = RecentMenu(actions.recent, config_dir, projects.open)

    # -- the sidebar ------------------------------------------------------------------------------
    def show_sidebar(self, shown: bool) -> None:
        """Show or hide the sidebar (View → Sidebar, Ctrl+B)."""
        self.sidebar.setVisible(shown)

    def _sync_action(self, _visible: bool) -> None:
        self._sidebar_action.setChecked(not self.sidebar.isHidden())

    def _refresh_soon(self, *_args: object) -> None:
        if not self.sidebar.isHidden():
            self._refresh.start()

    def refresh(self) -> None:
        """Bring the sidebar's rows up to date (nothing while it is hidden)."""
        if self.sidebar.isHidden():
            return
        from desktop.core.config import choose_model
        from desktop.core.store import is_parked

        settings = self._settings()
        closed = self._projects.closed
        active = self._area.active_node()
        states = closed.states()

        def model(state: NodeState) -> str | None:
            return choose_model(settings, state.provider) if settings is not None else None

        self.sidebar.show_rows([node_row(n) for n in self._area.nodes()],
                               [closed_row(s, closed.closed_at(s), default_model=model(s))
                                for s in states if not is_parked(s)],
                               active.node_id if active is not None else None,
                               [imported_row(s) for s in states if is_parked(s)])

    def focus_node(self, node_id: str) -> None:
        """Show the node ``node_id`` (its tab in tabbed mode), the keyboard focus in its input."""
        node = self._area.node(node_id)
        if node is not None:
            self._area.focus_node(node)

    # -- closed nodes ----------------------------------------------------------------------------
    def reopen(self, node_id: str | None = None) -> ChatNodeWidget | None:
        """Reopen a closed node (the most recent one when ``node_id`` is None) where it was."""
        node = self._projects.reopen_closed(node_id)
        if node is None and node_id is None:
            self._window.statusBar().showMessage("No closed node to reopen", 3000)
        return node

    def ask_delete_closed(self, node_id: str) -> None:
        """Ask, then delete the closed node ``node_id`` for good."""
        state = self._projects.closed.find(node_id)
        if state is not None:
            confirm_delete(self._window, state.title, lambda: self._projects.delete_closed(node_id))

    def ask_delete_active(self) -> None:
        """Node → Delete node…: ask, then close the active node and delete it for good."""
        node = self._area.active_node()
        if node is None:
            return
        node_id = node.node_id

        def delete() -> None:
            live = self._area.node(node_id)
            if live is not None:
                self._area.close_node(live)  # it joins the closed nodes (when it held anything)...
            self._projects.delete_closed(node_id)  # ...and leaves them for good

        confirm_delete(self._window, node.title, delete)

    def rename_active(self) -> None:
        """Node → Rename node (F2): the active node's title field, its text selected (Escape cancels)."""
        node = self._area.active_node()
        if node is not None:
            self._area.focus_node(node)
            node.title_edit.setFocus(Qt.FocusReason.ShortcutFocusReason)
            node.title_edit.selectAll()

    # -- help ------------------------------------------------------------------------------------
    def show_shortcuts(self) -> None:
        """Help → Keyboard shortcuts: every shortcut of the window, read from its actions now."""
        from desktop.ui.window.shortcuts import ShortcutsDialog

        dialog = ShortcutsDialog(self._window)
        dialog.show()
