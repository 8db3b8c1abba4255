"""MCP in the main window: start after the first paint, the project trust banner, failure notices.

``ProjectController.open`` calls :func:`project_opened` once per opened project. The first call gives
the window a :class:`McpWindow` (a child ``QObject`` named ``mcpWindow``) that

* starts the enabled servers shortly after the window was first shown (never on the start-up path:
  the SDK import costs about a second) and only when some server is enabled;
* shows the trust banner (``mcpTrustBanner``) when the project's ``.mcp.json`` is not trusted: each
  server's command line or URL, "Trust and start" (``mcpTrustButton``) and "Not now"
  (``mcpNotNowButton``). The decision is the user's (``TrustStore`` in the config folder, keyed by the
  project folder and the file's hash): a changed file asks again;
* turns a failed server into a banner (``mcpFailedBanner``) naming it, with a button that opens the
  Settings page of the MCP servers (``mcpOpenSettingsButton``), and a status-bar message.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QMainWindow

from desktop.core.visible import visible_text
from desktop.ui.banner import Banner, BannerArea
from desktop.ui.mcp.status import reason_text, short_status

if TYPE_CHECKING:
    from desktop.core.mcp import ProjectServers, ServerStatus
    from desktop.ui.context import AppContext

log = logging.getLogger(__name__)

__all__ = ["START_DELAY_MS", "McpWindow", "project_opened", "trust_lines"]

START_DELAY_MS = 150
"""After the window is first shown, how long to wait (the first paint) before starting servers."""
_TRUST_LINE_CHARS = 300
_TRUST_NAME_CHARS = 80
_PARTIAL_ESCAPE = re.compile(r"(<(U(\+[0-9A-F]{0,6})?)?|\\)$")


class McpWindow(QObject):
    """The MCP side of one main window (see the module docstring).

    Args:
        window: The main window (its status bar, its ``open_settings``).
        banners: Where the banners go.
        context: The application context (its ``mcp`` hub).
    """

    def __init__(self, window: QMainWindow, banners: BannerArea, context: AppContext) -> None:
        super().__init__(window)
        self.setObjectName("mcpWindow")
        self._window = window
        self._banners = banners
        self._context = context
        self._shown = window.isVisible()
        self._start_scheduled = False
        self.pending: ProjectServers | None = None
        """The project servers waiting for the user's trust (the banner's content)."""
        context.mcp.signals.status_changed.connect(self._on_status)
        if not self._shown:
            window.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt API)
        """Start the servers shortly after the window is first shown."""
        if watched is self._window and event.type() == QEvent.Type.Show and not self._shown:
            self._shown = True
            self._window.removeEventFilter(self)
            self._schedule_start()
        return False

    def _schedule_start(self) -> None:
        if self._start_scheduled or not self._shown:
            return
        self._start_scheduled = True
        QTimer.singleShot(START_DELAY_MS, self, self._start)

    def _start(self) -> None:
        self._start_scheduled = False
        hub = self._context.mcp
        try:
            hub.ensure_started()
        except Exception:  # noqa: BLE001 - the window must keep working without MCP
            log.exception("starting the MCP servers failed")
        if hub.config_error:
            self._banners.show_banner(Banner(hub.config_error, kind="warning", object_name="mcpConfigBanner"))

    # -- project -----------------------------------------------------------------------------------
    def project_opened(self, folder: Path) -> None:
        """Use the project's trusted servers, or ask about an untrusted ``.mcp.json``."""
        from desktop.core.mcp import McpConfigError, TrustStore

        for name in ("mcpTrustBanner", "mcpProjectConfigBanner"):
            stale = self._banners.find(name)
            if stale is not None:
                stale.dismiss()
        hub = self._context.mcp
        store = TrustStore(self._context.config_dir)
        self.pending = None
        try:
            pending = store.pending(folder)
            trusted = store.trusted_servers(folder) if pending is None else {}
        except McpConfigError as err:
            hub.set_project_servers({})
            self._banners.show_banner(Banner(f"This project's MCP servers were not started: {err}",
                                             kind="warning", object_name="mcpProjectConfigBanner"))
            return
        hub.set_project_servers(trusted)
        if pending is not None:
            self.pending = pending
            self._trust_banner(pending, store)
        self._schedule_start()

    def _trust_banner(self, pending: ProjectServers, store: object) -> None:
        lines = [f"  \u2022 {name}: {described}" for name, described in trust_lines(pending)]
        text = ("This project's .mcp.json wants to start MCP servers on this computer. They run with your "
                "permissions; start them only if you trust this project:\n" + "\n".join(lines))
        banner = self._banners.show_banner(Banner(text, kind="warning", object_name="mcpTrustBanner"))
        banner.add_action("Trust and start", lambda: self.trust(pending), object_name="mcpTrustButton")
        banner.add_action("Not now", banner.dismiss, object_name="mcpNotNowButton")

    def trust(self, pending: ProjectServers) -> None:
        """Record the user's trust in exactly this ``.mcp.json`` content and start its servers."""
        from desktop.core.mcp import TrustStore

        banner = self._banners.find("mcpTrustBanner")
        try:
            TrustStore(self._context.config_dir).trust(pending)
        except OSError as exc:
            self._banners.show_banner(Banner(f"Could not store the trust decision: {exc.strerror or exc}",
                                             kind="error", object_name="mcpTrustErrorBanner"))
            return
        if banner is not None:
            banner.dismiss()
        self.pending = None
        hub = self._context.mcp
        hub.set_project_servers(pending.servers)  # parsed from the very bytes whose hash was trusted
        hub.ensure_started()

    # -- status ------------------------------------------------------------------------------------
    def _on_status(self, status: ServerStatus) -> None:
        bar = self._window.statusBar()
        name = visible_text(status.name)
        if status.state == "failed":
            bar.showMessage(f"MCP server \u201c{name}\u201d failed: {reason_text(status)}", 10_000)
        elif status.state == "ready":
            bar.showMessage(f"MCP server \u201c{name}\u201d {short_status(status)}", 4000)
        self._failed_banner(status.name if status.state == "failed" else None)

    def _failed_banner(self, latest: str | None) -> None:
        """One banner listing every server that is failed now (gone once none is)."""
        failed = [s for s in self._context.mcp.statuses().values() if s.state == "failed"]
        stale = self._banners.find("mcpFailedBanner")
        if not failed:
            if stale is not None:
                stale.dismiss()
            return
        text = _failed_text(failed)
        if stale is not None and stale.text() == text:
            return
        first = latest or failed[0].name
        banner = self._banners.show_banner(Banner(text, kind="error", object_name="mcpFailedBanner"))
        banner.add_action("Open MCP settings", lambda: self.open_settings(first),
                          object_name="mcpOpenSettingsButton")

    def open_settings(self, server: str | None = None) -> None:
        """Open Settings on the MCP servers page (with ``server`` selected)."""
        opener = getattr(self._window, "open_settings", None)
        if not callable(opener):
            return
        dialog = opener()
        show = getattr(dialog, "show_mcp_page", None)
        if callable(show):
            show(server)


