"""The settings dialog against the real settings store, the (in-memory) keyring and the fake provider."""

from __future__ import annotations

import json
from typing import Any, TypeVar

import pytest
from keyring.backends import fail
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QCheckBox, QLabel, QLineEdit, QPushButton, QTableWidgetItem, QWidget
from test_app_support import files_containing

from desktop.core.config import SecretStore
from desktop.testing import FakeProvider
from desktop.ui.banner import Banner
from desktop.ui.settings.common import mask_key
from desktop.ui.settings.dialog import SettingsDialog

W = TypeVar("W", bound=QWidget)

KEY = "sk-test-0123456789abcdefWXYZ"

pytest_plugins = ["test_app_support"]  # fixtures: fake, make_context, open_window


def _child(parent: QWidget, cls: type[W], name: str) -> W:
    child = parent.findChild(cls, name)
    assert child is not None, f"no {cls.__name__} named {name}"
    return child


def _dialog(qtbot: Any, ctx: Any) -> SettingsDialog:
    dialog = SettingsDialog(ctx)
    qtbot.addWidget(dialog)
    dialog.show()
    return dialog


def test_mask_shows_only_the_last_four_characters() -> None:
    assert mask_key(KEY) == "••••••••WXYZ"
    assert "0123" not in mask_key(KEY)
    assert mask_key("short") == "••••••••"  # a short key shows nothing of itself


def test_lists_every_preset(qtbot: Any, make_context: Any) -> None:
    dialog = _dialog(qtbot, make_context())
    names = [dialog.provider_list.item(i).text() for i in range(dialog.provider_list.count())]
    assert names == ["OpenAI", "Anthropic", "DeepSeek", "OpenRouter", "Gemini", "Groq", "Ollama", "LM Studio"]
    dialog.select_provider("anthropic")
    assert _child(dialog, QLineEdit, "baseUrlEdit").text() == "https://api.anthropic.com"
    assert dialog.api_combo.currentData() == "anthropic"
    dialog.select_provider("ollama")
    assert not dialog.needs_key_check.isChecked()


def test_key_saved_to_keyring_and_shown_masked(qtbot: Any, make_context: Any, memory_keyring: Any,
                                               tmp_path: Any) -> None:
    ctx = make_context()
    dialog = _dialog(qtbot, ctx)
    dialog.select_provider("openai")
    edit = _child(dialog, QLineEdit, "apiKeyEdit")
    assert edit.echoMode() == QLineEdit.EchoMode.Password
    assert not edit.isReadOnly()
    dialog.set_key(KEY)
    dialog.accept()
    assert dialog.result() == SettingsDialog.DialogCode.Accepted
    assert memory_keyring.passwords[("chatnodes", "openai")] == KEY
    assert ctx.settings_store.path.is_file()
    assert files_containing(tmp_path, KEY) == []  # settings.json never holds a key

    again = _dialog(qtbot, ctx)
    again.select_provider("openai")
    edit = _child(again, QLineEdit, "apiKeyEdit")
    assert edit.text() == ""
    assert edit.placeholderText() == "••••••••WXYZ"
    assert "keyring" in again.key_status.text()


def test_forget_key_removes_it_from_the_keyring(qtbot: Any, make_context: Any, memory_keyring: Any) -> None:
    memory_keyring.passwords[("chatnodes", "groq")] = KEY
    dialog = _dialog(qtbot, make_context())
    dialog.select_provider("groq")
    assert dialog.key_edit.placeholderText().endswith("WXYZ")
    dialog.clear_key_button.click()
    dialog.accept()
    assert ("chatnodes", "groq") not in memory_keyring.passwords


@pytest.mark.parametrize(("var", "value"), [("OPENAI_API_KEY", "sk-env-aaaaaaaaaaaa1111"),
                                            ("CHATNODES_PROVIDER_KEY_OPENAI", "sk-env-bbbbbbbbbbbb2222")])
def test_env_override_makes_the_field_read_only(qtbot: Any, make_context: Any, var: str, value: str) -> None:
    ctx = make_context(environ={var: value})
    dialog = _dialog(qtbot, ctx)
    dialog.select_provider("openai")
    edit = _child(dialog, QLineEdit, "apiKeyEdit")
    assert edit.isReadOnly()
    assert edit.text() == f"from environment: {var}"
    assert value not in edit.text() and value[-4:] not in edit.text()
    assert not dialog.clear_key_button.isEnabled()
    dialog.select_provider("anthropic")  # other providers are not affected
    assert not dialog.key_edit.isReadOnly()


def test_no_keyring_banner_and_session_key(qtbot: Any, make_context: Any, tmp_path: Any) -> None:
    secrets = SecretStore(backend=fail.Keyring())  # type: ignore[no-untyped-call]
    assert not secrets.available
    ctx = make_context(secrets=secrets)
    dialog = _dialog(qtbot, ctx)
    banner = dialog.findChild(Banner, "keyringBanner")
    assert banner is not None and banner.isVisible()
    assert "No OS keyring found: keys are kept for this session only" in banner.text()
    assert dialog.session_only_check.isChecked() and not dialog.session_only_check.isEnabled()
    dialog.select_provider("anthropic")
    dialog.set_key(KEY)
    dialog.accept()
    assert secrets.get("anthropic") == KEY
    assert secrets.has_session_key("anthropic")
    assert files_containing(tmp_path, KEY) == []


