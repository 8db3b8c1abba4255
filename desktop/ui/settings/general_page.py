"""The General tab: default provider and model, history kept per node, tool loop limit, prompt caching."""

from __future__ import annotations

from PySide6.QtWidgets import QCheckBox, QComboBox, QDoubleSpinBox, QFormLayout, QSpinBox, QWidget

from desktop.core.config import Settings

__all__ = ["GeneralPage"]


class GeneralPage(QWidget):
    """Edit the defaults and limits of ``settings`` (read on ``load``, written by ``apply_to``).

    Args:
        settings: The dialog's working copy of the settings (its providers fill the combos).
        parent: The dialog.
    """

    def __init__(self, settings: Settings, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._settings = settings
        form = QFormLayout(self)
        form.setContentsMargins(4, 14, 4, 4)
        form.setHorizontalSpacing(12)
        form.setVerticalSpacing(10)
        self.default_provider_combo = QComboBox(self)
        self.default_provider_combo.setObjectName("defaultProviderCombo")
        self.default_provider_combo.currentIndexChanged.connect(self._on_default_provider_changed)
        form.addRow("Default provider", self.default_provider_combo)
        self.default_model_combo = QComboBox(self)
        self.default_model_combo.setObjectName("defaultModelCombo")
        self.default_model_combo.setEditable(True)
        self.default_model_combo.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        form.addRow("Default model", self.default_model_combo)
        self.history_cap_spin = QSpinBox(self)
        self.history_cap_spin.setObjectName("historyCapSpin")
        self.history_cap_spin.setRange(16, 1024 * 1024)
        self.history_cap_spin.setSuffix(" KiB")
        self.history_cap_spin.setToolTip("History kept per node in project.json; older exchanges go to the "
                                         "project's archive (still exported)")
        form.addRow("History per node", self.history_cap_spin)
        self.max_iterations_spin = QSpinBox(self)
        self.max_iterations_spin.setObjectName("maxIterationsSpin")
        self.max_iterations_spin.setRange(1, 100)
        self.max_iterations_spin.setToolTip("Model calls per message when the model uses tools")
        form.addRow("Tool loop limit", self.max_iterations_spin)
        self.prompt_caching_check = QCheckBox("Cache prompts (Anthropic)", self)
        self.prompt_caching_check.setObjectName("promptCachingCheck")
        self.prompt_caching_check.setToolTip(
            "Marks the tools, the system prompt and the conversation so far as cacheable in every "
            "Anthropic request.\nA follow-up that repeats them reads them from the cache at about a "
            "tenth of the input price;\nwriting the cache costs 25% more than plain input once, and "
            "it expires after 5 minutes unused.\nOpenAI-compatible providers cache on their own: "
            "this setting does not affect them."
        )
        form.addRow("Prompt caching", self.prompt_caching_check)
        self.budget_spin = QDoubleSpinBox(self)
        self.budget_spin.setObjectName("budgetSpin")
        self.budget_spin.setRange(0.0, 1_000_000.0)
        self.budget_spin.setDecimals(2)
        self.budget_spin.setPrefix("$ ")
        self.budget_spin.setSuffix(" per month")
        self.budget_spin.setSpecialValueText("No budget")
        self.budget_spin.setToolTip(
            "App-wide monthly budget (calendar month, every project), counted from the usage ledger. "
            "At 80 % the cost chip in the status bar turns amber; at 100 % a send asks before it goes out."
        )
        form.addRow("Monthly budget", self.budget_spin)

    def load(self) -> None:
        """Show the values of the settings."""
        self.refresh_providers()
        self.default_model_combo.setCurrentText(self._settings.default_model or "")
        self.history_cap_spin.setValue(self._settings.history_cap_kib)
        self.max_iterations_spin.setValue(self._settings.max_iterations)
        self.prompt_caching_check.setChecked(self._settings.prompt_caching)
        self.budget_spin.setValue(self._settings.monthly_budget_usd or 0.0)

    def apply_to(self, settings: Settings) -> None:
        """Write the values shown into ``settings``."""
        settings.default_provider = self.default_provider_combo.currentData()
        settings.default_model = self.default_model_combo.currentText().strip() or None
        settings.history_cap_kib = self.history_cap_spin.value()
        settings.max_iterations = self.max_iterations_spin.value()
        settings.prompt_caching = self.prompt_caching_check.isChecked()
        settings.monthly_budget_usd = self.budget_spin.value() or None

    def refresh_providers(self) -> None:
        """List the providers again in the default provider combo (the choice is kept when it can be)."""
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
