"""A chat node's branch map: the tree of its conversation's versions, one click from any of them.

The header's ``branchesButton`` opens a :class:`BranchMapDialog` (object name ``branchMap``), a
non-modal tool window beside the node holding a tree (``branchTree``, columns: branch, messages,
cost). Its top row is the shown conversation; under it, in path order, each edit or regenerate
point (``desktop.core.chat.branches.BranchPoint``) with its versions, and each fork made from a
message. A stored version lists the points and forks inside it. The shown version is bold on the
accent colour and says "shown"; costs read as the cost chip does (``format_cost``).

Clicking a version switches the node to it: the steps go through ``NodeVersions.switch_steps``, the
same switch (``versions.switch_fork``) the ``‹ 2/3 ›`` rows make, and the map redraws with the new
shown path. Clicking a fork asks the window to show that node (``node_requested``; the window
sets :attr:`NodeBranches.peers` so the map knows the project's other nodes) and closes the map.
While the node is busy the map shows why nothing switches.

The button stays enabled when the conversation has no versions: the map then says how to make one
(edit a message or regenerate an answer), which teaches the feature where a disabled button would
hide it.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import QEvent, QModelIndex, QObject, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QFont, QGuiApplication
from PySide6.QtWidgets import QDialog, QHeaderView, QLabel, QTreeWidget, QTreeWidgetItem, QVBoxLayout, QWidget

from desktop.core.chat.branches import Branch, BranchMap, BranchPoint, ForkLink, Peer, branch_map
from desktop.core.chat.cost import format_cost
from desktop.ui.markdown.tail_text import display_text
from desktop.ui.node.style import node_colors

if TYPE_CHECKING:
    from PySide6.QtCore import SignalInstance

    from desktop.core.chat.conversation import Conversation
    from desktop.core.chat.locate import VersionStep
    from desktop.ui.node.header import NodeHeader
    from desktop.ui.node.models import NodeModelChoice
    from desktop.ui.node.versions import NodeVersions
    from desktop.ui.services import AppServices

log = logging.getLogger(__name__)

__all__ = ["BranchMapDialog", "BranchesHost", "NodeBranches"]

_ROLE = Qt.ItemDataRole.UserRole


class BranchesHost(Protocol):
    """What :class:`NodeBranches` needs of its node (a ``ChatNodeWidget``)."""

    @property
    def node_id(self) -> str: ...
    @property
    def title(self) -> str: ...
    @property
    def conversation(self) -> Conversation: ...
    @property
    def header(self) -> NodeHeader: ...
    @property
    def model_choice(self) -> NodeModelChoice: ...
    @property
    def versions(self) -> NodeVersions: ...
    @property
    def changed(self) -> SignalInstance: ...
    def is_busy(self) -> bool: ...


_MARKER = re.compile(r"[-*+>•]|#{1,6}")
"""A list, quote or heading marker left between words (the preview joins a message's lines)."""


def _plural(n: int, word: str, many: str = "") -> str:
    return f"{n} {word}" if n == 1 else f"{n} {many or word + 's'}"


def _quoted(text: str) -> str:
    """``text`` (a message's first words) in quotes, its Markdown syntax hidden: a row reads
    "Plan for the week", not "## Plan for **the** week"."""
    words = " ".join(w for w in display_text(text + "\n").split() if not _MARKER.fullmatch(w))
    return f"“{words}”" if words else "(no text)"


def _point_text(point: BranchPoint) -> str:
    n = point.versions
    if point.kind == "edit":
        return f"✎ Message {point.index + 1} edited · {_plural(n, 'version')}"
    return f"↻ Answer to {_quoted(point.prompt)} regenerated · {_plural(n, 'answer')}"


class BranchMapDialog(QDialog):
    """The branch map of one node (see the module docstring).

    Signals:
        branch_chosen(object): the user clicked a version that is not shown: its ``VersionStep`` tuple.
        node_chosen(str): the user clicked a fork: its node id.
    """

    branch_chosen = Signal(object)
    node_chosen = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent, Qt.WindowType.Tool)
        self.setObjectName("branchMap")
        self.setWindowTitle("Branches")
        self.resize(620, 420)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(12, 12, 12, 12)
        layout.setSpacing(8)
        self.summary = QLabel(self)
        self.summary.setObjectName("branchSummary")
        self.summary.setWordWrap(True)
        layout.addWidget(self.summary)
        self.tree = QTreeWidget(self)
        self.tree.setObjectName("branchTree")
        self.tree.setAccessibleName("Branches")
        self.tree.setColumnCount(3)
        self.tree.setHeaderLabels(["Branch", "Messages", "Cost"])
        self.tree.setRootIsDecorated(True)
        self.tree.setUniformRowHeights(True)
        self.tree.setMouseTracking(True)
        self.tree.setSelectionMode(QTreeWidget.SelectionMode.NoSelection)
        header = self.tree.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
        self._shown: tuple[str, BranchMap] | None = None
        self.tree.itemClicked.connect(self._on_clicked)
        self.tree.itemActivated.connect(self._on_clicked)  # Enter on a row
        layout.addWidget(self.tree, 1)
        self.note = QLabel(self)
        self.note.setObjectName("branchNote")
        self.note.setWordWrap(True)
        self.note.hide()
        layout.addWidget(self.note)
        self._style()

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt's name
        """Follow light/dark switches of the application palette (its own style sheet also sends
        ``PaletteChange``: the application's colours are then unchanged and nothing happens)."""
        if event.type() in (QEvent.Type.ApplicationPaletteChange, QEvent.Type.PaletteChange,
                            QEvent.Type.ThemeChange):
            self._style()
        super().changeEvent(event)

    def _style(self) -> None:
        c = node_colors(QGuiApplication.palette())  # its own palette follows its style sheet
        if c == getattr(self, "_colors", None):
            return
        self._colors = c
        self._accent = QColor(c.user_bubble)
        self._link = QColor(c.link)
        self._muted = QColor(c.muted)
        self.setStyleSheet(f"""
QDialog#branchMap {{ background: {c.window}; }}
QLabel#branchSummary {{ color: {c.text}; }}
QLabel#branchNote {{ background: {c.warn_bg}; border: 1px solid {c.warn_border}; border-radius: 6px;
    padding: 4px 8px; }}
QTreeWidget#branchTree {{ background: {c.base}; border: 1px solid {c.subtle_border}; border-radius: 6px; }}
QTreeWidget#branchTree::item {{ padding: 3px 2px; }}
QTreeWidget#branchTree::item:hover {{ background: {c.chip_bg}; }}
""")
        shown: tuple[str, BranchMap] | None = getattr(self, "_shown", None)
        if shown is not None:
            self.show_map(*shown)  # the rows' own colours

    # -- filling

    def show_map(self, title: str, bm: BranchMap) -> None:
        """Show ``bm``, the map of the node titled ``title`` (the rows are rebuilt, expanded)."""
        self._shown = (title, bm)
        self.setWindowTitle(f"Branches — {title}" if title else "Branches")
        forks = self._count_forks(bm)
        self.summary.setText(
            f"<b>{_plural(bm.leaves, 'branch', 'branches')}</b> · "
            f"{_plural(len(bm.points), 'edit or regenerate point')} on the shown path"
            + (f" · {_plural(forks, 'fork')} to other nodes" if forks else "")
            + f" · all versions cost {format_cost(bm.total)}"
        )
        self.tree.clear()
        root = QTreeWidgetItem(self.tree, ["Shown conversation", str(bm.messages), format_cost(bm.cost)])
        self._bold(root)
        self._align(root)
        self._add_children(root, bm.points, bm.forks)
        if not bm.points and not bm.forks:
            empty = QTreeWidgetItem(root, ["No branches yet: edit a message or regenerate an answer to "
                                           "make one", "", ""])
            empty.setForeground(0, QBrush(self._muted))
            empty.setFlags(Qt.ItemFlag.ItemIsEnabled)
        self.tree.expandAll()
        self.tree.setCurrentIndex(QModelIndex())
        self.note.hide()

    @staticmethod
    def _count_forks(bm: BranchMap) -> int:
        count = len(bm.forks)
        stack = list(bm.points)
        while stack:
            for b in stack.pop().branches:
                count += len(b.forks)
                stack.extend(b.points)
        return count

    def _add_children(self, parent: QTreeWidgetItem, points: Sequence[BranchPoint],
                      forks: Sequence[ForkLink]) -> None:
        rows: list[tuple[int, int, BranchPoint | ForkLink]] = [(p.index, 0, p) for p in points]
        rows += [(f.index, 1, f) for f in forks]  # after the points at the forked message
        rows.sort(key=lambda r: (r[0], r[1]))
        for _index, _order, row in rows:
            if isinstance(row, BranchPoint):
                self._add_point(parent, row)
            else:
                self._add_fork(parent, row)

    def _add_point(self, parent: QTreeWidgetItem, point: BranchPoint) -> None:
        item = QTreeWidgetItem(parent, [_point_text(point), "", ""])
        item.setFlags(Qt.ItemFlag.ItemIsEnabled)
        item.setForeground(0, QBrush(self._muted))
        item.setToolTip(0, f"At {_quoted(point.prompt)}")
        for branch in point.branches:
            self._add_branch(item, point, branch)

    def _add_branch(self, parent: QTreeWidgetItem, point: BranchPoint, branch: Branch) -> None:
        label = f"{branch.k}/{point.versions}  {_quoted(branch.preview)}"
        item = QTreeWidgetItem(parent, [label + ("   ● shown" if branch.shown else ""),
                                        str(branch.messages), format_cost(branch.cost)])
        self._align(item)
        item.setData(0, _ROLE, ("branch", branch.steps))
        if branch.shown:
            self._bold(item)
            for col in range(3):
                item.setBackground(col, QBrush(self._accent))
            item.setToolTip(0, "The version shown in the node")
        else:
            item.setToolTip(0, "Click to show this version in the node")
        self._add_children(item, branch.points, branch.forks)

    def _add_fork(self, parent: QTreeWidgetItem, fork: ForkLink) -> None:
        text = f"↗ Fork: {fork.title or 'Chat'}  — from {_quoted(fork.preview)}"
        item = QTreeWidgetItem(parent, [text, "", ""])
        item.setData(0, _ROLE, ("fork", fork.node_id))
        item.setForeground(0, QBrush(self._link))
        font = item.font(0)
        font.setUnderline(True)
        item.setFont(0, font)
        item.setToolTip(0, f"Show the node “{fork.title}”, forked from message {fork.index + 1}")

    @staticmethod
    def _bold(item: QTreeWidgetItem) -> None:
        for col in range(3):
            font = QFont(item.font(col))
            font.setBold(True)
            item.setFont(col, font)

    @staticmethod
    def _align(item: QTreeWidgetItem) -> None:
        for col in (1, 2):
            item.setTextAlignment(col, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)

    # -- clicks

    def show_note(self, text: str) -> None:
        """Show a line under the tree (why a click did nothing)."""
        self.note.setText(text)
        self.note.show()

    def _on_clicked(self, item: QTreeWidgetItem, _column: int = 0) -> None:
        data = item.data(0, _ROLE)
        if not isinstance(data, tuple):
            return
        kind, value = data
        if kind == "branch" and value:
            self.branch_chosen.emit(value)
        elif kind == "fork":
            self.node_chosen.emit(value)


