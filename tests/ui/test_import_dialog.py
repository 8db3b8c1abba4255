"""File → Import… through the window: the real menu, the file dialog, the preview dialog's checkboxes and
filter, ``importButton``, and what the window shows afterwards (node titles, the shown path, the versions at
each fork), with export files shaped like the real ones (``tests/importers/import_builders.py``)."""

from __future__ import annotations

import json
import sys
import threading
import zipfile
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QCheckBox,
    QDialogButtonBox,
    QFileDialog,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QToolButton,
    QTreeWidget,
    QWidget,
)
from test_app_support import fake_provider_entry, send_and_wait, write_settings

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "importers"))
from import_builders import (  # noqa: E402 (the importers' own builders)
    branchy_chatgpt,
    branchy_claude,
    chatgpt_zip,
    deep_branching_chatgpt,
    linear_chatgpt,
    write_json,
)

from desktop.testing import FakeProvider, Turn  # noqa: E402

pytest_plugins = ["test_app_support"]  # fixtures: fake, make_context, open_window

USAGE = {"input": 100_000, "output": 10_000, "cache_read": 0, "cache_write": 0}


def menu_action(window: Any, name: str) -> QAction:
    """The action ``name`` as it sits in the window's real menu bar."""
    for top in window.menuBar().actions():
        menu = top.menu()
        for action in menu.actions() if menu is not None else []:
            if action.objectName() == name:
                return action
    raise AssertionError(f"no {name} in the menus")


def click(qtbot: Any, button: QWidget) -> None:
    qtbot.waitUntil(button.isVisible, timeout=10_000)
    assert button.isEnabled(), f"{button.objectName()} is disabled"
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)


def child(widget: QWidget, cls: type, name: str) -> Any:
    found = widget.findChild(cls, name)
    assert found is not None, f"no {cls.__name__} named {name}"
    return found


def choose_export(qtbot: Any, window: Any, path: Path) -> Any:
    """File → Import…, pick ``path`` in the file dialog, wait for the preview; returns the import dialog."""
    menu_action(window, "importAction").trigger()
    chooser = child(window, QFileDialog, "importFileDialog")
    qtbot.waitExposed(chooser)
    chooser.selectFile(str(path))
    click(qtbot, chooser.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Open))
    dialog = window.imports.dialog
    assert dialog is not None and dialog.objectName() == "importDialog"
    qtbot.waitUntil(lambda: dialog.state != "reading", timeout=20_000)
    return dialog


def rows(dialog: Any) -> list[tuple[str, ...]]:
    tree = child(dialog, QTreeWidget, "conversationList")
    out = []
    for i in range(tree.topLevelItemCount()):
        item = tree.topLevelItem(i)
        ticked = "x" if item.checkState(0) == Qt.CheckState.Checked else " "
        shown = " " if item.isHidden() else "v"
        out.append((ticked + shown, *(item.text(c) for c in (0, 2, 3, 4))))
    return out


def import_and_wait(qtbot: Any, dialog: Any) -> str:
    click(qtbot, child(dialog, QPushButton, "importButton"))
    qtbot.waitUntil(lambda: dialog.state == "done", timeout=60_000)
    return str(child(dialog, QPlainTextEdit, "importSummary").toPlainText())


def node_titled(window: Any, title: str) -> Any:
    (node,) = [n for n in window.nodes() if n.title == title]
    return node


def view_of(qtbot: Any, node: Any, index: int) -> Any:
    msg = node.conversation.messages[index]
    qtbot.waitUntil(lambda: node.transcript.view_for(msg.id) is not None, timeout=10_000)
    return node.transcript.view_for(msg.id)


def texts(node: Any) -> list[str]:
    return [m.content for m in node.conversation.messages]


