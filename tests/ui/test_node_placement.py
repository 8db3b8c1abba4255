"""Nothing opens off-screen (issue 25 #3): forks, new nodes, cascades and tiles stay inside the node
area's visible rectangle, and tiles and cascades follow the area when it changes size."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from first_hour_support import open_with_fake, outside, press, seed, trigger, viewport
from PySide6.QtCore import QRect, QSize, Qt
from PySide6.QtWidgets import QToolButton

from desktop.testing import FakeProvider, Turn
from desktop.ui.window.placement import (
    MIN_NODE_SIZE,
    beside,
    cascade_rects,
    fit_inside,
    reachable,
    slot_rect,
    tile_rects,
)

pytest_plugins = ["test_app_support"]  # fixtures: fake, open_window


def _no_overlap(rects: list[QRect]) -> bool:
    return all(not a.intersects(b) for i, a in enumerate(rects) for b in rects[i + 1:])


def _fills(window: Any) -> bool:
    """The tiles cover the area's width and height (they were laid out for its current size)."""
    area = viewport(window)
    rects = [window.subwindow_of(n).geometry() for n in window.nodes()]
    return (max(r.right() for r in rects) == area.right() and max(r.bottom() for r in rects) == area.bottom()
            and not outside(window))


def _fork_button(node: Any, index: int) -> QToolButton:
    view = node.transcript.view_for(node.conversation.messages[index].id)
    assert view is not None
    button = view.findChild(QToolButton, "forkButton")
    assert button is not None
    return button


def test_a_fork_of_a_node_filling_the_area_opens_inside_it(
    qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path
) -> None:
    window = open_with_fake(open_window, fake, tmp_path)
    node = window.nodes()[0]  # a new project's only node is tiled: it fills the area
    assert window.subwindow_of(node).geometry() == viewport(window)
    fake.script(Turn(text="A1"))
    with qtbot.waitSignal(node.run_finished, timeout=10_000):
        node.submit("q1")
    button = _fork_button(node, 1)
    qtbot.waitUntil(button.isVisible, timeout=3000)
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    assert len(window.nodes()) == 2
    fork = window.active_node()
    assert fork is not node
    assert outside(window) == []
    assert _no_overlap([window.subwindow_of(n).geometry() for n in window.nodes()])
    # Its Send button and header are on screen.
    send = fork.send_button
    corner = send.mapTo(window.mdi.viewport(), send.rect().bottomRight())
    assert viewport(window).contains(corner)


