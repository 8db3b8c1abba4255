"""The settings dialog: one tab per page (Providers, General, Prices, MCP servers), validation and saving.

The dialog edits a copy of the saved settings. Keys never enter the settings: typed keys wait in
``KeyEdits`` until OK, then go to ``SecretStore`` (the OS keyring, or this session only when there
is no keyring).
"""

from __future__ import annotations

import asyncio
import logging
import re

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QTabWidget, QVBoxLayout, QWidget

from desktop.core.config import ProviderSettings, Settings, SettingsError
from desktop.ui.banner import Banner
from desktop.ui.settings.common import KeyEdits, SettingsContext
from desktop.ui.settings.general_page import GeneralPage
from desktop.ui.settings.mcp_page import McpPage
from desktop.ui.settings.prices_page import PricesPage
from desktop.ui.settings.providers_page import ProvidersPage

log = logging.getLogger(__name__)

__all__ = ["SettingsDialog"]


class SettingsDialog(QDialog):
    """Edit providers, keys, defaults, limits and price overrides (object name ``settingsDialog``).

    The pages' widgets are also reachable as attributes of the dialog (``provider_list``,
    ``key_edit``, ``price_table``...), as automation and tests use them.

    Args:
        context: The application context (settings, key store, environment, HTTP client).
        parent: The main window.

    Signals:
        settings_saved(): OK was pressed and everything was stored.
    """

    settings_saved = Signal()

    def __init__(self, context: SettingsContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.context = context
        self.setObjectName("settingsDialog")
        self.setWindowTitle("Settings")
        self.setMinimumSize(760, 560)
        self._settings: Settings = context.settings.copy()
        self._keys = KeyEdits()

        root = QVBoxLayout(self)
        root.setContentsMargins(14, 14, 14, 12)
        root.setSpacing(10)
        self.keyring_banner: Banner | None = None
        if not context.secrets.available:
            reason = (context.secrets.unavailable_reason or "").removesuffix(
                ": keys are kept for this session only"
            )
            self.keyring_banner = Banner(
                "No OS keyring found: keys are kept for this session only. "
                "Set them as environment variables to keep them across restarts.",
                kind="warning", object_name="keyringBanner", dismissible=False, parent=self,
            )
            self.keyring_banner.setToolTip(reason)
            root.addWidget(self.keyring_banner)

        self.providers_page = ProvidersPage(context, self._settings, self._keys, self)
        self.general_page = GeneralPage(self._settings, self)
        self.prices_page = PricesPage(self)
        self.providers_page.providers_changed.connect(self.general_page.refresh_providers)
        self.tabs = QTabWidget(self)
        self.tabs.setObjectName("settingsTabs")
        self.tabs.setDocumentMode(True)
        self.tabs.addTab(self.providers_page, "Providers")
        self.tabs.addTab(self.general_page, "General")
        self.tabs.addTab(self.prices_page, "Prices")
        self.mcp_page = McpPage(self._settings, context.secrets, getattr(context, "mcp", None), self)
        self.tabs.addTab(self.mcp_page, "MCP servers")
        root.addWidget(self.tabs, 1)

        self.error_label = QLabel("", self)
        self.error_label.setObjectName("validationLabel")
        self.error_label.setWordWrap(True)
        self.error_label.setStyleSheet("color: #d04545;")
        self.error_label.hide()
        root.addWidget(self.error_label)

        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel, self
        )
        self.buttons.setObjectName("dialogButtons")
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        root.addWidget(self.buttons)
        self._alias_page_widgets()

        self.providers_page.reload()
        self.general_page.load()
        self.prices_page.load(self._settings)
        if self.provider_list.count():
            self.provider_list.setCurrentRow(0)

    def _alias_page_widgets(self) -> None:
        pp, gp = self.providers_page, self.general_page
        self.provider_list = pp.provider_list
        self.add_provider_button = pp.add_provider_button
        self.remove_provider_button = pp.remove_provider_button
        self.name_edit = pp.name_edit
        self.id_label = pp.id_label
        self.api_combo = pp.api_combo
        self.base_url_edit = pp.base_url_edit
        self.needs_key_check = pp.needs_key_check
        self.key_edit = pp.key_edit
        self.key_error = pp.key_error
        self.clear_key_button = pp.clear_key_button
        self.session_only_check = pp.session_only_check
        self.key_status = pp.key_status
        self.key_env_edit = pp.key_env_edit
        self.models_edit = pp.models_edit
        self.test_button = pp.test_button
        self.test_result = pp.test_result
        self.default_provider_combo = gp.default_provider_combo
        self.default_model_combo = gp.default_model_combo
        self.history_cap_spin = gp.history_cap_spin
        self.max_iterations_spin = gp.max_iterations_spin
        self.prompt_caching_check = gp.prompt_caching_check
        self.budget_spin = gp.budget_spin
        self.price_table = self.prices_page.price_table

    # ------------------------------------------------------------------------------------------
    # The pages' actions, as the dialog's API

    @property
    def test_task(self) -> asyncio.Task[None] | None:
        """The connection test in progress or last run."""
        return self.providers_page.test_task

    def provider_ids(self) -> list[str]:
        """Ids of the providers listed, in order."""
        return self.providers_page.provider_ids()

    def select_provider(self, provider_id: str) -> None:
        """Show the provider ``provider_id`` (``KeyError`` when it is not listed)."""
        self.providers_page.select_provider(provider_id)

    def add_preset(self, provider_id: str) -> ProviderSettings:
        """Add the preset ``provider_id`` (or select it when it is already there)."""
        return self.providers_page.add_preset(provider_id)

    def add_custom(self, api: str = "openai", name: str = "Custom") -> ProviderSettings:
        """Add a custom provider with a fresh id (``custom``, ``custom-2``...)."""
        return self.providers_page.add_custom(api, name)

    def remove_current_provider(self) -> None:
        """Remove the provider being edited (its stored key is removed on OK)."""
        self.providers_page.remove_current_provider()

    def forget_key(self) -> None:
        """Forget the key of the current provider (applied on OK)."""
        self.providers_page.forget_key()

    def set_key(self, text: str) -> None:
        """Type ``text`` into the key field (as the user would)."""
        self.providers_page.set_key(text)

    def test_connection(self) -> asyncio.Task[None] | None:
        """List the current provider's models in the background; the result shows next to the button."""
        return self.providers_page.test_connection()

    def show_mcp_page(self, server: str | None = None) -> None:
        """Switch to the MCP servers page (with ``server`` selected when it is listed)."""
        self.tabs.setCurrentWidget(self.mcp_page)
        self.mcp_page.select(server)

    def show_budget(self) -> None:
        """Switch to the General page with the app-wide monthly budget focused."""
        self.tabs.setCurrentWidget(self.general_page)
        self.budget_spin.setFocus()

    def add_price_row(self, prefix: str = "", *values: float | None) -> int:
        """Append a price row (prefix, input, output, cache read, cache write); returns its index."""
        return self.prices_page.add_price_row(prefix, *values)

    # ------------------------------------------------------------------------------------------
    # Result

    def edited_settings(self) -> Settings:
        """The settings as edited (validated).

        Raises:
            SettingsError: Listing every problem.
        """
        problems: list[str] = []
        settings = self._settings.copy()
        settings.price_overrides = self.prices_page.read_prices(problems)
        self.general_page.apply_to(settings)
        self.mcp_page.apply_to(settings)
        for p in settings.providers:
            if not p.base_url:
                problems.append(f"{p.name}: enter a base URL")
            if p.id in self._keys.rejected:
                problems.append(f"{p.name}: the API key was not accepted (it contains a control character)")
        if problems:
            raise SettingsError(problems)
        settings.validate()
        return settings

    def accept(self) -> None:
        """Validate; save the settings, then the keys; close. Problems keep the dialog open."""
        try:
            settings = self.edited_settings()
            # MCP tokens first: saving the settings (re)starts servers, which read them.
            tokens_changed = self.mcp_page.commit_tokens()
            self.context.save_settings(settings)
        except SettingsError as exc:
            self._show_error("Please fix: " + "; ".join(_friendly(p, self._settings) for p in exc.problems))
            return
        except OSError as exc:
            self._show_error(f"The settings could not be saved: {exc.strerror or exc}")
            return
        except ValueError as exc:  # the keyring refused an MCP token (the message never holds it)
            self._show_error(f"An MCP token was not stored: {exc}")
            return
        hub = getattr(self.context, "mcp", None)
        for name in tokens_changed:
            if hub is not None and name in hub.statuses():
                hub.restart(name)  # same config, new token
        secrets = self.context.secrets
        keys = self._keys
        failures: list[str] = []
        for pid in keys.deleted | keys.removed:
            if pid not in keys.pending:
                secrets.delete(pid)
        for pid, key in keys.pending.items():
            if settings.provider(pid) is None:
                continue
            try:
                secrets.set(pid, key, session_only=keys.session_only.get(pid, False))
            except ValueError as exc:
                failures.append(f"{pid}: {exc}")
        keys.pending.clear()
        self.context.keys_changed()  # the default provider, the welcome banner, the marks follow
        if failures:
            self._show_error("Some keys were not stored: " + "; ".join(failures))
            return
        self.settings_saved.emit()
        super().accept()

    def _show_error(self, text: str) -> None:
        self.error_label.setText(text)
        self.error_label.show()

    def done(self, result: int) -> None:
        """Close with ``result``; a connection test still running is cancelled."""
        self.providers_page.cancel_test()
        super().done(result)


def _friendly(problem: str, settings: Settings) -> str:
    """Replace ``providers[i]`` by the provider's name in a validation message."""
    match = re.match(r"providers\[(\d+)\]\.?(.*)", problem)
    if match:
        i = int(match.group(1))
        if i < len(settings.providers):
            return f"{settings.providers[i].name}: {match.group(2)}"
    return problem
