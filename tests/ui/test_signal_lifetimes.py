"""Scans the UI's source for callbacks that can outlive the widget they act on (issue 25, item 2).

PySide ends a connection when its receiver is destroyed only for ``signal.connect(qobject.method)``.
A lambda or a ``functools.partial`` connected to a long-lived sender (the MCP hub's signals, the
runtime bridge, the application, the context's services) keeps running after its widget is deleted,
and so does ``QTimer.singleShot(ms, callable)`` without a context object. Both must go through
``desktop.ui.lifetime`` (``connect_for``, ``call_later``) or pass the receiver as context.
"""

from __future__ import annotations

import ast
import functools
import sys
import threading
from pathlib import Path

import pytest
from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QListWidget, QWidget

from desktop.ui.lifetime import call_later, connect_for, run_in_thread

ROOT = Path(__file__).resolve().parents[2]
SOURCES = sorted((ROOT / "desktop" / "ui").rglob("*.py")) + [ROOT / "desktop" / "app.py"]

LONG_LIVED = {"signals", "bridge", "hub", "_hub", "mcp", "context", "_context", "app", "application",
              "hints", "styleHints", "instance", "frame_scheduler", "scheduler", "tally", "usage"}
"""Names in a sender's expression that mark an object living as long as the app or its context."""


def _names(node: ast.AST) -> set[str]:
    found: set[str] = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Attribute):
            found.add(sub.attr)
        elif isinstance(sub, ast.Name):
            found.add(sub.id)
    return found


def _is_unbound_callable(node: ast.AST) -> bool:
    """A lambda or a partial: never tied to a receiver by PySide."""
    if isinstance(node, ast.Lambda):
        return True
    if isinstance(node, ast.Call):
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        return name == "partial"
    return False


def unsafe_callbacks(source: str, filename: str = "<source>") -> list[str]:
    """Every ``long_lived.signal.connect(lambda|partial)`` and every two-argument ``QTimer.singleShot``."""
    problems: list[str] = []
    for node in ast.walk(ast.parse(source, filename)):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        func = node.func
        where = f"{filename}:{node.lineno}"
        if func.attr == "singleShot" and len(node.args) == 2:
            problems.append(f"{where}: QTimer.singleShot without a context object")
        elif func.attr == "connect" and node.args and _is_unbound_callable(node.args[0]):
            sender = func.value  # e.g. hub.signals.status_changed
            if isinstance(sender, ast.Attribute) and _names(sender.value) & LONG_LIVED:
                problems.append(f"{where}: {ast.unparse(sender)} connected to a lambda or partial")
    return problems


def test_the_scan_finds_the_unsafe_forms() -> None:
    bad = """
hub.signals.status_changed.connect(lambda _s: self.refresh())
self._context.bridge.event_received.connect(functools.partial(self.on, 1))
QTimer.singleShot(0, self._fill)
QApplication.instance().aboutToQuit.connect(lambda: window.save())
"""
    assert len(unsafe_callbacks(bad)) == 4
    good = """
connect_for(self, hub.signals.status_changed, lambda _s: self.refresh())
hub.signals.servers_changed.connect(self.refresh)
QTimer.singleShot(0, self, self._fill)
self.button.clicked.connect(lambda: self.go())
"""
    assert unsafe_callbacks(good) == []


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_callback_outlives_its_receiver(path: Path) -> None:
    assert unsafe_callbacks(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT))) == []


class _Hub(QObject):
    status = Signal(object)


def test_connect_for_ends_with_the_receiver(qtbot: object) -> None:
    hub = _Hub()
    widget = QWidget()
    listing = QListWidget(widget)
    calls: list[object] = []
    connect_for(widget, hub.status, lambda value: (calls.append(value), listing.clear()))
    connect_for(widget, hub.status, functools.partial(calls.append))
    hub.status.emit(1)
    assert calls == [1, 1]
    hooked: list[BaseException] = []
    previous = sys.excepthook
    sys.excepthook = lambda _t, exc, _tb: hooked.append(exc)
    try:
        widget.deleteLater()
        qtbot.waitUntil(lambda: _deleted(listing))  # type: ignore[attr-defined]
        hub.status.emit(2)
    finally:
        sys.excepthook = previous
    assert calls == [1, 1] and hooked == []


def _deleted(obj: QObject) -> bool:
    import shiboken6

    return not shiboken6.isValid(obj)


def test_call_later_and_run_in_thread_skip_a_deleted_receiver(qtbot: object) -> None:
    import shiboken6

    calls: list[object] = []
    gone = QWidget()
    call_later(gone, 0, lambda: calls.append("late"))
    shiboken6.delete(gone)  # before the loop ran the timer
    widget = QWidget()
    started = threading.Event()
    release = threading.Event()

    def job() -> int:
        started.set()
        release.wait(10)
        return 7

    worker = run_in_thread(widget, job, lambda outcome: calls.append(outcome.value))
    assert started.wait(10)
    widget.deleteLater()
    qtbot.waitUntil(lambda: _deleted(widget))  # type: ignore[attr-defined]
    release.set()
    worker.join(10)  # its result is posted before the next worker's
    alive = QWidget()
    done: list[object] = []
    run_in_thread(alive, lambda: 1 // 0, lambda outcome: done.append(type(outcome.error)))
    qtbot.waitUntil(lambda: bool(done))  # type: ignore[attr-defined]
    assert done == [ZeroDivisionError]
    assert calls == []
