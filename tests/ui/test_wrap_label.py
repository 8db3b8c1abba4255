"""WrapLabel: a word-wrapped label measures its height once per width and text (not at every one of
the several times a layout asks), and measures again when the text, the font or the style changes."""

from __future__ import annotations

from typing import Any

from PySide6.QtGui import QFont
from PySide6.QtWidgets import QLabel

from desktop.core.chat.types import ChatMessage
from desktop.ui.markdown.theme import MarkdownTheme
from desktop.ui.transcript.answer import AssistantMessageView
from desktop.ui.transcript.views import UserMessageView
from desktop.ui.transcript.wrap_label import WrapLabel

LONG = "gpt-4o · 12,345 in · 6,789 out · $0.0123 · cache saved $0.0045 · 2.3 s · " * 3


def test_heights_are_qlabels_own_and_measured_once_per_width_and_text(qtbot: Any, monkeypatch: Any) -> None:
    plain = QLabel(LONG)
    plain.setWordWrap(True)
    label = WrapLabel(LONG)
    qtbot.addWidget(plain)
    qtbot.addWidget(label)
    assert label.wordWrap()
    for width in (80, 200, 640):
        assert label.heightForWidth(width) == plain.heightForWidth(width)
    measured: list[int] = []
    real = QLabel.heightForWidth

    def counting(self: QLabel, width: int) -> int:
        measured.append(width)
        return real(self, width)

    monkeypatch.setattr(QLabel, "heightForWidth", counting)
    label = WrapLabel(LONG)
    qtbot.addWidget(label)
    narrow = [label.heightForWidth(120) for _ in range(5)]
    assert measured == [120] and len(set(narrow)) == 1  # asked five times, measured once
    label.setText(LONG)  # the same text: nothing to measure again
    label.heightForWidth(120)
    assert measured == [120]
    label.setText("short")
    assert label.heightForWidth(120) < narrow[0]  # a new text is measured again
    assert measured == [120, 120]
    label.setText(LONG)
    before = label.heightForWidth(120)
    font = QFont(label.font())
    font.setPointSizeF(font.pointSizeF() * 2)
    label.setFont(font)
    assert label.heightForWidth(120) > before  # a bigger font needs more height
    assert measured == [120, 120, 120, 120]


def test_the_cost_line_and_the_user_text_are_wrap_labels(qtbot: Any) -> None:
    answer = AssistantMessageView(ChatMessage(id="a", role="assistant", content="Hi", ts=0),
                                  theme=MarkdownTheme(), meta_text=lambda m, live: LONG)
    user = UserMessageView(ChatMessage(id="u", role="user", content=LONG, ts=0))
    qtbot.addWidget(answer)
    qtbot.addWidget(user)
    assert isinstance(answer.meta_label, WrapLabel)
    assert user.findChild(WrapLabel, "userText") is not None
