"""Unhandled exceptions become a banner in the window instead of a silent log line or a crash.

:class:`ErrorReporter` installs three hooks (``desktop.app`` does it once the window is wired):
``sys.excepthook`` (exceptions escaping a Qt slot), the asyncio loop's exception handler (a task
nobody awaited) and ``threading.excepthook`` (a worker thread). Each logs the traceback and shows a
summary, both scrubbed of every key, in an error banner; the app keeps running.
"""

from __future__ import annotations

import logging
import sys
import threading
import traceback
from collections.abc import Callable
from types import TracebackType
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Signal

if TYPE_CHECKING:
    import asyncio
    from pathlib import Path

    from desktop.ui.banner import Banner

log = logging.getLogger(__name__)

__all__ = ["ErrorReporter", "SUMMARY_LIMIT", "error_banner"]

SUMMARY_LIMIT = 300
"""The longest exception summary shown in the banner (longer ones end with "…")."""

def error_banner(show_banner: Callable[..., Banner], summary: str, log_file: Path | None,
                 open_folder: Callable[[Path], object]) -> Banner:
    """Show the error banner (``errorBanner``) for ``summary``: the app keeps running, the details are
    in the log file (named, with "Open log folder", when there is one)."""
    where = "details are in the log" + (f" file {log_file}" if log_file is not None else "")
    banner = show_banner(f"Something went wrong: {summary}. The app keeps running; {where}.",
                         kind="error", object_name="errorBanner")
    if log_file is not None:
        folder = log_file.parent
        banner.add_action("Open log folder", lambda: open_folder(folder), object_name="openLogFolderButton")
    return banner


_ExcHook = Callable[[type[BaseException], BaseException, TracebackType | None], Any]
_LoopHandler = Callable[["asyncio.AbstractEventLoop", dict[str, Any]], object]


class ErrorReporter(QObject):
    """Reports unhandled exceptions through a banner callback.

    Args:
        show_error: Shows one summary line to the user (the window's error banner).
        scrub: Removes every key (known keys and key-shaped text) from a text.
        parent: The Qt parent (the window), so the reporter lives on the GUI thread.
    """

    _from_thread = Signal(object, object, object)

    def __init__(self, show_error: Callable[[str], object], scrub: Callable[[str], str],
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._show_error = show_error
        self._scrub = scrub
        self.last_error: str | None = None
        self._installed = False
        self._prev_excepthook: _ExcHook | None = None
        self._prev_thread_hook: Callable[[threading.ExceptHookArgs], Any] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._prev_loop_handler: _LoopHandler | None = None
        # A thread's exception is reported on the GUI thread (queued: the reporter lives there).
        self._from_thread.connect(self._report_queued)

    @property
    def installed(self) -> bool:
        """True between :meth:`install` and :meth:`uninstall`."""
        return self._installed

    def report(self, exc_type: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
        """Log an unhandled exception and show its scrubbed summary (kept in :attr:`last_error`)."""
        detail = "".join(traceback.format_exception(exc_type, exc, tb))
        log.error("unhandled exception:\n%s", self._scrub(detail))
        summary = self._scrub(f"{exc_type.__name__}: {exc}".strip())
        if len(summary) > SUMMARY_LIMIT:
            summary = summary[:SUMMARY_LIMIT - 1] + "…"
        self.last_error = summary
        self._show_error(summary)

    def install(self, loop: asyncio.AbstractEventLoop | None = None) -> None:
        """Install the three hooks (idempotent); the loop handler on ``loop`` or the running loop.

        Installed before a loop runs (the app does so before its first paint), call it again on the
        running loop to add the loop handler; nothing else is installed twice.
        """
        if not self._installed:
            self._installed = True
            self._prev_excepthook = sys.excepthook
            sys.excepthook = self._excepthook
            self._prev_thread_hook = threading.excepthook
            threading.excepthook = self._thread_hook
        if loop is None and "asyncio" in sys.modules:  # no loop can run before asyncio is imported
            import asyncio

            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                loop = None
        if loop is not None and self._loop is None:
            self._loop = loop
            self._prev_loop_handler = loop.get_exception_handler()
            loop.set_exception_handler(self._loop_handler)

    def uninstall(self) -> None:
        """Put the previous hooks back (each only when it is still ours). Idempotent."""
        if not self._installed:
            return
        self._installed = False
        if sys.excepthook == self._excepthook and self._prev_excepthook is not None:
            sys.excepthook = self._prev_excepthook
        if threading.excepthook == self._thread_hook and self._prev_thread_hook is not None:
            threading.excepthook = self._prev_thread_hook
        if self._loop is not None and not self._loop.is_closed():
            self._loop.set_exception_handler(self._prev_loop_handler)
        self._loop = None

    # -- the hooks ------------------------------------------------------------------------------
    def _excepthook(self, exc_type: type[BaseException], exc: BaseException,
                    tb: TracebackType | None) -> None:
        previous = self._prev_excepthook or sys.__excepthook__
        if issubclass(exc_type, KeyboardInterrupt) or not self._installed:
            previous(exc_type, exc, tb)
            return
        try:
            self.report(exc_type, exc, tb)
        except Exception:
            previous(exc_type, exc, tb)

    def _thread_hook(self, args: threading.ExceptHookArgs) -> None:
        if not self._installed or args.exc_value is None or issubclass(args.exc_type, SystemExit):
            previous = self._prev_thread_hook or threading.__excepthook__
            previous(args)
            return
        self._from_thread.emit(args.exc_type, args.exc_value, args.exc_traceback)

    def _report_queued(self, exc_type: type[BaseException], exc: BaseException,
                       tb: TracebackType | None) -> None:
        if self._installed:
            self.report(exc_type, exc, tb)

    def _loop_handler(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        import asyncio

        exc = context.get("exception")
        if isinstance(exc, BaseException) and not isinstance(exc, asyncio.CancelledError) and self._installed:
            self.report(type(exc), exc, exc.__traceback__)
        else:
            loop.default_exception_handler(context)
