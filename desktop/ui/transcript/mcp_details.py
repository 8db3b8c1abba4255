"""What the transcript's cards add for MCP tool calls: the server/tool details and the result's extras.

The permission card (``desktop.ui.transcript.permission_card``) of an MCP call names the server,
the tool, its description and its annotations (read-only / destructive / open-world: the server's
claims) above the full arguments, and offers "Always allow this server in this node"
(``alwaysAllowServerButton``). The tool card of a finished MCP call shows, when the model got a cut
text, a button that shows the whole result (the result's images are the card's own, shown for any
tool from the ``tool`` message: ``ToolCard.show_images``).

The cards find their node's ``NodeTools`` (``desktop.ui.node.tools``) by walking up their parents;
a card outside a node (or a built-in tool's call) shows nothing extra. Everything shown here comes
from a server: plain text only, never rich text, and made visible (``desktop.core.visible``). The
server and tool a card names are the cleaned names the model uses (``desktop.core.mcp.card_names``);
the server's own spelling shows beside them, escaped, only when it differs.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QLabel, QPushButton, QVBoxLayout, QWidget

from desktop.core.visible import visible_prefix, visible_text
from desktop.ui.transcript.card_parts import show_all_button

if TYPE_CHECKING:
    from pathlib import Path

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
_MAX_TITLE = 80
_MAX_NAME = 80


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

    def project_folder(self) -> Path | None:
        """The open project's folder (where ``write_file`` writes), or None."""
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

    Children: ``mcpServerTool`` (one line: the server and tool names the model uses, cleaned by
    ``card_names``), ``mcpGivenNames`` (the names as the server gave them, made visible, when they
    differ), ``mcpTitle`` (the tool's title, when it has one), ``mcpDescription`` (under a caption
    saying the server wrote it; cut with ``mcpDescriptionShowAll``), ``mcpAnnotations``.

    Every name, title and description comes from a server: plain text only, and made visible
    (``desktop.core.visible``), so none can add a line, reverse one or hide a character.
    """

    def __init__(self, info: McpToolInfo, parent: QWidget | None = None) -> None:
        # Start-up: the transcript loads right after the first paint; the MCP core only with a card.
        from desktop.core.mcp import card_names

        super().__init__(parent)
        self.setObjectName("mcpDetails")
        self.info = info
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(2)
        names = card_names(info.name, info.server, info.tool)
        server = _cut(names.server, _MAX_NAME)
        tool = _cut(names.tool, _MAX_NAME)
        line = f"MCP server \u201c{server}\u201d \u2014 tool \u201c{tool}\u201d"
        self.server_tool = self._label(line, "mcpServerTool", bold=True)
        given = []
        if names.server_given is not None:
            given.append(f"server: {names.server_given}")
        if names.tool_given is not None:
            given.append(f"tool: {names.tool_given}")
        self.given_names: QLabel | None = None
        if given:
            them = "them" if len(given) > 1 else "it"
            self.given_names = self._label(f"As the server names {them} \u2014 " + "; ".join(given),
                                           "mcpGivenNames", quiet=True)
        self.title: QLabel | None = None
        if info.title and info.title != info.tool:
            shown, cut = visible_prefix(info.title, _MAX_TITLE)
            self.title = self._label(f"Title: {shown}{'…' if cut else ''}", "mcpTitle")
        self._description = info.description
        self.description_caption: QLabel | None = None
        self.show_all: QPushButton | None = None
        shown, cut = visible_prefix(info.description, _MAX_DESCRIPTION, keep_newlines=True)
        if shown:
            self.description_caption = self._label("The server describes it:", "mcpDescriptionCaption",
                                                   quiet=True)
        self.description = self._label(shown + ("…" if cut else ""), "mcpDescription")
        self.description.setContentsMargins(10, 0, 0, 0)  # set off under its caption
        self.description.setVisible(bool(shown))
        if cut:
            self.show_all = show_all_button(self, "mcpDescriptionShowAll", self._show_whole_description)
            lay.addWidget(self.show_all, 0, Qt.AlignmentFlag.AlignLeft)
        self.annotations = self._label(annotation_text(info), "mcpAnnotations")
        if info.destructive is True:
            self.annotations.setStyleSheet("color: #c62828; font-weight: 600;")

    def _show_whole_description(self) -> None:
        self.description.setText(visible_text(self._description, keep_newlines=True))

    def _label(self, text: str, name: str, *, bold: bool = False, quiet: bool = False) -> QLabel:
        label = QLabel(text, self)
        label.setObjectName(name)
        label.setTextFormat(Qt.TextFormat.PlainText)  # server-controlled text
        label.setWordWrap(True)
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        font = label.font()
        if bold:
            font.setBold(True)
        if quiet:
            font.setItalic(True)
        label.setFont(font)
        box = self.layout()
        if box is not None:
            box.addWidget(label)
        return label

    def labels(self) -> list[QLabel]:
        """The labels shown, in order."""
        return [label for label in (self.server_tool, self.given_names, self.title, self.description_caption,
                                    self.description, self.annotations)
                if label is not None and not label.isHidden()]

    def toPlainText(self) -> str:  # noqa: N802 - Qt naming, read by tests and accessibility
        """Server and tool, the given names, title, description and annotations, one per line."""
        return "\n".join(label.text() for label in self.labels())


def _cut(name: str, limit: int) -> str:
    return name if len(name) <= limit else name[: limit - 1] + "…"


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
