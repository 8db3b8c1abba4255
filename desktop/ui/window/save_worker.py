"""The autosave of a long project, written on one worker thread.

Serialising and writing a node at the history cap (about 200 KB of JSON, an fsync, the archive's
appends) costs the GUI thread 6 ms on an idle 2-core machine and 30 ms or more on a loaded one, after
every answer. :class:`SaveWorker` takes that off the GUI thread when a project is long
(``BACKGROUND_SAVE_CHARS`` of message text or more; a short project is still written at once, as
before, since copying it would cost as much as writing it):

* the GUI thread takes the project as it is now and a copy of it that later edits cannot reach
  (``detached_project``: node states, message objects, extras);
* one worker thread (a single-worker ``ThreadPoolExecutor``) runs ``ProjectStore.save`` on that copy:
  the same trim, archive appends and atomic write;
* the outcome (``SaveResult`` or the exception) comes back to the GUI thread through a queued signal,
  where the window applies the trims and shows the same banners as an explicit save;
* one write at a time, in order: a save asked for while one is running is remembered (several are
  coalesced into one) and taken once the running one's outcome was applied, so a newer save is never
  overtaken by an older one and every save sees the trims of the one before;
* :meth:`SaveWorker.wait` (the explicit save, switching projects, closing the window) blocks until
  the running write ended, delivers its outcome at once and drops a remembered one (the caller is
  about to write the newest state itself).

The worker owns no Qt object and holds none of the window's: it runs the store's save and emits the
queued signal of one relay object that lives as long as the application (as ``attachments.jobs`` does),
so nothing Qt is released off the GUI thread even when the window is gone before the write ends.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING

import shiboken6
from PySide6.QtCore import QCoreApplication, QObject, Qt, Signal

if TYPE_CHECKING:
    from desktop.core.store import Project, ProjectStore, SaveResult

log = logging.getLogger(__name__)

__all__ = ["BACKGROUND_SAVE_CHARS", "SaveJob", "SaveWorker", "is_long"]

BACKGROUND_SAVE_CHARS = 64 * 1024
"""From this much message text (open and closed nodes together) the autosave runs on the worker."""

Take = Callable[[], "tuple[ProjectStore, Project] | None"]
"""Returns the store and the project to save now (on the GUI thread), or None when nothing is saved."""


def is_long(project: Project, chars: int = BACKGROUND_SAVE_CHARS) -> bool:
    """True when the messages of ``project`` hold at least ``chars`` characters of text.

    Args:
        project: The project about to be saved.
        chars: The threshold.
    """
    total = 0
    for node in (*project.nodes, *project.closed):
        for message in node.conversation.messages:
            total += len(message.content)
        if total >= chars:
            return True
    return False


class SaveJob:
    """One background write and its outcome.

    Attributes:
        store: The store that writes (the project open when the save was asked for).
        project: The detached copy being written.
        result: What the save did, once it succeeded.
        error: What it raised, once it failed.
        force: Overwrite ``project.json`` even when another program changed it (Keep mine).
        future: The worker's future (done when the write ended).
    """

    __slots__ = ("store", "project", "force", "result", "error", "future")

    def __init__(self, store: ProjectStore, project: Project, *, force: bool = False) -> None:
        self.store = store
        self.project = project
        self.force = force
        self.result: SaveResult | None = None
        self.error: BaseException | None = None
        self.future: Future[None] | None = None

    def run(self) -> None:
        """Write the project (on the worker thread, or the GUI thread for an explicit save); never
        raises."""
        try:
            self.result = self.store.save(self.project, force=self.force)
        except Exception as exc:  # noqa: BLE001 - handed to the GUI thread, shown in a banner
            self.error = exc


class _Relay(QObject):
    """Carries finished jobs from the save workers to the GUI thread (one per application)."""

    finished = Signal(object)

    def __init__(self) -> None:
        super().__init__(QCoreApplication.instance())


_relay: _Relay | None = None


def _the_relay() -> _Relay:
    """The application's relay, made on first use (on the GUI thread)."""
    global _relay  # noqa: PLW0603 - one relay per application
    if _relay is None or not shiboken6.isValid(_relay):
        _relay = _Relay()
    return _relay


def _work(relay: _Relay, job: SaveJob) -> None:
    """The worker thread: write, then hand the job to the GUI thread."""
    job.run()
    try:
        relay.finished.emit(job)
    except RuntimeError:  # the application (and the relay with it) is gone: nobody to tell
        log.debug("a save finished after the application ended")


class SaveWorker(QObject):
    """Writes long projects' autosaves on one worker thread (see the module docstring).

    Args:
        parent: The owner (the project controller).
        deliver: Gets each finished job on the GUI thread, in order.

    Attributes:
        threshold: Message characters from which a save goes to the worker (``is_long``).
    """

    def __init__(self, parent: QObject, deliver: Callable[[SaveJob], object]) -> None:
        super().__init__(parent)
        self._deliver = deliver
        self.threshold = BACKGROUND_SAVE_CHARS
        self._executor: ThreadPoolExecutor | None = None
        self._running: SaveJob | None = None
        self._again: tuple[Take, Callable[[], object]] | None = None
        self._relay = _the_relay()
        self._relay.finished.connect(self._finish, Qt.ConnectionType.QueuedConnection)

    @property
    def busy(self) -> bool:
        """A write is running or its outcome was not delivered yet."""
        return self._running is not None

    def request(self, take: Take, save_now: Callable[[], object]) -> None:
        """Save the project: on the worker when it is long, else ``save_now()`` at once.

        Args:
            take: Returns the store and the project as they are now, or None (nothing to save).
                Called now, or once the running write's outcome was delivered.
            save_now: Writes on the GUI thread (the explicit save), for a short project.
        """
        if self._running is not None:
            self._again = (take, save_now)  # taken when the running write is done: newer state, one write
            return
        taken = take()
        if taken is None:
            return
        store, project = taken
        if not is_long(project, self.threshold):
            save_now()
            return
        from desktop.core.store import detached_project

        job = SaveJob(store, detached_project(project))
        if self._executor is None:
            self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="chatnodes-save")
        self._running = job
        job.future = self._executor.submit(_work, self._relay, job)
        log.debug("autosave of %s handed to the save worker", store.folder)

    def _finish(self, job: SaveJob) -> None:
        """The GUI thread: deliver ``job`` unless :meth:`wait` did already (or it is another
        window's), then take what waited."""
        if job is not self._running:
            return
        self._running = None
        again, self._again = self._again, None
        try:
            self._deliver(job)
            if again is not None:
                self.request(*again)
        except Exception:  # noqa: BLE001 - never into the Qt loop; the next save tries again
            log.exception("a background save's outcome could not be shown, or the next one not started")

    def wait(self) -> None:
        """Block until the running write ended and deliver its outcome now; drop a remembered
        request (the caller writes the newest state itself)."""
        self._again = None
        job = self._running
        if job is None:
            return
        if job.future is not None:
            job.future.result()  # ``SaveJob.run`` never raises
        self._running = None
        self._deliver(job)

    def close(self) -> None:
        """Wait for the last write and stop the worker thread (the window closes)."""
        self.wait()
        executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=True)
