"""RuntimeBridge: the event_received signal for everyone, per-node subscriptions for nodes."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from desktop.core.chat.types import ChatEvent, Delta, Done
from desktop.ui.bridge import RuntimeBridge


def test_subscribers_get_only_their_nodes_events_and_the_signal_still_gets_all(qtbot: Any) -> None:
    bridge = RuntimeBridge()
    seen_all: list[tuple[str, ChatEvent]] = []
    bridge.event_received.connect(lambda node_id, event: seen_all.append((node_id, event)))
    a: list[ChatEvent] = []
    b: list[ChatEvent] = []
    bridge.subscribe("a", a.append)
    bridge.subscribe("b", b.append)
    bridge.subscribe("a", a.append)  # twice: still delivered once
    events = [("a", Delta("1")), ("b", Delta("2")), ("c", Delta("3")), ("a", Done("end_turn"))]
    for node_id, event in events:
        bridge.broadcast(node_id, event)
    assert seen_all == events
    assert a == [Delta("1"), Done("end_turn")]
    assert b == [Delta("2")]
    assert bridge.subscriber_count("a") == 1
    assert bridge.unsubscribe("a", a.append)
    assert not bridge.unsubscribe("a", a.append)
    assert bridge.subscriber_count("a") == 0
    bridge.broadcast("a", Delta("4"))
    assert a == [Delta("1"), Done("end_turn")]
    assert seen_all[-1] == ("a", Delta("4"))


def test_a_raising_subscriber_is_logged_and_the_others_still_run(
    qtbot: Any, caplog: pytest.LogCaptureFixture
) -> None:
    bridge = RuntimeBridge()
    got: list[ChatEvent] = []

    def boom(event: ChatEvent) -> None:
        raise ValueError("bad slot")

    bridge.subscribe("n", boom)
    bridge.subscribe("n", got.append)
    with caplog.at_level(logging.ERROR, logger="desktop.ui.bridge"):
        bridge.broadcast("n", Delta("x"))  # must not raise into the runtime
    assert got == [Delta("x")]
    assert "subscriber failed" in caplog.text


def test_unsubscribing_during_a_broadcast_keeps_that_broadcast_consistent(qtbot: Any) -> None:
    bridge = RuntimeBridge()
    calls: list[str] = []

    def first(event: ChatEvent) -> None:
        calls.append("first")
        bridge.unsubscribe("n", second)

    def second(event: ChatEvent) -> None:
        calls.append("second")

    bridge.subscribe("n", first)
    bridge.subscribe("n", second)
    bridge.broadcast("n", Delta("x"))
    bridge.broadcast("n", Delta("y"))
    assert calls == ["first", "second", "first"]


def test_the_signal_reaches_a_listener_connected_later_and_none_after_it_left(qtbot: Any) -> None:
    """Nothing is emitted while nobody listens (it costs ~25 us a call), yet a listener connected at
    any time gets every event from then on, and one that disconnected gets none."""
    bridge = RuntimeBridge()
    bridge.broadcast("a", Delta("before"))
    seen: list[tuple[str, ChatEvent]] = []

    def listener(node_id: str, event: ChatEvent) -> None:
        seen.append((node_id, event))

    bridge.event_received.connect(listener)
    bridge.broadcast("a", Delta("1"))
    with qtbot.waitSignal(bridge.event_received, timeout=10_000) as blocker:
        bridge.broadcast("b", Delta("2"))
    assert blocker.args == ["b", Delta("2")]
    bridge.event_received.disconnect(listener)
    bridge.broadcast("a", Delta("after"))
    assert seen == [("a", Delta("1")), ("b", Delta("2"))]