def test_keyring_present_means_no_banner(qtbot: Any, make_context: Any) -> None:
    dialog = _dialog(qtbot, make_context())
    assert dialog.findChild(Banner, "keyringBanner") is None


def test_test_connection_lists_models(qtbot: Any, make_context: Any, fake: FakeProvider) -> None:
    dialog = _dialog(qtbot, make_context())
    provider = dialog.add_custom("openai", name="Local fake")
    dialog.base_url_edit.setText(fake.openai_base_url)
    dialog.base_url_edit.textEdited.emit(fake.openai_base_url)
    assert provider.base_url == fake.openai_base_url
    _child(dialog, QPushButton, "testConnectionButton").click()
    assert dialog.test_task is not None
    qtbot.waitUntil(dialog.test_task.done, timeout=10_000)
    assert dialog.test_result.text() == "✓ Connected: 2 models available"
    assert provider.models == ["fake-model-large", "fake-model-small"]  # an empty model list gets filled
    assert dialog.test_button.isEnabled()


def test_test_connection_reports_a_401_readably(qtbot: Any, make_context: Any) -> None:
    with FakeProvider(api_key="the-right-key-000000") as server:
        dialog = _dialog(qtbot, make_context())
        dialog.add_custom("anthropic", name="Guarded")
        dialog.base_url_edit.setText(server.anthropic_base_url)
        dialog.base_url_edit.textEdited.emit(server.anthropic_base_url)
        dialog.needs_key_check.setChecked(True)
        dialog.set_key("sk-wrong-key-1234567890")
        task = dialog.test_connection()
        assert task is not None
        qtbot.waitUntil(task.done, timeout=10_000)
        text = dialog.test_result.text()
        assert text.startswith("✗ 401")
        assert "sk-wrong-key-1234567890" not in text


def test_test_connection_without_a_key_asks_for_one(qtbot: Any, make_context: Any) -> None:
    dialog = _dialog(qtbot, make_context())
    dialog.select_provider("openai")
    assert dialog.test_connection() is None
    assert dialog.test_result.text() == "Enter an API key first."


def test_price_overrides_are_validated_and_saved(qtbot: Any, make_context: Any) -> None:
    ctx = make_context()
    dialog = _dialog(qtbot, ctx)
    row = dialog.add_price_row("my-model", 1.5, 6.0)
    dialog.price_table.setItem(row, 2, QTableWidgetItem("lots"))
    dialog.accept()
    assert dialog.isVisible()  # stays open
    assert "must be a number" in dialog.error_label.text()
    assert not ctx.settings_store.path.exists()
    dialog.price_table.setItem(row, 2, QTableWidgetItem("6"))
    dialog.price_table.setItem(row, 3, QTableWidgetItem("0.15"))
    dialog.history_cap_spin.setValue(512)
    dialog.max_iterations_spin.setValue(4)
    dialog.accept()
    assert not dialog.isVisible()
    saved = json.loads(ctx.settings_store.path.read_text(encoding="utf-8"))
    assert saved["price_overrides"] == {"my-model": {"input": 1.5, "output": 6.0, "cache_read": 0.15}}
    assert saved["history_cap_kib"] == 512 and saved["max_iterations"] == 4
    assert ctx.settings.max_iterations == 4


