"""The app follows what the user set up (issue 25, item 4): the welcome banner and the default provider
follow the keys there are (keyring or environment, changed in Settings), a node keeps its provider
across restarts (a demo node stays a demo node), and a node without a provider offers Settings."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialogButtonBox, QListWidget, QMenuBar, QPushButton
from test_app_support import close_window

from desktop.testing import FakeProvider, MemoryKeyring, Turn
from desktop.ui.node.run import NO_PROVIDER_TEXT
from desktop.ui.theme import KEY_MARK_TIPS

pytest_plugins = ["test_app_support"]  # fixtures: fake, make_context, open_window

KEY = "sk-ant-test-0123456789abcdefWXYZ"
LEFT = Qt.MouseButton.LeftButton


def _write_settings(config: Path, fake: FakeProvider) -> None:
    """OpenAI (no key) is the default; Anthropic points at the fake server and needs a key."""
    from desktop.core.config import SettingsStore, settings_from_dict

    raw = {"version": 1, "default_provider": "openai", "default_model": "gpt-5.4-mini", "providers": [
        {"id": "openai", "name": "OpenAI", "api": "openai", "base_url": fake.openai_base_url,
         "needs_key": True, "key_env": "OPENAI_API_KEY", "models": ["gpt-5.4-mini"]},
        {"id": "anthropic", "name": "Anthropic", "api": "anthropic", "base_url": fake.anthropic_base_url,
         "needs_key": True, "key_env": "ANTHROPIC_API_KEY", "models": ["claude-sonnet-4-5"]},
    ]}
    SettingsStore(config).save(settings_from_dict(raw))


def _trigger(window: Any, name: str) -> None:
    for menu_action in window.findChild(QMenuBar).actions():
        menu = menu_action.menu()
        for action in menu.actions() if menu is not None else []:
            if action.objectName() == name:
                action.trigger()
                return
    raise AssertionError(f"no menu action {name}")


def _click_ok(qtbot: Any, dialog: Any) -> None:
    qtbot.mouseClick(dialog.buttons.button(QDialogButtonBox.StandardButton.Ok), LEFT)


def _select_provider(qtbot: Any, dialog: Any, name: str) -> None:
    listing = dialog.findChild(QListWidget, "providerList")
    item = listing.findItems(name, Qt.MatchFlag.MatchExactly)[0]
    qtbot.mouseClick(listing.viewport(), LEFT, pos=listing.visualItemRect(item).center())
    assert dialog.providers_page.current.name == name


def _mark(listing: QListWidget, name: str) -> str:
    item = listing.findItems(name, Qt.MatchFlag.MatchExactly)[0]
    return str(item.data(Qt.ItemDataRole.AccessibleDescriptionRole))


def test_a_key_stored_in_settings_becomes_the_default_and_the_welcome_goes(
    qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path, memory_keyring: MemoryKeyring
) -> None:
    config = tmp_path / "config"
    _write_settings(config, fake)
    window = open_window(tmp_path / "project", config)
    qtbot.waitUntil(lambda: window.banner_area.find("welcomeBanner") is not None, timeout=10_000)
    node = window.nodes()[0]
    assert node.provider_picker.currentText() == "OpenAI"

    _trigger(window, "settingsAction")
    dialog = window.settings_dialog
    listing = dialog.findChild(QListWidget, "providerList")
    assert _mark(listing, "Anthropic") == KEY_MARK_TIPS[False]
    _select_provider(qtbot, dialog, "Anthropic")
    qtbot.keyClicks(dialog.key_edit, KEY)
    assert _mark(listing, "Anthropic") == KEY_MARK_TIPS[True]  # marked as soon as a key is typed
    assert _mark(listing, "OpenAI") == KEY_MARK_TIPS[False]
    _click_ok(qtbot, dialog)
    assert memory_keyring.get_password("chatnodes", "anthropic") == KEY

    assert window.banner_area.find("welcomeBanner") is None
    assert node.provider_picker.currentData() == "anthropic"  # the node that follows the default moved
    picker = node.provider_picker
    tips = {picker.itemText(i): picker.itemData(i, Qt.ItemDataRole.ToolTipRole)
            for i in range(picker.count())}
    assert tips == {"OpenAI": KEY_MARK_TIPS[False], "Anthropic": KEY_MARK_TIPS[True]}

    _trigger(window, "newNodeAction")  # "+ New chat" picks the provider that has a key
    new = window.active_node()
    assert new is not node and new.provider_picker.currentData() == "anthropic"
    fake.script(Turn(text="hello from the keyed provider"))
    new.chat_input.setFocus()
    qtbot.keyClicks(new.chat_input, "hi")
    with qtbot.waitSignal(new.run_finished, timeout=10_000):
        qtbot.keyClick(new.chat_input, Qt.Key.Key_Return)
    post = [r for r in fake.requests if r.method == "POST"][-1]
    assert post.path.endswith("/messages") and post.headers.get("x-api-key") == KEY
    assert new.transcript.error_text() is None


def test_removing_the_last_key_brings_the_welcome_back(
    qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path, memory_keyring: MemoryKeyring
) -> None:
    config = tmp_path / "config"
    _write_settings(config, fake)
    memory_keyring.set_password("chatnodes", "anthropic", KEY)
    window = open_window(tmp_path / "project", config)
    assert window.nodes()[0].provider_picker.currentData() == "anthropic"
    assert window.banner_area.find("welcomeBanner") is None  # a key in the keyring: no "no provider"
    _trigger(window, "settingsAction")
    dialog = window.settings_dialog
    _select_provider(qtbot, dialog, "Anthropic")
    qtbot.mouseClick(dialog.clear_key_button, LEFT)
    assert _mark(dialog.findChild(QListWidget, "providerList"), "Anthropic") == KEY_MARK_TIPS[False]
    _click_ok(qtbot, dialog)
    assert window.banner_area.find("welcomeBanner") is not None
    assert window.nodes()[0].provider_picker.currentData() == "openai"


def test_a_key_in_the_environment_counts(
    qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "config"
    _write_settings(config, fake)
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    window = open_window(tmp_path / "project", config)
    assert window.banner_area.find("welcomeBanner") is None
    assert window.nodes()[0].provider_picker.currentData() == "anthropic"


def test_a_node_without_a_provider_offers_the_settings(
    qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path
) -> None:
    config = tmp_path / "config"
    _write_settings(config, fake)
    window = open_window(tmp_path / "project", config)
    node = window.nodes()[0]
    node.chat_input.setFocus()
    qtbot.keyClicks(node.chat_input, "anyone there?")
    with qtbot.waitSignal(node.run_finished, timeout=10_000):
        qtbot.keyClick(node.chat_input, Qt.Key.Key_Return)
    assert node.transcript.error_text() == NO_PROVIDER_TEXT
    assert NO_PROVIDER_TEXT[0].isupper()
    button = node.findChild(QPushButton, "errorSettingsButton")
    assert button is not None and button.isVisible()
    qtbot.mouseClick(button, LEFT)
    assert window.settings_dialog is not None and window.settings_dialog.isVisible()


def _approve_first_card(qtbot: Any, node: Any) -> None:
    qtbot.waitUntil(lambda: bool(node.transcript.pending_permission_cards()), timeout=10_000)
    card = node.transcript.pending_permission_cards()[0]
    qtbot.mouseClick(card.findChild(QPushButton, "approveButton"), LEFT)


def test_a_demo_node_stays_a_demo_node_after_a_restart(
    qtbot: Any, open_window: Any, tmp_path: Path
) -> None:
    project, config = tmp_path / "project", tmp_path / "config"
    window = open_window(project, config)
    welcome = window.banner_area.find("welcomeBanner")
    assert welcome is not None
    qtbot.mouseClick(welcome.findChild(QPushButton, "tryDemoButton"), LEFT)
    node = window.nodes()[0]
    with qtbot.waitSignal(node.run_finished, timeout=20_000):
        node.submit("Show me around")
        _approve_first_card(qtbot, node)
    qtbot.waitUntil(lambda: not node.is_busy(), timeout=20_000)
    answers = len(node.transcript.message_texts())
    close_window(qtbot, window)

    again = open_window(project, config)  # no --demo, no key: the default is OpenAI
    demo_node = again.nodes()[0]
    qtbot.waitUntil(lambda: demo_node.provider_picker.currentText() == "Offline demo", timeout=10_000)
    assert demo_node.provider == "demo"
    with qtbot.waitSignal(demo_node.run_finished, timeout=20_000):
        demo_node.submit("And now?")
    assert demo_node.transcript.error_text() is None
    qtbot.waitUntil(lambda: len(demo_node.transcript.message_texts()) == answers + 2, timeout=10_000)
    assert "(offline demo)" not in again.windowTitle()  # not demo mode: new chats follow the settings
    _trigger(again, "newNodeAction")
    assert again.active_node().provider_picker.currentData() == "openai"
