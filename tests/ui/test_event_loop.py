"""The app's asyncio loop on Qt (``desktop.ui.event_loop``): cancelled timers stop at once.

qasync alone keeps the Qt timer of every cancelled ``call_later`` running until it is due: each
``asyncio.timeout`` around a read of a streamed answer left one behind for the stall timeout (60 s),
33,000 of them after eight answers, and every timer started or stopped meanwhile paid for them.
"""

from __future__ import annotations

import asyncio
from typing import Any

import PySide6  # noqa: F401  (the binding before qasync)
import pytest
import qasync  # type: ignore[import-untyped]

from desktop.ui.event_loop import EventLoop, new_event_loop


def test_a_cancelled_timer_stops_its_qt_timer(qapp: Any) -> None:
    loop = new_event_loop(qapp)
    assert isinstance(loop, EventLoop)
    try:
        handles = [loop.call_later(60.0, print) for _ in range(100)]
        assert loop.pending_timers() == 100
        assert all(isinstance(h, asyncio.TimerHandle) for h in handles)
        assert handles[0].when() == pytest.approx(loop.time() + 60.0, abs=1.0)
        for handle in handles:
            handle.cancel()
        assert loop.pending_timers() == 0
        handles[0].cancel()  # twice: nothing more
    finally:
        loop.close()


def test_qasync_alone_keeps_the_timers_of_cancelled_handles(qapp: Any) -> None:
    """Why the subclass exists (if this fails, qasync fixed it upstream and the subclass may go)."""
    loop = qasync.QEventLoop(qapp, already_running=False)
    try:
        for _ in range(10):
            loop.call_later(60.0, print).cancel()
        assert len(loop._timer._SimpleTimer__callbacks) == 10
    finally:
        loop.close()
        from desktop.ui.gc_guard import release_loop_timers

        release_loop_timers(loop)


def test_timeouts_around_reads_leave_no_timer_behind(qloop: asyncio.AbstractEventLoop, arun: Any) -> None:
    assert isinstance(qloop, EventLoop)

    async def read_many() -> int:
        got = 0
        for _ in range(200):
            async with asyncio.timeout(60.0):  # what the stream reader wraps around each chunk
                await asyncio.sleep(0)
            got += 1
        return got

    assert arun(read_many()) == 200
    assert qloop.pending_timers() <= 1  # at most the waiting helper's own


def test_due_callbacks_run_in_order_and_report_their_errors(
    qloop: asyncio.AbstractEventLoop, qtbot: Any
) -> None:
    ran: list[str] = []
    errors: list[dict[str, Any]] = []
    qloop.set_exception_handler(lambda _loop, context: errors.append(context))

    def boom() -> None:
        raise ValueError("broken callback")

    qloop.call_later(0.02, ran.append, "later")
    qloop.call_soon(ran.append, "soon")
    qloop.call_soon(boom)
    qloop.call_soon(ran.append, "after the error")
    skipped = qloop.call_later(0.01, ran.append, "cancelled")
    skipped.cancel()
    qtbot.waitUntil(lambda: "later" in ran, timeout=5_000)
    assert ran == ["soon", "after the error", "later"]
    assert len(errors) == 1 and isinstance(errors[0]["exception"], ValueError)
    assert qloop.pending_timers() == 0


def test_closing_the_loop_stops_every_timer(qapp: Any) -> None:
    loop = new_event_loop(qapp)
    loop.call_later(3600.0, print)
    loop.call_soon(print)
    assert loop.pending_timers() == 2
    loop.close()
    assert loop.pending_timers() == 0


def test_call_soon_callbacks_share_one_qt_timer(qapp: Any, qtbot: Any,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """qasync made each ``call_soon`` (every task step, every future's callback) a Qt timer."""
    from PySide6.QtCore import QObject

    loop = new_event_loop(qapp)
    started: list[int] = []
    start = QObject.startTimer

    def counting(obj: QObject, *args: Any) -> int:
        started.append(1)
        return start(obj, *args)

    try:
        ran: list[int] = []
        monkeypatch.setattr(QObject, "startTimer", counting)
        for i in range(200):
            loop.call_soon(ran.append, i)
        qtbot.waitUntil(lambda: len(ran) == 200, timeout=5_000)
        assert ran == list(range(200))
        assert len(started) == 1  # one zero-delay timer ran all 200
        assert loop.pending_timers() == 0
    finally:
        monkeypatch.undo()
        loop.close()


def test_a_socket_keeps_one_notifier_while_its_reader_is_paused_and_resumed(
    qapp: Any, qtbot: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """asyncio's transports (and anyio's streams) remove and add a socket's reader around every
    read: qasync made a new QSocketNotifier and signal connection each time."""
    import socket

    import desktop.ui.event_loop as module

    made: list[object] = []

    class Counted(module.QSocketNotifier):  # type: ignore[misc]
        def __init__(self, *args: Any) -> None:
            super().__init__(*args)
            made.append(self)

    monkeypatch.setattr(module, "QSocketNotifier", Counted)
    loop = new_event_loop(qapp)
    made.clear()  # the loop's own self-pipe has one
    ours, theirs = socket.socketpair()
    ours.setblocking(False)
    got: list[bytes] = []
    try:
        for i in range(30):
            loop.add_reader(ours, lambda: got.append(ours.recv(100)))
            theirs.send(b"%d;" % i)
            qtbot.waitUntil(lambda i=i: len(got) == i + 1, timeout=5_000)
            assert loop.remove_reader(ours)
        theirs.send(b"while paused")  # nobody watches: nothing is read
        qtbot.wait(50)
        assert len(got) == 30 and b"".join(got) == b"".join(b"%d;" % i for i in range(30))
        assert not loop.remove_reader(ours)  # removed already
        assert len(made) == 1
    finally:
        loop.close()
        ours.close()
        theirs.close()


def test_a_long_pass_of_queued_callbacks_lets_qt_timers_run_between(qapp: Any, qtbot: Any) -> None:
    """Eight runs finishing together (about 12 ms each) held every Qt timer and paint back for 100 ms:
    a pass stops after READY_SLICE_S and the rest run, in order, at the next pass."""
    import time

    from PySide6.QtCore import QTimer

    from desktop.ui.event_loop import READY_SLICE_S

    loop = new_event_loop(qapp)
    ran: list[str] = []

    def slow(name: str) -> None:
        time.sleep(READY_SLICE_S * 0.7)
        ran.append(name)

    try:
        # a Qt timer falling due during the pass (a frame's tick, a paint) waits for its end
        loop.call_soon(QTimer.singleShot, 0, lambda: ran.append("qt"))
        for i in range(8):
            loop.call_soon(slow, f"cb{i}")
        qtbot.waitUntil(lambda: len(ran) == 9, timeout=5_000)
        callbacks = [name for name in ran if name != "qt"]
        assert callbacks == [f"cb{i}" for i in range(8)]  # order kept across passes
        assert ran.index("qt") < 4  # not after all eight (56 ms of callbacks ahead of a due timer)
        assert loop.pending_timers() == 0
    finally:
        loop.close()
