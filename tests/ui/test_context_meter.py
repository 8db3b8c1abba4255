# ruff: noqa: F811 - pytest fixtures imported from test_chat_node_support are parameters here
"""The context meter in a node's header: the last exchange's tokens against the model's window."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QProgressBar
from test_chat_node_support import NodeEnv, fake_settings, make_env  # noqa: F401

from desktop.core.chat.types import ChatMessage, Usage
from desktop.core.store import new_node_state


def _answer(i: int, usage: Usage, model: str | None) -> list[ChatMessage]:
    return [ChatMessage(id=f"u{i}", role="user", content=f"q{i}", ts=0),
            ChatMessage(id=f"a{i}", role="assistant", content=f"a{i}", ts=0, usage=usage, model=model)]


def test_the_meter_shows_turns_amber_and_hides(qtbot: Any, make_env: Any) -> None:
    state = new_node_state("Meter")
    state.conversation.messages[:] = _answer(1, Usage(20_000, 11_000), "gpt-4o")
    env = make_env(state)
    meter = env.node.findChild(QProgressBar, "contextMeter")
    qtbot.waitUntil(meter.isVisible)
    assert meter.toolTip().startswith("31k of 128k tokens")
    assert meter.property("warning") is False
    state.conversation.messages.extend(_answer(2, Usage(100_000, 5_000), "gpt-4o"))
    env.node.reload_settings()
    assert meter.property("warning") is True and meter.value() > 800
    state.conversation.messages.extend(_answer(3, Usage(1, 1), "no-such-model-xyz"))
    env.node.reload_settings()
    assert not meter.isVisible()


def test_a_local_models_reported_context_length_feeds_the_meter(qtbot: Any, make_env: Any) -> None:
    state = new_node_state("Local")
    state.conversation.messages[:] = _answer(1, Usage(60_000, 5_536), "llama3.2:latest")
    env = make_env(state, model="llama3.2:latest")
    meter = env.node.findChild(QProgressBar, "contextMeter")
    assert not meter.isVisible()  # no table knows a local model's window
    env.settings.providers[0].context_lengths = {"llama3.2:latest": 131_072}  # what Ollama's /api/show said
    env.node.reload_settings()
    qtbot.waitUntil(meter.isVisible)
    assert meter.toolTip().startswith("66k of 131k tokens")