def test_import_from_the_file_menu_keeps_the_branches_and_costs_nothing(
    qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path
) -> None:
    project, config = tmp_path / "project", tmp_path / "config"
    write_settings(config, fake_provider_entry(fake), default="fake", model="gpt-4o-mini")
    window = open_window(project, config)
    fake.script(Turn(text="paid answer", usage=USAGE, model="gpt-4o-mini"))
    send_and_wait(qtbot, window.nodes()[0], "a paid question")  # the ledger holds one line before
    ledger = config / "usage.jsonl"
    ledger_before = ledger.read_bytes()
    cost_before = window.session_cost().usd
    chip_before = window.cost_label.text()
    assert cost_before > 0

    broken = {"title": "Broken", "conversation_id": "c-bad", "create_time": 1.0, "mapping": None}
    export = chatgpt_zip(tmp_path / "export.zip", [
        branchy_chatgpt("c-rome", "Rome trip"), linear_chatgpt(2000, "c-long", "Long chat"),
        branchy_chatgpt("c-paris", "Paris weekend"), broken])
    dialog = choose_export(qtbot, window, export)
    assert dialog.state == "picking"
    heading = child(dialog, QLabel, "importHeading").text()
    assert heading == "3 conversations in export.zip (ChatGPT export)."
    assert rows(dialog) == [("xv", "Rome trip", "17", "4", ""), ("xv", "Long chat", "2,000", "1", ""),
                            ("xv", "Paris weekend", "17", "4", "")]
    problems = child(dialog, QLabel, "previewProblems")
    assert problems.isVisible() and "'Broken' (id c-bad): 'mapping' is missing" in problems.text()
    assert not child(dialog, QCheckBox, "replaceCheck").isVisible()  # nothing imported before
    button = child(dialog, QPushButton, "importButton")
    assert button.text() == "Import 3 conversations"

    click(qtbot, child(dialog, QPushButton, "selectNoneButton"))
    assert [r[0] for r in rows(dialog)] == [" v"] * 3 and not button.isEnabled()
    click(qtbot, child(dialog, QPushButton, "selectAllButton"))
    assert [r[0] for r in rows(dialog)] == ["xv"] * 3 and button.text() == "Import 3 conversations"

    # The filter, then "Select none" on what it shows; then a tick by keyboard on the list.
    qtbot.keyClicks(child(dialog, QLineEdit, "importFilter"), "paris")
    assert [r[0] for r in rows(dialog)] == ["x ", "x ", "xv"]
    click(qtbot, child(dialog, QPushButton, "selectNoneButton"))
    child(dialog, QLineEdit, "importFilter").clear()
    assert [r[0] for r in rows(dialog)] == ["xv", "xv", " v"]
    assert button.text() == "Import 2 conversations"
    tree = child(dialog, QTreeWidget, "conversationList")
    tree.setFocus()
    tree.setCurrentItem(tree.topLevelItem(1))
    qtbot.keyClick(tree, Qt.Key.Key_Space)  # untick "Long chat"
    assert [r[0] for r in rows(dialog)] == ["xv", " v", " v"] and button.text() == "Import 1 conversation"
    qtbot.keyClick(tree, Qt.Key.Key_Space)  # and tick it again
    assert button.text() == "Import 2 conversations"

    summary = import_and_wait(qtbot, dialog)
    assert summary.splitlines()[:3] == [
        "Imported 2 conversations (2,017 messages) — no cost: they were paid for where they were written.",
        "  + Rome trip (17 messages, 4 branches)",
        "  + Long chat (2,000 messages)",
    ]
    assert "Left out 1 conversation not selected." in summary
    assert "Could not import 1 conversation (nothing of them was added):" in summary
    assert "'Broken' (id c-bad): 'mapping' is missing" in summary
    assert child(dialog, QPushButton, "cancelImportButton").text() == "Close"

    # The window: the new nodes (the first titled by its question), inside the visible area, the first
    # imported one active.
    assert [n.title for n in window.nodes()] == ["A paid question", "Rome trip", "Long chat"]
    area = window.mdi.viewport().rect()
    for node in window.nodes()[1:]:
        assert area.contains(window.subwindow_of(node).geometry().topLeft())
    rome = node_titled(window, "Rome trip")
    assert window.active_node() is rome
    long_chat = node_titled(window, "Long chat")  # over the 200 KiB history cap: the oldest are archived
    history = window.store.full_history(long_chat.node_id, long_chat.conversation.messages)
    numbers = [m.content.split(":")[0] for m in history if m.role != "note"]
    assert numbers == [f"message {i}" for i in range(2000)]

    # The shown path is the path to current_node; each fork shows its versions, k/n.
    assert texts(rome)[0] == "Plan a 3-day trip to Rome" and texts(rome)[-1] == "The budget is 360 €."
    assert "1/2" in child(view_of(qtbot, rome, 0), QLabel, "versionLabel").text()  # edited into Paris
    assert "2/2" in child(view_of(qtbot, rome, 1), QLabel, "versionLabel").text()  # regenerated
    assert "2/2" in child(view_of(qtbot, rome, 2), QLabel, "versionLabel").text()  # u2 edited
    click(qtbot, child(view_of(qtbot, rome, 2), QToolButton, "prevVersionButton"))
    assert texts(rome)[2:] == ["Make it cheaper", "Cheaper: walk everywhere."]
    click(qtbot, child(view_of(qtbot, rome, 1), QToolButton, "prevVersionButton"))
    assert texts(rome) == ["Plan a 3-day trip to Rome", "Day 1: the Colosseum."]
    click(qtbot, child(view_of(qtbot, rome, 0), QToolButton, "nextVersionButton"))
    assert texts(rome)[0] == "Plan a 3-day trip to Paris"
    assert "2/2" in child(view_of(qtbot, rome, 0), QLabel, "versionLabel").text()

    # No cost: the ledger, the session total and its chip are as before the import.
    assert ledger.read_bytes() == ledger_before
    assert window.session_cost().usd == cost_before and window.cost_label.text() == chip_before
    saved = json.loads((project / "project.json").read_text(encoding="utf-8"))
    assert [n["title"] for n in saved["nodes"]] == ["A paid question", "Rome trip", "Long chat"]
    click(qtbot, child(dialog, QPushButton, "cancelImportButton"))
    qtbot.waitUntil(lambda: window.imports.dialog is None, timeout=10_000)


