"""File → Project budget…: the open project's own monthly budget (``"budget"`` in ``project.json``).

Non-modal (the event loop and the streams keep running). The app-wide budget is in Settings → General.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import QDialog, QDialogButtonBox, QDoubleSpinBox, QFormLayout, QLabel, QWidget

__all__ = ["ProjectBudgetDialog"]


class ProjectBudgetDialog(QDialog):
    """Edit one project's monthly budget (object name ``projectBudgetDialog``).

    Args:
        project_name: Shown in the title.
        limit: The current budget in USD, or None.
        spent: What the project spent this month (shown for reference).
        apply: Called with the new budget (None: no budget) when the user confirms.
        parent: The main window.
    """

    def __init__(self, project_name: str, limit: float | None, spent: float,
                 apply: Callable[[float | None], None], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("projectBudgetDialog")
        self.setWindowTitle(f"Budget of {project_name}")
        self._apply = apply
        form = QFormLayout(self)
        self.spin = QDoubleSpinBox(self)
        self.spin.setObjectName("projectBudgetSpin")
        self.spin.setRange(0.0, 1_000_000.0)
        self.spin.setDecimals(2)
        self.spin.setPrefix("$ ")
        self.spin.setSuffix(" per month")
        self.spin.setSpecialValueText("No budget")
        self.spin.setValue(limit or 0.0)
        form.addRow("Monthly budget", self.spin)
        note = QLabel(f"Spent in this project this calendar month: ${spent:.2f}. At 80 % the cost chip in "
                      "the status bar turns amber; at 100 % a send asks before it goes out.", self)
        note.setObjectName("projectSpentLabel")
        note.setWordWrap(True)
        form.addRow(note)
        ok_cancel = QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        buttons = QDialogButtonBox(ok_cancel, self)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)

    def accept(self) -> None:
        """Apply the budget, then close."""
        self._apply(self.spin.value() or None)
        super().accept()
