"""A closed qasync loop freed on a worker thread must not crash the GUI thread (the suite's segfault).

qasync keeps a Qt timer running for every ``call_later`` until it is due, cancelled or not (a finished
``asyncio.wait_for`` leaves one for its whole timeout), and the pending handles keep the closed loop
in a reference cycle. Collected on a worker thread, the loop's timer object is destroyed where Qt
cannot stop its timers, and the next ``processEvents`` on the GUI thread delivers a timer event to
freed memory: "Fatal Python error: Segmentation fault" in pytest-qt's ``_process_events``, seen
intermittently in full runs. ``release_loop_timers`` stops the timers on the GUI thread at close.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import weakref
from pathlib import Path
from typing import Any

import pytest
import qasync  # type: ignore[import-untyped]

from desktop.ui.gc_guard import release_loop_timers

# The scenario, in a child process (without the release it dies of the segfault).
_SCENARIO = '''
import asyncio, gc, sys, threading
import PySide6
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication
import qasync
from desktop.ui.gc_guard import release_loop_timers

app = QApplication([])
gc.disable()  # only the worker's collection below may free the loop
loop = qasync.QEventLoop(app, already_running=False)
asyncio.events._set_running_loop(loop)

async def answer_in_time() -> None:
    await asyncio.wait_for(asyncio.sleep(0), 0.2)  # done at once: its 0.2 s timer stays behind

task = loop.create_task(answer_in_time())
while not task.done():
    app.processEvents()
asyncio.events._set_running_loop(None)
loop.close()
if sys.argv[1] == "release":
    print("stopped", release_loop_timers(loop))
del loop, task
worker = threading.Thread(target=gc.collect, name="worker")  # an automatic collection on a worker
worker.start()
worker.join()
ended = []
QTimer.singleShot(600, lambda: ended.append(True))  # past the left-behind timer's due time
while not ended:
    app.processEvents()
print("survived")
'''


def _run(tmp_path: Path, mode: str) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "scenario.py"
    script.write_text(_SCENARIO, encoding="utf-8")
    env = {"QT_QPA_PLATFORM": "offscreen", "PATH": "/usr/bin:/bin"}
    root = Path(__file__).resolve().parents[2]
    return subprocess.run([sys.executable, "-X", "faulthandler", str(script), mode], capture_output=True,
                          text=True, timeout=120, env={**env, "PYTHONPATH": str(root)}, check=False)


def test_a_released_loop_freed_on_a_worker_thread_leaves_the_gui_thread_running(tmp_path: Path) -> None:
    done = _run(tmp_path, "release")
    assert done.returncode == 0, done.stderr
    assert "stopped 1" in done.stdout and "survived" in done.stdout
    assert "Timers cannot be stopped from another thread" not in done.stderr


def test_without_the_release_the_same_scenario_crashes(tmp_path: Path) -> None:
    """The scenario is the real hazard on this Qt and qasync (if it stops crashing, qasync fixed it)."""
    done = _run(tmp_path, "keep")
    assert "Timers cannot be stopped from another thread" in done.stderr
    assert done.returncode != 0 and "survived" not in done.stdout


def test_release_stops_every_timer_and_drops_every_handle(qapp: Any) -> None:
    loop = qasync.QEventLoop(qapp, already_running=False)
    handles = [loop.call_later(delay, print) for delay in (30.0, 60.0, 3600.0)]
    for handle in handles:
        handle.cancel()  # cancelled: qasync still runs their Qt timers
    refs = [weakref.ref(handle) for handle in handles]
    del handles, handle
    loop.close()
    assert release_loop_timers(loop) == 3
    assert all(ref() is None for ref in refs), "a handle (and the loop with it) is still held"
    assert release_loop_timers(loop) == 0


def test_release_refuses_an_open_loop(qapp: Any) -> None:
    loop = qasync.QEventLoop(qapp, already_running=False)
    try:
        with pytest.raises(RuntimeError, match="close the loop first"):
            release_loop_timers(loop)
    finally:
        loop.close()
    assert release_loop_timers(loop) == 0


def test_a_plain_asyncio_loop_is_left_alone() -> None:
    loop = asyncio.new_event_loop()
    loop.close()
    assert release_loop_timers(loop) == 0
