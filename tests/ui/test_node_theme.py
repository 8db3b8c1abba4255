"""A node inside a window follows a light/dark switch of the application palette at run time."""
# ruff: noqa: F811 - pytest fixtures imported from test_chat_node_support are parameters here

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QApplication, QMainWindow, QMdiArea
from test_chat_node_support import NodeEnv, make_env  # noqa: F401

from desktop.core.chat.conversation import append_message
from desktop.core.chat.types import Delta, Done
from desktop.ui import theme
from desktop.ui.chat_node import ChatNodeWidget
from desktop.ui.node_style import is_dark, node_colors
from desktop.ui.transcript import AssistantMessageView


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
