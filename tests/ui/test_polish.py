"""Polish seen in screenshots (issue 25, items 8 and three of 6): arrows on combo and spin boxes, no icons
on OK/Cancel, a Tools menu that starts with its title, Copy says "Copied", the key row keeps the Test
connection button still, the built-in prices shown with a filter, the slash popup's descriptions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QApplication,
    QDialogButtonBox,
    QLineEdit,
    QPlainTextEdit,
    QTableWidget,
    QToolButton,
)
from test_app_support import fake_provider_entry, write_settings
from test_code_blocks import assistant_view

from desktop.core.chat.cost import DEFAULT_PRICES
from desktop.testing import FakeProvider
from desktop.ui.markdown.view import COPIED_MS
from desktop.ui.node.input import SLASH_COMPLETIONS
from desktop.ui.settings.dialog import SettingsDialog
from desktop.ui.theme import resource_dir, style_sheet

pytest_plugins = ["test_app_support"]  # fixtures: fake, make_context, open_window

LEFT = Qt.MouseButton.LeftButton


def test_combo_and_spin_boxes_get_arrow_images_and_buttons_no_icons() -> None:
    folder = resource_dir()
    assert folder is not None
    for scheme in ("light", "dark"):
        sheet = style_sheet(scheme)
        for name in (f"arrow-down-{scheme}.png", f"arrow-up-{scheme}.png"):
            assert (folder / "icons" / name).is_file() and name in sheet
        assert "QSpinBox::up-arrow" in sheet and "QComboBox::down-arrow" in sheet
        assert "dialogbuttonbox-buttons-have-icons: 0" in sheet


def test_ok_and_cancel_have_no_icons(qtbot: Any, make_context: Any) -> None:
    from PySide6.QtWidgets import QWidget

    host = QWidget()  # the app's style sheet on a parent only: restyling the whole app would repolish
    qtbot.addWidget(host)  # every widget earlier tests left alive
    host.setStyleSheet(style_sheet("light"))
    dialog = SettingsDialog(make_context(), parent=host)
    box = dialog.findChild(QDialogButtonBox, "dialogButtons")
    for which in (QDialogButtonBox.StandardButton.Ok, QDialogButtonBox.StandardButton.Cancel):
        assert box.button(which).icon().isNull()


def test_the_key_row_keeps_test_connection_in_place(qtbot: Any, make_context: Any) -> None:
    dialog = SettingsDialog(make_context())
    qtbot.addWidget(dialog)
    dialog.resize(820, 600)
    dialog.show()
    qtbot.waitExposed(dialog)
    dialog.select_provider("openai")  # two lines of hints ("Or set $…") under an empty key
    qtbot.waitUntil(lambda: "environment" in dialog.key_status.text())
    before = dialog.test_button.mapTo(dialog, dialog.test_button.rect().topLeft())
    qtbot.keyClicks(dialog.key_edit, "sk-typed")  # one line: "New key: stored when you press OK."
    assert dialog.key_status.text() == "New key: stored when you press OK."
    QApplication.processEvents()
    assert dialog.test_button.mapTo(dialog, dialog.test_button.rect().topLeft()) == before


def test_built_in_prices_are_listed_read_only_with_a_filter(qtbot: Any, make_context: Any) -> None:
    dialog = SettingsDialog(make_context())
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.tabs.setCurrentWidget(dialog.prices_page)
    builtin = dialog.findChild(QTableWidget, "builtinPricesTable")
    assert builtin.rowCount() == len(DEFAULT_PRICES)
    assert builtin.editTriggers() == QTableWidget.EditTrigger.NoEditTriggers
    names = [builtin.item(r, 0).text() for r in range(builtin.rowCount())]
    row = names.index("gpt-4o-mini")
    assert [builtin.item(row, c).text() for c in range(1, 5)] == ["0.15", "0.6", "0.075", ""]
    dialog.add_price_row("my-gpt-4o-tune", 1.0, 2.0)
    qtbot.keyClicks(dialog.findChild(QLineEdit, "priceFilterEdit"), "4O-MINI")
    shown = [names[r] for r in range(builtin.rowCount()) if not builtin.isRowHidden(r)]
    assert shown and all("4o-mini" in n for n in shown)
    assert dialog.price_table.isRowHidden(0)  # the filter applies to your prices too
    builtin.cellDoubleClicked.emit(row, 0)  # double-click: override it
    new = dialog.price_table.rowCount() - 1
    assert [dialog.price_table.item(new, c).text() for c in range(5)] == [
        "gpt-4o-mini", "0.15", "0.6", "0.075", ""]


def test_code_copy_says_copied_for_a_moment(qtbot: Any) -> None:
    view = assistant_view(qtbot, "```python\nprint('hi')\n```")
    button = next(b for b in view.findChildren(QToolButton, "copyCodeButton") if b.isVisible())
    qtbot.mouseClick(button, LEFT)
    assert QApplication.clipboard().text() == "print('hi')"
    assert button.text() == "Copied"
    qtbot.waitUntil(lambda: button.text() == "Copy", timeout=COPIED_MS + 5000)


def test_the_tools_menu_starts_with_its_title(qtbot: Any, open_window: Any, fake: FakeProvider,
                                              tmp_path: Path) -> None:
    write_settings(tmp_path / "config", fake_provider_entry(fake), default="fake")
    window = open_window(tmp_path / "project", tmp_path / "config")
    tools = window.nodes()[0].node_tools
    tools.menu.aboutToShow.emit()  # what opening it from the Tools button does first
    first = tools.menu.actions()[0]
    assert not first.isSeparator() and first.text() == "Built-in tools" and not first.isEnabled()


def test_the_window_title_names_the_app_once(qtbot: Any, open_window: Any, tmp_path: Path) -> None:
    window = open_window(tmp_path / "My project", tmp_path / "config")
    assert window.windowTitle() == "My project — Chat Nodes"
    window.try_demo()
    assert window.windowTitle() == "My project (offline demo) — Chat Nodes"  # ends with the app name


def test_the_slash_popup_shows_what_each_command_does(qtbot: Any, open_window: Any, fake: FakeProvider,
                                                      tmp_path: Path) -> None:
    write_settings(tmp_path / "config", fake_provider_entry(fake), default="fake")
    window = open_window(tmp_path / "project", tmp_path / "config")
    box = window.nodes()[0].findChild(QPlainTextEdit, "chatInput")
    box.setFocus()
    qtbot.waitUntil(box.hasFocus, timeout=10_000)
    qtbot.keyClicks(box, "/")
    qtbot.waitUntil(box.completion_visible, timeout=10_000)
    popup = box.completer().popup()
    model = popup.model()
    rows = [(model.index(r, 0).data(), model.index(r, 1).data()) for r in range(model.rowCount())]
    assert rows == list(SLASH_COMPLETIONS)
    assert not popup.isColumnHidden(1) and popup.columnWidth(0) < popup.width()
