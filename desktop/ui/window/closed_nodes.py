"""Recently closed nodes: what × and Node → Close keep, Reopen brings back, and Delete… removes for good.

:class:`ClosedNodes` is the window's list of the project's closed nodes (``Project.closed``, most
recently closed first), each a whole ``NodeState``: its conversation with every version, provider,
model, system prompt, tools switched off and normal geometry. The project controller loads it with
the project and saves it with the nodes; the store keeps ``MAX_CLOSED`` and archives older ones. A node
with neither messages nor a system prompt holds nothing to lose and is not kept. Imported conversations
beyond the few opened as nodes wait here too, after the closed ones (``park``; ``PARKED_KEY``).

:func:`confirm_delete` asks before a closed node is deleted for good (Cancel is the default button).
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import QMessageBox, QWidget

if TYPE_CHECKING:
    from desktop.core.store import NodeState, TrimInfo

log = logging.getLogger(__name__)

__all__ = ["ClosedNodes", "confirm_delete", "worth_keeping"]


def worth_keeping(state: NodeState) -> bool:
    """True when a closed node holds something: a message or a system prompt."""
    return bool(state.conversation.messages) or bool((state.system or "").strip())


class ClosedNodes(QObject):
    """The open project's recently closed nodes, most recently closed first.

    Signals:
        changed(): A node was added, taken back, deleted, or the list was replaced.
    """

    changed = Signal()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._states: list[NodeState] = []

    def states(self) -> list[NodeState]:
        """The closed nodes, most recently closed first (the list is a copy)."""
        return list(self._states)

    def __len__(self) -> int:
        return len(self._states)

    def load(self, states: Iterable[NodeState]) -> None:
        """Replace the list (a project was opened)."""
        self._states = list(states)
        self.changed.emit()

    def push(self, state: NodeState, *, now_ms: int | None = None) -> bool:
        """Keep ``state`` as the most recently closed node; False (nothing kept) when it is empty.

        Args:
            state: The node as it was when closed.
            now_ms: When it was closed (epoch ms; the clock when None).
        """
        from desktop.core.store import CLOSED_AT_KEY

        if not worth_keeping(state):
            return False
        extra = dict(state.extra)
        extra[CLOSED_AT_KEY] = int(time.time() * 1000) if now_ms is None else now_ms
        self._states = [dataclasses.replace(state, extra=extra),
                        *(s for s in self._states if s.id != state.id)]
        self.changed.emit()
        return True

    def park(self, states: Iterable[NodeState]) -> None:
        """Keep imported nodes that are not opened (marked ``PARKED_KEY``) after the closed ones,
        replacing any with the same id; one ``changed`` for all of them."""
        new = list(states)
        ids = {s.id for s in new}
        self._states = [*(s for s in self._states if s.id not in ids), *new]
        self.changed.emit()

    def take(self, node_id: str | None = None) -> NodeState | None:
        """Remove and return a closed node to reopen it (the most recently closed one when ``node_id``
        is None: imported nodes never opened are not), without its closing time or parked mark; None
        when there is none."""
        from desktop.core.store import CLOSED_AT_KEY, PARKED_KEY, is_parked

        for i, state in enumerate(self._states):
            if state.id == node_id or (node_id is None and not is_parked(state)):
                del self._states[i]
                self.changed.emit()
                extra = {k: v for k, v in state.extra.items() if k not in (CLOSED_AT_KEY, PARKED_KEY)}
                return dataclasses.replace(state, extra=extra)
        return None

    def find(self, node_id: str) -> NodeState | None:
        """The closed node ``node_id``, or None."""
        return next((s for s in self._states if s.id == node_id), None)

    def closed_at(self, state: NodeState) -> int | None:
        """When ``state`` was closed (epoch ms), or None when unknown."""
        from desktop.core.store import CLOSED_AT_KEY

        value = state.extra.get(CLOSED_AT_KEY)
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    def drop(self, node_ids: Iterable[str]) -> None:
        """Forget these closed nodes (deleted for good, or moved to the archive by a save)."""
        ids = set(node_ids)
        kept = [s for s in self._states if s.id not in ids]
        if len(kept) != len(self._states):
            self._states = kept
            self.changed.emit()

    def apply_saved(self, trimmed: Mapping[str, TrimInfo]) -> None:
        """Take in what a save trimmed of closed nodes (their oldest messages went to the archive)."""
        from desktop.core.store import apply_trim

        for state in self._states:
            info = trimmed.get(state.id)
            if info is not None:
                apply_trim(state.conversation, info)


def confirm_delete(parent: QWidget, title: str, on_delete: Callable[[], object]) -> QMessageBox:
    """Ask (window-modal, without blocking the loop) whether to delete the closed node ``title`` for
    good; ``on_delete`` runs only when the user clicks Delete. Cancel is the default button, so Enter
    and Escape keep the node.

    Returns:
        The open dialog (object name ``deleteNodeDialog``; buttons ``confirmDeleteButton`` and
        ``cancelDeleteButton``).
    """
    box = QMessageBox(parent)
    box.setObjectName("deleteNodeDialog")
    box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose, True)
    box.setIcon(QMessageBox.Icon.Warning)
    box.setWindowTitle("Delete node")
    box.setText(f"Delete \u201c{title}\u201d for good?")
    box.setInformativeText("Its conversation, every version and its archived history are removed from "
                           "the project. This cannot be undone.")
    delete = box.addButton("Delete", QMessageBox.ButtonRole.DestructiveRole)
    delete.setObjectName("confirmDeleteButton")
    cancel = box.addButton(QMessageBox.StandardButton.Cancel)
    cancel.setObjectName("cancelDeleteButton")
    box.setDefaultButton(cancel)
    box.setEscapeButton(cancel)

    def finished(_result: int) -> None:
        if box.clickedButton() is delete:
            on_delete()

    box.finished.connect(finished)
    box.open()
    return box
