"""The test session's garbage-collection rule once Qt exists: collections on the main thread only.

The app switches automatic collection off and collects from a GUI-thread timer
(``desktop.ui.gc_guard.GuiThreadCollector``): a collection started on a worker thread may free a Qt
object there, and Qt then crashes the GUI thread later. The test session shares one ``QApplication``
from the first Qt test on, and its non-Qt tests run servers, child watchers and worker threads that
allocate: :class:`MainThreadCollections` keeps the same rule between and outside the Qt tests, and
records every collection that started on another thread anyway.
"""

from __future__ import annotations

import gc
import logging
import sys
import threading

log = logging.getLogger(__name__)

__all__ = ["MainThreadCollections", "SESSION", "qt_exists"]


def qt_exists() -> bool:
    """True once a ``QApplication`` (or any ``QCoreApplication``) exists in this process."""
    core = sys.modules.get("PySide6.QtCore")
    return core is not None and core.QCoreApplication.instance() is not None


class MainThreadCollections:
    """Automatic collection off while Qt exists, due collections run on the main thread.

    Attributes:
        off_main: The names of the threads that started a collection while Qt existed (since the
            last :meth:`begin`).
    """

    def __init__(self) -> None:
        self.off_main: list[str] = []
        gc.callbacks.append(self._note)

    def _note(self, phase: str, _info: dict[str, int]) -> None:
        if phase == "start" and threading.current_thread() is not threading.main_thread() and qt_exists():
            self.off_main.append(threading.current_thread().name)

    def begin(self) -> None:
        """Before a test: no automatic collection if Qt exists; forget earlier records."""
        if qt_exists():
            gc.disable()
        self.off_main.clear()

    def end(self) -> list[str]:
        """After a test: collect what is due here on the main thread; returns the threads that
        started a collection during the test (sorted, each once) and forgets them."""
        if qt_exists():
            gc.disable()  # the Qt tests' collector gives automatic collection back at its teardown
            t0, t1, t2 = gc.get_threshold()
            c0, _c1, c2 = gc.get_count()
            if c2 >= (t1 + 1) * (t2 + 1):
                gc.collect(2)
            elif c0 > t0:
                gc.collect(1)
        threads = sorted(set(self.off_main))
        self.off_main.clear()
        if threads:
            log.warning("garbage collected on %s while Qt objects exist", threads)
        return threads

    def close(self) -> None:
        """Stop recording."""
        if self._note in gc.callbacks:
            gc.callbacks.remove(self._note)


SESSION = MainThreadCollections()
"""The test session's watch (``tests/conftest.py`` calls ``begin``/``end`` around every test)."""
