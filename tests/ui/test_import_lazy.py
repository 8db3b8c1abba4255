"""A big import through the window: the few most recent conversations open as nodes, the others are
stored in the project without a widget and listed in the sidebar under Imported (one click opens one),
the search index reads them, and the project reopens with all of them."""

from __future__ import annotations

import json
import sys
import zipfile
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QListWidget, QPushButton, QWidget
from test_app_support import close_window, fake_provider_entry, write_settings
from test_import_dialog import child, choose_export, click, import_and_wait

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "importers"))
from import_builders import branchy_chatgpt, chatgpt_zip, linear_chatgpt  # noqa: E402 (the importers' own builders)

from desktop.core.search._projectfile import read_project  # noqa: E402
from desktop.testing import FakeProvider  # noqa: E402

pytest_plugins = ["test_app_support"]  # fixtures: fake, make_context, open_window

COUNT = 200
OPENED = 5


def imported_list(window: Any) -> QListWidget:
    return child(window, QListWidget, "sidebarImported")


def click_row(qtbot: Any, rows: QListWidget, title: str) -> None:
    """Scroll to the row titled ``title`` and click it with the mouse."""
    (item,) = [rows.item(i) for i in range(rows.count()) if rows.item(i).text() == title]
    rows.scrollToItem(item)
    qtbot.mouseClick(rows.viewport(), Qt.MouseButton.LeftButton, pos=rows.visualItemRect(item).center())


def test_200_conversations_land_in_the_sidebar_and_open_with_one_click(
    qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path
) -> None:
    project, config = tmp_path / "project", tmp_path / "config"
    write_settings(config, fake_provider_entry(fake), default="fake")
    window = open_window(project, config)
    conversations = [linear_chatgpt(4 + i % 7, f"conv-{i:03d}", f"Talk {i:03d}") for i in range(COUNT)]
    export = chatgpt_zip(tmp_path / "export.zip", conversations)
    dialog = choose_export(qtbot, window, export)
    summary = import_and_wait(qtbot, dialog)
    assert f"Imported {COUNT} conversations" in summary
    parked = f"the other {COUNT - OPENED} are in the sidebar"
    assert f"{OPENED} opened as nodes (the most recent); {parked}" in summary
    click(qtbot, child(dialog, QPushButton, "cancelImportButton"))  # Close

    # Only the few most recent have widgets; the sidebar shows the others.
    assert len(window.nodes()) == 1 + OPENED
    sidebar = window.nav.sidebar
    qtbot.waitUntil(sidebar.isVisible, timeout=10_000)
    rows = imported_list(window)
    qtbot.waitUntil(lambda: rows.count() == COUNT - OPENED, timeout=10_000)
    assert child(window, QLabel, "sidebarImportedHeading").text() == f"Imported ({COUNT - OPENED})"
    shown = {n.title for n in window.nodes()[1:]} | {rows.item(i).text() for i in range(rows.count())}
    assert shown == {f"Talk {i:03d}" for i in range(COUNT)}  # every conversation reachable

    # One click opens one, with its messages; its row leaves the list.
    parked_title = rows.item(rows.count() // 2).text()
    click_row(qtbot, rows, parked_title)
    qtbot.waitUntil(lambda: any(n.title == parked_title for n in window.nodes()), timeout=10_000)
    (node,) = [n for n in window.nodes() if n.title == parked_title]
    assert len(node.conversation.messages) >= 4
    qtbot.waitUntil(lambda: rows.count() == COUNT - OPENED - 1, timeout=10_000)
    # Ctrl+Shift+T reopens recently closed nodes, not imported ones never opened.
    assert window.projects.closed.take() is None

    # Saved: the project file holds every conversation, the index reads every one of them.
    assert window.save_project()
    saved = json.loads((project / "project.json").read_text(encoding="utf-8"))
    assert len(saved["nodes"]) == 1 + OPENED + 1
    assert len(saved["closed"]) == COUNT - OPENED - 1  # beyond MAX_CLOSED: parked ones are never evicted
    indexed = {n.title for n in read_project(project).nodes}
    assert {f"Talk {i:03d}" for i in range(COUNT)} <= indexed

    # Reopened: the same nodes open, the same rows in the sidebar.
    close_window(qtbot, window)
    again = open_window(project, config)
    assert len(again.nodes()) == 1 + OPENED + 1
    again.nav.show_sidebar(True)
    rows = imported_list(again)
    qtbot.waitUntil(lambda: rows.count() == COUNT - OPENED - 1, timeout=10_000)
    click_row(qtbot, rows, rows.item(0).text())
    qtbot.waitUntil(lambda: len(again.nodes()) == 1 + OPENED + 2, timeout=10_000)


def test_importing_again_skips_the_parked_ones(
    qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path
) -> None:
    project, config = tmp_path / "project", tmp_path / "config"
    write_settings(config, fake_provider_entry(fake), default="fake")
    window = open_window(project, config)
    export = chatgpt_zip(tmp_path / "export.zip",
                         [linear_chatgpt(4, f"conv-{i:02d}", f"Talk {i:02d}") for i in range(12)])
    import_and_wait(qtbot, choose_export(qtbot, window, export))
    dialog = choose_export(qtbot, window, export)  # the parked ones count as already imported
    assert "12 already imported will be skipped" in child(dialog, QLabel, "importStatus").text()
    assert not child(dialog, QPushButton, "importButton").isEnabled()
    assert len(window.nodes()) == 1 + OPENED
    assert len(window.projects.closed) == 12 - OPENED


def test_an_image_in_the_zip_shows_as_an_attachment_of_its_message(
    qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path
) -> None:
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice
    from PySide6.QtGui import QColor, QImage

    image = QImage(40, 30, QImage.Format.Format_RGB32)
    image.fill(QColor("teal"))
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    assert image.save(buffer, "PNG")
    project, config = tmp_path / "project", tmp_path / "config"
    write_settings(config, fake_provider_entry(fake), default="fake")
    window = open_window(project, config)
    export = chatgpt_zip(tmp_path / "export.zip", [branchy_chatgpt("c1", "Rome trip")])
    with zipfile.ZipFile(export, "a") as zf:
        zf.writestr("file-abc-photo.jpg", bytes(data.data()))
    summary = import_and_wait(qtbot, choose_export(qtbot, window, export))
    assert "1 file of the export attached to their messages" in summary
    (node,) = [n for n in window.nodes() if n.title == "Rome trip"]
    msg = next(m for m in node.conversation.messages if m.content == "What is this place?")
    qtbot.waitUntil(lambda: node.transcript.view_for(msg.id) is not None, timeout=10_000)
    row = node.transcript.view_for(msg.id).attachment_row
    assert row is not None and row.isVisible()
    assert "photo.jpg" in " ".join(w.toolTip() + w.accessibleName() for w in row.findChildren(QWidget))
