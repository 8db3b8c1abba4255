"""A node inside a window follows a light/dark switch of the application palette at run time."""
# ruff: noqa: F811 - pytest fixtures imported from test_chat_node_support are parameters here

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QApplication, QMainWindow, QMdiArea
from test_chat_node_support import NodeEnv, make_env  # noqa: F401

from desktop.core.chat.conversation import append_message
from desktop.core.chat.types import Delta, Done
from desktop.ui import theme
from desktop.ui.node.chat_node import ChatNodeWidget
from desktop.ui.node.style import is_dark, node_colors
from desktop.ui.transcript.answer import AssistantMessageView


def test_node_in_a_subwindow_restyles_on_palette_change(qtbot: Any, make_env: Any) -> None:
    env: NodeEnv = make_env()
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    before = (app.palette(), app.styleSheet(), app.style().name(), theme._current, theme._current_applied)
    window = QMainWindow()
    qtbot.addWidget(window)
    area = QMdiArea()
    window.setCentralWidget(area)
    node = ChatNodeWidget(env.node.to_state(), env.services)
    area.addSubWindow(node).show()
    window.show()
    qtbot.waitExposed(window)
    append_message(node.conversation, "user", "hello")
    node.transcript.flush()
    env.bridge.broadcast(node.node_id, Delta("an answer", message_id="a1"))
    env.bridge.broadcast(node.node_id, Done("end_turn", message_id="a1"))
    light_sheet = node.styleSheet()
    assert not is_dark(app.palette())
    try:
        theme.apply_theme(app, "dark")  # what the app does when the system scheme changes
        dark = node_colors(app.palette())
        qtbot.waitUntil(lambda: dark.user_bubble in node.styleSheet())
        assert node.styleSheet() != light_sheet
        view = node.transcript.view_for("a1")
        assert isinstance(view, AssistantMessageView)
        assert node.transcript.theme.text == dark.text  # Markdown re-rendered with the dark colours
    finally:
        palette, sheet, style, theme._current, theme._current_applied = before
        app.setStyle(style)
        app.setPalette(palette)  # the palette first, then the style sheet, as apply_theme does
        app.setStyleSheet(sheet)
        node.shutdown()
    qtbot.waitUntil(lambda: dark.user_bubble not in node.styleSheet())  # and back to light


def test_scroll_bars_are_drawn_from_the_theme_not_by_fusion(qtbot: Any) -> None:
    """Thin themed bars: a flat handle in the scheme's border colour, no arrow buttons. (Fusion's own
    bar, gradients drawn on every paint, cost ~1.7 ms per frame of a streaming transcript.)"""
    from PySide6.QtWidgets import QLabel, QScrollArea

    area = QScrollArea()
    qtbot.addWidget(area)
    area.setWidget(QLabel("\n".join(f"line {i}" for i in range(400))))
    area.resize(300, 400)
    area.show()
    qtbot.waitExposed(area)
    for scheme in ("light", "dark"):
        # The app's style sheet (what apply_theme installs app-wide), on this widget only: restyling
        # the whole application would repolish every widget earlier tests left alive.
        area.setStyleSheet(theme.style_sheet(scheme))
        bar = area.verticalScrollBar()
        qtbot.waitUntil(lambda bar=bar: bar.width() == 12)
        bar.setValue(bar.maximum() // 2)
        image = bar.grab().toImage()
        handle = image.pixelColor(image.width() // 2, image.height() // 2)
        assert handle.name() == theme.colors_for(scheme).border, scheme
        # No arrow buttons: the handle reaches (within its 2 px margin) the bar's end at the maximum.
        bar.setValue(bar.maximum())
        image = bar.grab().toImage()
        end = image.pixelColor(image.width() // 2, image.height() - 4)
        assert end.name() == theme.colors_for(scheme).border
