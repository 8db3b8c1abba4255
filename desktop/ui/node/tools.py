"""A chat node's tools: its Tools menu, the wait for starting MCP servers, MCP grants and card details.

:class:`NodeTools` is attached to each ``ChatNodeWidget`` (``node.node_tools``); the node calls it at
three places only: :meth:`NodeTools.before_send` (a send waits up to 10 s for the node's MCP servers
still starting, so the first request carries their tools), :meth:`NodeTools.auto_approve` (a call of a
server the user always allows in this node needs no card) and nothing else. The permission and tool
cards find it by walking up their parents (``desktop.ui.transcript.mcp_details``) for :meth:`tool_details`,
:meth:`allow_server`, :meth:`result_for` and :meth:`project_folder`.

What a node switched off is saved in the project as the node data key ``"tools_off"`` (a list of
built-in tool names, ``"mcp:<server>"`` entries and MCP tool names); it is only a preference, never a
permission. Always-allow grants of MCP servers live in the user's ``GrantStore`` (config folder).
"""

from __future__ import annotations

import logging
import sys
from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import QObject
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu

from desktop.ui.lifetime import connect_for
from desktop.ui.mcp.status import short_status

if TYPE_CHECKING:
    from pathlib import Path

    from PySide6.QtCore import SignalInstance
    from PySide6.QtWidgets import QPushButton

    from desktop.core.chat.types import ToolCall
    from desktop.core.mcp import McpToolInfo, McpToolResult
    from desktop.core.store import NodeState
    from desktop.ui.mcp_hub import McpHub
    from desktop.ui.node.header import NodeHeader
    from desktop.ui.services import AppServices

log = logging.getLogger(__name__)

__all__ = ["TOOLS_OFF_KEY", "NodeTools", "attach_node_tools", "hub_of", "read_tools_off"]

TOOLS_OFF_KEY = "tools_off"
"""The node data key listing what the node switched off."""
_MAX_ENTRIES = 1000


def read_tools_off(data: dict[str, object]) -> frozenset[str]:
    """The ``tools_off`` entries of a node's data (anything malformed is ignored: a preference only)."""
    raw = data.get(TOOLS_OFF_KEY)
    if not isinstance(raw, list):
        return frozenset()
    return frozenset(v for v in raw[:_MAX_ENTRIES] if isinstance(v, str) and 0 < len(v) <= 300)


class ToolsHost(Protocol):
    """What :class:`NodeTools` needs of its node (a ``ChatNodeWidget``; a Protocol, so this module
    does not import the node's module back)."""

    @property
    def node_id(self) -> str: ...
    @property
    def header(self) -> NodeHeader: ...
    @property
    def send_button(self) -> QPushButton: ...
    @property
    def changed(self) -> SignalInstance: ...
    @property
    def _state(self) -> NodeState: ...  # its saved data keeps ``tools_off``
    def is_closed(self) -> bool: ...