class NodeBranches(QObject):
    """The branch map of one chat node: opens it from the header, applies its clicks.

    Args:
        node: The node.
        services: The app's services (the price overrides).

    Attributes:
        peers: Set by the window: the project's nodes other than the one named (for fork links).

    Signals:
        node_requested(str): show the node with this id (a fork link was clicked).
    """

    node_requested = Signal(str)

    def __init__(self, node: BranchesHost, services: AppServices) -> None:
        super().__init__(node if isinstance(node, QObject) else None)
        self._node = node
        self._services = services
        self.peers: Callable[[str], Sequence[Peer]] | None = None
        self.dialog: BranchMapDialog | None = None
        node.header.branches_button.clicked.connect(self.open)
        node.changed.connect(self._refresh_if_open)

    def compute(self) -> BranchMap:
        """The node's branch map now."""
        node = self._node
        peers = self.peers(node.node_id) if self.peers is not None else ()
        return branch_map(node.conversation.messages, node.model_choice.pricing_model(),
                          self._services.price_overrides(), peers)

    def open(self) -> BranchMapDialog:
        """Show the map (built on first use, raised when already open)."""
        if self.dialog is None:
            parent = self._node if isinstance(self._node, QWidget) else None
            self.dialog = BranchMapDialog(parent)
            self.dialog.branch_chosen.connect(self.switch)
            self.dialog.node_chosen.connect(self._on_node_chosen)
        self.refresh()
        self.dialog.show()
        self.dialog.raise_()
        self.dialog.activateWindow()
        return self.dialog

    def refresh(self) -> None:
        """Redraw the map (when it exists)."""
        if self.dialog is not None:
            self.dialog.show_map(self._node.title, self.compute())

    def switch(self, steps: tuple[VersionStep, ...]) -> bool:
        """Show the version ``steps`` lead to (a click in the map); False when the node is busy."""
        if self._node.is_busy():
            if self.dialog is not None:
                self.dialog.show_note("The node is answering: switch versions when it is done.")
            return False
        ok = self._node.versions.switch_steps(steps)
        self.refresh()
        return ok

    def _on_node_chosen(self, node_id: str) -> None:
        if self.dialog is not None:
            self.dialog.hide()  # the user went to the other node; its own map is one click away
        self.node_requested.emit(node_id)

    def _refresh_if_open(self) -> None:
        if self.dialog is not None and self.dialog.isVisible():
            self.refresh()
