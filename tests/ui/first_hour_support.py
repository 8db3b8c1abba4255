"""Helpers of the first-hour tests (issue 25): drive the window like a user (menu actions found in the
real menu bar, shortcuts pressed as keys, the sub-window's × clicked) and check node geometry."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QRect, Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QApplication, QMdiSubWindow, QMenu, QStyle, QStyleOptionTitleBar, QWidget
from test_app_support import fake_provider_entry, write_settings

from desktop.core.chat.conversation import append_message
from desktop.testing import FakeProvider


def open_with_fake(open_window: Any, fake: FakeProvider, tmp_path: Path, name: str = "project") -> Any:
    """A shown window on a new project in ``tmp_path / name``, the fake provider as the default."""
    config = tmp_path / "config"
    if not (config / "settings.json").exists():
        write_settings(config, fake_provider_entry(fake), default="fake", model="gpt-4o-mini")
    window = open_window(tmp_path / name, config)
    activate(window)
    return window


def activate(window: Any) -> None:
    """Make ``window`` the active window, so its shortcuts (window context) fire."""
    window.activateWindow()
    window.raise_()


def menu_action(window: Any, name: str) -> QAction:
    """The action named ``name`` in the window's real menu bar (submenus included)."""
    def walk(menu: QMenu) -> QAction | None:
        for action in menu.actions():
            if action.objectName() == name:
                return action
            sub = action.menu()
            if isinstance(sub, QMenu):
                found = walk(sub)
                if found is not None:
                    return found
        return None

    for top in window.menuBar().actions():
        menu = top.menu()
        if isinstance(menu, QMenu) and (found := walk(menu)) is not None:
            return found
    raise AssertionError(f"no action {name!r} in the menu bar")


def trigger(window: Any, name: str) -> None:
    """Click the menu action ``name`` (it must be enabled)."""
    action = menu_action(window, name)
    assert action.isEnabled(), f"{name} is disabled"
    action.trigger()


def press(qtbot: Any, keys: str, widget: QWidget | None = None) -> None:
    """Press ``keys`` (e.g. "Ctrl+Shift+T") in ``widget`` (the focused widget when None)."""
    combo = QKeySequence(keys)[0]
    target = widget or QApplication.focusWidget()
    assert target is not None, "nothing has the keyboard focus"
    top = target.window()
    if not top.isActiveWindow():  # window shortcuts fire in the active window only
        top.activateWindow()
        qtbot.waitUntil(top.isActiveWindow, timeout=10_000)
    qtbot.keyClick(target, combo.key(), combo.keyboardModifiers())


def click_close_button(qtbot: Any, sub: QMdiSubWindow) -> None:
    """Click the × in ``sub``'s title bar, where the style draws it."""
    style = sub.style()
    option = QStyleOptionTitleBar()
    option.initFrom(sub)
    option.titleBarFlags = sub.windowFlags()
    option.subControls = QStyle.SubControl.SC_All
    border = style.pixelMetric(QStyle.PixelMetric.PM_MdiSubWindowFrameWidth, None, sub)
    height = style.pixelMetric(QStyle.PixelMetric.PM_TitleBarHeight, option, sub)
    option.rect = QRect(border, border, sub.width() - 2 * border, height)
    rect = style.subControlRect(QStyle.ComplexControl.CC_TitleBar, option,
                                QStyle.SubControl.SC_TitleBarCloseButton, sub)
    assert rect.isValid(), "no close button in the title bar"
    qtbot.mouseMove(sub, rect.center())  # the sub-window acts on the control the pointer is over
    qtbot.mouseClick(sub, Qt.MouseButton.LeftButton, pos=rect.center())


def viewport(window: Any) -> QRect:
    """The node area's visible rectangle (sub-window coordinates)."""
    return window.mdi.viewport().rect()


def outside(window: Any) -> list[tuple[str, QRect]]:
    """The nodes whose sub-window is not wholly inside the visible area, with their geometry."""
    area = viewport(window)
    return [(n.title, window.subwindow_of(n).geometry()) for n in window.nodes()
            if not area.contains(window.subwindow_of(n).geometry())]


def seed(window: Any, title: str, *texts: str, rect: QRect | None = None) -> Any:
    """Open a node titled ``title`` holding ``texts`` (user and assistant turns), at ``rect``."""
    node = window.add_node()
    node.set_title(title)
    for i, text in enumerate(texts):
        append_message(node.conversation, "user" if i % 2 == 0 else "assistant", text)
    node.touch()
    node.transcript.set_conversation(node.conversation)
    if rect is not None:
        window.subwindow_of(node).setGeometry(rect)
    return node


def focus(window: Any, node: Any) -> None:
    """Make ``node`` the active node, the keyboard focus in its message box (as a click there does)."""
    window.mdi.setActiveSubWindow(window.subwindow_of(node))
    node.chat_input.setFocus()
