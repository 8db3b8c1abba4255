"""What the transcript's cards add for MCP tool calls: the server/tool details and the result's extras.

The permission card (``desktop.ui.transcript.permission_card``) of an MCP call names the server,
the tool, its description and its annotations (read-only / destructive / open-world: the server's
claims) above the full arguments, and offers "Always allow this server in this node"
(``alwaysAllowServerButton``). The tool card of a finished MCP call shows, when the model got a cut
text, a button that shows the whole result (the result's images are the card's own, shown for any
tool from the ``tool`` message: ``ToolCard.show_images``).

The cards find their node's ``NodeTools`` (``desktop.ui.node.tools``) by walking up their parents;
a card outside a node (or a built-in tool's call) shows nothing extra. Everything shown here comes
from a server: plain text only, never rich text.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QLabel, QPushButton, QVBoxLayout, QWidget

if TYPE_CHECKING:
    from desktop.core.chat.types import ToolCall
    from desktop.core.mcp import McpToolInfo, McpToolResult

log = logging.getLogger(__name__)

__all__ = [
    "CardToolSupport",
    "McpDetails",
    "McpResultExtras",
    "annotation_text",
    "find_tool_support",
    "mcp_result_extras",
]

_MAX_DESCRIPTION = 1200


class CardToolSupport(Protocol):
    """What a card asks of its node about MCP tools (``desktop.ui.node.tools.NodeTools``)."""

    def tool_details(self, name: str) -> McpToolInfo | None:
        """The card's data for an MCP tool, None for any other tool."""
        ...

    def allow_server(self, server: str) -> None:
        """Always allow this server in the node."""
        ...

    def result_for(self, name: str, text: str | None) -> McpToolResult | None:
        """The whole result of a recent call."""
        ...


def find_tool_support(widget: QWidget) -> CardToolSupport | None:
    """The ``node_tools`` of the node ``widget`` is in, or None."""
    parent = widget.parentWidget()
    while parent is not None:
        support = getattr(parent, "node_tools", None)
        if support is not None and hasattr(support, "tool_details"):
            return support  # type: ignore[no-any-return]
        parent = parent.parentWidget()
    return None


def annotation_text(info: McpToolInfo) -> str:
    """The tool's annotations as one line (``read-only · open-world``), or a note that it states none."""
    parts: list[str] = []
    if info.read_only is True:
        parts.append("read-only")
    if info.destructive is True:
        parts.append("destructive")
    elif info.destructive is False:
        parts.append("not destructive")
    if info.idempotent is True:
        parts.append("idempotent")
    if info.open_world is True:
        parts.append("open-world (reaches outside this computer)")
    if not parts:
        return "The server states no annotations for this tool."
    return "Server says: " + " · ".join(parts)


class McpDetails(QFrame):
    """The MCP part of a permission card (object name ``mcpDetails``).

    Children: ``mcpServerTool`` (server and tool), ``mcpDescription``, ``mcpAnnotations``.
    """

    def __init__(self, info: McpToolInfo, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("mcpDetails")
        self.info = info
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(2)
        title = f" ({info.title})" if info.title and info.title != info.tool else ""
        line = f"MCP server \u201c{info.server}\u201d \u2014 tool \u201c{info.tool}\u201d{title}"
        self.server_tool = self._label(line, "mcpServerTool", bold=True)
        description = info.description
        if len(description) > _MAX_DESCRIPTION:
            description = description[: _MAX_DESCRIPTION - 1] + "…"
        self.description = self._label(description, "mcpDescription")
        self.annotations = self._label(annotation_text(info), "mcpAnnotations")
        if info.destructive is True:
            self.annotations.setStyleSheet("color: #c62828; font-weight: 600;")

    def _label(self, text: str, name: str, *, bold: bool = False) -> QLabel:
        label = QLabel(text, self)
        label.setObjectName(name)
        label.setTextFormat(Qt.TextFormat.PlainText)  # server-controlled text
        label.setWordWrap(True)
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        if bold:
            font = label.font()
            font.setBold(True)
            label.setFont(font)
        box = self.layout()
        if box is not None:
            box.addWidget(label)
        return label

    def toPlainText(self) -> str:  # noqa: N802 - Qt naming, read by tests and accessibility
        """Server, tool, description and annotations, one per line."""
        return "\n".join((self.server_tool.text(), self.description.text(), self.annotations.text()))


class McpResultExtras(QFrame):
    """A finished MCP call's whole text (object name ``mcpResultExtras``).

    Children: ``mcpFullResultButton`` when the model got a cut text.

    Args:
        result: The call's whole result.
        show_text: Called with the whole text when the user asks for it.
    """

    def __init__(self, result: McpToolResult, show_text: object, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("mcpResultExtras")
        self.result = result
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 2, 0, 2)
        lay.setSpacing(4)
        self.full_button: QPushButton | None = None
        if result.truncated:
            size = len(result.full_text.encode("utf-8", "surrogatepass"))
            self.full_button = QPushButton(
                f"Show the whole result ({size // 1024} KB; the model got the first 100 KB)", self
            )
            self.full_button.setObjectName("mcpFullResultButton")
            self.full_button.setAutoDefault(False)
            if callable(show_text):
                self.full_button.clicked.connect(lambda _c=False: show_text(result.full_text))
            lay.addWidget(self.full_button, 0, Qt.AlignmentFlag.AlignLeft)


def mcp_result_extras(card: QWidget, call: ToolCall, show_text: object) -> McpResultExtras | None:
    """The extras of a finished MCP call for the tool card ``card`` (None when there is nothing extra)."""
    support = find_tool_support(card)
    if support is None or call.result is None:
        return None
    result = support.result_for(call.name, call.result)
    if result is None or not result.truncated:
        return None
    return McpResultExtras(result, show_text, card)
