"""Work done off the GUI thread for the attachment widgets, each result handed back on the GUI thread.

Reading a file, classifying it (``pypdf`` on a PDF), hashing and storing it, decoding an image for a
thumbnail or the viewer: each is a job run by a small shared pool of worker threads. A job's result
(or its exception) comes back through a queued signal of one relay object that lives as long as the
application, so a worker never touches a widget, and a result whose owner was deleted meanwhile is
dropped instead of reaching a dead object.
"""

from __future__ import annotations

import itertools
import logging
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import shiboken6
from PySide6.QtCore import QCoreApplication, QObject, Qt, Signal

log = logging.getLogger(__name__)

__all__ = ["WORKERS", "run_job"]

#: Worker threads shared by every attachment job (reading and decoding; the machine's other work
#: must keep a core).
WORKERS = 2

Callback = Callable[[Any, BaseException | None], None]


class _Relay(QObject):
    """Carries results from the workers to the GUI thread (one per application)."""

    delivered = Signal(int, object, object)

    def __init__(self) -> None:
        super().__init__(QCoreApplication.instance())
        self.pending: dict[int, tuple[QObject, Callback]] = {}
        self.delivered.connect(self._deliver, Qt.ConnectionType.QueuedConnection)

    def _deliver(self, job: int, result: object, error: object) -> None:
        entry = self.pending.pop(job, None)
        if entry is None:
            return
        owner, callback = entry
        if not shiboken6.isValid(owner):
            return  # the widget that asked is gone: nobody to tell
        try:
            callback(result, error if isinstance(error, BaseException) else None)
        except Exception:  # noqa: BLE001 - never into the Qt loop
            log.exception("an attachment job's result could not be shown")


_lock = threading.Lock()
_pool: ThreadPoolExecutor | None = None
_relay: _Relay | None = None
_ids = itertools.count(1)


def _parts() -> tuple[ThreadPoolExecutor, _Relay]:
    global _pool, _relay  # noqa: PLW0603 - one pool and one relay per process, made on first use
    with _lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="attachments")
        if _relay is None or not shiboken6.isValid(_relay):
            _relay = _Relay()
        return _pool, _relay


def run_job(owner: QObject, work: Callable[[], object], done: Callback) -> int:
    """Run ``work()`` in a worker thread, then ``done(result, error)`` on the GUI thread.

    Call it from the GUI thread. ``error`` is the exception ``work`` raised (``result`` is None
    then). ``done`` is not called when ``owner`` was deleted meanwhile.

    Returns:
        The job's number.
    """
    pool, relay = _parts()
    job = next(_ids)
    relay.pending[job] = (owner, done)
    pool.submit(_work, relay, job, work)
    return job


def _work(relay: _Relay, job: int, work: Callable[[], object]) -> None:
    try:
        result, error = work(), None
    except Exception as exc:  # noqa: BLE001 - handed to the GUI thread, which decides
        result, error = None, exc
    try:
        relay.delivered.emit(job, result, error)
    except RuntimeError:  # the application (and the relay with it) is gone: nobody to tell
        log.debug("attachment job %d finished after the application ended", job)