class NodeTools(QObject):
    """The tools of one chat node (see the module docstring).

    Args:
        node: The node (its header gets the menu; its saved data keeps ``tools_off``).
        hub: The context's MCP hub (None: only the built-in tools, e.g. a node without an app context).
    """

    def __init__(self, node: ToolsHost, hub: McpHub | None) -> None:
        super().__init__(node if isinstance(node, QObject) else None)
        self._node = node
        self._hub: McpHub | None = None
        self._data = node._state.data_extra  # noqa: SLF001 - the node's saved data; to_state copies it
        self._off = read_tools_off(self._data)
        self.menu = QMenu(node.header.tools_button)
        self.menu.setObjectName("toolsMenu")
        self.menu.aboutToShow.connect(self.fill_menu)
        node.header.tools_button.setMenu(self.menu)
        self.bind_hub(hub)
        self._update_button()

    def bind_hub(self, hub: McpHub | None) -> None:
        """Use ``hub`` (a node built before the app's services loaded gets it then); the first
        hub given stays."""
        if hub is None or self._hub is not None:
            return
        self._hub = hub
        hub.set_tools_off(self._node.node_id, self._off)
        # The hub outlives the node (a closed node, another project): the connections end with it.
        connect_for(self, hub.signals.servers_changed, self._update_button)
        connect_for(self, hub.signals.status_changed, lambda _status: self._update_button())
        self._update_button()

    # -- what is switched off ----------------------------------------------------------------------
    @property
    def tools_off(self) -> frozenset[str]:
        """What this node switched off."""
        return self._off

    def set_enabled(self, entry: str, enabled: bool) -> None:
        """Switch a built-in tool, a server (``mcp:<name>``) or an MCP tool on or off in this node."""
        off = set(self._off)
        if enabled:
            off.discard(entry)
        else:
            off.add(entry)
        new = frozenset(off)
        if new == self._off:
            return
        self._off = new
        if new:
            self._data[TOOLS_OFF_KEY] = sorted(new)
        else:
            self._data.pop(TOOLS_OFF_KEY, None)
        if self._hub is not None:
            self._hub.set_tools_off(self._node.node_id, new)
        self._update_button()
        self._node.changed.emit()

    def fill_menu(self) -> None:
        """Rebuild the Tools menu: built-in tools, then each MCP server with its tools."""
        menu = self.menu
        menu.clear()
        hub = self._hub
        builtin = hub.builtin_names() if hub is not None else []
        if builtin:
            _heading(menu, "Built-in tools")
            for name in builtin:
                self._check(menu, name, name, f"builtin:{name}")
        statuses = hub.statuses() if hub is not None else {}
        if statuses and hub is not None:
            # Here, not at import time: the hub's module brings asyncio (loaded once a hub exists).
            from desktop.ui.mcp_hub import server_key

            if builtin:
                menu.addSeparator()
            _heading(menu, "MCP servers")
            tools_by_server: dict[str, list[McpToolInfo]] = {}
            manager = hub.manager
            if manager is not None:
                for tool in manager.tools():
                    info = manager.tool_info(tool.name)
                    if info is not None:
                        tools_by_server.setdefault(info.server, []).append(info)
            for name, status in statuses.items():
                key = server_key(name)
                self._check(menu, key, f"{name} — {short_status(status)}", f"server:{name}")
                if key in self._off:
                    continue
                for info in tools_by_server.get(name, []):
                    self._check(menu, info.name, f"    {info.tool}", f"tool:{info.name}")
        if menu.isEmpty():
            empty = menu.addAction("No tools (open a project folder or add MCP servers in Settings)")
            empty.setEnabled(False)

    def _check(self, menu: QMenu, entry: str, label: str, object_name: str) -> QAction:
        action = menu.addAction(label)
        action.setObjectName(object_name)
        action.setCheckable(True)
        action.setChecked(entry not in self._off)
        action.toggled.connect(lambda on, e=entry: self.set_enabled(e, on))
        return action

    def _update_button(self) -> None:
        button = self._node.header.tools_button
        count = len(self._off)
        button.setText("Tools" if not count else f"Tools ({count} off)")

    # -- sending -----------------------------------------------------------------------------------
    async def before_send(self) -> None:
        """Start the MCP servers when needed and wait (≤ 10 s) for this node's that are still starting.

        Raises:
            asyncio.CancelledError: The user pressed Stop while waiting (nothing is sent).
        """
        hub = self._hub
        if hub is None or not hub.ensure_started():
            return
        waiting = hub.starting_for(self._node.node_id)
        if not waiting:
            return
        header = self._node.header
        header.show_tools_status("Waiting for MCP servers to start: " + ", ".join(waiting) + "…")
        import asyncio

        task = asyncio.current_task()

        def stop_waiting(_checked: bool = False) -> None:
            if task is not None:
                task.cancel()  # Stop while waiting: the send is dropped, the node is idle at once

        button = self._node.send_button  # shows "Stop" while the node is busy, this wait included
        button.clicked.connect(stop_waiting)
        try:
            await hub.wait_for_node(self._node.node_id)
        except asyncio.CancelledError:
            if not self._node.is_closed():  # a closed node's widgets are being deleted: leave them
                header.show_tools_status(None)
            raise
        finally:
            if not self._node.is_closed():
                button.clicked.disconnect(stop_waiting)
        if self._node.is_closed():
            return
        late = hub.starting_for(self._node.node_id)
        header.show_tools_status(
            "Sent without the tools of MCP servers still starting: " + ", ".join(late) if late else None
        )

    # -- approval ----------------------------------------------------------------------------------
    def auto_approve(self, call: ToolCall) -> bool:
        """True when ``call`` is an MCP tool of a server the user always allows in this node."""
        hub = self._hub
        info = self.tool_details(call.name)
        folder = hub.project_dir() if hub is not None else None
        if info is None or folder is None or hub is None:
            return False
        try:
            key = hub.grant_key(info.server)
            return key is not None and key in hub.grants.servers(folder, self._node.node_id)
        except Exception:  # noqa: BLE001 - an unreadable grants file grants nothing
            log.warning("could not read the MCP server grants", exc_info=True)
            return False

    def grant_name(self, tool: str) -> str:
        """How "Always allow this tool in this node" names ``tool``: a built-in tool by its name; an
        MCP tool by its name and what its server runs (``mcp__files__read#<hash>``), so the grant
        never carries over to another server that reuses the name."""
        hub = self._hub
        info = self.tool_details(tool)
        key = hub.grant_key(info.server) if hub is not None and info is not None else None
        return f"{tool}#{key.rsplit('#', 1)[1]}" if key is not None else tool

    def allow_server(self, server: str) -> None:
        """Always allow every tool of ``server`` in this node (stored in the user's ``grants.json``)."""
        hub = self._hub
        folder = hub.project_dir() if hub is not None else None
        if hub is None or folder is None:
            return
        key = hub.grant_key(server)
        if key is None:
            return
        try:
            hub.grants.allow_server(folder, self._node.node_id, key)
        except OSError as exc:
            log.error("could not store the grant for MCP server %s: %s", server, exc)

    def tool_details(self, name: str) -> McpToolInfo | None:
        """What the permission card shows for an MCP tool (None: not an MCP tool)."""
        return self._hub.tool_info(name) if self._hub is not None else None

    def result_for(self, name: str, text: str | None) -> McpToolResult | None:
        """The whole result of a recent MCP call (images, the uncut text) for the tool card."""
        return self._hub.result_for(name, text) if self._hub is not None else None

    def project_folder(self) -> Path | None:
        """The open project's folder, where ``write_file`` writes (the card compares the file there)."""
        return self._hub.project_dir() if self._hub is not None else None


def _heading(menu: QMenu, text: str) -> None:
    """A group's title in the menu: a disabled bold entry (``addSection`` draws a bare separator
    instead of its text once a style sheet styles the menu)."""
    action = menu.addAction(text)
    action.setEnabled(False)
    font = action.font()
    font.setBold(True)
    action.setFont(font)


def attach_node_tools(node: ToolsHost, services: AppServices) -> NodeTools:
    """Give ``node`` its Tools menu and MCP support (the hub is found through the services' runtime)."""
    return NodeTools(node, hub_of(services))


def hub_of(services: AppServices) -> McpHub | None:
    """The MCP hub of the context ``services`` come from, when it exists (None: not loaded yet, or
    no app context at all)."""
    if "desktop.ui.mcp_hub" not in sys.modules:
        return None  # no hub can exist before its module is loaded (keeps the start-up path light)
    from desktop.ui.mcp_hub import hub_for

    return hub_for(services.runtime)
