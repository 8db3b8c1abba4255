"""The branch map: the header's Branches button, a click on a version, a click on a fork link."""

# ruff: noqa: F811 - pytest fixtures imported from test_chat_node_support are parameters here
from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QToolButton, QTreeWidget, QTreeWidgetItem
from test_app_support import fake_provider_entry, write_settings
from test_chat_node_support import make_env  # noqa: F401

from desktop.core.chat.cost import conversation_cost, format_cost
from desktop.testing import FakeProvider, Fault, Turn
from desktop.ui.node.branches import BranchMapDialog
from desktop.ui.node.chat_node import ChatNodeWidget

pytest_plugins = ["test_app_support"]  # fixtures: fake, open_window

USAGE = {"input": 100_000, "output": 10_000, "cache_read": 0, "cache_write": 0}


def texts(node: ChatNodeWidget) -> list[str]:
    return [m.content for m in node.conversation.messages]


def shown(node: ChatNodeWidget) -> list[str]:
    return [t.strip() for t in node.transcript.message_texts()]


def open_map(qtbot: Any, node: ChatNodeWidget) -> BranchMapDialog:
    button = node.findChild(QToolButton, "branchesButton")
    assert button is not None and button.isEnabled()
    qtbot.waitUntil(button.isVisible, timeout=10_000)
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    dialog = node.branches.dialog
    assert dialog is not None and dialog.objectName() == "branchMap"
    qtbot.waitUntil(dialog.isVisible, timeout=10_000)
    return dialog


def item_for(dialog: BranchMapDialog, text: str) -> QTreeWidgetItem | None:
    found = dialog.tree.findItems(text, Qt.MatchFlag.MatchContains | Qt.MatchFlag.MatchRecursive, 0)
    return found[0] if found else None


def row(dialog: BranchMapDialog, text: str) -> QTreeWidgetItem:
    item = item_for(dialog, text)
    assert item is not None, f"no row with {text!r}"
    return item


def click_row(qtbot: Any, dialog: BranchMapDialog, item: QTreeWidgetItem) -> None:
    tree = dialog.findChild(QTreeWidget, "branchTree")
    assert tree is not None
    tree.scrollToItem(item)
    rect = tree.visualItemRect(item)
    assert rect.isValid()
    qtbot.mouseClick(tree.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())


def test_the_map_lists_edits_and_regenerates_and_a_click_switches_the_node(qtbot: Any, make_env: Any) -> None:
    env = make_env()
    node = env.node
    env.fake.script(Turn(text="A1", usage=USAGE), Turn(text="A2", usage=USAGE), Turn(text="A3", usage=USAGE))
    with qtbot.waitSignal(node.run_finished, timeout=10_000):
        node.submit("first")
    with qtbot.waitSignal(node.run_finished, timeout=10_000):
        node.versions.regenerate(node.conversation.messages[1].id)
    a2 = node.conversation.messages[1]
    with qtbot.waitSignal(node.run_finished, timeout=10_000):
        node.versions.edit(node.conversation.messages[0].id, "second")
    assert texts(node) == ["second", "A3"]

    dialog = open_map(qtbot, node)
    summary = dialog.findChild(QLabel, "branchSummary")
    assert summary is not None and "3 branches" in summary.text()
    current = row(dialog, "“second”")
    assert "shown" in current.text(0) and current.text(1) == "2" and current.font(0).bold()
    answers = row(dialog, "↻ Answer to “first” regenerated · 2 answers")
    assert [answers.child(i).text(0) for i in range(answers.childCount())] == ["1/2  “A1”", "2/2  “A2”"]
    a2_row = answers.child(1)
    assert a2_row.text(1) == "1"
    assert a2_row.text(2) == format_cost(conversation_cost([a2], node.model_choice.pricing_model()))
    assert a2_row.text(2).startswith("$")

    click_row(qtbot, dialog, row(dialog, "“A1”"))
    assert texts(node) == ["first", "A1"]
    qtbot.waitUntil(lambda: shown(node) == ["first", "A1"], timeout=10_000)
    assert "shown" in row(dialog, "“A1”").text(0)  # the map follows
    assert "shown" not in row(dialog, "“second”").text(0)

    click_row(qtbot, dialog, row(dialog, "“second”"))
    assert texts(node) == ["second", "A3"]
    qtbot.waitUntil(lambda: shown(node) == ["second", "A3"], timeout=10_000)


def test_rows_read_as_words_not_markdown(qtbot: Any, make_env: Any) -> None:
    env = make_env()
    node = env.node
    env.fake.script(Turn(text="## Plan for **the** week\n\n- day one"),
                    Turn(text="`code` first, then *rest*"))
    with qtbot.waitSignal(node.run_finished, timeout=10_000):
        node.submit("> quoted **ask**")
    with qtbot.waitSignal(node.run_finished, timeout=10_000):
        node.versions.regenerate(node.conversation.messages[1].id)
    dialog = open_map(qtbot, node)
    assert item_for(dialog, "↻ Answer to “quoted ask” regenerated") is not None
    answers = row(dialog, "regenerated")
    assert [answers.child(i).text(0).split("   ")[0] for i in range(answers.childCount())] == [
        "1/2  “Plan for the week day one”", "2/2  “code first, then rest”"]
    assert not any(mark in dialog.tree.topLevelItem(0).text(0) for mark in ("**", "##", "`"))


