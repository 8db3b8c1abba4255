"""What the board needs of the window's parts (the canvas room sits below the window room).

Structural types only: the window's ``NodeArea`` and ``ProjectController`` satisfy them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from PySide6.QtCore import SignalInstance
from PySide6.QtWidgets import QMdiArea, QMdiSubWindow

if TYPE_CHECKING:
    from desktop.core.store import NodeState
    from desktop.ui.node.chat_node import ChatNodeWidget

__all__ = ["AreaHost", "ProjectsHost"]


class AreaHost(Protocol):
    """The node area (``desktop.ui.window.node_area.NodeArea``)."""

    mdi: QMdiArea
    changed: SignalInstance
    nodes_changed: SignalInstance
    forked: SignalInstance
    focus_hook: Callable[[ChatNodeWidget], bool] | None
    active_hook: Callable[[], ChatNodeWidget | None] | None

    def nodes(self) -> list[ChatNodeWidget]: ...
    def active_node(self) -> ChatNodeWidget | None: ...
    def subwindow_of(self, node: ChatNodeWidget) -> QMdiSubWindow: ...
    def is_tabbed(self) -> bool: ...
    def refit(self) -> None: ...
    def focus_node(self, node: ChatNodeWidget) -> None: ...


class ClosedHost(Protocol):
    """The recently closed nodes (``desktop.ui.window.closed_nodes.ClosedNodes``)."""

    def states(self) -> list[NodeState]: ...


class ProjectsHost(Protocol):
    """The project controller (``desktop.ui.window.project_controller.ProjectController``)."""

    extra_readers: list[Callable[[dict[str, Any]], None]]
    extra_writers: list[Callable[[dict[str, Any]], None]]

    @property
    def closed(self) -> ClosedHost: ...


