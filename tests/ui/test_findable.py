"""Findable (issue 25 #6): the sidebar, File → Recent projects, automatic titles, the system-prompt
field and Help → Keyboard shortcuts, driven through the real widgets and menus."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from first_hour_support import menu_action, open_with_fake, press, seed, trigger
from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QApplication, QMenu, QTableWidget

from desktop.testing import FakeProvider, Turn

pytest_plugins = ["test_app_support"]  # fixtures: fake, open_window


def _type_and_send(qtbot: Any, node: Any, text: str) -> None:
    qtbot.keyClicks(node.chat_input, text)
    with qtbot.waitSignal(node.run_finished, timeout=10_000):
        qtbot.keyClick(node.chat_input, Qt.Key.Key_Return)


def test_the_sidebar_lists_the_nodes_and_a_click_goes_to_one(
    qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path
) -> None:
    window = open_with_fake(open_window, fake, tmp_path)
    first = window.nodes()[0]
    fake.script(Turn(text="an answer", usage={"input": 1000, "output": 500}))
    _type_and_send(qtbot, first, "What is a monad, in one line?")
    second = seed(window, "Second thoughts")
    action = menu_action(window, "sidebarAction")
    assert not action.isChecked() and window.nav.sidebar.isHidden()
    press(qtbot, "Ctrl+B", second.chat_input)
    sidebar = window.nav.sidebar
    qtbot.waitUntil(sidebar.isVisible, timeout=10_000)
    assert action.isChecked()
    qtbot.waitUntil(lambda: sidebar.nodes.count() == 2, timeout=10_000)
    row = sidebar.nodes.item_of(first.node_id)
    assert row is not None
    text = row.toolTip()
    assert first.title in text and "gpt-4o-mini" in text and "just now" in text and "$" in text
    assert sidebar.nodes.item_of(second.node_id) is not None
    # A click on the first row makes that node the active one, the keys in its message box.
    rect = sidebar.nodes.visualItemRect(row)
    qtbot.mouseClick(sidebar.nodes.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert window.active_node() is first and QApplication.focusWidget() is first.chat_input
    # A rename shows up.
    first.set_title("Monads")
    qtbot.waitUntil(lambda: "Monads" in sidebar.nodes.item_of(first.node_id).toolTip(), timeout=10_000)
    press(qtbot, "Ctrl+B", first.chat_input)
    qtbot.waitUntil(lambda: not sidebar.isVisible(), timeout=10_000)
    assert not action.isChecked()


def test_recent_projects_most_recent_first_missing_ones_marked_and_pruned(
    qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path
) -> None:
    window = open_with_fake(open_window, fake, tmp_path, "alpha")
    qtbot.waitUntil(lambda: (tmp_path / "config" / "recent-projects.json").is_file(), timeout=10_000)
    recent = tmp_path / "config" / "recent-projects.json"
    window.open_project(tmp_path / "beta")
    window.open_project(tmp_path / "gamma")
    qtbot.waitUntil(lambda: "gamma" in recent.read_text(encoding="utf-8"), timeout=10_000)
    menu = window.findChild(QMenu, "recentProjectsMenu")
    assert menu is not None and menu.menuAction() in window.menuBar().actions()[0].menu().actions()

    def entries() -> list[QAction]:
        menu.aboutToShow.emit()  # what opening the submenu does
        return [a for a in menu.actions() if a.objectName() == "recentProjectAction"]

    assert [Path(a.data()).name for a in entries()] == ["gamma", "beta", "alpha"]
    (tmp_path / "beta" / "project.json").unlink()
    listed = entries()
    assert [a.isEnabled() for a in listed] == [True, False, True] and "(missing)" in listed[1].text()
    prune = next(a for a in menu.actions() if a.objectName() == "pruneRecentAction")
    assert prune.isEnabled()
    prune.trigger()
    listed = entries()
    assert [Path(a.data()).name for a in listed] == ["gamma", "alpha"]
    listed[1].trigger()  # one click reopens alpha
    assert window.project_dir == (tmp_path / "alpha").resolve()
    qtbot.waitUntil(lambda: json.loads(recent.read_text(encoding="utf-8"))["projects"][0]["path"].endswith(
        "alpha"), timeout=10_000)
    assert json.loads(recent.read_text(encoding="utf-8"))["version"] == 1


def test_the_first_message_names_the_node_and_a_given_name_stays(
    qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path
) -> None:
    window = open_with_fake(open_window, fake, tmp_path)
    node = window.nodes()[0]
    assert node.title == "Chat"
    fake.script(Turn(text="Use sorted(key=...)."), Turn(text="Sure."))
    _type_and_send(qtbot, node, "how do I sort a list of tuples by the second item?")
    assert node.title == "How do I sort a list…"
    assert window.subwindow_of(node).windowTitle() == node.title
    _type_and_send(qtbot, node, "and in reverse?")
    assert node.title == "How do I sort a list…"  # only the first exchange names it
    named = seed(window, "My research")
    fake.script(Turn(text="ok"))
    _type_and_send(qtbot, named, "hello there")
    assert named.title == "My research"
    assert window.save_project()
    saved = json.loads((tmp_path / "project" / "project.json").read_text(encoding="utf-8"))
    assert saved["nodes"][0]["title"] == "How do I sort a list…"


def test_the_system_prompt_field_shows_what_system_sets_and_what_is_sent(
    qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path
) -> None:
    window = open_with_fake(open_window, fake, tmp_path)
    node = window.nodes()[0]
    field = node.system_field
    assert field.isVisible() and not field.editor.isVisible()  # collapsed by default
    assert "System prompt: none" in field.toggle.text()
    qtbot.keyClicks(node.chat_input, "/system Answer like a pirate.")
    qtbot.keyClick(node.chat_input, Qt.Key.Key_Return)
    assert node.system == "Answer like a pirate."
    assert "Answer like a pirate." in field.toggle.text()
    qtbot.mouseClick(field.toggle, Qt.MouseButton.LeftButton)
    assert field.editor.isVisible() and field.editor.toPlainText() == "Answer like a pirate."
    field.editor.selectAll()
    qtbot.keyClicks(field.editor, "Be terse.")
    assert node.system == "Be terse."
    fake.script(Turn(text="Aye."))
    _type_and_send(qtbot, node, "hi")
    body = json.loads(next(r.body for r in reversed(fake.requests) if r.method == "POST"))
    assert body["messages"][0] == {"role": "system", "content": "Be terse."}
    qtbot.mouseClick(field.toggle, Qt.MouseButton.LeftButton)
    assert not field.editor.isVisible() and "Be terse." in field.toggle.text()
    assert window.save_project()
    saved = json.loads((tmp_path / "project" / "project.json").read_text(encoding="utf-8"))
    assert saved["nodes"][0]["data"]["system"] == "Be terse."


def test_keyboard_shortcuts_lists_every_action_shortcut_even_new_ones(
    qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path
) -> None:
    window = open_with_fake(open_window, fake, tmp_path)
    for name in ("tileAction", "tabbedAction", "usageAction"):
        assert not menu_action(window, name).shortcut().isEmpty(), name
    late = QAction("Frobnicate", window)
    late.setShortcuts([QKeySequence("Ctrl+Alt+F")])
    node_menu = next(a.menu() for a in window.menuBar().actions() if a.text() == "&Node")
    node_menu.addAction(late)  # added to the Node menu by someone, later
    trigger(window, "shortcutsAction")
    table = window.findChild(QTableWidget, "shortcutsTable")
    qtbot.waitUntil(lambda: table is not None and table.isVisible(), timeout=10_000)
    rows = [tuple(table.item(r, c).text() for c in range(3)) for r in range(table.rowCount())]
    keys = {r[2] for r in rows}
    native = {name: QKeySequence(name).toString(QKeySequence.SequenceFormat.NativeText)
              for name in ("Ctrl+N", "Ctrl+W", "Ctrl+Shift+T", "F2", "Ctrl+B", "Ctrl+Alt+F", "Ctrl+/")}
    assert set(native.values()) <= keys
    assert ("Node", "Frobnicate", native["Ctrl+Alt+F"]) in rows
    for name in ("tileAction", "tabbedAction", "usageAction"):
        shortcut = menu_action(window, name).shortcut().toString(QKeySequence.SequenceFormat.NativeText)
        assert shortcut in keys
    assert any(r[2] == "Shift+Enter" for r in rows)
    # The Tile shortcut works.
    window.findChild(QTableWidget, "shortcutsTable").window().close()
    seed(window, "Two")
    window.subwindow_of(window.nodes()[0]).setGeometry(10, 10, 300, 300)
    press(qtbot, menu_action(window, "tileAction").shortcut().toString(), window.nodes()[0].chat_input)
    assert window.node_area.layout_mode == "tiled"
