"""The permission card marks a write to a dotfile or dot-folder as dangerous (issue 9, item 1)."""
# ruff: noqa: F811 - pytest fixtures imported from test_chat_node_support are parameters here

from __future__ import annotations

import json
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QImage
from PySide6.QtWidgets import QLabel, QPushButton, QVBoxLayout, QWidget
from test_chat_node_support import NodeEnv, make_env  # noqa: F401

from desktop.core.chat.types import ToolCall, ToolStatus
from desktop.testing import ToolCallSpec, Turn
from desktop.ui.node.style import node_colors, node_stylesheet
from desktop.ui.transcript.permission_card import PermissionCard, dotted_path
from desktop.ui.transcript.tool_card import ToolCard


def args(**kw: Any) -> str:
    return json.dumps(kw)


@pytest.mark.parametrize(
    "path",
    [".envrc", ".git/config", ".git/hooks/pre-commit", ".vscode/tasks.json", ".mcp.json",
     "sub/.idea/workspace.xml", "a\\.git\\config", "./.envrc", "../outside.txt", "notes/.hidden"],
)
def test_dotted_paths_are_found(path: str) -> None:
    assert dotted_path(args(path=path, content="x")) == path


@pytest.mark.parametrize(
    "arguments",
    [args(path="notes/hello.md", content="x"), args(path="./notes/a.txt"), args(path="a.b/c.txt"),
     args(path="file."), args(content=".envrc"), args(path=[".envrc"]), "not json {", "", "[1, 2]"],
)
def test_ordinary_paths_and_odd_arguments_are_not_marked(arguments: str) -> None:
    assert dotted_path(arguments) is None


def child(parent: QWidget, cls: type[Any], name: str) -> Any:
    found = parent.findChild(cls, name)
    assert found is not None, f"no {cls.__name__} named {name}"
    return found


def mean_color(widget: QWidget) -> QColor:
    image = widget.grab().toImage().convertToFormat(QImage.Format.Format_RGB32)
    r = g = b = n = 0
    for y in range(2, image.height() - 2, 2):
        for x in range(2, image.width() - 2, 2):
            c = image.pixelColor(x, y)
            r, g, b, n = r + c.red(), g + c.green(), b + c.blue(), n + 1
    return QColor(r // n, g // n, b // n)


def styled_host(qtbot: Any, *cards: QWidget) -> QWidget:
    """The cards inside a widget carrying the node's style sheet (as in a real node)."""
    host = QWidget()
    qtbot.addWidget(host)
    host.setStyleSheet(node_stylesheet(node_colors(host.palette())))
    lay = QVBoxLayout(host)
    for card in cards:
        lay.addWidget(card)
    host.resize(700, 500)
    host.show()
    qtbot.waitExposed(host)
    return host


@pytest.mark.parametrize("path", [".envrc", ".git/config", ".vscode/tasks.json"])
def test_permission_card_warns_and_marks_approve_dangerous(qtbot: Any, path: str) -> None:
    ask: ToolStatus = "awaiting_approval"
    danger = PermissionCard(ToolCall("c1", "write_file", args(path=path, content="x"), status=ask))
    plain = PermissionCard(ToolCall("c2", "write_file", args(path="notes/a.md", content="x"), status=ask))
    host = styled_host(qtbot, danger, plain)  # noqa: F841 - keeps the cards alive

    warning = danger.findChild(QLabel, "dangerWarning")
    assert warning is not None and warning.isVisible()
    assert path in warning.text()
    assert "change how tools or the shell behave" in warning.text()
    assert warning.textFormat() == Qt.TextFormat.PlainText
    assert warning.text() in danger.toPlainText()
    approve = child(danger, QPushButton, "approveButton")
    assert approve.property("danger") is True

    assert plain.findChild(QLabel, "dangerWarning") is None
    plain_approve = child(plain, QPushButton, "approveButton")
    assert plain_approve.property("danger") is False
    assert "Warning" not in plain.toPlainText()

    # The danger style is what is painted, over the node's own approveButton rule: a red button.
    red = mean_color(approve)
    assert red.red() > red.green() + 60 and red.red() > red.blue() + 60, red.name()
    assert mean_color(plain_approve).name() != red.name()


def test_any_tool_with_a_dotted_path_is_marked_and_the_path_is_shown_as_text(qtbot: Any) -> None:
    path = ".git/<b>hooks</b>/post-checkout"
    card = PermissionCard(ToolCall("c1", "edit_file", args(path=path), status="awaiting_approval"))
    qtbot.addWidget(card)
    warning = card.findChild(QLabel, "dangerWarning")
    assert warning is not None and path in warning.text()  # shown verbatim, never as rich text


def test_tool_card_awaiting_approval_embeds_the_warning_and_buttons_still_decide(qtbot: Any) -> None:
    call = ToolCall("c9", "write_file", args(path=".envrc", content="export X=1"), status="awaiting_approval")
    card = ToolCard(call)
    host = styled_host(qtbot, card)  # noqa: F841 - keeps the card alive
    decided: list[tuple[str, str]] = []
    card.decided.connect(lambda cid, d: decided.append((cid, d)))
    assert card.findChild(QLabel, "dangerWarning") is not None
    qtbot.mouseClick(card.findChild(QPushButton, "approveButton"), Qt.MouseButton.LeftButton)
    assert decided == [("c9", "approve")]


def test_node_shows_the_warning_for_a_model_write_to_envrc(qtbot: Any, make_env: Any) -> None:
    env: NodeEnv = make_env()
    write = ToolCallSpec("write_file", {"path": ".envrc", "content": "curl x | sh"})
    env.fake.script(Turn(tool_calls=[write]))
    box = child(env.node, QWidget, "chatInput")
    box.setFocus()
    qtbot.keyClicks(box, "set up direnv")
    qtbot.keyClick(box, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: env.node.findChild(QWidget, "permissionCard") is not None, timeout=10_000)
    card = child(env.node, QWidget, "permissionCard")
    warning = child(card, QLabel, "dangerWarning")
    assert ".envrc" in warning.text()
    assert child(card, QPushButton, "approveButton").property("danger") is True
    qtbot.mouseClick(child(card, QPushButton, "denyButton"), Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not env.node.is_busy() and bool(env.finished), timeout=10_000)
    assert not (env.project / ".envrc").exists()


def test_the_warning_shows_a_disguised_or_huge_path_escaped_and_bounded() -> None:
    from desktop.ui.transcript.permission_card import DANGER_PATH_CHARS, danger_warning_text

    disguised = danger_warning_text(".git/hooks/\u202etxt.sh\nfake line")
    assert "\\u202e" in disguised and "\\n" in disguised
    assert "\u202e" not in disguised and "\n" not in disguised
    huge = danger_warning_text("." + "a" * 50_000)
    assert len(huge) < DANGER_PATH_CHARS + 300 and "…" in huge
    assert "change how tools or the shell behave" in huge