def test_importing_again_skips_what_is_there_unless_replaced(
    qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path
) -> None:
    project, config = tmp_path / "project", tmp_path / "config"
    write_settings(config, fake_provider_entry(fake), default="fake")
    window = open_window(project, config)
    export = write_json(tmp_path / "conversations.json", [branchy_claude()])
    dialog = choose_export(qtbot, window, export)
    assert rows(dialog) == [("xv", "Which town", "6", "3", "")]
    heading = child(dialog, QLabel, "importHeading").text()
    assert heading == "1 conversation in conversations.json (Claude export)."
    import_and_wait(qtbot, dialog)
    first = node_titled(window, "Which town")
    assert texts(first)[-1].endswith("Ravello is quieter.") and "2/2" in child(
        view_of(qtbot, first, 1), QLabel, "versionLabel").text()
    dialog.close()

    dialog = choose_export(qtbot, window, export)
    assert rows(dialog) == [("xv", "Which town", "6", "3", "already imported")]
    replace = child(dialog, QCheckBox, "replaceCheck")
    button = child(dialog, QPushButton, "importButton")
    assert replace.isVisible() and not button.isEnabled()
    assert "1 already imported will be skipped" in child(dialog, QLabel, "importStatus").text()
    click(qtbot, replace)
    assert button.text() == "Import 1 conversation"
    summary = import_and_wait(qtbot, dialog)
    assert "Replaced 1 node imported before." in summary
    titles = [n.title for n in window.nodes()]
    assert titles == ["Chat", "Which town"] and node_titled(window, "Which town") is not first


