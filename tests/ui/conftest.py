"""Fixtures for the Qt tests: a qasync loop on the pytest-qt QApplication and a loopback fake provider.

Rules learnt the hard way: never call ``loop.stop()`` in teardown (it calls
``app.exit()`` and every later ``waitSignal`` returns at once), never ``qtbot.waitSignal`` inside a
coroutine, and never ``loop.run_until_complete`` inside a test: create a task and
``qtbot.waitUntil(task.done)`` instead.
"""

from __future__ import annotations

import asyncio
import gc
import sys
import time
from collections.abc import Iterator
from typing import Any

import PySide6  # noqa: F401  (import the binding before qasync so it picks PySide6)
import pytest


@pytest.fixture(autouse=True)
def collect_on_gui_thread(qapp: Any) -> Iterator[None]:
    """Run every Qt test under the app's own rule: garbage is collected on the GUI thread only.

    The fake provider serves from a thread; an automatic collection started there could destroy
    a widget (or a qasync timer object) caught in a cycle from the wrong thread and crash Qt.
    ``GuiThreadCollector`` is what ``desktop.app.main`` installs; a final collection at teardown
    frees the test's cycles on this thread too.
    """
    from desktop.ui.gc_guard import GuiThreadCollector

    collector = GuiThreadCollector(qapp)
    try:
        yield
    finally:
        collector.stop()
        collector.deleteLater()
        gc.collect()


@pytest.fixture
def qloop(qapp: Any) -> Iterator[asyncio.AbstractEventLoop]:
    """A qasync event loop driven by the Qt event loop that pytest-qt runs while waiting."""
    from desktop.app import track_async_generators
    from desktop.ui.event_loop import new_event_loop
    from desktop.ui.gc_guard import release_loop_timers

    loop = new_event_loop(qapp)
    asyncio.set_event_loop(loop)
    hooks = sys.get_asyncgen_hooks()
    track_async_generators(loop)  # as desktop.app does
    # qasync runs callbacks only while Qt processes events; make it the "running" loop for code
    # that calls asyncio.get_running_loop() from slots.
    asyncio.events._set_running_loop(loop)
    try:
        yield loop
    finally:
        pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
        for task in pending:
            task.cancel()
        # Let the cancelled tasks run their cleanup (an httpx stream closes its response), then close
        # the async generators still suspended on this loop: finalized later by the garbage
        # collector, outside any loop, httpcore's cleanup fails (sniffio: no async library).
        deadline = time.monotonic() + 30.0  # a hang guard: the loop ends as soon as they are done
        while any(not t.done() for t in pending) and time.monotonic() < deadline:
            qapp.processEvents()
        closing = loop.create_task(loop.shutdown_asyncgens())  # what asyncio.Runner does at exit
        while not closing.done() and time.monotonic() < deadline:
            qapp.processEvents()
        loop.run_due()  # the callbacks the last steps scheduled (a transport's close ends in one)
        sys.set_asyncgen_hooks(*hooks)
        asyncio.events._set_running_loop(None)
        asyncio.set_event_loop(None)
        loop.close()
        release_loop_timers(loop)  # freed later on a worker thread, a live Qt timer crashes the GUI thread


def run_coro(qtbot: Any, loop: asyncio.AbstractEventLoop, coro: Any, timeout: int = 10_000) -> Any:
    """Run ``coro`` as a task on the qasync loop and wait (processing Qt events) until it is done."""
    task = loop.create_task(coro)
    qtbot.waitUntil(task.done, timeout=timeout)
    return task.result()


@pytest.fixture
def arun(qtbot: Any, qloop: asyncio.AbstractEventLoop) -> Any:
    """``arun(coro, timeout=10000)``: run a coroutine on the qasync loop and return its result."""

    def _run(coro: Any, timeout: int = 10_000) -> Any:
        return run_coro(qtbot, qloop, coro, timeout)

    return _run
