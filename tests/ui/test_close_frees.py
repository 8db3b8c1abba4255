"""Closing a node gives its memory back (issue 28 #3): once the close has run, nothing in the window
keeps the closed ``ChatNodeWidget`` (nor, through it, its transcript's views and documents) alive, in
the desk and on the canvas. A Python wrapper held in a cycle through a C++ connection is invisible to
the collector, so these tests ask the collector itself. The close also asks the app's collector for
a full collection and a heap trim at its next idle check (``gc_guard.request_trim``)."""

from __future__ import annotations

import gc
import weakref
from pathlib import Path
from typing import Any

import pytest
from first_hour_support import focus, open_with_fake, trigger
from PySide6.QtCore import QEvent, Qt
from PySide6.QtWidgets import QApplication

from desktop.testing import FakeProvider, Turn
from desktop.ui import gc_guard

pytest_plugins = ["test_app_support"]  # fixtures: fake, open_window

ANSWER = "# Plan\n\n- one\n- two\n\n```python\nprint('hi')\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n"


def _answered_node(qtbot: Any, window: Any, fake: FakeProvider) -> Any:
    node = window.add_node()
    fake.script(Turn(text=ANSWER))
    node.chat_input.setFocus()
    qtbot.keyClicks(node.chat_input, "a plan please")
    with qtbot.waitSignal(node.run_finished, timeout=10_000):
        qtbot.keyClick(node.chat_input, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: not node.transcript.is_rendering(), timeout=10_000)
    return node


def _collected(qtbot: Any, ref: weakref.ref[Any]) -> bool:
    for _ in range(5):
        qtbot.wait(20)
        QApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
        gc.collect()
        if ref() is None:
            return True
    return False


@pytest.mark.parametrize("view", ["desk", "canvas"])
def test_a_closed_node_is_collected(qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path,
                                    view: str, monkeypatch: pytest.MonkeyPatch) -> None:
    window = open_with_fake(open_window, fake, tmp_path)
    node = _answered_node(qtbot, window, fake)
    node_id = node.node_id
    ref = weakref.ref(node)
    monkeypatch.setattr(gc_guard, "_requests", {"full": False, "trim": False})
    if view == "canvas":  # closed on the board: Node → Close closes the canvas's active node
        trigger(window, "canvasAction")
        qtbot.waitUntil(lambda: window.canvas.view.isVisible(), timeout=10_000)
        window.go_to_node(node_id)
        assert window.active_node() is node
        del node
        trigger(window, "closeNodeAction")
    else:  # Node → Close on the active sub-window (the × itself: test_close_reopen.py)
        focus(window, node)
        assert window.active_node() is node
        del node
        trigger(window, "closeNodeAction")
    qtbot.waitUntil(lambda: node_id not in [n.node_id for n in window.nodes()], timeout=10_000)
    assert gc_guard._requests == {"full": True, "trim": True}  # the app's collector: collect, then trim
    assert _collected(qtbot, ref), [type(r).__name__ for r in gc.get_referrers(ref())]