@pytest.mark.parametrize(("name", "content", "says"), [
    ("conversations.json", b'[{"title": "Half", "mapping": {"a": ',
     "conversations.json: invalid JSON after the start of the file (about byte 36)"),
    ("export.zip", None, "Nothing was imported: export.zip: no conversations.json (nor conversations-NNN"
                         ".json shards) in the zip; is this a ChatGPT or Claude data export?"),
    ("mine.json", b'{"format": "chatnodes-export", "version": 99, "nodes": []}',
     "Nothing was imported: mine.json: Chat Nodes export version 99 is not known to this app"),
])
def test_an_unreadable_export_says_why_and_imports_nothing(
    qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path, name: str, content: bytes | None,
    says: str
) -> None:
    project, config = tmp_path / "project", tmp_path / "config"
    write_settings(config, fake_provider_entry(fake), default="fake")
    window = open_window(project, config)
    path = tmp_path / name
    if content is None:
        with zipfile.ZipFile(path, "w") as zf:
            zf.writestr("notes.txt", "not an export")
    else:
        path.write_bytes(content)
    dialog = choose_export(qtbot, window, path)
    assert dialog.state == "done"
    status, problems = child(dialog, QLabel, "importStatus"), child(dialog, QLabel, "previewProblems")
    shown = status.text() + "\n" + problems.text()
    assert says in shown
    assert not child(dialog, QPushButton, "importButton").isVisible()
    assert child(dialog, QPushButton, "cancelImportButton").text() == "Close"
    assert [n.title for n in window.nodes()] == ["Chat"]


def test_the_preview_and_the_import_run_off_the_gui_thread(
    qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path
) -> None:
    project, config = tmp_path / "project", tmp_path / "config"
    write_settings(config, fake_provider_entry(fake), default="fake")
    window = open_window(project, config)
    seen: list[str] = []
    flow = window.imports
    for name in ("_read_preview", "_emit"):
        original = getattr(flow, name)

        def record(*args: Any, _original: Any = original) -> Any:
            seen.append(threading.current_thread().name)
            return _original(*args)

        setattr(flow, name, record)
    dialog = choose_export(qtbot, window, write_json(tmp_path / "c.json", [deep_branching_chatgpt(40)]))
    import_and_wait(qtbot, dialog)
    assert threading.main_thread().name not in seen
    assert {"chatnodes-import-preview", "chatnodes-import"} <= set(seen)
    deep = node_titled(window, "Deep")  # 40 nested forks: one node, every branch a version
    assert "2/2" in child(view_of(qtbot, deep, 1), QLabel, "versionLabel").text()


def test_a_read_only_project_refuses_the_import(
    qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path
) -> None:
    project, config = tmp_path / "project", tmp_path / "config"
    write_settings(config, fake_provider_entry(fake), default="fake")
    open_window(project, config)
    second = open_window(project, config)  # the first window holds the project
    assert second.store.read_only
    menu_action(second, "importAction").trigger()
    assert second.findChild(QFileDialog, "importFileDialog") is None and second.imports.dialog is None
    assert "read-only" in second.banner_area.find("importErrorBanner").text()


def test_cancel_while_the_nodes_are_added_keeps_every_conversation(
    qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path
) -> None:
    project, config = tmp_path / "project", tmp_path / "config"
    write_settings(config, fake_provider_entry(fake), default="fake")
    window = open_window(project, config)
    export = chatgpt_zip(tmp_path / "export.zip", [branchy_chatgpt(f"c{i}", f"Chat {i}") for i in range(40)])
    dialog = choose_export(qtbot, window, export)
    click(qtbot, child(dialog, QPushButton, "importButton"))
    qtbot.waitUntil(lambda: dialog.state in ("adding", "done"), timeout=30_000)
    if dialog.state == "adding":  # the few opened as nodes are added a few per event-loop turn
        click(qtbot, child(dialog, QPushButton, "cancelImportButton"))
    qtbot.waitUntil(lambda: dialog.state == "done", timeout=30_000)
    opened = len(window.nodes()) - 1
    assert 0 < opened <= 5
    summary = child(dialog, QPlainTextEdit, "importSummary").toPlainText()
    assert f"the other {40 - opened} are in the sidebar under Imported" in summary
    saved = json.loads((project / "project.json").read_text(encoding="utf-8"))
    assert len(saved["nodes"]) == 1 + opened  # saved once: nothing lost, the rest parked
    assert len(saved["closed"]) == 40 - opened
    assert all(n["importParked"] is True for n in saved["closed"])
