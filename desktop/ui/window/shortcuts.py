"""Help → Keyboard shortcuts: every shortcut of the window, read from its actions when the dialog opens.

:func:`shortcut_rows` walks the window's menu bar (each action with a shortcut, under its menu's
name), then the window's other actions with shortcuts (toolbar-only actions, ``QShortcut``\\ s), so a
shortcut someone adds later shows up without touching this module. The keys the message box and the
title field handle themselves (Enter, Shift+Enter, ...) are not actions; :data:`INPUT_KEYS` lists them.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QMainWindow,
    QMenu,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
)

log = logging.getLogger(__name__)

__all__ = ["INPUT_KEYS", "ShortcutsDialog", "shortcut_rows"]

INPUT_KEYS: tuple[tuple[str, str, str], ...] = (
    ("Message box", "Send the message", "Enter"),
    ("Message box", "New line", "Shift+Enter"),
    ("Message box", "Slash commands (/model, /system, /clear, /cost, /help)", "/"),
    ("Message box", "Edit the last message you sent (box empty)", "Up"),
    ("Message box", "Move to the next field", "Tab"),
    ("Node title", "Keep the new title", "Enter"),
    ("Node title", "Cancel the rename (the old title comes back)", "Escape"),
    ("Chat node", "Find in this conversation", "Ctrl+F"),
    ("Find bar", "Next match, previous match", "Enter, Shift+Enter"),
    ("Find bar, search panel", "Close", "Escape"),
)
"""``(where, what, keys)`` of the keys a widget handles itself (not window actions)."""


def _keys(sequences: Iterable[QKeySequence]) -> str:
    texts = [s.toString(QKeySequence.SequenceFormat.NativeText) for s in sequences if not s.isEmpty()]
    return ", ".join(t for t in texts if t)


def _label(action: QAction) -> str:
    return action.text().replace("&&", "\0").replace("&", "").replace("\0", "&").rstrip(".…")


def _menu_rows(menu: QMenu, path: str, seen: set[int], rows: list[tuple[str, str, str]]) -> None:
    for action in menu.actions():
        sub = action.menu()
        if isinstance(sub, QMenu):
            _menu_rows(sub, f"{path} → {_label(action)}", seen, rows)
            continue
        if action.isSeparator():
            continue
        seen.add(id(action))
        keys = _keys(action.shortcuts())
        if keys:
            rows.append((path, _label(action), keys))


def shortcut_rows(window: QMainWindow) -> list[tuple[str, str, str]]:
    """Every shortcut of ``window``: ``(menu or where, what, keys)``, menus first in menu-bar order,
    then actions and shortcuts of the window found outside the menus, then :data:`INPUT_KEYS`."""
    rows: list[tuple[str, str, str]] = []
    seen: set[int] = set()
    for top in window.menuBar().actions():
        menu = top.menu()
        if isinstance(menu, QMenu):
            _menu_rows(menu, _label(top), seen, rows)
    direct = Qt.FindChildOption.FindDirectChildrenOnly
    for action in window.findChildren(QAction, options=direct):
        keys = _keys(action.shortcuts())
        if id(action) not in seen and keys and action.text():
            rows.append(("Window", _label(action), keys))
    for shortcut in window.findChildren(QShortcut):
        keys = _keys([shortcut.key()])
        if keys and shortcut.isEnabled():
            rows.append(("Window", shortcut.whatsThis() or shortcut.objectName() or "Shortcut", keys))
    rows.extend(INPUT_KEYS)
    return rows


class ShortcutsDialog(QDialog):
    """A table of :func:`shortcut_rows` (object name ``shortcutsDialog``; the table ``shortcutsTable``)."""

    def __init__(self, window: QMainWindow) -> None:
        super().__init__(window)
        self.setObjectName("shortcutsDialog")
        self.setWindowTitle("Keyboard shortcuts")
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose, True)
        layout = QVBoxLayout(self)
        rows = shortcut_rows(window)
        table = QTableWidget(len(rows), 3, self)
        table.setObjectName("shortcutsTable")
        table.setHorizontalHeaderLabels(["Where", "What", "Keys"])
        table.verticalHeader().setVisible(False)
        table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        table.setShowGrid(False)
        table.setAlternatingRowColors(True)
        for r, row in enumerate(rows):
            for c, text in enumerate(row):
                table.setItem(r, c, QTableWidgetItem(text))
        header = table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
        layout.addWidget(table)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self.resize(620, min(760, 110 + 30 * len(rows)))
