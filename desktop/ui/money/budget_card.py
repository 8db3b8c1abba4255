"""The budget card: a send that would go out at or over a monthly budget waits for the user.

When the tightest budget (app-wide or the project's, see ``AppContext.budget_check``) is spent, the
node does not send: the text stays in the input and an inline card (object name ``budgetCard``) says
what was spent against which budget, with **Send anyway** (``sendAnywayButton``, for this one message)
and **Open budget settings** (``budgetSettingsButton``). Nothing is sent until the user confirms, and
since spending comes from the usage ledger, restarting the app changes nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

if TYPE_CHECKING:
    from desktop.core.usage import BudgetCheck, BudgetScope

__all__ = ["BudgetCard"]


class BudgetCard(QFrame):
    """The inline card of a node whose send is held by a spent budget (hidden until needed).

    Args:
        check: Returns the tightest budget and its state now (None: no budget set).
        parent: The node.

    Signals:
        send_anyway(): The user confirmed: send the held message once.
        open_settings(str): Show where the budget is set: ``app`` or ``project``.
    """

    send_anyway = Signal()
    open_settings = Signal(str)

    def __init__(self, check: Callable[[], BudgetCheck | None] | None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("budgetCard")
        self._check = check
        self._scope: BudgetScope = "app"
        self._allow_once = False
        layout = QVBoxLayout(self)
        layout.setContentsMargins(12, 8, 12, 8)
        self.label = QLabel(self)
        self.label.setObjectName("budgetText")
        self.label.setWordWrap(True)
        layout.addWidget(self.label)
        row = QHBoxLayout()
        row.addStretch(1)
        settings = QPushButton("Open budget settings", self)
        settings.setObjectName("budgetSettingsButton")
        settings.clicked.connect(lambda: self.open_settings.emit(self._scope))
        row.addWidget(settings)
        anyway = QPushButton("Send anyway", self)
        anyway.setObjectName("sendAnywayButton")
        anyway.clicked.connect(self._on_send_anyway)
        row.addWidget(anyway)
        layout.addLayout(row)
        self.hide()

    def allows_send(self) -> bool:
        """True when a send may go out now; else show the card and return False."""
        if self._allow_once:
            self._allow_once = False
            self.hide()
            return True
        check = self._check() if self._check is not None else None
        if check is None or check.status.state != "over":
            self.hide()
            return True
        self._scope = check.scope
        unpriced = check.status.unpriced
        extra = f" ({unpriced} response(s) without a price are not counted)" if unpriced else ""
        self.label.setText(f"Not sent: {check.describe()} is spent this month{extra}. Your message is "
                           "still in the box.")
        self.show()
        return False

    def _on_send_anyway(self) -> None:
        self._allow_once = True
        self.send_anyway.emit()
