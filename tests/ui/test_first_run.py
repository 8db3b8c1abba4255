"""What a newcomer meets first (issue 11 item 5): after "Try the offline demo" the keyboard focus is in
the message input, and the welcome banner coming and going leaves the node filling the area: no empty
strip under it once dismissed, no input pushed below the window's edge while it shows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QLineEdit, QPushButton, QToolButton
from test_app_support import close_window

pytest_plugins = ["test_app_support"]  # fixtures: fake, make_context, open_window


def _dirs(tmp_path: Path) -> tuple[Path, Path]:
    return tmp_path / "project", tmp_path / "config"


def _area_height(window: Any) -> int:
    return int(window.mdi.viewport().height())


def _node_bottom(window: Any) -> int:
    sub = window.subwindow_of(window.nodes()[0])
    return int(sub.geometry().bottom()) + 1


@pytest.mark.parametrize("focus_from", ["button", "title"])
def test_try_the_demo_puts_the_focus_in_the_message_input(qtbot: Any, open_window: Any, tmp_path: Path,
                                                          focus_from: str) -> None:
    window = open_window(*_dirs(tmp_path))
    banner = window.banner_area.find("welcomeBanner")
    assert banner is not None
    button = banner.findChild(QPushButton, "tryDemoButton")
    before = button if focus_from == "button" else window.nodes()[0].findChild(QLineEdit, "nodeTitle")
    assert before is not None
    before.setFocus()
    button.click()
    assert window.context.demo
    node = window.active_node()
    assert node is not None
    assert window.focusWidget() is node.chat_input
    assert node.chat_input.isEnabled() and node.chat_input.isVisible()


def test_dismissing_the_welcome_banner_puts_the_focus_in_the_message_input(qtbot: Any, open_window: Any,
                                                                          tmp_path: Path) -> None:
    window = open_window(*_dirs(tmp_path))
    window.nodes()[0].findChild(QLineEdit, "nodeTitle").setFocus()
    window.banner_area.find("welcomeBanner").findChild(QToolButton, "bannerCloseButton").click()
    assert window.focusWidget() is window.nodes()[0].chat_input


def test_dismissing_the_welcome_banner_leaves_no_empty_strip(qtbot: Any, open_window: Any,
                                                             tmp_path: Path) -> None:
    window = open_window(*_dirs(tmp_path))
    area = window.banner_area
    banner = area.find("welcomeBanner")
    assert banner is not None and area.isVisible()
    qtbot.waitUntil(lambda: _node_bottom(window) == _area_height(window), timeout=10_000)
    with_banner = _area_height(window)
    banner.findChild(QToolButton, "bannerCloseButton").click()
    qtbot.waitUntil(lambda: not area.isVisible() and _area_height(window) > with_banner, timeout=10_000)
    qtbot.waitUntil(lambda: _node_bottom(window) == _area_height(window), timeout=10_000)
    assert window.mdi.geometry().top() == 0


def _dismiss_and_check_filled(qtbot: Any, window: Any) -> None:
    with_banner = _area_height(window)
    window.banner_area.find("welcomeBanner").findChild(QToolButton, "bannerCloseButton").click()
    qtbot.waitUntil(lambda: _area_height(window) > with_banner, timeout=10_000)
    qtbot.waitUntil(lambda: _node_bottom(window) == _area_height(window), timeout=10_000)  # no strip


def test_next_launches_the_node_follows_the_banner_both_ways(qtbot: Any, open_window: Any,
                                                             tmp_path: Path) -> None:
    """The node's saved geometry was taken with or without the banner; at the next launch the node
    still fills the area while the banner shows (its input visible) and after it is dismissed."""
    project, config = _dirs(tmp_path)
    first = open_window(project, config)
    _dismiss_and_check_filled(qtbot, first)
    close_window(qtbot, first)  # saved without the banner

    second = open_window(project, config)
    assert second.banner_area.find("welcomeBanner") is not None
    qtbot.waitUntil(lambda: _node_bottom(second) == _area_height(second), timeout=10_000)  # input not cut
    close_window(qtbot, second)  # saved with the banner

    third = open_window(project, config)
    assert third.banner_area.find("welcomeBanner") is not None
    qtbot.waitUntil(lambda: _node_bottom(third) == _area_height(third), timeout=10_000)
    _dismiss_and_check_filled(qtbot, third)
