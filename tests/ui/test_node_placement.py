"""Nothing opens off-screen (issue 25 #3): forks, new nodes, cascades and tiles stay inside the node
area's visible rectangle, and tiles and cascades follow the area when it changes size."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from first_hour_support import open_with_fake, outside, press, seed, trigger, viewport
from PySide6.QtCore import QRect, Qt
from PySide6.QtWidgets import QToolButton

from desktop.testing import FakeProvider, Turn

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
    qtbot.waitUntil(button.isVisible, timeout=10_000)
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
    half = area.width() // 2
    for side, rect in (("right", QRect(0, 10, half - 20, area.height() - 40)),
                       ("left", QRect(half + 20, 10, area.width() - half - 20, area.height() - 40))):
        window.subwindow_of(node).setGeometry(rect)
        button = _fork_button(node, 1)
        qtbot.waitUntil(button.isVisible, timeout=10_000)
        qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
        fork = window.active_node()
        assert fork is not node
        src, dst = window.subwindow_of(node).geometry(), window.subwindow_of(fork).geometry()
        assert dst.left() > src.right() if side == "right" else dst.right() < src.left()
        assert dst.top() == src.top() and dst.height() == src.height()
        assert outside(window) == [] and not dst.intersects(src)
        window.close_node(fork)


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
    qtbot.waitUntil(lambda: viewport(window).height() < height, timeout=10_000)
    qtbot.waitUntil(lambda: _fills(window), timeout=10_000)
    banner.dismiss()
    qtbot.waitUntil(lambda: viewport(window).height() == height and _fills(window), timeout=10_000)
    window.resize(window.width() - 120, window.height() - 80)
    qtbot.waitUntil(lambda: _fills(window), timeout=10_000)
    press(qtbot, "Ctrl+B", window.active_node().chat_input)  # the sidebar takes room on the left
    qtbot.waitUntil(lambda: window.nav.sidebar.isVisible(), timeout=10_000)
    qtbot.waitUntil(lambda: _fills(window), timeout=10_000)
    trigger(window, "cascadeAction")
    press(qtbot, "Ctrl+B", window.active_node().chat_input)
    qtbot.waitUntil(lambda: not window.nav.sidebar.isVisible(), timeout=10_000)
    qtbot.waitUntil(lambda: outside(window) == [] and max(
        window.subwindow_of(n).geometry().right() for n in window.nodes()) > viewport(window).width() * 0.6,
        timeout=10_000)


def test_a_reopened_node_comes_back_inside_a_smaller_window(
    qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path
) -> None:
    window = open_with_fake(open_window, fake, tmp_path)
    area = viewport(window)
    node = seed(window, "Wide", "q", "a", rect=QRect(area.width() - 400, 0, 400, area.height()))
    window.close_node(node)
    window.resize(window.width() - 200, window.height() - 100)
    qtbot.waitUntil(lambda: viewport(window).width() < area.width(), timeout=10_000)
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
    height = window.mdi.height()
    window.show_banner("A banner", object_name="testBanner")
    qtbot.waitUntil(lambda: window.mdi.height() != height, timeout=10_000)  # the area shrank: layout ran
    assert window.subwindow_of(node).geometry() == mine
    window.resize(area.width() - 400, window.height())  # now its header would be out of reach
    qtbot.waitUntil(lambda: viewport(window).contains(window.subwindow_of(node).geometry().topLeft()),
                    timeout=10_000)
