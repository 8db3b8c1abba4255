"""What a segment change costs is learned from real work only: new widgets and changed texts, not
fills that change nothing (a spec that changed only its gap), which would drag the estimate to ~0."""

from __future__ import annotations

from typing import Any

from desktop.ui.markdown.segments import Segment
from desktop.ui.markdown.theme import MarkdownTheme
from desktop.ui.transcript import body as body_module
from desktop.ui.transcript.body import MessageBody

PARAGRAPH = "A paragraph long enough to be learned from, about frames and budgets. " * 8


def test_costs_are_learned_from_new_widgets_and_changed_texts_only(qtbot: Any, monkeypatch: Any) -> None:
    costs = body_module._Costs()
    monkeypatch.setattr(body_module, "_costs", costs)
    seen: list[tuple[str, bool]] = []
    real = costs.learn

    def learn(spec: Segment, created: float | None, filled: float) -> None:
        seen.append((spec.payload[:12], created is not None))
        real(spec, created, filled)

    monkeypatch.setattr(costs, "learn", learn)
    body = MessageBody()
    qtbot.addWidget(body)
    body.resize(600, 400)
    theme = MarkdownTheme()
    body.show_segments([Segment("plain", PARAGRAPH, 0)], theme)
    assert seen == [(PARAGRAPH[:12], True)]  # a new widget: creation and fill
    body.show_segments([Segment("plain", PARAGRAPH, 12)], theme)  # only the gap changed
    assert len(seen) == 1
    body.show_segments([Segment("plain", PARAGRAPH + "More.", 12)], theme)  # the text grew
    assert seen[-1] == (PARAGRAPH[:12], False) and len(seen) == 2
    assert costs.per_char["plain"] > 0 and costs.create["plain"] > 0


def test_an_estimate_counts_creation_only_for_a_new_widget() -> None:
    costs = body_module._Costs()
    spec = Segment("html", "<p>x</p>" * 100, 0)
    assert costs.estimate(spec, True) == costs.estimate(spec, False) + costs.create["html"]
    assert costs.estimate(spec, False) == costs.per_char["html"] * len(spec.payload)
