"""The canvas's actions: View → Desk / Canvas, Fit all, Zoom to node, and Ctrl+Tab / Ctrl+Shift+Tab.

They go into the window's View menu (after "Tabbed") and its toolbar; the next/previous node actions
work in both views.
"""

from __future__ import annotations

import logging
from typing import Protocol

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import QMainWindow, QMenu, QToolBar

log = logging.getLogger(__name__)

__all__ = ["BoardSlots", "CanvasActions"]


class BoardSlots(Protocol):
    """What the actions call (``board.CanvasBoard``)."""

    current: str | None

    def set_mode(self, mode: str) -> None: ...
    def fit_all(self) -> None: ...
    def zoom_to_node(self, node_id: str) -> None: ...
    def cycle(self, step: int) -> None: ...


class CanvasActions:
    """The board's actions, installed in ``window``.

    Args:
        window: The main window (its View menu and toolbar).
        board: What the actions do.
    """

    def __init__(self, window: QMainWindow, board: BoardSlots) -> None:
        def action(text: str, name: str, keys: tuple[str, ...], slot: object, tip: str) -> QAction:
            act = QAction(text, window)
            act.setObjectName(name)
            act.setShortcuts([QKeySequence(k) for k in keys])
            act.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
            act.setToolTip(tip)
            act.setStatusTip(tip)
            act.triggered.connect(lambda _checked=False: slot())  # type: ignore[operator]
            window.addAction(act)
            return act

        self.desk = action("Desk", "deskAction", ("Ctrl+Shift+J",), lambda: board.set_mode("desk"),
                           "Nodes as windows or tabs (Ctrl+Shift+J)")
        self.canvas = action("Canvas", "canvasAction", ("Ctrl+Shift+K",),
                             lambda: board.set_mode("canvas"),
                             "Nodes as cards on a board, forks as edges (Ctrl+Shift+K)")
        group = QActionGroup(window)
        for act in (self.desk, self.canvas):
            act.setCheckable(True)
            group.addAction(act)
        self.desk.setChecked(True)
        self.fit_all = action("Fit all", "fitAllAction", ("Ctrl+0",), board.fit_all,
                              "Show every card of the board (Ctrl+0)")
        self.zoom_to_node = action("Zoom to node", "zoomToNodeAction", ("Ctrl+9",),
                                   lambda: board.zoom_to_node(board.current or ""),
                                   "Zoom the board to the active node (Ctrl+9, or double-click a card)")
        self.next_node = action("Next node", "nextNodeAction", ("Ctrl+Tab",), lambda: board.cycle(1),
                                "The next node in reading order (Ctrl+Tab)")
        self.prev_node = action("Previous node", "previousNodeAction", ("Ctrl+Shift+Tab", "Ctrl+Backtab"),
                                lambda: board.cycle(-1),
                                "The previous node in reading order (Ctrl+Shift+Tab)")
        self.sync("desk")
        view_menu = next((a.menu() for a in window.menuBar().actions() if a.text() == "&View"), None)
        if isinstance(view_menu, QMenu):
            before = next((a for a in view_menu.actions() if a.objectName() == "usageAction"), None)
            entries: tuple[QAction | None, ...] = (self.desk, self.canvas, self.fit_all, self.zoom_to_node,
                                                   None, self.next_node, self.prev_node, None)
            for entry in entries:
                if entry is None:
                    view_menu.insertSeparator(before) if before is not None else view_menu.addSeparator()
                elif before is not None:
                    view_menu.insertAction(before, entry)
                else:
                    view_menu.addAction(entry)
        toolbar = window.findChild(QToolBar)
        if toolbar is not None:
            tabbed = next((a for a in toolbar.actions() if a.objectName() == "tabbedAction"), None)
            if tabbed is not None:
                toolbar.insertActions(tabbed, [self.desk, self.canvas])

    def sync(self, mode: str) -> None:
        """Check the action of ``mode``; Fit all and Zoom to node work in the canvas only."""
        (self.canvas if mode == "canvas" else self.desk).setChecked(True)
        self.fit_all.setEnabled(mode == "canvas")
        self.zoom_to_node.setEnabled(mode == "canvas")
