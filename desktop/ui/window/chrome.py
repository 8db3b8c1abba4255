"""The main window's chrome: actions, the menu bar, the slim toolbar and the status bar labels.

Built with Qt only (no core, no ``Qt`` enum namespace), because the window's shell is built and
painted before anything else is imported.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QLabel, QMainWindow, QMenuBar, QSizePolicy, QToolBar, QWidget

__all__ = ["make_action", "fill_menu_bar", "build_toolbar", "StatusLabels", "build_status_bar"]

#: A menu: its title and its actions, None for a separator.
MenuSpec = tuple[str, Sequence[QAction | None]]


def make_action(parent: QWidget, text: str, slot: Callable[[], object], *,
                shortcut: str | QKeySequence | QKeySequence.StandardKey | None = None,
                name: str = "", tip: str = "") -> QAction:
    """A ``QAction`` that calls ``slot()`` when triggered.

    Args:
        parent: The action's owner.
        text: The menu text.
        slot: Called without arguments on every trigger.
        shortcut: Its key sequence.
        name: Its object name (tests and automation find it by this).
        tip: Tool and status tip.
    """
    action = QAction(text, parent)
    if name:
        action.setObjectName(name)
    if shortcut is not None:
        # setShortcuts([...]), not setShortcut(): the latter's overloads create Qt's enum namespace
        # (~25 ms) and the shell is built before the first paint.
        action.setShortcuts([QKeySequence(shortcut)])
    if tip:
        action.setToolTip(tip)
        action.setStatusTip(tip)
    action.triggered.connect(lambda _checked=False: slot())
    return action


def fill_menu_bar(bar: QMenuBar, menus: Sequence[MenuSpec]) -> None:
    """Add ``menus`` to ``bar`` in order (None entries become separators)."""
    for title, actions in menus:
        menu = bar.addMenu(title)
        for action in actions:
            if action is None:
                menu.addSeparator()
            else:
                menu.addAction(action)


def build_toolbar(window: QMainWindow, left: Sequence[QAction | None], right: Sequence[QAction]) -> QToolBar:
    """The fixed ``mainToolBar``: ``left`` actions (None: a separator), a stretch, then ``right``."""
    bar = QToolBar("Main", window)
    bar.setObjectName("mainToolBar")
    bar.setMovable(False)
    bar.setFloatable(False)
    # The actions have no icons, so the buttons show their (icon) text.
    for action in left:
        if action is None:
            bar.addSeparator()
        else:
            bar.addAction(action)
    spacer = QWidget(bar)
    spacer.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
    bar.addWidget(spacer)
    for action in right:
        bar.addAction(action)
    window.addToolBar(bar)
    return bar


@dataclass(frozen=True)
class StatusLabels:
    """The status bar's labels.

    Attributes:
        project: The project folder (``projectPathLabel``).
        provider: "Offline demo" in demo mode (``demoModeLabel``).
        cost: The session cost (``sessionCostLabel``).
    """

    project: QLabel
    provider: QLabel
    cost: QLabel


def build_status_bar(window: QMainWindow) -> StatusLabels:
    """Set up ``window``'s status bar (``statusBar``) with its three labels."""
    status = window.statusBar()
    status.setObjectName("statusBar")
    status.setSizeGripEnabled(True)
    project = QLabel("", status)
    project.setObjectName("projectPathLabel")
    status.addWidget(project, 1)
    provider = QLabel("", status)
    provider.setObjectName("demoModeLabel")
    status.addPermanentWidget(provider)
    cost = QLabel("", status)
    cost.setObjectName("sessionCostLabel")
    cost.setToolTip("Cost of every conversation in this window (per-model prices; "
                    "\"≥\" when some model has no known price)")
    status.addPermanentWidget(cost)
    return StatusLabels(project=project, provider=provider, cost=cost)


def show_about_box(window: QMainWindow) -> None:
    """A non-modal About box over ``window``."""
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QMessageBox

    from desktop import __version__

    box = QMessageBox(window)
    box.setWindowTitle("About Chat Nodes")
    box.setIconPixmap(window.windowIcon().pixmap(64, 64))
    box.setText(f"<b>Chat Nodes</b> {__version__}")
    box.setInformativeText(
        "A desktop client for OpenAI-compatible and Anthropic models: several chats side by side, "
        "tool calls you approve, token and cost accounting, history per project folder.<br><br>"
        "Python, Qt (PySide6) and asyncio. No Electron."
    )
    box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose, True)
    box.setModal(False)
    box.show()
