"""The Providers tab: the provider list, each provider's fields, the connection test, and "Detect
local servers" (``local_detect.LocalDetect``).

The key field of the provider being edited is ``provider_key.KeyField`` (keys never enter the
settings: a typed key waits in ``KeyEdits`` until OK).
"""

from __future__ import annotations

import asyncio
import re

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMenu,
    QPushButton,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from desktop.core.chat.types import ChatError, ProviderConfig
from desktop.core.config import (
    PROVIDER_PRESETS,
    ProviderSettings,
    Settings,
    preset,
    provider_config,
    resolve_key,
)
from desktop.core.providers import LocalServer, list_models
from desktop.ui.settings.common import KeyEdits, SettingsContext
from desktop.ui.settings.local_detect import LocalDetect
from desktop.ui.settings.provider_key import KeyField
from desktop.ui.theme import KEY_MARK_TIPS, key_mark

__all__ = ["ProvidersPage"]

_ID_RE = re.compile(r"[^a-z0-9]+")


class ProvidersPage(QWidget):
    """Edit the providers of ``settings`` (in place) and their keys (in ``keys``).

    Args:
        context: The application context (key store, environment, HTTP client, scrubbing).
        settings: The dialog's working copy of the settings; providers are edited in it.
        keys: The dialog's pending key edits.
        parent: The dialog.

    Signals:
        providers_changed(): a provider was added, removed, renamed or its models changed.
    """

    providers_changed = Signal()

    def __init__(self, context: SettingsContext, settings: Settings, keys: KeyEdits,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.context = context
        self._settings = settings
        self.keys = keys
        self.current: ProviderSettings | None = None
        """The provider being edited."""
        self._loading = False
        self.test_task: asyncio.Task[None] | None = None
        """The connection test in progress or last run."""
        self.local = LocalDetect(context, self.add_local_server, self)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 10, 0, 0)
        layout = QHBoxLayout()
        layout.setSpacing(12)
        layout.addLayout(self._build_list())
        layout.addWidget(self._build_form(), 1)
        outer.addLayout(layout, 1)
        outer.addWidget(self.local.result)

    def _build_list(self) -> QVBoxLayout:
        left = QVBoxLayout()
        self.provider_list = QListWidget(self)
        self.provider_list.setObjectName("providerList")
        self.provider_list.setFixedWidth(200)
        self.provider_list.setIconSize(QSize(16, 16))  # the key marks (``theme.key_mark``)
        self.provider_list.currentRowChanged.connect(self._on_provider_selected)
        left.addWidget(self.provider_list, 1)
        row = QHBoxLayout()
        self.add_provider_button = QToolButton(self)
        self.add_provider_button.setObjectName("addProviderButton")
        self.add_provider_button.setText("Add…")
        self.add_provider_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.add_menu = QMenu(self.add_provider_button)
        self.add_menu.aboutToShow.connect(self._fill_add_menu)
        self.add_provider_button.setMenu(self.add_menu)
        row.addWidget(self.add_provider_button)
        self.remove_provider_button = QPushButton("Remove", self)
        self.remove_provider_button.setObjectName("removeProviderButton")
        self.remove_provider_button.clicked.connect(self.remove_current_provider)
        row.addWidget(self.remove_provider_button)
        left.addLayout(row)
        left.addWidget(self.local.button)
        return left

    def _build_form(self) -> QWidget:
        host = QWidget(self)
        form = QFormLayout(host)
        form.setContentsMargins(0, 0, 0, 0)
        form.setHorizontalSpacing(12)
        form.setVerticalSpacing(9)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.ExpandingFieldsGrow)
        self.name_edit = QLineEdit(host)
        self.name_edit.setObjectName("providerNameEdit")
        self.name_edit.textEdited.connect(self._on_field_edited)
        form.addRow("Name", self.name_edit)
        self.id_label = QLabel("", host)
        self.id_label.setObjectName("providerIdLabel")
        self.id_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        form.addRow("Id", self.id_label)
        self.api_combo = QComboBox(host)
        self.api_combo.setObjectName("apiKindCombo")
        self.api_combo.addItem("OpenAI-compatible (Chat Completions)", "openai")
        self.api_combo.addItem("Anthropic (Messages)", "anthropic")
        self.api_combo.currentIndexChanged.connect(self._on_field_edited)
        form.addRow("API", self.api_combo)
        self.base_url_edit = QLineEdit(host)
        self.base_url_edit.setObjectName("baseUrlEdit")
        self.base_url_edit.setPlaceholderText("https://api.example.com/v1")
        self.base_url_edit.textEdited.connect(self._on_field_edited)
        form.addRow("Base URL", self.base_url_edit)
        self.needs_key_check = QCheckBox("This provider needs an API key", host)
        self.needs_key_check.setObjectName("needsKeyCheck")
        self.needs_key_check.toggled.connect(self._on_field_edited)
        form.addRow("", self.needs_key_check)

        self.key_field = KeyField(host, form, self.context, self.keys, lambda: self.current,
                                  lambda: self._loading)
        key = self.key_field
        key.edit.textEdited.connect(self.refresh_marks)  # after the field took the key in
        key.clear_button.clicked.connect(self.refresh_marks)
        self.key_edit, self.clear_key_button, self.key_error = key.edit, key.clear_button, key.error
        self.session_only_check, self.key_status = key.session_only_check, key.status

        self.key_env_edit = QLineEdit(host)
        self.key_env_edit.setObjectName("keyEnvEdit")
        self.key_env_edit.setPlaceholderText("e.g. OPENAI_API_KEY (optional)")
        self.key_env_edit.textEdited.connect(self._on_field_edited)
        form.addRow("Key variable", self.key_env_edit)
        self.models_edit = QLineEdit(host)
        self.models_edit.setObjectName("modelsEdit")
        self.models_edit.setPlaceholderText("model ids, comma separated (the first is the default)")
        self.models_edit.textEdited.connect(self._on_field_edited)
        form.addRow("Models", self.models_edit)

        test_row = QHBoxLayout()
        self.test_button = QPushButton("Test connection", host)
        self.test_button.setObjectName("testConnectionButton")
        self.test_button.clicked.connect(self.test_connection)
        test_row.addWidget(self.test_button)
        self.test_result = QLabel("", host)
        self.test_result.setObjectName("testResultLabel")
        self.test_result.setWordWrap(True)
        self.test_result.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        test_row.addWidget(self.test_result, 1)
        form.addRow("", test_row)
        return host

    # ------------------------------------------------------------------------------------------
    # The list

    def reload(self, select: str | None = None) -> None:
        """List the providers again; select ``select`` (an id) when given."""
        self._loading = True
        try:
            self.provider_list.clear()
            for p in self._settings.providers:
                item = QListWidgetItem(p.name, self.provider_list)
                item.setData(Qt.ItemDataRole.UserRole, p.id)
        finally:
            self._loading = False
        self.refresh_marks()
        self.providers_changed.emit()
        if select is not None:
            for i in range(self.provider_list.count()):
                if self.provider_list.item(i).data(Qt.ItemDataRole.UserRole) == select:
                    self.provider_list.setCurrentRow(i)
                    break

    def has_key(self, provider_id: str) -> bool | None:
        """Whether ``provider_id`` has a key as edited here (a key typed, or one found and not
        forgotten); None when it needs none."""
        p = self._settings.provider(provider_id)
        if p is None or not p.needs_key:
            return None
        if provider_id in self.keys.pending:
            return True
        return provider_id in self.context.keyed_providers() and provider_id not in self.keys.deleted

    def refresh_marks(self) -> None:
        """Mark each provider of the list with whether it has a key (``theme.key_mark``)."""
        for i in range(self.provider_list.count()):
            item = self.provider_list.item(i)
            p = self._settings.provider(item.data(Qt.ItemDataRole.UserRole))
            if p is None:
                continue
            state = self.has_key(p.id)
            item.setIcon(key_mark(state))
            item.setData(Qt.ItemDataRole.AccessibleDescriptionRole, KEY_MARK_TIPS[state])
            item.setToolTip(f"{p.name} ({p.api}) — {p.base_url}\n{KEY_MARK_TIPS[state]}")

    def provider_ids(self) -> list[str]:
        """Ids of the providers listed, in order."""
        return [p.id for p in self._settings.providers]

    def select_provider(self, provider_id: str) -> None:
        """Show the provider ``provider_id``.

        Raises:
            KeyError: No such provider is listed.
        """
        for i in range(self.provider_list.count()):
            if self.provider_list.item(i).data(Qt.ItemDataRole.UserRole) == provider_id:
                self.provider_list.setCurrentRow(i)
                return
        raise KeyError(provider_id)

    def _on_provider_selected(self, row: int) -> None:
        if self._loading:
            return
        self.current = self._settings.providers[row] if 0 <= row < len(self._settings.providers) else None
        self._load_fields()

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
        """Add the preset ``provider_id`` (or select it when it is already there).

        Raises:
            KeyError: There is no such preset.
        """
        existing = self._settings.provider(provider_id)
        if existing is not None:
            self.select_provider(provider_id)
            return existing
        p = preset(provider_id)
        if p is None:
            raise KeyError(provider_id)
        self._settings.providers.append(p)
        self.keys.removed.discard(provider_id)
        self.reload(select=provider_id)
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
        self.reload(select=pid)
        return p

    def add_local_server(self, server: LocalServer) -> bool:
        """Add a server found by "Detect local servers" (its models, no key; an entry with its id is
        updated) and show it; returns whether it was already listed."""
        listed = self._settings.provider(server.kind.id) is not None
        entry = server.add_to(self._settings.providers)
        self.keys.removed.discard(entry.id)
        self.reload(select=entry.id)
        return listed

    def remove_current_provider(self) -> None:
        """Remove the provider being edited (its stored key is removed on OK)."""
        p = self.current
        if p is None:
            return
        self._settings.providers = [q for q in self._settings.providers if q.id != p.id]
        self.keys.pending.pop(p.id, None)
        self.keys.rejected.discard(p.id)
        self.keys.removed.add(p.id)
        self.current = None
        self.reload()
        if self.provider_list.count():
            self.provider_list.setCurrentRow(0)
        else:
            self._load_fields()

    # ------------------------------------------------------------------------------------------
    # The fields

    def _load_fields(self) -> None:
        p = self.current
        self._loading = True
        try:
            enabled = p is not None
            for w in (self.name_edit, self.api_combo, self.base_url_edit, self.needs_key_check, self.key_edit,
                      self.key_env_edit, self.models_edit, self.test_button, self.remove_provider_button,
                      self.session_only_check, self.clear_key_button):
                w.setEnabled(enabled)
            self.test_result.setText("")
            if p is None:
                self.key_error.hide()
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
            self.key_field.load()
        finally:
            self._loading = False

    def _on_field_edited(self, *_args: object) -> None:
        if self._loading or self.current is None:
            return
        p = self.current
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
        if p.needs_key != self.needs_key_check.isChecked():
            p.needs_key = self.needs_key_check.isChecked()
            self.refresh_marks()
        p.key_env = self.key_env_edit.text().strip() or None
        p.models = [m.strip() for m in self.models_edit.text().split(",") if m.strip()]
        self.providers_changed.emit()

    # ------------------------------------------------------------------------------------------
    # The key (``provider_key.KeyField``)

    def forget_key(self) -> None:
        """Forget the key of the current provider (applied on OK)."""
        self.key_field.forget()

    def set_key(self, text: str) -> None:
        """Type ``text`` into the key field (as the user would)."""
        self.key_field.set_key(text)

    # ------------------------------------------------------------------------------------------
    # Test connection

    def _config_for_test(self) -> ProviderConfig | None:
        p = self.current
        if p is None:
            return None
        if p.id in self.keys.rejected:
            self.test_result.setText("Fix the API key first.")
            return None
        key = self.keys.pending.get(p.id)
        if key is None and p.id not in self.keys.deleted:
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
        self.cancel_test()
        self.test_button.setEnabled(False)
        self.test_result.setText("Connecting…")
        self.test_task = asyncio.ensure_future(self._run_test(config))
        return self.test_task

    def cancel_test(self) -> None:
        """Cancel a connection test (and a detection) in progress."""
        self.local.cancel()
        if self.test_task is not None and not self.test_task.done():
            self.test_task.cancel()

    async def _run_test(self, config: ProviderConfig) -> None:
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
        p = self.current
        if p is not None and p.id == config.id and models and not p.models:
            p.models = models[:50]
            self.models_edit.setText(", ".join(p.models))

    def _test_done(self, text: str, *, ok: bool) -> None:
        try:
            self.test_result.setText(text)
            self.test_result.setProperty("ok", ok)
            self.test_button.setEnabled(self.current is not None)
        except RuntimeError:  # the dialog was closed meanwhile
            pass
