"""Card widgets: the permission card's argument box shows the arguments, not a sliver of them."""

from __future__ import annotations

import json
from typing import Any

from desktop.ui.transcript.card_parts import FitPlainText


def test_argument_box_grows_with_the_wrapped_text_up_to_its_limit(qtbot: Any) -> None:
    box = FitPlainText("permissionArgs", 16)
    qtbot.addWidget(box)
    content = "This note was written by the demo model through the write_file tool. " * 6
    box.set_text(json.dumps({"path": "notes/hello.md", "content": content}, indent=2))
    line = box.fontMetrics().lineSpacing()
    box.resize(600, 40)
    box.show()
    qtbot.waitExposed(box)
    wide = box.height()
    assert wide >= 6 * line  # the long value wraps over several lines, all of them shown
    box.resize(300, wide)  # narrower: more wrapped lines, a taller box
    qtbot.waitUntil(lambda: box.height() > wide)
    assert box.height() <= 16 * line + 40  # and never more than the limit


def test_streaming_crlf_text_appends_instead_of_resetting(qtbot: Any) -> None:
    box = FitPlainText("thinkingBody", 14)
    qtbot.addWidget(box)
    text, resets = "first\r\n", list[int]()
    box.set_text(text)

    def on_change(_pos: int, removed: int, _added: int) -> None:
        if removed:
            resets.append(removed)

    box.document().contentsChange.connect(on_change)
    for i in range(200):
        text += f"step {i}\r\nnbsp\u00a0here "
        box.set_text(text)
    assert not resets  # every update appended; nothing shown was replaced
    assert box.toPlainText().count("step") == 200 and box.toPlainText().startswith("first")


def test_tool_card_tooltip_shows_model_html_as_text(qtbot: Any) -> None:
    from desktop.core.chat.types import ToolCall
    from desktop.ui.transcript.tool_card import ToolCard

    call = ToolCall("c1", "write_file", '<img src="file:///etc/hostname"> not json', status="running")
    card = ToolCard(call)
    qtbot.addWidget(card)
    tip = card.args_label.toolTip()
    assert "<img" not in tip and "&lt;img" in tip