def test_keys_reach_a_branch_and_a_busy_node_says_why_it_does_not_switch(qtbot: Any, make_env: Any) -> None:
    env = make_env()
    node = env.node
    slow = Turn(text="word " * 300, chunk_chars=5, fault=Fault.stall(after_events=10, seconds=3600))
    env.fake.script(Turn(text="A1"), Turn(text="A2"), slow)
    with qtbot.waitSignal(node.run_finished, timeout=10_000):
        node.submit("q")
    with qtbot.waitSignal(node.run_finished, timeout=10_000):
        node.versions.regenerate(node.conversation.messages[1].id)
    dialog = open_map(qtbot, node)
    tree = dialog.tree
    tree.setFocus()
    for _ in range(3):  # the shown conversation, the point, answer 1
        qtbot.keyClick(tree, Qt.Key.Key_Down)
    assert tree.currentItem() is row(dialog, "“A1”")
    qtbot.keyClick(tree, Qt.Key.Key_Return)
    assert texts(node) == ["q", "A1"]
    node.submit("long one")
    qtbot.waitUntil(lambda: len(node.conversation.messages) == 4, timeout=10_000)  # streaming
    assert node.is_busy()
    click_row(qtbot, dialog, row(dialog, "“A2”"))
    note = dialog.findChild(QLabel, "branchNote")
    assert note is not None and note.isVisible() and "answering" in note.text()
    assert texts(node)[:2] == ["q", "A1"]
    node.stop()
    qtbot.waitUntil(lambda: not node.is_busy(), timeout=10_000)


def test_without_versions_the_map_says_how_to_make_one(qtbot: Any, make_env: Any) -> None:
    env = make_env()
    env.fake.script(Turn(text="A1", usage=USAGE))
    with qtbot.waitSignal(env.node.run_finished, timeout=10_000):
        env.node.submit("only")
    dialog = open_map(qtbot, env.node)
    assert row(dialog, "Shown conversation").text(1) == "2"
    assert item_for(dialog, "No branches yet") is not None


def test_a_fork_link_shows_the_forked_node(
    qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path
) -> None:
    project, config = tmp_path / "project", tmp_path / "config"
    write_settings(config, fake_provider_entry(fake), default="fake", model="gpt-4o-mini")
    window = open_window(project, config)
    node = window.nodes()[0]
    fake.script(Turn(text="A1", usage=USAGE))
    with qtbot.waitSignal(node.run_finished, timeout=10_000):
        node.submit("q1")
    node.versions.fork(node.conversation.messages[1].id)
    fork = window.nodes()[1]
    fork.set_title("Other way")
    window.node_area.focus_node(node)
    qtbot.waitUntil(lambda: window.active_node() is node, timeout=10_000)

    dialog = open_map(qtbot, node)
    link = row(dialog, "↗ Fork: Other way")
    assert "“A1”" in link.text(0)
    click_row(qtbot, dialog, link)
    qtbot.waitUntil(lambda: window.active_node() is fork, timeout=10_000)
    assert not dialog.isVisible()
    fork_map = open_map(qtbot, fork)  # the fork's own map: no versions, no forks of its own
    assert item_for(fork_map, "No branches yet") is not None


def test_the_map_follows_a_switch_to_dark(qtbot: Any, make_env: Any) -> None:
    from PySide6.QtWidgets import QApplication

    from desktop.ui import theme
    from desktop.ui.node.style import node_colors

    env = make_env()
    env.fake.script(Turn(text="A1"), Turn(text="A2"))
    with qtbot.waitSignal(env.node.run_finished, timeout=10_000):
        env.node.submit("q")
    with qtbot.waitSignal(env.node.run_finished, timeout=10_000):
        env.node.versions.regenerate(env.node.conversation.messages[1].id)
    dialog = open_map(qtbot, env.node)
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    before = (app.palette(), app.styleSheet(), app.style().name(), theme._current, theme._current_applied)
    try:
        theme.apply_theme(app, "dark")
        dark = node_colors(app.palette())
        qtbot.waitUntil(lambda: dark.base in dialog.styleSheet())
        assert row(dialog, "“A2”").background(0).color().name() == dark.user_bubble  # the shown one
    finally:
        palette, sheet, style, theme._current, theme._current_applied = before
        app.setStyle(style)
        app.setPalette(palette)
        app.setStyleSheet(sheet)
    qtbot.waitUntil(lambda: dark.base not in dialog.styleSheet())
