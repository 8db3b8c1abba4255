"""Helpers of the user-flow tests (``test_flows_*``, issue 31 item 3): every gesture is real input —
a click on a button, a menu opened by clicking its title in the menu bar and its item chosen with the
pointer and Enter, a shortcut pressed on the focused widget, text typed key by key."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QPoint, Qt, QTimer
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QApplication, QDialogButtonBox, QMenu, QWidget


def child(widget: QWidget, cls: type, name: str) -> Any:
    """``widget``'s child of type ``cls`` named ``name`` (the test fails when there is none)."""
    found = widget.findChild(cls, name)
    assert found is not None, f"no {cls.__name__} named {name}"
    return found


def click(qtbot: Any, widget: QWidget) -> None:
    """Left-click ``widget`` once it is shown; it must be enabled."""
    qtbot.waitUntil(widget.isVisible, timeout=10_000)
    assert widget.isEnabled(), f"{widget.objectName() or widget} is disabled"
    qtbot.mouseClick(widget, Qt.MouseButton.LeftButton)


def click_ok(qtbot: Any, dialog: QWidget) -> None:
    """Click the OK button of ``dialog``'s button box."""
    box = dialog.findChild(QDialogButtonBox)
    assert box is not None, "the dialog has no buttons"
    click(qtbot, box.button(QDialogButtonBox.StandardButton.Ok))


def type_text(qtbot: Any, widget: QWidget, text: str) -> None:
    """Focus ``widget`` with a click and type ``text`` into it key by key."""
    qtbot.mouseClick(widget, Qt.MouseButton.LeftButton)
    qtbot.keyClicks(widget, text)


def replace_text(qtbot: Any, widget: QWidget, text: str) -> None:
    """Click ``widget``, select what it holds (Ctrl+A) and type ``text`` over it."""
    qtbot.mouseClick(widget, Qt.MouseButton.LeftButton)
    qtbot.keyClick(widget, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClicks(widget, text)


def top_level(qtbot: Any, cls: type, name: str) -> Any:
    """Wait for a visible top-level widget of type ``cls`` named ``name`` and return it."""
    def find() -> Any:
        for widget in QApplication.topLevelWidgets():
            if isinstance(widget, cls) and widget.objectName() == name and widget.isVisible():
                return widget
        return None

    qtbot.waitUntil(lambda: find() is not None, timeout=10_000)
    return find()


def _hover_and_choose(qtbot: Any, menu: QMenu, spot: QPoint) -> None:
    """Move the pointer onto ``spot`` in ``menu`` (the item there lights up) and press Enter.

    The pointer comes from the menu's right edge first: a menu ignores a pointer that has not moved
    since it opened. Enter, not a click: a synthesized press in a menu-bar menu opened a second time in
    one test closes the menu without choosing (offscreen and xcb alike, with or without a dialog in
    between; the first time it works), a test-input quirk of reused popups, not the app's.
    """
    qtbot.mouseMove(menu, QPoint(menu.width() - 3, spot.y()))
    qtbot.mouseMove(menu, spot)

    def lit() -> bool:  # a loaded machine may deliver the menu's first moves before it is ready
        if menu.activeAction() is None:
            qtbot.mouseMove(menu, QPoint(menu.width() - 3, spot.y()))
            qtbot.mouseMove(menu, spot)
        return menu.activeAction() is not None and menu.activeAction() is menu.actionAt(spot)

    qtbot.waitUntil(lit, timeout=10_000)
    qtbot.keyClick(menu, Qt.Key.Key_Return)


def _menu_holding(window: Any, name: str) -> tuple[QAction, QMenu, QAction]:
    """(the menu bar's title action, its menu, the item) of the item named ``name``."""
    for top in window.menuBar().actions():
        menu = top.menu()
        if isinstance(menu, QMenu):
            for action in menu.actions():
                if action.objectName() == name:
                    return top, menu, action
    raise AssertionError(f"no item {name!r} in the menu bar's menus")


def click_menu_item(qtbot: Any, window: Any, name: str) -> None:
    """Click the menu's title in ``window``'s menu bar, then point at the item named ``name`` in the
    menu that opens and press Enter."""
    top, menu, action = _menu_holding(window, name)
    bar = window.menuBar()
    qtbot.mouseClick(bar, Qt.MouseButton.LeftButton, pos=bar.actionGeometry(top).center())
    qtbot.waitUntil(menu.isVisible, timeout=10_000)
    assert action.isEnabled(), f"{name} is disabled"
    _hover_and_choose(qtbot, menu, menu.actionGeometry(action).center())
    qtbot.waitUntil(lambda: not menu.isVisible(), timeout=10_000)


def pick_from_popup(qtbot: Any, button: QWidget, menu: QMenu, name: str) -> None:
    """Click ``button`` (whose menu pops up at once and runs its own loop), then point at the item whose
    object name or text is ``name`` in ``menu`` when it shows and press Enter."""
    picked: list[str] = []

    def choose() -> None:
        if not menu.isVisible():
            QTimer.singleShot(20, choose)
            return
        for action in menu.actions():
            if name in (action.objectName(), action.text()):
                _hover_and_choose(qtbot, menu, menu.actionGeometry(action).center())
                picked.append(name)
                return
        menu.close()

    QTimer.singleShot(0, choose)
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not menu.isVisible(), timeout=10_000)
    assert picked == [name], f"no item {name!r} in the menu"
