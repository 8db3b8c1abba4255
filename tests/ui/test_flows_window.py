"""The window's flows as a user drives them (issue 31 item 3): Settings with Ctrl+, (a field changed,
a key typed, OK clicked), the toolbar's New chat, the sidebar (Ctrl+B), Tile and Tabbed (Ctrl+Shift+L,
Ctrl+Shift+M), the usage dashboard (Ctrl+Shift+D), the shortcuts list (Ctrl+/), Node → Delete node…
clicked in the menu bar and confirmed, and File → Import… clicked, a file typed in the chooser."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from first_hour_support import activate, focus, menu_action, open_with_fake, press, seed
from flows_support import child, click, click_menu_item, click_ok, replace_text, top_level, type_text
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QApplication,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QLabel,
    QLineEdit,
    QListWidget,
    QMdiArea,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QTabBar,
    QTableWidget,
    QToolBar,
    QTreeWidget,
)
from test_app_support import fake_provider_entry, write_settings

from desktop.testing import FakeProvider, Turn

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "importers"))
from import_builders import branchy_claude, write_json  # noqa: E402 (the importers' own builders)

pytest_plugins = ["test_app_support"]  # fixtures: fake, open_window

KEY = "sk-flows-0123456789-ABCD"
USAGE = {"input": 100_000, "output": 10_000, "cache_read": 0, "cache_write": 0}


def _send_by_keys(qtbot: Any, node: Any, text: str) -> None:
    type_text(qtbot, node.chat_input, text)
    with qtbot.waitSignal(node.run_finished, timeout=10_000):
        qtbot.keyClick(node.chat_input, Qt.Key.Key_Return)


def _open_settings(qtbot: Any, window: Any) -> Any:
    activate(window)
    press(qtbot, "Ctrl+,", window.nodes()[0].chat_input)
    return top_level(qtbot, QDialog, "settingsDialog")


def _show_tab(qtbot: Any, dialog: Any, title: str) -> None:
    bar = dialog.tabs.tabBar()
    (index,) = [i for i in range(bar.count()) if bar.tabText(i) == title]
    qtbot.mouseClick(bar, Qt.MouseButton.LeftButton, pos=bar.tabRect(index).center())
    assert dialog.tabs.currentIndex() == index


def _saved_settings(config: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((config / "settings.json").read_text(encoding="utf-8"))
    return data


def test_ctrl_comma_a_changed_field_and_ok_persist(qtbot: Any, open_window: Any, fake: FakeProvider,
                                                   tmp_path: Path) -> None:
    window = open_with_fake(open_window, fake, tmp_path)
    config = tmp_path / "config"
    dialog = _open_settings(qtbot, window)
    _show_tab(qtbot, dialog, "General")
    spin = child(dialog, QSpinBox, "historyCapSpin")
    replace_text(qtbot, spin, "64")
    assert spin.text() == "64 KiB"
    click_ok(qtbot, dialog)
    qtbot.waitUntil(lambda: not dialog.isVisible(), timeout=10_000)
    assert _saved_settings(config)["history_cap_kib"] == 64
    assert window.context.settings.history_cap_kib == 64
    again = _open_settings(qtbot, window)  # shown as saved the next time
    assert child(again, QSpinBox, "historyCapSpin").text() == "64 KiB"
    qtbot.keyClick(again, Qt.Key.Key_Escape)  # Escape cancels
    qtbot.waitUntil(lambda: not again.isVisible(), timeout=10_000)


def _pick_provider(qtbot: Any, dialog: Any, name: str) -> None:
    providers = child(dialog, QListWidget, "providerList")
    (row,) = [providers.item(i) for i in range(providers.count())
              if providers.item(i).text().startswith(name)]
    qtbot.mouseClick(providers.viewport(), Qt.MouseButton.LeftButton,
                     pos=providers.visualItemRect(row).center())
    assert providers.currentItem() is row


def test_a_key_typed_in_settings_and_ok_go_to_the_keyring_and_the_requests(
    qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path, memory_keyring: Any
) -> None:
    config = tmp_path / "config"
    write_settings(config, fake_provider_entry(fake, needs_key=True), default="fake", model="gpt-4o-mini")
    window = open_with_fake(open_window, fake, tmp_path)
    dialog = _open_settings(qtbot, window)
    _pick_provider(qtbot, dialog, "Fake")
    edit = child(dialog, QLineEdit, "apiKeyEdit")
    type_text(qtbot, edit, KEY)
    assert edit.text() == KEY and edit.echoMode() == QLineEdit.EchoMode.Password
    click_ok(qtbot, dialog)
    qtbot.waitUntil(lambda: not dialog.isVisible(), timeout=10_000)
    assert memory_keyring.passwords[("chatnodes", "fake")] == KEY
    assert KEY not in (config / "settings.json").read_text(encoding="utf-8")
    fake.script(Turn(text="keyed answer"))
    node = window.nodes()[0]
    _send_by_keys(qtbot, node, "with a key")
    assert node.conversation.messages[-1].content == "keyed answer"
    (post,) = [r for r in fake.requests if r.method == "POST"]
    assert post.headers["authorization"] == f"Bearer {KEY}"
    again = _open_settings(qtbot, window)
    _pick_provider(qtbot, again, "Fake")
    edit = child(again, QLineEdit, "apiKeyEdit")
    assert (edit.text(), edit.placeholderText()) == ("", "••••••••ABCD")
    qtbot.keyClick(again, Qt.Key.Key_Escape)


def test_the_new_chat_button_opens_a_node_ready_to_type_in(qtbot: Any, open_window: Any, fake: FakeProvider,
                                                            tmp_path: Path) -> None:
    window = open_with_fake(open_window, fake, tmp_path)
    first = window.nodes()[0]
    bar = child(window, QToolBar, "mainToolBar")
    button = bar.widgetForAction(menu_action(window, "newNodeAction"))
    assert button.text() == "+  New chat"
    click(qtbot, button)
    assert len(window.nodes()) == 2
    new = window.nodes()[1]
    assert window.active_node() is new and new is not first
    qtbot.waitUntil(lambda: QApplication.focusWidget() is new.chat_input, timeout=10_000)
    fake.script(Turn(text="hello from the new node"))
    _send_by_keys(qtbot, new, "hi")
    assert [m.content for m in new.conversation.messages] == ["hi", "hello from the new node"]
    assert first.conversation.messages == []


def test_ctrl_b_shows_the_nodes_a_click_there_focuses_one(qtbot: Any, open_window: Any, fake: FakeProvider,
                                                           tmp_path: Path) -> None:
    window = open_with_fake(open_window, fake, tmp_path)
    window.nodes()[0].set_title("Alpha")
    beta = seed(window, "Beta", "q", "a")
    focus(window, beta)
    sidebar = window.nav.sidebar
    assert not sidebar.isVisible()
    press(qtbot, "Ctrl+B", beta.chat_input)
    qtbot.waitUntil(sidebar.isVisible, timeout=10_000)
    assert menu_action(window, "sidebarAction").isChecked()
    rows = child(sidebar, QListWidget, "sidebarNodes")
    qtbot.waitUntil(lambda: [rows.item(i).text() for i in range(rows.count())] == ["Alpha", "Beta"],
                    timeout=10_000)
    qtbot.mouseClick(rows.viewport(), Qt.MouseButton.LeftButton,
                     pos=rows.visualItemRect(rows.item(0)).center())
    assert window.active_node() is window.nodes()[0]
    press(qtbot, "Ctrl+B", window.nodes()[0].chat_input)
    qtbot.waitUntil(lambda: not sidebar.isVisible(), timeout=10_000)
    assert not menu_action(window, "sidebarAction").isChecked()


def test_ctrl_shift_l_tiles_and_ctrl_shift_m_switches_to_tabs_and_back(
    qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path
) -> None:
    window = open_with_fake(open_window, fake, tmp_path)
    window.nodes()[0].set_title("One")
    seed(window, "Two")
    three = seed(window, "Three")
    focus(window, three)
    press(qtbot, "Ctrl+Shift+L", three.chat_input)
    area = window.mdi.viewport().rect()
    rects = [window.subwindow_of(n).geometry() for n in window.nodes()]
    assert all(area.contains(r) for r in rects)
    assert not any(a.intersects(b) for i, a in enumerate(rects) for b in rects[i + 1:])
    press(qtbot, "Ctrl+Shift+M", three.chat_input)
    assert window.mdi.viewMode() == QMdiArea.ViewMode.TabbedView
    assert menu_action(window, "tabbedAction").isChecked()
    tabs = window.mdi.findChild(QTabBar)
    assert [tabs.tabText(i) for i in range(tabs.count())] == ["One", "Two", "Three"]
    press(qtbot, "Ctrl+Shift+M", window.active_node().chat_input)
    assert window.mdi.viewMode() == QMdiArea.ViewMode.SubWindowView
    assert not menu_action(window, "tabbedAction").isChecked()


def test_ctrl_shift_d_opens_the_dashboard_on_what_was_spent(qtbot: Any, open_window: Any, fake: FakeProvider,
                                                            tmp_path: Path) -> None:
    window = open_with_fake(open_window, fake, tmp_path)
    node = window.nodes()[0]
    fake.script(Turn(text="one", usage=USAGE, model="gpt-4o-mini"))
    _send_by_keys(qtbot, node, "q1")
    press(qtbot, "Ctrl+Shift+D", node.chat_input)
    dialog = top_level(qtbot, QDialog, "usageDialog")
    qtbot.waitUntil(lambda: dialog.summary is not None, timeout=10_000)  # read on a worker thread
    assert child(dialog, QLabel, "monthTotal").text() == "$0.0210"  # 100k in, 10k out at gpt-4o-mini's prices
    qtbot.keyClick(dialog, Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: not dialog.isVisible(), timeout=10_000)


def test_ctrl_slash_lists_the_shortcuts(qtbot: Any, open_window: Any, fake: FakeProvider,
                                        tmp_path: Path) -> None:
    window = open_with_fake(open_window, fake, tmp_path)
    press(qtbot, "Ctrl+/", window.nodes()[0].chat_input)
    dialog = top_level(qtbot, QDialog, "shortcutsDialog")
    table = child(dialog, QTableWidget, "shortcutsTable")
    rows = [tuple(table.item(r, c).text() for c in range(3)) for r in range(table.rowCount())]
    for row in [("Node", "Reopen closed node", "Ctrl+Shift+T"), ("File", "Settings", "Ctrl+,"),
                ("View", "Usage", "Ctrl+Shift+D"), ("Help", "Keyboard shortcuts", "Ctrl+/")]:
        assert row in rows, rows
    qtbot.keyClick(dialog, Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: not dialog.isVisible(), timeout=10_000)


def test_node_menu_delete_asks_and_the_delete_button_removes_it_for_good(
    qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path
) -> None:
    window = open_with_fake(open_window, fake, tmp_path)
    keep = window.nodes()[0]
    victim = seed(window, "Victim", "q", "a")
    focus(window, victim)
    click_menu_item(qtbot, window, "deleteNodeAction")
    box = top_level(qtbot, QMessageBox, "deleteNodeDialog")
    assert box.text() == "Delete \u201cVictim\u201d for good?"
    click(qtbot, child(box, QPushButton, "confirmDeleteButton"))
    qtbot.waitUntil(lambda: window.node_area.node(victim.node_id) is None, timeout=10_000)
    assert window.nodes() == [keep]
    assert window.save_project()
    assert victim.node_id not in (tmp_path / "project" / "project.json").read_text(encoding="utf-8")


def test_file_import_clicked_and_a_file_typed_in_the_chooser(
    qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    (home / "Downloads").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))  # the chooser starts in ~/Downloads, where the export is
    write_json(home / "Downloads" / "conversations.json", [branchy_claude()])
    window = open_with_fake(open_window, fake, tmp_path)
    click_menu_item(qtbot, window, "importAction")
    chooser = child(window, QFileDialog, "importFileDialog")
    qtbot.waitExposed(chooser)
    name = child(chooser, QLineEdit, "fileNameEdit")
    assert Path(chooser.directory().path()) == home / "Downloads"
    type_text(qtbot, name, "conversations.json")
    open_button = chooser.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Open)
    qtbot.waitUntil(open_button.isEnabled, timeout=10_000)  # once the chooser listed the folder
    click(qtbot, open_button)
    qtbot.waitUntil(lambda: window.imports.dialog is not None, timeout=10_000)
    dialog = window.imports.dialog
    qtbot.waitUntil(lambda: dialog.state != "reading", timeout=20_000)
    heading = child(dialog, QLabel, "importHeading").text()
    assert heading == "1 conversation in conversations.json (Claude export)."
    tree = child(dialog, QTreeWidget, "conversationList")
    assert [tree.topLevelItem(i).text(0) for i in range(tree.topLevelItemCount())] == ["Which town"]
    click(qtbot, child(dialog, QPushButton, "importButton"))
    qtbot.waitUntil(lambda: dialog.state == "done", timeout=60_000)
    summary = child(dialog, QPlainTextEdit, "importSummary").toPlainText()
    assert summary == ("Imported 1 conversation (6 messages) — no cost: they were paid for where they were "
                       "written.\n  + Which town (6 messages, 3 branches)")
    (node,) = [n for n in window.nodes() if n.title == "Which town"]
    assert node.conversation.messages[-1].content.endswith("Ravello is quieter.")


def test_settings_mcp_add_form_ok_then_ok_saves_and_starts_the_server(
    qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path
) -> None:
    window = open_with_fake(open_window, fake, tmp_path)
    server = Path(__file__).resolve().parents[1] / "mcp" / "servers" / "stdio_server.py"
    settings = _open_settings(qtbot, window)
    _show_tab(qtbot, settings, "MCP servers")
    click(qtbot, child(settings, QPushButton, "mcpAddButton"))
    form = top_level(qtbot, QDialog, "mcpServerDialog")
    type_text(qtbot, child(form, QLineEdit, "mcpFormName"), "local")
    type_text(qtbot, child(form, QLineEdit, "mcpFormCommand"), sys.executable)
    type_text(qtbot, child(form, QPlainTextEdit, "mcpFormArgs"), str(server))
    click_ok(qtbot, form)
    qtbot.waitUntil(lambda: not form.isVisible(), timeout=10_000)
    assert settings.mcp_page.server_names() == ["local"]
    assert "mcpServers" not in _saved_settings(tmp_path / "config")  # nothing stored before the second OK
    click_ok(qtbot, settings)
    qtbot.waitUntil(lambda: not settings.isVisible(), timeout=10_000)
    assert _saved_settings(tmp_path / "config")["mcpServers"] == {
        "local": {"command": sys.executable, "args": [str(server)]}}

    def ready() -> bool:
        status = window.context.mcp.statuses().get("local")
        return status is not None and status.state == "ready"

    qtbot.waitUntil(ready, timeout=15_000)  # the second OK started the server the form described
