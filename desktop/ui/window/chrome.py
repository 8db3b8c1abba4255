"""The main window's chrome: its actions, the menu bar, the slim toolbar and the status bar labels.

Built with Qt only (no core, no ``Qt`` enum namespace), because the window's shell is built and
painted before anything else is imported.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QLabel, QMainWindow, QMenu, QMenuBar, QSizePolicy, QToolBar, QWidget

__all__ = [
    "ActionSlots", "StatusLabels", "WindowActions", "build_status_bar", "build_toolbar", "display_path",
    "fill_menu_bar", "fit_to_screen", "make_action", "open_folder",
]

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


@dataclass(frozen=True)
class ActionSlots:
    """What the main window's actions do: each is called without arguments, ``tabbed`` and ``sidebar``
    with their state."""

    new_project: Callable[[], object]
    open_project: Callable[[], object]
    export: Callable[[], object]
    project_budget: Callable[[], object]
    settings: Callable[[], object]
    quit: Callable[[], object]
    new_node: Callable[[], object]
    close_node: Callable[[], object]
    tile: Callable[[], object]
    cascade: Callable[[], object]
    tabbed: Callable[[bool], object]
    usage: Callable[[], object]
    about: Callable[[], object]
    demo: Callable[[], object]
    import_conversations: Callable[[], object]
    reopen_node: Callable[[], object]
    rename_node: Callable[[], object]
    delete_node: Callable[[], object]
    sidebar: Callable[[bool], object]
    shortcuts: Callable[[], object]


class WindowActions:
    """The main window's actions, named by what they do (tests and automation find them by object name).

    Args:
        window: Their owner.
        on: What each does.
    """

    def __init__(self, window: QMainWindow, on: ActionSlots) -> None:
        def action(text: str, slot: Callable[[], object], **kw: Any) -> QAction:
            return make_action(window, text, slot, **kw)

        self.new_project = action("New project…", on.new_project, name="newProjectAction",
                                  tip="Create a project in a new or empty folder")
        self.open_project = action("Open project…", on.open_project, shortcut=QKeySequence.StandardKey.Open,
                                   name="openProjectAction", tip="Open a project folder")
        self.export = action("Export conversation…", on.export, shortcut="Ctrl+E", name="exportAction",
                             tip="Save the active conversation as Markdown")
        self.export.setIconText("Export")
        self.import_conversations = action(
            "Import…", on.import_conversations, name="importAction",
            tip="Import conversations from a ChatGPT or Claude data export, or a Chat Nodes export")
        self.project_budget = action("Project budget…", on.project_budget, name="projectBudgetAction",
                                     tip="This project's monthly budget")
        self.settings = action("Settings…", on.settings, shortcut="Ctrl+,", name="settingsAction",
                               tip="Providers, keys, prices and limits")
        self.settings.setMenuRole(QAction.MenuRole.PreferencesRole)
        self.settings.setIconText("Settings")
        self.quit = action("Quit", on.quit, shortcut="Ctrl+Q", name="quitAction")
        self.quit.setMenuRole(QAction.MenuRole.QuitRole)
        self.new_node = action("New chat node", on.new_node, shortcut="Ctrl+N", name="newNodeAction",
                               tip="Open a new chat node (Ctrl+N)")
        self.new_node.setIconText("+  New chat")
        self.close_node = action("Close node", on.close_node, shortcut="Ctrl+W", name="closeNodeAction",
                                 tip="Close the active chat node")
        self.reopen_node = action("Reopen closed node", on.reopen_node, shortcut="Ctrl+Shift+T",
                                  name="reopenNodeAction", tip="Open the most recently closed node again")
        self.rename_node = action("Rename node", on.rename_node, shortcut="F2", name="renameNodeAction",
                                  tip="Rename the active node (Escape cancels)")
        self.delete_node = action("Delete node…", on.delete_node, name="deleteNodeAction",
                                  tip="Delete the active node and its history for good (asks first)")
        self.recent = QMenu("Recent projects", window)
        self.recent.setObjectName("recentProjectsMenu")
        self.tile = action("Tile", on.tile, shortcut="Ctrl+Shift+L", name="tileAction",
                           tip="Tile the nodes side by side (Ctrl+Shift+L)")
        self.cascade = action("Cascade", on.cascade, name="cascadeAction", tip="Cascade the nodes")
        self.tabbed = QAction("Tabbed", window)
        self.tabbed.setObjectName("tabbedAction")
        self.tabbed.setCheckable(True)
        self.tabbed.setShortcuts([QKeySequence("Ctrl+Shift+M")])
        self.tabbed.setToolTip("Show one node at a time, with tabs (Ctrl+Shift+M)")
        self.tabbed.toggled.connect(on.tabbed)
        self.sidebar = QAction("Sidebar", window)
        self.sidebar.setObjectName("sidebarAction")
        self.sidebar.setCheckable(True)
        self.sidebar.setShortcuts([QKeySequence("Ctrl+B")])
        self.sidebar.setToolTip("The project's nodes and its recently closed ones (Ctrl+B)")
        self.sidebar.toggled.connect(on.sidebar)
        self.usage = action("Usage…", on.usage, shortcut="Ctrl+Shift+D", name="usageAction",
                            tip="Spending by day, model, node and project, from the usage ledger")
        self.shortcuts = action("Keyboard shortcuts", on.shortcuts, shortcut="Ctrl+/", name="shortcutsAction",
                                tip="Every keyboard shortcut of the window")
        self.about = action("About Chat Nodes", on.about, name="aboutAction")
        self.about.setMenuRole(QAction.MenuRole.AboutRole)
        self.demo = action("Offline demo", on.demo, name="demoAction",
                           tip="Use the built-in offline demo provider (no key needed)")

    def install(self, window: QMainWindow) -> StatusLabels:
        """Put the actions in ``window``'s menu bar and toolbar, and set up its status bar."""
        fill_menu_bar(window.menuBar(), [
            ("&File", [self.new_project, self.open_project, self.recent.menuAction(), None,
                       self.import_conversations, self.export, None,
                       self.project_budget, self.settings, None, self.quit]),
            ("&Node", [self.new_node, self.close_node, self.reopen_node, None, self.rename_node, None,
                       self.delete_node]),
            ("&View", [self.sidebar, None, self.tile, self.cascade, None, self.tabbed, None, self.usage]),
            ("&Help", [self.shortcuts, None, self.demo, None, self.about]),
        ])
        build_toolbar(window, [self.new_node, None, self.tile, self.cascade, self.tabbed],
                      [self.export, self.settings])
        return build_status_bar(window)


def fit_to_screen(window: QMainWindow, width: int, height: int) -> None:
    """Size ``window`` ``width`` x ``height``, shrunk to 92 % of the screen's free area on small screens."""
    screen = window.screen()
    if screen is not None:
        free = screen.availableGeometry()
        width = min(width, int(free.width() * 0.92))
        height = min(height, int(free.height() * 0.92))
    window.resize(max(width, 640), max(height, 480))


def display_path(path: Path) -> str:
    """``path`` with the home folder shown as ``~``."""
    try:
        return "~/" + path.relative_to(Path.home()).as_posix()
    except ValueError:
        return str(path)


def open_folder(folder: Path) -> bool:
    """Show ``folder`` in the system's file manager; False when no application took it."""
    from PySide6.QtCore import QUrl
    from PySide6.QtGui import QDesktopServices

    return QDesktopServices.openUrl(QUrl.fromLocalFile(str(folder)))


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
