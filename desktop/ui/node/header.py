"""The chat node's header: title, token and cost chips, provider and model pickers.

The header only shows what the node tells it and reports what the user did (signals); the node
keeps the state (which provider and model are picked, which models are listed).
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import (
    QComboBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from desktop.core.chat.cost import ConversationCost, format_cost
from desktop.core.chat.export import TokenTotals
from desktop.core.chat.summary import cost_tooltip, format_tokens, token_chip_text, token_tooltip
from desktop.core.usage import WARN_FRACTION, ContextUse
from desktop.ui.node.title import TitleField
from desktop.ui.theme import KEY_MARK_TIPS, key_mark

__all__ = ["NodeHeader"]


class NodeHeader(QFrame):
    """The header row of a chat node (object name ``nodeHeader``).

    Children (object names): ``nodeTitle``, ``tokenChip``, ``costChip``, ``providerPicker``,
    ``modelPicker`` (editable: any model id can be typed), ``toolsButton`` (the node's Tools menu:
    ``desktop.ui.node.tools`` fills it), ``branchesButton`` (opens the branch map:
    ``desktop.ui.node.branches``), ``toolsStatus`` (a line shown while a send waits for MCP
    servers), ``contextMeter`` (a thin bar: the last exchange's tokens against the model's context
    window; hidden when the window is unknown; its ``warning`` property turns true at 80 %).

    Signals:
        title_entered(str): the user finished editing the title (the text as typed).
        provider_picked(object): the user picked a provider: its id (None: the "no provider" item).
        model_entered(str): the user picked or typed a model id (stripped; ``""`` for the default).
    """

    title_entered = Signal(str)
    provider_picked = Signal(object)
    model_entered = Signal(str)

    def __init__(self, title: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("nodeHeader")
        hl = QVBoxLayout(self)
        hl.setContentsMargins(10, 8, 10, 8)
        hl.setSpacing(6)
        row1 = QHBoxLayout()
        row1.setSpacing(6)
        self.title_edit = TitleField(title, self)  # Escape cancels a rename (title.py)
        self.title_edit.setObjectName("nodeTitle")
        self.title_edit.setAccessibleName("Node title")
        self.title_edit.setToolTip("Node title (click or F2 to rename, Escape cancels)")
        self.title_edit.editingFinished.connect(lambda: self.title_entered.emit(self.title_edit.text()))
        row1.addWidget(self.title_edit, 1)
        self.token_chip = QLabel(self)
        self.token_chip.setObjectName("tokenChip")
        self.token_chip.setAccessibleName("Tokens")
        row1.addWidget(self.token_chip)
        self.cost_chip = QLabel(self)
        self.cost_chip.setObjectName("costChip")
        self.cost_chip.setAccessibleName("Cost")
        row1.addWidget(self.cost_chip)
        hl.addLayout(row1)
        row2 = QHBoxLayout()
        row2.setSpacing(6)
        self.provider_picker = QComboBox(self)
        self.provider_picker.setObjectName("providerPicker")
        self.provider_picker.setAccessibleName("Provider")
        self.provider_picker.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.provider_picker.currentIndexChanged.connect(
            lambda index: self.provider_picked.emit(self.provider_picker.itemData(index))
        )
        row2.addWidget(self.provider_picker)
        self.model_picker = QComboBox(self)
        self.model_picker.setObjectName("modelPicker")
        self.model_picker.setAccessibleName("Model")
        self.model_picker.setEditable(True)
        self.model_picker.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        self.model_picker.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.model_picker.setMinimumContentsLength(12)
        self.model_picker.activated.connect(lambda _i: self._emit_model())
        line = self.model_picker.lineEdit()
        if line is not None:
            line.editingFinished.connect(self._emit_model)
        row2.addWidget(self.model_picker, 1)
        self.tools_button = QToolButton(self)
        self.tools_button.setObjectName("toolsButton")
        self.tools_button.setText("Tools")
        self.tools_button.setAccessibleName("Tools")
        self.tools_button.setToolTip("Tools this node's model may use (built-in and MCP servers)")
        self.tools_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        row2.addWidget(self.tools_button)
        self.branches_button = QToolButton(self)  # opens the branch map (branches.py)
        self.branches_button.setObjectName("branchesButton")
        self.branches_button.setText("Branches")
        self.branches_button.setAccessibleName("Branches")
        self.branches_button.setToolTip("The versions of this conversation: every edit and regenerate, "
                                        "and the forks made from it")
        row2.addWidget(self.branches_button)
        hl.addLayout(row2)
        self.tools_status = QLabel(self)
        self.tools_status.setObjectName("toolsStatus")
        self.tools_status.setWordWrap(True)
        self.tools_status.hide()
        hl.addWidget(self.tools_status)
        self.context_meter = QProgressBar(self)
        self.context_meter.setObjectName("contextMeter")
        self.context_meter.setAccessibleName("Context window")
        self.context_meter.setTextVisible(False)
        self.context_meter.setRange(0, 1000)
        self.context_meter.setFixedHeight(3)
        self.context_meter.setProperty("warning", False)
        self.context_meter.hide()
        hl.addWidget(self.context_meter)

    def _emit_model(self) -> None:
        self.model_entered.emit(self.model_picker.currentText().strip())

    def show_title(self, title: str) -> None:
        """Show ``title`` in the title field (no signal)."""
        if self.title_edit.text() != title:
            self.title_edit.setText(title)

    def show_providers(self, providers: Sequence[tuple[str, str, bool | None]], current: str | None) -> None:
        """Fill the provider picker without emitting ``provider_picked``.

        Args:
            providers: ``(id, label, has_key)`` of each configured provider, in order; ``has_key`` is
                None for a provider that needs no key (``theme.key_mark`` shows which).
            current: The provider to select; listed as "(missing)" when it is not configured.
        """
        picker = self.provider_picker
        picker.blockSignals(True)
        try:
            picker.clear()
            for pid, label, has_key in providers:
                # A keyless provider gets no mark at all: a blank one would indent the closed picker.
                picker.addItem(key_mark(has_key) if has_key is not None else QIcon(), label, pid)
                picker.setItemData(picker.count() - 1, KEY_MARK_TIPS[has_key], Qt.ItemDataRole.ToolTipRole)
            if current and picker.findData(current) < 0:
                picker.addItem(f"{current} (missing)", current)
            picker.setCurrentIndex(picker.findData(current) if current else -1)
            if not providers and not current:
                picker.addItem("no provider — open Settings", None)
                picker.setCurrentIndex(0)
        finally:
            picker.blockSignals(False)

    def show_models(self, models: Sequence[str], model: str | None, default: str | None) -> None:
        """Fill the model picker without emitting ``model_entered``.

        Args:
            models: The suggested model ids.
            model: The model picked in the node (None: the field stays empty).
            default: The model a send uses when none is picked (shown as the placeholder).
        """
        picker = self.model_picker
        picker.blockSignals(True)
        try:
            picker.clear()
            picker.addItems(list(models))
            picker.setEditText(model or "")
            line = picker.lineEdit()
            if line is not None:
                line.setPlaceholderText(f"{default} (default)" if default else "model id")
        finally:
            picker.blockSignals(False)

    def show_model(self, model: str | None) -> None:
        """Show ``model`` in the model field (no signal)."""
        self.model_picker.blockSignals(True)
        self.model_picker.setEditText(model or "")
        self.model_picker.blockSignals(False)

    def show_tools_status(self, text: str | None) -> None:
        """Show a line about the node's tools (e.g. servers still starting); None hides it."""
        self.tools_status.setText(text or "")
        self.tools_status.setVisible(bool(text))

    def show_context(self, use: ContextUse | None, pending: int = 0) -> None:
        """Show how full the context window is (``None`` hides the meter: nothing known yet);
        ``pending`` of its tokens are the attachments waiting to be sent, estimated."""
        meter = self.context_meter
        if use is None:
            meter.hide()
            return
        meter.setValue(min(1000, round(use.fraction * 1000)))
        warning = use.fraction >= WARN_FRACTION
        if meter.property("warning") != warning:
            meter.setProperty("warning", warning)
            meter.style().unpolish(meter)
            meter.style().polish(meter)
        percent = use.fraction * 100
        basis = "as of the last reply"
        if pending:
            waiting = f"~{format_tokens(pending)} for the attachments waiting"
            last = use.used - pending
            basis = f"the last reply's {format_tokens(last)} and {waiting}" if last > 0 else waiting
        meter.setToolTip(f"{format_tokens(use.used)} of {format_tokens(use.window)} tokens "
                         f"({percent:.0f}% of {use.model}'s context window, {basis})")
        meter.show()

    def show_totals(self, totals: TokenTotals, cost: ConversationCost) -> None:
        """Show the conversation's tokens and cost in the chips (tooltips give the details)."""
        self.token_chip.setText(token_chip_text(totals))
        self.token_chip.setToolTip(token_tooltip(totals))
        self.cost_chip.setText(format_cost(cost))
        self.cost_chip.setToolTip(cost_tooltip(cost))
