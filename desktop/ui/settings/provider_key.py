"""The API key field of the provider being edited in the Providers tab.

Keys never enter the settings: a typed key is kept in ``KeyEdits`` until OK, then stored with
``SecretStore`` by the dialog. A key coming from an environment variable makes the key field
read-only; a key with a control character is refused inline (``key_problem``).
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QRect, Qt
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QCheckBox, QFormLayout, QHBoxLayout, QLabel, QLineEdit, QPushButton, QWidget

from desktop.core.config import ProviderSettings, env_var_for_provider, resolve_key
from desktop.ui.settings.common import KeyEdits, SettingsContext, key_problem, mask_key

__all__ = ["KeyField"]


class KeyField:
    """The key rows of the provider form: the key, why it was refused, session-only, where it is from.

    Args:
        host: The form's widget (the rows' parent).
        form: The form the rows are added to.
        context: The application context (key store, environment).
        keys: The dialog's pending key edits.
        current: Returns the provider being edited (None: none).
        loading: Returns True while the page fills its fields (no edit is recorded then).

    Attributes:
        edit: The key (``apiKeyEdit``); clear_button: Forget (``clearKeyButton``); error: why a typed
            key was refused (``keyErrorLabel``); session_only_check: ``sessionOnlyCheck``; status:
            where the key comes from (``keyStatusLabel``).
    """

    def __init__(self, host: QWidget, form: QFormLayout, context: SettingsContext, keys: KeyEdits,
                 current: Callable[[], ProviderSettings | None], loading: Callable[[], bool]) -> None:
        self.context = context
        self.keys = keys
        self._current = current
        self._loading = loading
        key_row = QHBoxLayout()
        key_row.setSpacing(6)
        self.edit = QLineEdit(host)
        self.edit.setObjectName("apiKeyEdit")
        self.edit.setEchoMode(QLineEdit.EchoMode.Password)
        self.edit.textEdited.connect(self._on_edited)
        key_row.addWidget(self.edit, 1)
        self.clear_button = QPushButton("Forget", host)
        self.clear_button.setObjectName("clearKeyButton")
        self.clear_button.setToolTip("Remove the stored key of this provider")
        self.clear_button.clicked.connect(self.forget)
        key_row.addWidget(self.clear_button)
        form.addRow("API key", key_row)
        self.error = QLabel("", host)
        self.error.setObjectName("keyErrorLabel")
        self.error.setWordWrap(True)
        self.error.setStyleSheet("color: #d04545;")
        self.error.hide()
        form.addRow("", self.error)
        self.session_only_check = QCheckBox("Keep this key for this session only", host)
        self.session_only_check.setObjectName("sessionOnlyCheck")
        self.session_only_check.toggled.connect(self._on_session_only_toggled)
        form.addRow("", self.session_only_check)
        self.status = QLabel("", host)
        self.status.setObjectName("keyStatusLabel")
        self.status.setWordWrap(True)
        self.status.setMinimumWidth(320)
        # Two lines kept whatever it says ("Or set $… in the environment." wraps, "New key: …" does not),
        # so the rows below (Test connection) stay put while a key is typed.
        two_lines = self.status.fontMetrics().boundingRect(QRect(0, 0, 4000, 4000), Qt.TextFlag.TextWordWrap,
                                                           "Ag\nAg")
        self.status.setMinimumHeight(two_lines.height())
        self.status.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        self.status.setForegroundRole(QPalette.ColorRole.PlaceholderText)
        form.addRow("", self.status)

    def load(self) -> None:
        """Show the key state of the current provider."""
        p = self._current()
        if p is None:
            return
        secrets = self.context.secrets
        self.edit.clear()
        self.error.hide()
        self.keys.rejected.clear()  # a refused key is dropped with the field that showed it
        self.edit.setReadOnly(False)
        self.edit.setEchoMode(QLineEdit.EchoMode.Password)
        self.session_only_check.setChecked(
            not secrets.available or self.keys.session_only.get(p.id, secrets.has_session_key(p.id))
        )
        self.session_only_check.setEnabled(secrets.available)
        resolution = resolve_key(p, secrets, self.context.environ)
        env_name = env_var_for_provider(p.id)
        if resolution.from_environment:
            self.edit.setEchoMode(QLineEdit.EchoMode.Normal)
            self.edit.setText(f"from environment: {resolution.env_var}")
            self.edit.setReadOnly(True)
            self.edit.setToolTip(f"${resolution.env_var} overrides any stored key. "
                                 "Unset it to use the key stored here.")
            self.clear_button.setEnabled(False)
            self.session_only_check.setEnabled(False)
            self.status.setText(f"Using ${resolution.env_var} from the environment.")
            return
        pending = self.keys.pending.get(p.id)
        if pending is not None:
            self.edit.setText(pending)
            self.edit.setPlaceholderText("")
            self.status.setText("New key: stored when you press OK.")
        elif resolution.key and p.id not in self.keys.deleted:
            self.edit.setPlaceholderText(mask_key(resolution.key))
            where = "the OS keyring" if resolution.source == "keyring" else "memory, for this session only"
            self.status.setText(f"A key is stored in {where}. Type a new one to replace it.")
        else:
            self.edit.setPlaceholderText("paste your API key" if p.needs_key else "not needed")
            self.status.setText(
                f"Or set ${env_name}" + (f" or ${p.key_env}" if p.key_env else "") + " in the environment."
                if p.needs_key else "This provider works without a key."
            )
        self.edit.setToolTip("")
        self.clear_button.setEnabled(bool(resolution.key) or pending is not None)

    def _on_edited(self, text: str) -> None:
        p = self._current()
        if p is None or self.edit.isReadOnly():
            return
        problem = key_problem(text)
        if problem is not None:
            # Never kept: not pending, not stored; OK is refused while the field holds it.
            self.keys.pending.pop(p.id, None)
            self.keys.rejected.add(p.id)
            self.error.setText(problem)
            self.error.show()
            return
        self.keys.rejected.discard(p.id)
        self.error.hide()
        if text.strip():
            self.keys.pending[p.id] = text
            self.keys.deleted.discard(p.id)
            self.status.setText("New key: stored when you press OK.")
            self.clear_button.setEnabled(True)
        else:
            self.keys.pending.pop(p.id, None)

    def _on_session_only_toggled(self, checked: bool) -> None:
        p = self._current()
        if not self._loading() and p is not None:
            self.keys.session_only[p.id] = checked

    def forget(self) -> None:
        """Forget the key of the current provider (applied on OK)."""
        p = self._current()
        if p is None:
            return
        self.keys.pending.pop(p.id, None)
        self.keys.deleted.add(p.id)
        self.load()
        self.edit.setPlaceholderText("paste your API key")
        self.status.setText("The stored key will be removed when you press OK.")
        self.clear_button.setEnabled(False)

    def set_key(self, text: str) -> None:
        """Type ``text`` into the key field (as the user would)."""
        self.edit.setText(text)
        self._on_edited(text)
