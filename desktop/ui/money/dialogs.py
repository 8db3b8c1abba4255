"""The window's money dialogs: View → Usage… (the dashboard) and File → Project budget….

Both are non-modal (streams keep running); one usage dashboard at a time. A held send's "Open
budget settings" lands here too: the app-wide budget is in Settings → General, a project's own in
its budget dialog.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMainWindow

if TYPE_CHECKING:
    from desktop.ui.context import AppContext
    from desktop.ui.money.budget_dialog import ProjectBudgetDialog
    from desktop.ui.money.usage_dialog import UsageDialog
    from desktop.ui.settings_dialog import SettingsDialog
    from desktop.ui.window.project_controller import ProjectController

__all__ = ["MoneyDialogs"]


class MoneyDialogs:
    """Opens the usage dashboard and the budget dialogs of one main window.

    Args:
        window: The main window (the dialogs' parent).
        context: Returns the window's application context.
        projects: The window's project controller (the project's budget lives in its file).
        budgets_changed: Called after a budget changed (the status bar recounts).
        open_settings: Opens (or raises) the settings dialog and returns it.
    """

    def __init__(self, window: QMainWindow, context: Callable[[], AppContext], projects: ProjectController,
                 budgets_changed: Callable[[], None], open_settings: Callable[[], SettingsDialog]) -> None:
        self._window = window
        self._context = context
        self._projects = projects
        self._budgets_changed = budgets_changed
        self._open_settings = open_settings
        self.usage_dialog: UsageDialog | None = None

    def open_usage(self) -> UsageDialog:
        """Open the usage dashboard on the ledger (or raise the open one); returns it."""
        from desktop.core.usage import ledger_path
        from desktop.ui.money.usage_dialog import UsageDialog

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
        from desktop.ui.money.budget_dialog import ProjectBudgetDialog

        folder = self._projects.folder
        if folder is None:
            return None

        def apply(limit: float | None) -> None:
            self._projects.set_monthly_budget(limit)
            self._budgets_changed()

        spent = self._context().tally.totals(folder).usd
        dialog = ProjectBudgetDialog(folder.name, self._projects.monthly_budget, spent, apply,
                                     parent=self._window)
        dialog.open()
        return dialog

    def open_budget_settings(self, scope: str) -> None:
        """Show where a budget of ``scope`` is set: ``project`` → its dialog, else Settings → General."""
        if scope == "project":
            self.open_project_budget()
            return
        dialog = self._open_settings()
        dialog.tabs.setCurrentWidget(dialog.general_page)
        dialog.budget_spin.setFocus()
