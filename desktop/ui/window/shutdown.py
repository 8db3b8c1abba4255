"""The main window's shutdown: stop every run, save and release the project, close the services.

``MainWindow.closeEvent`` hands the close to :class:`WindowShutdown`. With nothing to await (the
deferred services never loaded, e.g. ``--smoke-test``) the window closes at once; otherwise the close
is refused, the shutdown runs as a task the window holds (runs stopped, the project saved and
released, the nodes shut down, the HTTP client and the demo server closed), and the window closes
again when it is done and emits ``closed``.
"""

from __future__ import annotations

import logging
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import asyncio

    from PySide6.QtCore import SignalInstance
    from PySide6.QtGui import QCloseEvent

    from desktop.ui.context import AppContext
    from desktop.ui.window.import_flow import ImportFlow
    from desktop.ui.window.node_area import NodeArea
    from desktop.ui.window.project_controller import ProjectController

log = logging.getLogger(__name__)

__all__ = ["ShutdownHost", "WindowShutdown"]


class ShutdownHost(Protocol):
    """What the shutdown needs of the main window."""

    projects: ProjectController
    node_area: NodeArea
    imports: ImportFlow
    closed: SignalInstance

    def attached_context(self) -> AppContext | None: ...

    def background_tasks(self) -> set[asyncio.Task[Any]]: ...

    def hold(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]: ...

    def save_project(self) -> bool: ...

    def uninstall_error_reporter(self) -> None: ...

    def close(self) -> bool: ...


class WindowShutdown:
    """Closes one main window once (see the module docstring).

    Attributes:
        done: The shutdown finished (the window may close).
    """

    def __init__(self, window: ShutdownHost) -> None:
        self._window = window
        self.done = False
        self._task: asyncio.Task[Any] | None = None

    def close_event(self, event: QCloseEvent) -> None:
        """Accept ``event`` when the shutdown is done or has nothing to await; else start it."""
        window = self._window
        if self.done:
            event.accept()
            return
        context = window.attached_context()
        if self._task is None and context is not None and not window.background_tasks() \
                and not context.needs_async_close():
            # Nothing to await (the deferred services never loaded, e.g. --smoke-test): close now.
            self.release()
            context.close_now()
            window.uninstall_error_reporter()
            self.done = True
            event.accept()
            window.closed.emit()
            return
        event.ignore()
        if self._task is None:
            self._task = window.hold(self._shutdown_then_close())

    async def _shutdown_then_close(self) -> None:
        try:
            await self.ashutdown()
        finally:
            self.done = True
            self._window.close()
            self._window.closed.emit()

    async def ashutdown(self) -> None:
        """Stop every run, save the project, close the HTTP client and the demo server."""
        from desktop.core.aio import cancel_and_wait

        window = self._window
        window.projects.autosave.stop()
        await cancel_and_wait([t for t in window.background_tasks() if t is not self._task])
        context = window.attached_context()
        if context is None:
            raise RuntimeError("the main window has no application context yet")
        try:
            await context.stop_runs()
        except Exception:
            log.exception("stopping the runs failed")
        self.release()
        await context.aclose()
        window.uninstall_error_reporter()

    def release(self) -> None:
        """Save the project, release it and shut the nodes down (the runs are stopped)."""
        window = self._window
        window.imports.shutdown()  # an import still running stops; what it made is never added
        window.save_project()  # after the last background write, which it waits for
        window.projects.writer.close()  # the save worker's thread ends
        if window.projects.store is not None:
            window.projects.store.release()  # another window or instance may now take the project over
        window.node_area.shutdown()
