"""The settings dialog: providers and keys, defaults, limits and price overrides.

The dialog edits a copy of the saved settings. Keys never enter the settings: a typed key is kept in
the dialog until OK, then stored with ``SecretStore`` (the OS keyring, or this session only when
there is no keyring). A key coming from an environment variable makes the key field read-only.
"""

from __future__ import annotations

import asyncio
import logging
import math
import re
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMenu,
    QPushButton,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from desktop.core.chat.types import ChatError, ProviderConfig
from desktop.core.settings import (
    PROVIDER_PRESETS,
    ProviderSettings,
    Settings,
    SettingsError,
    env_var_for_provider,
    preset,
    provider_config,
    resolve_key,
)
from desktop.ui.banner import Banner

if TYPE_CHECKING:
    from desktop.app import AppContext

log = logging.getLogger(__name__)

__all__ = ["SettingsDialog", "mask_key", "PRICE_COLUMNS"]

MASK = "••••••••"
PRICE_COLUMNS = ("Model or prefix", "Input", "Output", "Cache read", "Cache write")
_PRICE_KEYS = ("input", "output", "cache_read", "cache_write")
_ID_RE = re.compile(r"[^a-z0-9]+")


def mask_key(key: str) -> str:
    """``••••••••abcd``: the key's last 4 characters behind a fixed-width mask (never the whole key)."""
    tail = key[-4:] if len(key) >= 12 else ""
    return MASK + tail


