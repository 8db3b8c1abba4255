"""Settings → Providers: "Detect local servers" and what it found.

The button (``detectLocalButton``) probes the usual local model servers in the background (the core's
``probe_local_servers``: Ollama, LM Studio, llama.cpp's server and vLLM, all at once, 300 ms each); the
result panel (``detectResult``) lists each server that answered with its address, models and context
lengths, and an Add button (``addLocalServerButton``) that puts it in the providers list with no key
(an entry with its id is updated instead). Like every edit on the page, it is saved on OK.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from desktop.core.providers import LOCAL_SERVER_KINDS, LocalServer, probe_local_servers
from desktop.ui.settings.common import SettingsContext

__all__ = ["LocalDetect", "describe_server"]

log = logging.getLogger(__name__)

_SHOWN_MODELS = 4


def _tokens(n: int) -> str:
    return f"{n // 1000}k" if n >= 1000 else str(n)


def describe_server(server: LocalServer) -> str:
    """One line for a found server: its name, address, models and (when it told) context lengths."""
    count = len(server.models)
    models = ", ".join(server.models[:_SHOWN_MODELS]) + (" …" if count > _SHOWN_MODELS else "")
    text = f"{server.kind.name} at {server.base_url} — {count} model{'' if count == 1 else 's'}"
    if models:
        text += f": {models}"
    if server.context_lengths:
        lo, hi = min(server.context_lengths.values()), max(server.context_lengths.values())
        text += f" (context {_tokens(lo)})" if lo == hi else f" (context {_tokens(lo)}–{_tokens(hi)})"
    return text


class LocalDetect:
    """The Detect button and its result panel (the page places both).

    Args:
        context: The settings context (its HTTP client).
        add: Puts a found server into the page's providers; returns whether it was already listed.
        parent: The page.

    Attributes:
        button: ``detectLocalButton``.
        result: ``detectResult``, hidden until the first detection.
        local_ports: ``{server kind: port}`` to probe instead of the usual ports (tests point it at
            fake servers), or None.
        task: The detection in progress or last run (its result: the servers found).
    """

    def __init__(self, context: SettingsContext, add: Callable[[LocalServer], bool], parent: QWidget) -> None:
        self._context = context
        self._add = add
        self.local_ports: Mapping[str, int] | None = None
        self.task: asyncio.Task[list[LocalServer]] | None = None
        self.button = QPushButton("Detect local servers", parent)
        self.button.setObjectName("detectLocalButton")
        names = ", ".join(f"{k.name} (:{k.port})" for k in LOCAL_SERVER_KINDS)
        self.button.setToolTip(f"Look for model servers running on this computer: {names}")
        self.button.clicked.connect(self.detect)
        self.result = QFrame(parent)
        self.result.setObjectName("detectResult")
        self.result.setFrameShape(QFrame.Shape.StyledPanel)
        self._rows = QVBoxLayout(self.result)
        self._rows.setContentsMargins(10, 8, 10, 8)
        self._rows.setSpacing(6)
        self.status = QLabel("", self.result)
        self.status.setObjectName("detectStatusLabel")
        self.status.setWordWrap(True)
        self._rows.addWidget(self.status)
        self._server_rows: list[QWidget] = []
        self.result.hide()

    def detect(self) -> asyncio.Task[list[LocalServer]]:
        """Probe the local servers in the background; the result panel shows what answered."""
        self.cancel()
        self.button.setEnabled(False)
        self._clear_rows()
        self.status.setText("Looking for model servers on this computer…")
        self.result.show()
        self.task = asyncio.ensure_future(self._run())
        return self.task

    def cancel(self) -> None:
        """Stop a detection in progress (the dialog closes)."""
        if self.task is not None and not self.task.done():
            self.task.cancel()

    async def _run(self) -> list[LocalServer]:
        found = await probe_local_servers(self._context.client, ports=self.local_ports)
        try:
            self._show(found)
        except RuntimeError:  # the dialog was closed meanwhile
            log.debug("the settings dialog closed during the detection")
        return found

    def _clear_rows(self) -> None:
        for row in self._server_rows:
            row.hide()
            row.deleteLater()
        self._server_rows.clear()

    def _show(self, found: list[LocalServer]) -> None:
        self.button.setEnabled(True)
        if not found:
            where = ", ".join(f"{k.name} on port {k.port}" for k in LOCAL_SERVER_KINDS)
            self.status.setText(f"No local model server answered ({where}). Start one, then detect again.")
            return
        self.status.setText(f"Found {len(found)} server{'' if len(found) == 1 else 's'} on this computer "
                            "(no key needed):")
        for server in found:
            row = QWidget(self.result)
            row.setObjectName("localServerRow")
            layout = QHBoxLayout(row)
            layout.setContentsMargins(0, 0, 0, 0)
            label = QLabel(describe_server(server), row)
            label.setObjectName("localServerLabel")
            label.setWordWrap(True)
            label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            layout.addWidget(label, 1)
            button = QPushButton("Add", row)
            button.setObjectName("addLocalServerButton")
            button.setToolTip(f"Add {server.kind.name} to the providers with these models (saved on OK)")
            button.clicked.connect(lambda _c=False, s=server, b=button: self._added(s, b))
            layout.addWidget(button, 0, Qt.AlignmentFlag.AlignTop)
            self._rows.addWidget(row)
            self._server_rows.append(row)

    def _added(self, server: LocalServer, button: QPushButton) -> None:
        updated = self._add(server)
        button.setText("Updated ✓" if updated else "Added ✓")
        button.setEnabled(False)
