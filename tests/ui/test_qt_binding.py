"""Guards against Qt binding regressions that would crash the app during a long stream."""

from __future__ import annotations

import sys

from PySide6.QtCore import QObject, Signal


class _Emitter(QObject):
    fired = Signal(str, object)


def test_signal_emit_keeps_reference_counts(qapp: object) -> None:
    """PySide6 6.12.0 dropped a reference to ``True`` on every emit; ~600 emits later CPython aborted.

    The bridge emits once per streamed event, so a long answer would kill the app. pyproject.toml
    excludes that release; this test fails loudly if a broken binding comes back.
    """
    emitter = _Emitter()
    received: list[object] = []
    emitter.fired.connect(lambda _node, event: received.append(event))
    before = sys.getrefcount(True)
    for i in range(300):
        emitter.fired.emit("node", i)
    after = sys.getrefcount(True)
    assert len(received) == 300
    assert abs(after - before) < 50, f"refcount of True moved from {before} to {after}"