class SettingsDialog(QDialog):
    """Edit providers, keys, defaults, limits and price overrides.

    Args:
        context: The application context (settings store, secret store, environment, HTTP client).
        parent: The main window.

    Signals:
        settings_saved(): OK was pressed and everything was stored.
    """

    settings_saved = Signal()

    def __init__(self, context: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.context = context
        self.setObjectName("settingsDialog")
        self.setWindowTitle("Settings")
        self.setMinimumSize(760, 560)
        self._settings: Settings = context.settings.copy()
        self._pending_keys: dict[str, str] = {}
        self._deleted_keys: set[str] = set()
        self._removed_providers: set[str] = set()
        self._session_only: dict[str, bool] = {}
        self._current: ProviderSettings | None = None
        self._loading = False
        self.test_task: asyncio.Task[None] | None = None

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

        self.tabs = QTabWidget(self)
        self.tabs.setObjectName("settingsTabs")
        self.tabs.setDocumentMode(True)
        self.tabs.addTab(self._build_providers_page(), "Providers")
        self.tabs.addTab(self._build_general_page(), "General")
        self.tabs.addTab(self._build_prices_page(), "Prices")
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

        self._reload_provider_list()
        self._load_general()
        self._load_prices()
        if self.provider_list.count():
            self.provider_list.setCurrentRow(0)

    # ------------------------------------------------------------------------------------------
    # Pages

    def _build_providers_page(self) -> QWidget:
        page = QWidget(self)
        layout = QHBoxLayout(page)
        layout.setContentsMargins(0, 10, 0, 0)
        layout.setSpacing(12)

        left = QVBoxLayout()
        self.provider_list = QListWidget(page)
        self.provider_list.setObjectName("providerList")
        self.provider_list.setFixedWidth(200)
        self.provider_list.currentRowChanged.connect(self._on_provider_selected)
        left.addWidget(self.provider_list, 1)
        row = QHBoxLayout()
        self.add_provider_button = QToolButton(page)
        self.add_provider_button.setObjectName("addProviderButton")
        self.add_provider_button.setText("Add…")
        self.add_provider_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.add_menu = QMenu(self.add_provider_button)
        self.add_menu.aboutToShow.connect(self._fill_add_menu)
        self.add_provider_button.setMenu(self.add_menu)
        row.addWidget(self.add_provider_button)
        self.remove_provider_button = QPushButton("Remove", page)
        self.remove_provider_button.setObjectName("removeProviderButton")
        self.remove_provider_button.clicked.connect(self.remove_current_provider)
        row.addWidget(self.remove_provider_button)
        left.addLayout(row)
        layout.addLayout(left)

        form_host = QWidget(page)
        form = QFormLayout(form_host)
        form.setContentsMargins(0, 0, 0, 0)
        form.setHorizontalSpacing(12)
        form.setVerticalSpacing(9)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.ExpandingFieldsGrow)
        self.name_edit = QLineEdit(form_host)
        self.name_edit.setObjectName("providerNameEdit")
        self.name_edit.textEdited.connect(self._on_field_edited)
        form.addRow("Name", self.name_edit)
        self.id_label = QLabel("", form_host)
        self.id_label.setObjectName("providerIdLabel")
        self.id_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        form.addRow("Id", self.id_label)
        self.api_combo = QComboBox(form_host)
        self.api_combo.setObjectName("apiKindCombo")
        self.api_combo.addItem("OpenAI-compatible (Chat Completions)", "openai")
        self.api_combo.addItem("Anthropic (Messages)", "anthropic")
        self.api_combo.currentIndexChanged.connect(self._on_field_edited)
        form.addRow("API", self.api_combo)
        self.base_url_edit = QLineEdit(form_host)
        self.base_url_edit.setObjectName("baseUrlEdit")
        self.base_url_edit.setPlaceholderText("https://api.example.com/v1")
        self.base_url_edit.textEdited.connect(self._on_field_edited)
        form.addRow("Base URL", self.base_url_edit)
        self.needs_key_check = QCheckBox("This provider needs an API key", form_host)
        self.needs_key_check.setObjectName("needsKeyCheck")
        self.needs_key_check.toggled.connect(self._on_field_edited)
        form.addRow("", self.needs_key_check)

        key_row = QHBoxLayout()
        key_row.setSpacing(6)
        self.key_edit = QLineEdit(form_host)
        self.key_edit.setObjectName("apiKeyEdit")
        self.key_edit.setEchoMode(QLineEdit.EchoMode.Password)
        self.key_edit.textEdited.connect(self._on_key_edited)
        key_row.addWidget(self.key_edit, 1)
        self.clear_key_button = QPushButton("Forget", form_host)
        self.clear_key_button.setObjectName("clearKeyButton")
        self.clear_key_button.setToolTip("Remove the stored key of this provider")
        self.clear_key_button.clicked.connect(self.forget_key)
        key_row.addWidget(self.clear_key_button)
        form.addRow("API key", key_row)
        self.session_only_check = QCheckBox("Keep this key for this session only", form_host)
        self.session_only_check.setObjectName("sessionOnlyCheck")
        self.session_only_check.toggled.connect(self._on_session_only_toggled)
        form.addRow("", self.session_only_check)
        self.key_status = QLabel("", form_host)
        self.key_status.setObjectName("keyStatusLabel")
        self.key_status.setWordWrap(True)
        self.key_status.setMinimumWidth(320)
        self.key_status.setForegroundRole(QPalette.ColorRole.PlaceholderText)
        form.addRow("", self.key_status)

        self.key_env_edit = QLineEdit(form_host)
        self.key_env_edit.setObjectName("keyEnvEdit")
        self.key_env_edit.setPlaceholderText("e.g. OPENAI_API_KEY (optional)")
        self.key_env_edit.textEdited.connect(self._on_field_edited)
        form.addRow("Key variable", self.key_env_edit)
        self.models_edit = QLineEdit(form_host)
        self.models_edit.setObjectName("modelsEdit")
        self.models_edit.setPlaceholderText("model ids, comma separated (the first is the default)")
        self.models_edit.textEdited.connect(self._on_field_edited)
        form.addRow("Models", self.models_edit)

        test_row = QHBoxLayout()
        self.test_button = QPushButton("Test connection", form_host)
        self.test_button.setObjectName("testConnectionButton")
        self.test_button.clicked.connect(self.test_connection)
        test_row.addWidget(self.test_button)
        self.test_result = QLabel("", form_host)
        self.test_result.setObjectName("testResultLabel")
        self.test_result.setWordWrap(True)
        self.test_result.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        test_row.addWidget(self.test_result, 1)
        form.addRow("", test_row)
        layout.addWidget(form_host, 1)
        return page

    def _build_general_page(self) -> QWidget:
        page = QWidget(self)
        form = QFormLayout(page)
        form.setContentsMargins(4, 14, 4, 4)
        form.setHorizontalSpacing(12)
        form.setVerticalSpacing(10)
        self.default_provider_combo = QComboBox(page)
        self.default_provider_combo.setObjectName("defaultProviderCombo")
        self.default_provider_combo.currentIndexChanged.connect(self._on_default_provider_changed)
        form.addRow("Default provider", self.default_provider_combo)
        self.default_model_combo = QComboBox(page)
        self.default_model_combo.setObjectName("defaultModelCombo")
        self.default_model_combo.setEditable(True)
        self.default_model_combo.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        form.addRow("Default model", self.default_model_combo)
        self.history_cap_spin = QSpinBox(page)
        self.history_cap_spin.setObjectName("historyCapSpin")
        self.history_cap_spin.setRange(16, 1024 * 1024)
        self.history_cap_spin.setSuffix(" KiB")
        self.history_cap_spin.setToolTip("History kept per node in project.json; older exchanges go to the "
                                         "project's archive (still exported)")
        form.addRow("History per node", self.history_cap_spin)
        self.max_iterations_spin = QSpinBox(page)
        self.max_iterations_spin.setObjectName("maxIterationsSpin")
        self.max_iterations_spin.setRange(1, 100)
        self.max_iterations_spin.setToolTip("Model calls per message when the model uses tools")
        form.addRow("Tool loop limit", self.max_iterations_spin)
        return page

    def _build_prices_page(self) -> QWidget:
        page = QWidget(self)
        layout = QVBoxLayout(page)
        layout.setContentsMargins(0, 10, 0, 0)
        hint = QLabel("Your prices beat the built-in ones. USD per million tokens; a prefix ending in “-” "
                      "prices a whole family (e.g. “gpt-”). Empty cache prices fall back to the input price.",
                      page)
        hint.setWordWrap(True)
        hint.setForegroundRole(QPalette.ColorRole.PlaceholderText)
        layout.addWidget(hint)
        self.price_table = QTableWidget(0, len(PRICE_COLUMNS), page)
        self.price_table.setObjectName("priceOverridesTable")
        self.price_table.setHorizontalHeaderLabels(list(PRICE_COLUMNS))
        header = self.price_table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for col in range(1, len(PRICE_COLUMNS)):
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.ResizeToContents)
        self.price_table.verticalHeader().setVisible(False)
        self.price_table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.price_table.setAlternatingRowColors(True)
        layout.addWidget(self.price_table, 1)
        row = QHBoxLayout()
        add = QPushButton("Add row", page)
        add.setObjectName("addPriceButton")
        add.clicked.connect(lambda: self.add_price_row())
        remove = QPushButton("Remove row", page)
        remove.setObjectName("removePriceButton")
        remove.clicked.connect(self._remove_price_row)
        row.addWidget(add)
        row.addWidget(remove)
        row.addStretch(1)
        layout.addLayout(row)
        return page

    # ------------------------------------------------------------------------------------------
    # Providers

    def _reload_provider_list(self, select: str | None = None) -> None:
        self._loading = True
        try:
            self.provider_list.clear()
            for p in self._settings.providers:
                item = QListWidgetItem(p.name, self.provider_list)
                item.setData(Qt.ItemDataRole.UserRole, p.id)
                item.setToolTip(f"{p.name} ({p.api}) — {p.base_url}")
            self._refresh_default_provider_combo()
        finally:
            self._loading = False
        if select is not None:
            for i in range(self.provider_list.count()):
                if self.provider_list.item(i).data(Qt.ItemDataRole.UserRole) == select:
                    self.provider_list.setCurrentRow(i)
                    break

    def provider_ids(self) -> list[str]:
        """Ids of the providers listed, in order."""
        return [p.id for p in self._settings.providers]

    def select_provider(self, provider_id: str) -> None:
        """Show the provider ``provider_id``."""
        for i in range(self.provider_list.count()):
            if self.provider_list.item(i).data(Qt.ItemDataRole.UserRole) == provider_id:
                self.provider_list.setCurrentRow(i)
                return
        raise KeyError(provider_id)

    def current_provider(self) -> ProviderSettings | None:
        """The provider being edited."""
        return self._current

    def _on_provider_selected(self, row: int) -> None:
        if self._loading:
            return
        self._current = self._settings.providers[row] if 0 <= row < len(self._settings.providers) else None
        self._load_provider_fields()

    def _load_provider_fields(self) -> None:
        p = self._current
        self._loading = True
        try:
            enabled = p is not None
            for w in (self.name_edit, self.api_combo, self.base_url_edit, self.needs_key_check, self.key_edit,
                      self.key_env_edit, self.models_edit, self.test_button, self.remove_provider_button,
                      self.session_only_check, self.clear_key_button):
                w.setEnabled(enabled)
            self.test_result.setText("")
            if p is None:
                return
            self.name_edit.setText(p.name)
            self.id_label.setText(p.id)
            self.api_combo.setCurrentIndex(max(0, self.api_combo.findData(p.api)))
            self.base_url_edit.setText(p.base_url)
            self.needs_key_check.setChecked(p.needs_key)
            self.key_env_edit.setText(p.key_env or "")
            self.models_edit.setText(", ".join(p.models))
            for edit in (self.name_edit, self.base_url_edit, self.key_env_edit, self.models_edit):
                edit.setCursorPosition(0)
            self._load_key_field()
        finally:
            self._loading = False

    def _load_key_field(self) -> None:
        p = self._current
        if p is None:
            return
        self.key_edit.clear()
        self.key_edit.setReadOnly(False)
        self.key_edit.setEchoMode(QLineEdit.EchoMode.Password)
        self.session_only_check.setChecked(
            not self.context.secrets.available
            or self._session_only.get(p.id, self.context.secrets.has_session_key(p.id))
        )
        self.session_only_check.setEnabled(self.context.secrets.available)
        resolution = resolve_key(p, self.context.secrets, self.context.environ)
        env_name = env_var_for_provider(p.id)
        if resolution.from_environment:
            self.key_edit.setEchoMode(QLineEdit.EchoMode.Normal)
            self.key_edit.setText(f"from environment: {resolution.env_var}")
            self.key_edit.setReadOnly(True)
            self.key_edit.setToolTip(f"${resolution.env_var} overrides any stored key. "
                                     "Unset it to use the key stored here.")
            self.clear_key_button.setEnabled(False)
            self.session_only_check.setEnabled(False)
            self.key_status.setText(f"Using ${resolution.env_var} from the environment.")
            return
        pending = self._pending_keys.get(p.id)
        if pending is not None:
            self.key_edit.setText(pending)
            self.key_edit.setPlaceholderText("")
            self.key_status.setText("New key: stored when you press OK.")
        elif resolution.key and p.id not in self._deleted_keys:
            self.key_edit.setPlaceholderText(mask_key(resolution.key))
            where = "the OS keyring" if resolution.source == "keyring" else "memory, for this session only"
            self.key_status.setText(f"A key is stored in {where}. Type a new one to replace it.")
        else:
            self.key_edit.setPlaceholderText("paste your API key" if p.needs_key else "not needed")
            self.key_status.setText(
                f"Or set ${env_name}" + (f" or ${p.key_env}" if p.key_env else "") + " in the environment."
                if p.needs_key else "This provider works without a key."
            )
        self.key_edit.setToolTip("")
        self.clear_key_button.setEnabled(bool(resolution.key) or pending is not None)

    def _on_key_edited(self, text: str) -> None:
        p = self._current
        if p is None or self.key_edit.isReadOnly():
            return
        if text.strip():
            self._pending_keys[p.id] = text
            self._deleted_keys.discard(p.id)
            self.key_status.setText("New key: stored when you press OK.")
            self.clear_key_button.setEnabled(True)
        else:
            self._pending_keys.pop(p.id, None)

    def _on_session_only_toggled(self, checked: bool) -> None:
        if not self._loading and self._current is not None:
            self._session_only[self._current.id] = checked

    def forget_key(self) -> None:
        """Forget the key of the current provider (applied on OK)."""
        p = self._current
        if p is None:
            return
        self._pending_keys.pop(p.id, None)
        self._deleted_keys.add(p.id)
        self._load_key_field()
        self.key_edit.setPlaceholderText("paste your API key")
        self.key_status.setText("The stored key will be removed when you press OK.")
        self.clear_key_button.setEnabled(False)

    def set_key(self, text: str) -> None:
        """Type ``text`` into the key field (as the user would)."""
        self.key_edit.setText(text)
        self._on_key_edited(text)

    def _on_field_edited(self, *_args: object) -> None:
        if self._loading or self._current is None:
            return
        p = self._current
        name = self.name_edit.text().strip()
        if name:
            p.name = name
            item = self.provider_list.currentItem()
            if item is not None:
                item.setText(name)
        api = self.api_combo.currentData()
        if api in ("openai", "anthropic"):
            p.api = api
        p.base_url = self.base_url_edit.text().strip()
        p.needs_key = self.needs_key_check.isChecked()
        p.key_env = self.key_env_edit.text().strip() or None
        p.models = [m.strip() for m in self.models_edit.text().split(",") if m.strip()]
        self._refresh_default_provider_combo()

    def _fill_add_menu(self) -> None:
        self.add_menu.clear()
        have = set(self.provider_ids())
        for p in PROVIDER_PRESETS:
            action = self.add_menu.addAction(p.name)
            action.setEnabled(p.id not in have)
            action.triggered.connect(lambda _c=False, pid=p.id: self.add_preset(pid))
        self.add_menu.addSeparator()
        custom = self.add_menu.addAction("Custom OpenAI-compatible server…")
        custom.triggered.connect(lambda _c=False: self.add_custom("openai"))
        custom_a = self.add_menu.addAction("Custom Anthropic server…")
        custom_a.triggered.connect(lambda _c=False: self.add_custom("anthropic"))

    def add_preset(self, provider_id: str) -> ProviderSettings:
        """Add the preset ``provider_id`` (or select it when it is already there)."""
        existing = self._settings.provider(provider_id)
        if existing is not None:
            self.select_provider(provider_id)
            return existing
        p = preset(provider_id)
        if p is None:
            raise KeyError(provider_id)
        self._settings.providers.append(p)
        self._removed_providers.discard(provider_id)
        self._reload_provider_list(select=provider_id)
        return p

    def add_custom(self, api: str = "openai", name: str = "Custom") -> ProviderSettings:
        """Add a custom provider with a fresh id (``custom``, ``custom-2``...)."""
        base = _ID_RE.sub("-", name.lower()).strip("-") or "custom"
        pid, n = base, 2
        have = set(self.provider_ids())
        while pid in have:
            pid, n = f"{base}-{n}", n + 1
        p = ProviderSettings(
            id=pid,
            name=name if n == 2 else f"{name} {n - 1}",
            api="anthropic" if api == "anthropic" else "openai",
            base_url="http://localhost:8000/v1" if api != "anthropic" else "http://localhost:8000",
            needs_key=False, models=[],
        )
        self._settings.providers.append(p)
        self._reload_provider_list(select=pid)
        return p

    def remove_current_provider(self) -> None:
        """Remove the provider being edited (its stored key is removed on OK)."""
        p = self._current
        if p is None:
            return
        self._settings.providers = [q for q in self._settings.providers if q.id != p.id]
        self._pending_keys.pop(p.id, None)
        self._removed_providers.add(p.id)
        self._current = None
        self._reload_provider_list()
        if self.provider_list.count():
            self.provider_list.setCurrentRow(0)
        else:
            self._load_provider_fields()

    # ------------------------------------------------------------------------------------------
    # General

    def _load_general(self) -> None:
        self._refresh_default_provider_combo()
        self.default_model_combo.setCurrentText(self._settings.default_model or "")
        self.history_cap_spin.setValue(self._settings.history_cap_kib)
        self.max_iterations_spin.setValue(self._settings.max_iterations)

    def _refresh_default_provider_combo(self) -> None:
        combo = self.default_provider_combo
        wanted = combo.currentData() if combo.count() else self._settings.default_provider
        combo.blockSignals(True)
        combo.clear()
        combo.addItem("(none)", None)
        for p in self._settings.providers:
            combo.addItem(p.name, p.id)
        index = combo.findData(wanted)
        combo.setCurrentIndex(index if index >= 0 else 0)
        combo.blockSignals(False)
        self._refresh_model_suggestions()

    def _on_default_provider_changed(self, _index: int) -> None:
        self._refresh_model_suggestions()
        p = self._settings.provider(self.default_provider_combo.currentData())
        if p is not None and p.models and self.default_model_combo.currentText() not in p.models:
            self.default_model_combo.setCurrentText(p.models[0])

    def _refresh_model_suggestions(self) -> None:
        text = self.default_model_combo.currentText()
        self.default_model_combo.clear()
        p = self._settings.provider(self.default_provider_combo.currentData())
        if p is not None:
            self.default_model_combo.addItems(p.models)
        self.default_model_combo.setCurrentText(text)

    # ------------------------------------------------------------------------------------------
    # Prices

    def _load_prices(self) -> None:
        self.price_table.setRowCount(0)
        for prefix, entry in self._settings.price_overrides.items():
            self.add_price_row(prefix, *[entry.get(k) for k in _PRICE_KEYS])

    def add_price_row(self, prefix: str = "", *values: float | None) -> int:
        """Append a row (prefix, input, output, cache read, cache write); returns its index."""
        row = self.price_table.rowCount()
        self.price_table.insertRow(row)
        self.price_table.setItem(row, 0, QTableWidgetItem(prefix))
        for col in range(1, len(PRICE_COLUMNS)):
            value = values[col - 1] if col - 1 < len(values) else None
            item = QTableWidgetItem("" if value is None else f"{value:g}")
            item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            self.price_table.setItem(row, col, item)
        return row

    def _remove_price_row(self) -> None:
        rows = sorted({i.row() for i in self.price_table.selectedIndexes()}, reverse=True)
        if not rows and self.price_table.rowCount():
            rows = [self.price_table.rowCount() - 1]
        for row in rows:
            self.price_table.removeRow(row)

    def _read_prices(self, problems: list[str]) -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        for row in range(self.price_table.rowCount()):
            cells = [self.price_table.item(row, c) for c in range(len(PRICE_COLUMNS))]
            texts = [(c.text().strip() if c is not None else "") for c in cells]
            for c in cells:
                if c is not None:
                    c.setData(Qt.ItemDataRole.BackgroundRole, None)
            if not any(texts):
                continue
            prefix = texts[0]
            if not prefix:
                problems.append(f"Prices, row {row + 1}: enter a model or prefix")
                self._mark_bad(cells[0])
                continue
            if prefix in out:
                problems.append(f"Prices, row {row + 1}: “{prefix}” is listed twice")
                self._mark_bad(cells[0])
                continue
            entry: dict[str, Any] = {}
            for col, key in enumerate(_PRICE_KEYS, start=1):
                text = texts[col].replace(",", ".").lstrip("$")
                if not text:
                    if key in ("input", "output"):
                        what = PRICE_COLUMNS[col].lower()
                        problems.append(f"Prices, “{prefix}”: the {what} price is required")
                        self._mark_bad(cells[col])
                    continue
                try:
                    value = float(text)
                except ValueError:
                    value = math.nan
                if not math.isfinite(value) or value < 0:
                    problems.append(f"Prices, “{prefix}”: {PRICE_COLUMNS[col].lower()} must be a number ≥ 0 "
                                    f"(USD per million tokens), not “{texts[col]}”")
                    self._mark_bad(cells[col])
                    continue
                entry[key] = value
            if len(entry) >= 2 and "input" in entry and "output" in entry:
                out[prefix] = entry
        return out

    @staticmethod
    def _mark_bad(item: QTableWidgetItem | None) -> None:
        if item is not None:
            item.setData(Qt.ItemDataRole.BackgroundRole, QColor(220, 70, 70, 70))

    # ------------------------------------------------------------------------------------------
    # Result

    def edited_settings(self) -> Settings:
        """The settings as edited (validated).

        Raises:
            SettingsError: Listing every problem.
        """
        problems: list[str] = []
        settings = self._settings.copy()
        settings.price_overrides = self._read_prices(problems)
        settings.default_provider = self.default_provider_combo.currentData()
        settings.default_model = self.default_model_combo.currentText().strip() or None
        settings.history_cap_kib = self.history_cap_spin.value()
        settings.max_iterations = self.max_iterations_spin.value()
        for p in settings.providers:
            if not p.base_url:
                problems.append(f"{p.name}: enter a base URL")
        if problems:
            raise SettingsError(problems)
        settings.validate()
        return settings

    def accept(self) -> None:
        """Validate; save the settings, then the keys; close. Problems keep the dialog open."""
        try:
            settings = self.edited_settings()
            self.context.save_settings(settings)
        except SettingsError as exc:
            self._show_error("Please fix: " + "; ".join(_friendly(p, self._settings) for p in exc.problems))
            return
        except OSError as exc:
            self._show_error(f"The settings could not be saved: {exc.strerror or exc}")
            return
        secrets = self.context.secrets
        failures: list[str] = []
        for pid in self._deleted_keys | self._removed_providers:
            if pid not in self._pending_keys:
                secrets.delete(pid)
        for pid, key in self._pending_keys.items():
            if settings.provider(pid) is None:
                continue
            session_only = self._session_only.get(pid, False)
            try:
                secrets.set(pid, key, session_only=session_only)
            except ValueError as exc:
                failures.append(f"{pid}: {exc}")
        self._pending_keys.clear()
        if failures:
            self._show_error("Some keys were not stored: " + "; ".join(failures))
            return
        self.settings_saved.emit()
        super().accept()

    def _show_error(self, text: str) -> None:
        self.error_label.setText(text)
        self.error_label.show()

    # ------------------------------------------------------------------------------------------
    # Test connection

    def _config_for_test(self) -> ProviderConfig | None:
        p = self._current
        if p is None:
            return None
        key = self._pending_keys.get(p.id)
        if key is None and p.id not in self._deleted_keys:
            key = resolve_key(p, self.context.secrets, self.context.environ).key
        if p.needs_key and not key:
            self.test_result.setText("Enter an API key first.")
            return None
        return provider_config(p, key=key)

    def test_connection(self) -> asyncio.Task[None] | None:
        """List the provider's models in the background; the result shows next to the button."""
        config = self._config_for_test()
        if config is None:
            return None
        if self.test_task is not None and not self.test_task.done():
            self.test_task.cancel()
        self.test_button.setEnabled(False)
        self.test_result.setText("Connecting…")
        self.test_task = asyncio.ensure_future(self._run_test(config))
        return self.test_task

    async def _run_test(self, config: ProviderConfig) -> None:
        from desktop.core.providers import list_models

        try:
            models = list(await list_models(config, self.context.client))
        except asyncio.CancelledError:
            raise
        except ChatError as exc:
            self._test_done(f"✗ {self.context.scrub(str(exc))}", ok=False)
            return
        except Exception as exc:  # a transport error the driver did not wrap: still readable
            self._test_done(f"✗ {type(exc).__name__}: {self.context.scrub(str(exc))}", ok=False)
            return
        count = len(models)
        self._test_done(f"✓ Connected: {count} model{'s' if count != 1 else ''} available", ok=True)
        p = self._current
        if p is not None and p.id == config.id and models and not p.models:
            p.models = models[:50]
            self.models_edit.setText(", ".join(p.models))
        self.last_test_models = models

    def _test_done(self, text: str, *, ok: bool) -> None:
        try:
            self.test_result.setText(text)
            self.test_result.setProperty("ok", ok)
            self.test_button.setEnabled(self._current is not None)
        except RuntimeError:  # the dialog was closed meanwhile
            pass

    def done(self, result: int) -> None:  # noqa: D102 (Qt API)
        if self.test_task is not None and not self.test_task.done():
            self.test_task.cancel()
        super().done(result)


def _friendly(problem: str, settings: Settings) -> str:
    """Replace ``providers[i]`` by the provider's name in a validation message."""
    match = re.match(r"providers\[(\d+)\]\.?(.*)", problem)
    if match:
        i = int(match.group(1))
        if i < len(settings.providers):
            return f"{settings.providers[i].name}: {match.group(2)}"
    return problem