def test_a_fork_opens_beside_its_source_when_there_is_room(
    qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path
) -> None:
    window = open_with_fake(open_window, fake, tmp_path)
    node = seed(window, "Source", "q1", "A1")
    for other in window.nodes():
        if other is not node:
            window.close_node(other)
    area = viewport(window)
    window.subwindow_of(node).setGeometry(QRect(0, 10, area.width() // 2 - 20, area.height() - 40))
    button = _fork_button(node, 1)
    qtbot.waitUntil(button.isVisible, timeout=3000)
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    fork = window.active_node()
    src, dst = window.subwindow_of(node).geometry(), window.subwindow_of(fork).geometry()
    assert dst.left() > src.right() and dst.top() == src.top() and dst.height() == src.height()
    assert outside(window) == []


def test_new_chat_in_a_tiled_layout_keeps_every_input_visible(
    qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path
) -> None:
    window = open_with_fake(open_window, fake, tmp_path)
    seed(window, "Two")
    trigger(window, "tileAction")
    for _ in range(3):
        press(qtbot, "Ctrl+N", window.active_node().chat_input)
        assert outside(window) == []
        assert _no_overlap([window.subwindow_of(n).geometry() for n in window.nodes()])
    new = window.active_node()
    corner = new.chat_input.mapTo(window.mdi.viewport(), new.chat_input.rect().bottomRight())
    assert viewport(window).contains(corner)


def test_cascade_from_tiled_uses_the_area(qtbot: Any, open_window: Any, fake: FakeProvider,
                                          tmp_path: Path) -> None:
    window = open_with_fake(open_window, fake, tmp_path)
    for title in ("Two", "Three"):
        seed(window, title)
    trigger(window, "tileAction")
    trigger(window, "cascadeAction")
    area = viewport(window)
    assert outside(window) == []
    for node in window.nodes():
        rect = window.subwindow_of(node).geometry()
        assert rect.width() >= area.width() * 0.55 and rect.height() >= area.height() * 0.8, rect
    tops = sorted(window.subwindow_of(n).geometry().topLeft().y() for n in window.nodes())
    assert len(set(tops)) == 3  # cascaded, not stacked


def test_tiles_refit_when_a_banner_comes_and_goes_and_the_window_resizes(
    qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path
) -> None:
    window = open_with_fake(open_window, fake, tmp_path)
    seed(window, "Two")
    seed(window, "Three")
    trigger(window, "tileAction")
    assert _fills(window)
    height = viewport(window).height()
    banner = window.show_banner("A banner pushes the nodes down", object_name="testBanner")
    qtbot.waitUntil(lambda: viewport(window).height() < height, timeout=3000)
    qtbot.waitUntil(lambda: _fills(window), timeout=3000)
    banner.dismiss()
    qtbot.waitUntil(lambda: viewport(window).height() == height and _fills(window), timeout=3000)
    window.resize(window.width() - 120, window.height() - 80)
    qtbot.waitUntil(lambda: _fills(window), timeout=3000)
    press(qtbot, "Ctrl+B", window.active_node().chat_input)  # the sidebar takes room on the left
    qtbot.waitUntil(lambda: window.nav.sidebar.isVisible(), timeout=3000)
    qtbot.waitUntil(lambda: _fills(window), timeout=3000)
    trigger(window, "cascadeAction")
    press(qtbot, "Ctrl+B", window.active_node().chat_input)
    qtbot.waitUntil(lambda: not window.nav.sidebar.isVisible(), timeout=3000)
    qtbot.waitUntil(lambda: outside(window) == [] and max(
        window.subwindow_of(n).geometry().right() for n in window.nodes()) > viewport(window).width() * 0.6,
        timeout=3000)


def test_a_reopened_node_comes_back_inside_a_smaller_window(
    qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path
) -> None:
    window = open_with_fake(open_window, fake, tmp_path)
    area = viewport(window)
    node = seed(window, "Wide", "q", "a", rect=QRect(area.width() - 400, 0, 400, area.height()))
    window.close_node(node)
    window.resize(window.width() - 200, window.height() - 100)
    qtbot.waitUntil(lambda: viewport(window).width() < area.width(), timeout=3000)
    press(qtbot, "Ctrl+Shift+T", window.active_node().chat_input)
    assert outside(window) == []


def test_a_layout_arranged_by_hand_is_left_alone_unless_a_header_leaves_the_area(
    qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path
) -> None:
    window = open_with_fake(open_window, fake, tmp_path)
    node = window.nodes()[0]
    area = viewport(window)
    mine = QRect(area.width() - 300, 20, 500, 300)  # hangs over the right edge on purpose
    window.subwindow_of(node).setGeometry(mine)
    assert window.node_area.layout_mode == "free"
    window.show_banner("A banner", object_name="testBanner")
    qtbot.wait(50)
    assert window.subwindow_of(node).geometry() == mine
    window.resize(area.width() - 400, window.height())  # now its header would be out of reach
    qtbot.waitUntil(lambda: viewport(window).contains(window.subwindow_of(node).geometry().topLeft()),
                    timeout=3000)


# -- the geometry itself ------------------------------------------------------------------------

@pytest.mark.parametrize("count", [1, 2, 3, 4, 5, 7, 10])
@pytest.mark.parametrize("size", [QSize(1200, 760), QSize(500, 400), QSize(300, 200)])
def test_tiles_and_cascades_lie_inside_the_area(count: int, size: QSize) -> None:
    area = QRect(0, 0, size.width(), size.height())
    tiles = tile_rects(count, size)
    assert len(tiles) == count and _no_overlap(tiles) and all(area.contains(r) for r in tiles)
    assert sum(r.width() * r.height() for r in tiles) == size.width() * size.height()
    cascade = cascade_rects(count, size)
    assert len(cascade) == count and all(area.contains(r) for r in cascade)
    assert all(area.contains(slot_rect(i, size)) for i in range(12))


def test_beside_fit_and_reachable() -> None:
    area = QSize(1000, 700)
    assert beside(QRect(0, 0, 1000, 700), area) is None  # no room on either side
    right = beside(QRect(10, 20, 400, 500), area)
    assert right is not None and right.left() > 410 and QRect(0, 0, 1000, 700).contains(right)
    left = beside(QRect(560, 20, 430, 500), area)
    assert left is not None and left.right() < 560 and left.width() >= MIN_NODE_SIZE.width()
    assert fit_inside(QRect(900, 650, 600, 680), area) == QRect(400, 20, 600, 680)
    assert fit_inside(QRect(-50, -50, 2000, 2000), area) == QRect(0, 0, 1000, 700)
    hanging = QRect(800, 100, 500, 300)
    assert reachable(hanging, area) == hanging  # its header can still be grabbed
    assert reachable(QRect(1100, -40, 500, 300), area).topLeft().x() < 1000
    assert reachable(QRect(1100, -40, 500, 300), area).top() == 0
