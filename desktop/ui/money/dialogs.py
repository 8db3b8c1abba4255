"""The window's money dialogs: View → Usage… (the dashboard) and File → Project budget….

Both are non-modal (streams keep running); one usage dashboard at a time. A held send's "Open
budget settings" lands here too: the app-wide budget is in Settings → General, a project's own in
its budget dialog. What the dialogs need from the window (the open project's folder and budget, a
way to show the app-wide budget) is handed in: this room knows neither the project controller nor
the settings dialog.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMainWindow

if TYPE_CHECKING:
    from desktop.ui.context import AppContext
    from desktop.ui.money.budget_dialog import ProjectBudgetDialog
    from desktop.ui.money.usage_dialog import UsageDialog

__all__ = ["MoneyDialogs"]


class MoneyDialogs:
    """Opens the usage dashboard and the budget dialogs of one main window.

    Args:
        window: The main window (the dialogs' parent).
        context: Returns the window's application context.
        project_folder: Returns the open project's folder (None: no project).
        project_budget: Returns the open project's monthly budget (None: none).
        set_project_budget: Sets the open project's monthly budget (None removes it).
        budgets_changed: Called after a budget changed (the status bar recounts).
        show_app_budget: Shows where the app-wide budget is set (Settings → General).
    """

    def __init__(
        self,
        window: QMainWindow,
        context: Callable[[], AppContext],
        *,
        project_folder: Callable[[], Path | None],
        project_budget: Callable[[], float | None],
        set_project_budget: Callable[[float | None], None],
        budgets_changed: Callable[[], None],
        show_app_budget: Callable[[], None],
    ) -> None:
        self._window = window
        self._context = context
        self._project_folder = project_folder
        self._project_budget = project_budget
        self._set_project_budget = set_project_budget
        self._budgets_changed = budgets_changed
        self._show_app_budget = show_app_budget
        self.usage_dialog: UsageDialog | None = None

    def open_usage(self) -> UsageDialog:
        """Open the usage dashboard on the ledger (or raise the open one); returns it."""
        from desktop.core.usage import ledger_path  # not at import time: the window is built before it
        from desktop.ui.money.usage_dialog import UsageDialog  # nor the dashboard (start-up)

        existing = self.usage_dialog
        if existing is not None and existing.isVisible():
            existing.raise_()
            existing.activateWindow()
            return existing
        dialog = UsageDialog(ledger_path(self._context().config_dir), parent=self._window)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose, True)
        dialog.destroyed.connect(lambda *_: setattr(self, "usage_dialog", None))
        self.usage_dialog = dialog
        dialog.show()
        return dialog

    def open_project_budget(self) -> ProjectBudgetDialog | None:
        """Edit the open project's monthly budget; returns the dialog (None without a project)."""
        from desktop.ui.money.budget_dialog import ProjectBudgetDialog  # start-up: built when first opened

        folder = self._project_folder()
        if folder is None:
            return None

        def apply(limit: float | None) -> None:
            self._set_project_budget(limit)
            self._budgets_changed()

        spent = self._context().tally.totals(folder).usd
        dialog = ProjectBudgetDialog(folder.name, self._project_budget(), spent, apply,
                                     parent=self._window)
        dialog.open()
        return dialog

    def open_budget_settings(self, scope: str) -> None:
        """Show where a budget of ``scope`` is set: ``project`` → its dialog, else Settings → General."""
        if scope == "project":
            self.open_project_budget()
            return
        self._show_app_budget()
