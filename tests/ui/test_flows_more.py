"""More flows as a user drives them (issue 31 item 3): slash commands typed in the input, a model typed
in the node's picker, File → Project budget… chosen and a sum typed, Settings → Providers' Add… menu and
Remove button, a built-in price double-clicked and overridden, Settings → General's budget and default
model typed, Ctrl+Q, Ctrl+E and Ctrl+O (the platform's file dialogs stood in for by the ``QFileDialog``
static call each action makes)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from first_hour_support import activate, open_with_fake, press
from flows_support import (
    child,
    click,
    click_menu_item,
    click_ok,
    pick_from_popup,
    replace_text,
    top_level,
    type_text,
)
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDoubleSpinBox,
    QFileDialog,
    QLabel,
    QLineEdit,
    QListWidget,
    QPushButton,
    QTableWidget,
    QToolButton,
)

from desktop.testing import FakeProvider, Turn

pytest_plugins = ["test_app_support"]  # fixtures: fake, open_window

USAGE = {"input": 100_000, "output": 10_000, "cache_read": 0, "cache_write": 0}


def _enter(qtbot: Any, node: Any, text: str) -> None:
    """Type ``text`` in the node's input and press Enter (a slash command runs at once)."""
    type_text(qtbot, node.chat_input, text)
    qtbot.keyClick(node.chat_input, Qt.Key.Key_Return)


def _chat_posts(fake: FakeProvider) -> list[dict[str, Any]]:
    return [json.loads(r.body) for r in fake.requests if r.method == "POST"]