def test_prompt_caching_checkbox_is_on_by_default_and_turns_caching_off(
    qtbot: Any, make_context: Any
) -> None:
    ctx = make_context(environ={"ANTHROPIC_API_KEY": KEY})
    dialog = _dialog(qtbot, ctx)
    check = _child(dialog.general_page, QCheckBox, "promptCachingCheck")
    assert check is dialog.prompt_caching_check
    assert dialog.tabs.indexOf(dialog.general_page) == [dialog.tabs.tabText(i) for i in
                                                        range(dialog.tabs.count())].index("General")
    assert check.isChecked()
    tip = check.toolTip()
    assert "Anthropic" in tip and "cache" in tip and "OpenAI-compatible" in tip
    config = ctx.provider_config("anthropic")
    assert config is not None and config.prompt_caching is True
    dialog.tabs.setCurrentWidget(dialog.general_page)
    qtbot.mouseClick(check, Qt.MouseButton.LeftButton, pos=QPoint(6, check.height() // 2))  # the box
    assert not check.isChecked()
    dialog.accept()
    assert not dialog.isVisible()
    saved = json.loads(ctx.settings_store.path.read_text(encoding="utf-8"))
    assert saved["prompt_caching"] is False
    assert ctx.settings.prompt_caching is False
    config = ctx.provider_config("anthropic")
    assert config is not None and config.prompt_caching is False
    # Shown as saved when the dialog opens again; turning it back on saves true.
    again = _dialog(qtbot, ctx)
    assert not again.prompt_caching_check.isChecked()
    again.prompt_caching_check.setChecked(True)
    again.accept()
    assert json.loads(ctx.settings_store.path.read_text(encoding="utf-8"))["prompt_caching"] is True
    config = ctx.provider_config("anthropic")
    assert config is not None and config.prompt_caching is True


def test_default_provider_and_model(qtbot: Any, make_context: Any) -> None:
    ctx = make_context()
    dialog = _dialog(qtbot, ctx)
    combo = dialog.default_provider_combo
    combo.setCurrentIndex(combo.findData("ollama"))
    assert dialog.default_model_combo.currentText() == "llama3.2"
    dialog.accept()
    assert ctx.settings.default_provider == "ollama"
    assert ctx.settings.default_model == "llama3.2"
    assert ctx.has_usable_provider()  # a keyless provider needs nothing else


def test_removed_provider_loses_its_key(qtbot: Any, make_context: Any, memory_keyring: Any) -> None:
    memory_keyring.passwords[("chatnodes", "deepseek")] = KEY
    ctx = make_context()
    dialog = _dialog(qtbot, ctx)
    dialog.select_provider("deepseek")
    dialog.remove_current_provider()
    assert "deepseek" not in dialog.provider_ids()
    dialog.accept()
    assert ctx.settings.provider("deepseek") is None
    assert ("chatnodes", "deepseek") not in memory_keyring.passwords


@pytest.mark.parametrize("bad", ["\n", "\r", "\t", "\x00", "\x1b", "\x7f", "\x85", "\x9b"])
def test_a_pasted_key_with_a_control_character_is_refused_and_never_stored(
        qtbot: Any, make_context: Any, memory_keyring: Any, tmp_path: Any, bad: str) -> None:
    from PySide6.QtGui import QGuiApplication

    ctx = make_context()
    dialog = _dialog(qtbot, ctx)
    dialog.select_provider("openai")
    edit = _child(dialog, QLineEdit, "apiKeyEdit")
    error = _child(dialog, QLabel, "keyErrorLabel")
    assert not error.isVisible()
    pasted = KEY[:10] + bad + KEY[10:]
    QGuiApplication.clipboard().setText(pasted)
    edit.setFocus()
    edit.paste()  # what Ctrl+V does: textEdited carries the text with the control character
    assert edit.text() == pasted
    assert error.isVisible()
    assert "not accepted" in error.text() and KEY[:10] not in error.text() and KEY[10:] not in error.text()
    if bad in "\n\r":
        assert "line break" in error.text()
    elif bad == "\t":
        assert "a tab" in error.text()
    else:
        assert f"U+{ord(bad):04X}" in error.text()
    dialog.accept()
    assert dialog.isVisible()  # OK is refused while the field holds the refused key
    assert "control character" in dialog.error_label.text()
    assert ("chatnodes", "openai") not in memory_keyring.passwords
    assert not ctx.settings_store.path.exists()
    # Fixing the key clears the error; only the clean key is stored.
    edit.clear()
    QGuiApplication.clipboard().setText(KEY)
    edit.paste()
    assert not error.isVisible()
    dialog.accept()
    assert not dialog.isVisible()
    assert memory_keyring.passwords[("chatnodes", "openai")] == KEY
    assert files_containing(tmp_path, KEY) == []


def test_a_refused_key_is_dropped_when_another_provider_is_shown(
        qtbot: Any, make_context: Any, memory_keyring: Any) -> None:
    dialog = _dialog(qtbot, make_context())
    dialog.select_provider("openai")
    dialog.set_key(KEY + "\n")
    assert dialog.key_error.isVisible()
    assert dialog.test_connection() is None
    assert dialog.test_result.text() == "Fix the API key first."
    dialog.select_provider("anthropic")
    assert not dialog.key_error.isVisible()
    dialog.select_provider("openai")
    assert dialog.key_edit.text() == ""  # the refused key was not kept anywhere
    dialog.accept()
    assert not dialog.isVisible()
    assert ("chatnodes", "openai") not in memory_keyring.passwords


def test_the_monthly_budget_is_set_in_general_and_saved(qtbot: Any, make_context: Any) -> None:
    from PySide6.QtWidgets import QDoubleSpinBox

    ctx = make_context()
    dialog = _dialog(qtbot, ctx)
    spin = _child(dialog.general_page, QDoubleSpinBox, "budgetSpin")
    assert spin.value() == 0.0 and spin.text() == "No budget"
    spin.setValue(40.0)
    dialog.accept()
    saved = json.loads(ctx.settings_store.path.read_text(encoding="utf-8"))
    assert saved["budget"] == {"monthly_usd": 40.0} and ctx.settings.monthly_budget_usd == 40.0
    again = _dialog(qtbot, ctx)
    assert again.budget_spin.value() == 40.0
    again.budget_spin.setValue(0.0)
    again.accept()
    assert "budget" not in json.loads(ctx.settings_store.path.read_text(encoding="utf-8"))


def test_the_prices_page_names_the_source_and_date_of_the_built_in_prices(
        qtbot: Any, make_context: Any) -> None:
    dialog = _dialog(qtbot, make_context())
    label = _child(dialog, QLabel, "priceSourceLabel")
    assert "refreshed from litellm 1." in label.text() and " on 20" in label.text()