def trust_lines(pending: ProjectServers) -> list[tuple[str, str]]:
    """``(name, command line or URL)`` of each server the trust banner lists: made visible by
    ``ProjectServers.banner_lines`` (a newline or U+202E shows as an escape) and cut at
    ``_TRUST_NAME_CHARS`` / ``_TRUST_LINE_CHARS`` characters with "…", never inside an escape."""
    return [(_cut_visible(name, _TRUST_NAME_CHARS), _cut_visible(line, _TRUST_LINE_CHARS))
            for name, line in pending.banner_lines()]


def _cut_visible(shown: str, limit: int) -> str:
    """``shown`` (already made visible) cut to ``limit`` characters with "…"; an escape the cut would
    split (``<U+20``, a lone ``\\``) is left out whole."""
    if len(shown) <= limit:
        return shown
    return _PARTIAL_ESCAPE.sub("", shown[: limit - 1]) + "\u2026"


def _failed_text(failed: list[ServerStatus]) -> str:
    lines = [f"MCP server \u201c{visible_text(s.name)}\u201d failed: {reason_text(s)}" for s in failed]
    return "\n".join(lines)


def project_opened(window: QMainWindow, banners: BannerArea, context: AppContext, folder: Path) -> McpWindow:
    """The window opened ``folder``: set up MCP for the window (once) and for this project."""
    ui = window.findChild(McpWindow, "mcpWindow")
    if ui is None:
        ui = McpWindow(window, banners, context)
    ui.project_opened(folder)
    return ui