def _saved(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def _open_settings(qtbot: Any, window: Any) -> Any:
    activate(window)
    press(qtbot, "Ctrl+,", window.nodes()[0].chat_input)
    return top_level(qtbot, QDialog, "settingsDialog")


def _show_tab(qtbot: Any, dialog: Any, title: str) -> None:
    bar = dialog.tabs.tabBar()
    (index,) = [i for i in range(bar.count()) if bar.tabText(i) == title]
    qtbot.mouseClick(bar, Qt.MouseButton.LeftButton, pos=bar.tabRect(index).center())


def test_slash_commands_typed_set_the_system_prompt_and_model_and_clear(
    qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path
) -> None:
    window = open_with_fake(open_window, fake, tmp_path)
    node = window.nodes()[0]
    _enter(qtbot, node, "/system You answer in French.")
    assert node.system == "You answer in French."
    assert node.conversation.messages[-1].role == "note"
    _enter(qtbot, node, "/model fake-model-small")
    assert child(node, QComboBox, "modelPicker").currentText() == "fake-model-small"
    assert node.chat_input.toPlainText() == ""
    fake.script(Turn(text="Bonjour"))
    type_text(qtbot, node.chat_input, "hi")
    with qtbot.waitSignal(node.run_finished, timeout=10_000):
        qtbot.keyClick(node.chat_input, Qt.Key.Key_Return)
    (body,) = _chat_posts(fake)
    assert body["model"] == "fake-model-small"
    assert body["messages"] == [{"role": "system", "content": "You answer in French."},
                                {"role": "user", "content": "hi"}]
    _enter(qtbot, node, "/clear")
    assert node.conversation.messages == []
    assert window.store.archive_path(node.node_id).is_file()  # archived first, not lost


def test_a_model_typed_in_the_picker_goes_with_the_next_request(
    qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path
) -> None:
    window = open_with_fake(open_window, fake, tmp_path)
    node = window.nodes()[0]
    picker = child(node, QComboBox, "modelPicker")
    replace_text(qtbot, picker.lineEdit(), "my-custom-model")
    qtbot.keyClick(picker.lineEdit(), Qt.Key.Key_Return)
    assert node.model == "my-custom-model"
    fake.script(Turn(text="from the custom model"))
    type_text(qtbot, node.chat_input, "which model?")
    with qtbot.waitSignal(node.run_finished, timeout=10_000):
        qtbot.keyClick(node.chat_input, Qt.Key.Key_Return)
    (body,) = _chat_posts(fake)
    assert body["model"] == "my-custom-model"
    assert node.conversation.messages[-1].content == "from the custom model"
    assert window.save_project()
    (saved,) = _saved(tmp_path / "project" / "project.json")["nodes"]
    assert saved["data"]["model"] == "my-custom-model"


def test_project_budget_clicked_in_the_file_menu_and_typed(
    qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path
) -> None:
    window = open_with_fake(open_window, fake, tmp_path)
    click_menu_item(qtbot, window, "projectBudgetAction")
    dialog = top_level(qtbot, QDialog, "projectBudgetDialog")
    spin = child(dialog, QDoubleSpinBox, "projectBudgetSpin")
    replace_text(qtbot, spin, "12.5")
    click_ok(qtbot, dialog)
    qtbot.waitUntil(lambda: not dialog.isVisible(), timeout=10_000)
    assert _saved(tmp_path / "project" / "project.json")["budget"] == {"monthly_usd": 12.5}
    activate(window)
    click_menu_item(qtbot, window, "projectBudgetAction")
    again = top_level(qtbot, QDialog, "projectBudgetDialog")
    assert child(again, QDoubleSpinBox, "projectBudgetSpin").value() == 12.5
    qtbot.keyClick(again, Qt.Key.Key_Escape)


def test_a_provider_added_from_the_add_menu_and_removed_with_remove(
    qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path
) -> None:
    window = open_with_fake(open_window, fake, tmp_path)
    settings_file = tmp_path / "config" / "settings.json"
    dialog = _open_settings(qtbot, window)
    add = child(dialog, QToolButton, "addProviderButton")
    pick_from_popup(qtbot, add, add.menu(), "Custom OpenAI-compatible server…")
    providers = child(dialog, QListWidget, "providerList")
    assert providers.currentItem().text().startswith("Custom")
    replace_text(qtbot, child(dialog, QLineEdit, "providerNameEdit"), "My server")
    replace_text(qtbot, child(dialog, QLineEdit, "baseUrlEdit"), fake.openai_base_url)
    type_text(qtbot, child(dialog, QLineEdit, "modelsEdit"), "served-model")
    click_ok(qtbot, dialog)
    qtbot.waitUntil(lambda: not dialog.isVisible(), timeout=10_000)
    entries = {p["id"]: p for p in _saved(settings_file)["providers"]}
    assert set(entries) == {"fake", "custom"}
    assert (entries["custom"]["name"], entries["custom"]["base_url"], entries["custom"]["models"]) == (
        "My server", fake.openai_base_url, ["served-model"])

    again = _open_settings(qtbot, window)
    providers = child(again, QListWidget, "providerList")
    (row,) = [providers.item(i) for i in range(providers.count())
              if providers.item(i).text().startswith("My server")]
    qtbot.mouseClick(providers.viewport(), Qt.MouseButton.LeftButton,
                     pos=providers.visualItemRect(row).center())
    click(qtbot, child(again, QPushButton, "removeProviderButton"))
    assert [providers.item(i).text() for i in range(providers.count())
            if providers.item(i).text().startswith("My server")] == []
    click_ok(qtbot, again)
    qtbot.waitUntil(lambda: not again.isVisible(), timeout=10_000)
    assert [p["id"] for p in _saved(settings_file)["providers"]] == ["fake"]


def test_a_built_in_price_double_clicked_overridden_and_the_cost_follows(
    qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path
) -> None:
    window = open_with_fake(open_window, fake, tmp_path)
    dialog = _open_settings(qtbot, window)
    _show_tab(qtbot, dialog, "Prices")
    type_text(qtbot, child(dialog, QLineEdit, "priceFilterEdit"), "gpt-4o-mini")
    builtin = child(dialog, QTableWidget, "builtinPricesTable")
    (row,) = [r for r in range(builtin.rowCount()) if builtin.item(r, 0).text() == "gpt-4o-mini"]
    output_price = float(builtin.item(row, 2).text())
    spot = builtin.visualItemRect(builtin.item(row, 0)).center()
    qtbot.mouseClick(builtin.viewport(), Qt.MouseButton.LeftButton, pos=spot)
    qtbot.mouseDClick(builtin.viewport(), Qt.MouseButton.LeftButton, pos=spot)
    overrides = child(dialog, QTableWidget, "priceOverridesTable")
    (editor,) = [e for e in overrides.viewport().findChildren(QLineEdit) if e.isVisible()]
    assert editor.text() == builtin.item(row, 1).text()  # the override's input price, open for typing
    qtbot.keyClick(editor, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClicks(editor, "0.5")
    qtbot.keyClick(editor, Qt.Key.Key_Return)  # the view commits the typed text on its next pass
    qtbot.waitUntil(lambda: overrides.item(0, 1).text() == "0.5", timeout=10_000)
    assert overrides.item(0, 0).text() == "gpt-4o-mini"
    click_ok(qtbot, dialog)
    qtbot.waitUntil(lambda: not dialog.isVisible(), timeout=10_000)
    override = _saved(tmp_path / "config" / "settings.json")["price_overrides"]["gpt-4o-mini"]
    assert (override["input"], override["output"]) == (0.5, output_price)
    node = window.nodes()[0]
    fake.script(Turn(text="priced", usage=USAGE, model="gpt-4o-mini"))
    type_text(qtbot, node.chat_input, "q")
    with qtbot.waitSignal(node.run_finished, timeout=10_000):
        qtbot.keyClick(node.chat_input, Qt.Key.Key_Return)
    expected = 0.1 * 0.5 + 0.01 * output_price  # 100k in at the typed price, 10k out at the built-in one
    assert window.session_cost().usd == pytest.approx(expected)


def test_ctrl_q_closes_the_window_and_saves(qtbot: Any, open_window: Any, fake: FakeProvider,
                                            tmp_path: Path) -> None:
    window = open_with_fake(open_window, fake, tmp_path)
    node = window.nodes()[0]
    node.set_title("Before quitting")
    with qtbot.waitSignal(window.closed, timeout=10_000):
        press(qtbot, "Ctrl+Q", node.chat_input)
    assert window.is_shut_down()
    (saved,) = _saved(tmp_path / "project" / "project.json")["nodes"]
    assert saved["title"] == "Before quitting"


def test_ctrl_e_exports_the_active_conversation_where_the_user_chose(
    qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "exported.md"
    asked: list[tuple[str, str]] = []

    def save_as(_parent: Any, caption: str, start: str, *_rest: Any) -> tuple[str, str]:
        asked.append((caption, start))
        return str(target), ""

    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(save_as))  # the platform's dialog
    window = open_with_fake(open_window, fake, tmp_path)
    node = window.nodes()[0]
    node.set_title("Trip plan")
    fake.script(Turn(text="An **answer**."))
    type_text(qtbot, node.chat_input, "a question")
    with qtbot.waitSignal(node.run_finished, timeout=10_000):
        qtbot.keyClick(node.chat_input, Qt.Key.Key_Return)
    press(qtbot, "Ctrl+E", node.chat_input)
    assert asked == [("Export conversation", str(tmp_path / "project" / "Trip plan.md"))]
    assert target.read_text(encoding="utf-8") == (
        "# Trip plan\n\n## You\n\na question\n\n## Assistant (gpt-4o-mini)\n\nAn **answer**.\n")


def test_ctrl_o_opens_another_project_and_back(
    qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    chosen: list[Path] = []
    monkeypatch.setattr(QFileDialog, "getExistingDirectory",
                        staticmethod(lambda *_args: str(chosen[-1])))  # the platform's folder dialog
    window = open_with_fake(open_window, fake, tmp_path)
    first = window.nodes()[0]
    fake.script(Turn(text="answer in one"))
    type_text(qtbot, first.chat_input, "question in one")
    with qtbot.waitSignal(first.run_finished, timeout=10_000):
        qtbot.keyClick(first.chat_input, Qt.Key.Key_Return)
    chosen.append(tmp_path / "two")
    press(qtbot, "Ctrl+O", first.chat_input)
    assert window.project_dir == (tmp_path / "two").resolve()
    (fresh,) = window.nodes()
    assert fresh.conversation.messages == []
    assert child(window, QLabel, "projectPathLabel").text() == str(tmp_path / "two")
    assert window.windowTitle() == "two — Chat Nodes"
    chosen.append(tmp_path / "project")
    press(qtbot, "Ctrl+O", fresh.chat_input)
    (back,) = window.nodes()
    assert [m.content for m in back.conversation.messages] == ["question in one", "answer in one"]
    assert window.windowTitle() == "project — Chat Nodes"


def test_settings_general_a_budget_and_a_default_model_typed_then_ok(
    qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path
) -> None:
    window = open_with_fake(open_window, fake, tmp_path)
    dialog = _open_settings(qtbot, window)
    _show_tab(qtbot, dialog, "General")
    budget = child(dialog, QDoubleSpinBox, "budgetSpin")
    assert budget.text() == "No budget"
    replace_text(qtbot, budget, "40")
    model = child(dialog, QComboBox, "defaultModelCombo")
    replace_text(qtbot, model.lineEdit(), "fake-model-small")
    click_ok(qtbot, dialog)
    qtbot.waitUntil(lambda: not dialog.isVisible(), timeout=10_000)
    saved = _saved(tmp_path / "config" / "settings.json")
    assert (saved["budget"], saved["default_model"]) == ({"monthly_usd": 40.0}, "fake-model-small")
    press(qtbot, "Ctrl+N", window.nodes()[0].chat_input)  # a new node starts on the new default
    new = window.nodes()[-1]
    fake.script(Turn(text="small answer"))
    type_text(qtbot, new.chat_input, "hello")
    with qtbot.waitSignal(new.run_finished, timeout=10_000):
        qtbot.keyClick(new.chat_input, Qt.Key.Key_Return)
    (body,) = _chat_posts(fake)
    assert body["model"] == "fake-model-small"
    again = _open_settings(qtbot, window)
    _show_tab(qtbot, again, "General")
    assert child(again, QDoubleSpinBox, "budgetSpin").value() == 40.0
    qtbot.keyClick(again, Qt.Key.Key_Escape)
