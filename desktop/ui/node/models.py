"""Which provider and model a chat node uses, and which models its picker suggests.

``NodeModelChoice`` keeps the node's choice, fills the header's pickers (the configured models plus
the ones the provider lists, fetched in the background) and reports the user's changes.
"""

from __future__ import annotations

import logging
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Signal

from desktop.core.config import Settings, choose_model
from desktop.ui.node.header import NodeHeader
from desktop.ui.services import AppServices

if TYPE_CHECKING:
    import asyncio

log = logging.getLogger(__name__)

__all__ = ["NodeModelChoice", "spawn"]


def spawn(coro: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
    """Run ``coro`` as a task on the running (qasync) loop, or the policy's loop outside one."""
    import asyncio

    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        loop = asyncio.get_event_loop_policy().get_event_loop()
    return loop.create_task(coro)


class NodeModelChoice(QObject):
    """A node's provider and model (None: the defaults of the settings) and its pickers.

    Args:
        header: The node's header (its provider and model pickers).
        services: The application services (settings, model listing).
        provider: The provider picked in the node, or None.
        model: The model picked in the node, or None.

    Signals:
        changed(): the user picked another provider or model (the node recounts and autosaves).
    """

    changed = Signal()

    def __init__(self, header: NodeHeader, services: AppServices, provider: str | None,
                 model: str | None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._header = header
        self._services = services
        self.provider: str | None = provider
        """The provider picked in the node (None: the settings' default provider)."""
        self.model: str | None = model
        """The model picked in the node (None: the provider's default)."""
        self._listed: dict[str, list[str]] = {}
        self._task: asyncio.Task[None] | None = None
        self._closed = False
        header.provider_picked.connect(self._on_provider_picked)
        header.model_entered.connect(self._on_model_entered)

    def _settings(self) -> Settings:
        return self._services.settings()

    def provider_id(self) -> str | None:
        """The provider a send uses: the node's, else the settings' default."""
        return self.provider or self._settings().default_provider

    def default_model(self) -> str | None:
        """The model a send uses when the node picked none (``choose_model``)."""
        return choose_model(self._settings(), self.provider)

    def pricing_model(self) -> str | None:
        """The model that prices messages which do not name theirs."""
        return self.model or self.default_model()

    def context_lengths(self) -> dict[str, int]:
        """The context lengths the provider in use reported (a local server's), ``{}`` when none."""
        provider_id = self.provider_id()
        provider = self._settings().provider(provider_id) if provider_id else None
        return provider.context_lengths if provider is not None else {}

    def reload(self) -> None:
        """Fill both pickers from the settings (no ``changed``)."""
        settings = self._settings()
        current = self.provider or settings.default_provider
        keyed_of = self._services.keyed_providers
        keyed = keyed_of() if keyed_of is not None else frozenset()
        self._header.show_providers(
            [(p.id, p.name or p.id, (p.id in keyed) if p.needs_key else None) for p in settings.providers],
            current)
        self._fill_models()

    def pin(self) -> bool:
        """A send: a node that follows the default provider keeps the one it sends to from now on
        (saved with the node, so neither a restart nor another default moves it: a node that ran on
        the offline demo stays on it). True when the node's provider changed."""
        if self.provider is not None or self._closed:
            return False
        self.provider = self.provider_id()
        return self.provider is not None

    def set_model(self, model: str | None) -> None:
        """Pick ``model`` (as ``/model`` does) and emit ``changed``."""
        self.model = model
        self._header.show_model(model)
        self.changed.emit()

    def _fill_models(self) -> None:
        provider_id = self.provider_id()
        provider = self._settings().provider(provider_id) if provider_id else None
        models: list[str] = []
        for m in [*(provider.models if provider else []), *self._listed.get(provider_id or "", [])]:
            if m and m not in models:
                models.append(m)
        self._header.show_models(models, self.model, self.default_model())

    def request_models(self) -> None:
        """List the current provider's models in the background (a previous listing is cancelled)."""
        provider_id = self.provider_id()
        if self._task is not None and not self._task.done():
            self._task.cancel()
        self._task = None
        if not provider_id or self._closed:
            return
        self._task = spawn(self._load_models(provider_id))

    async def _load_models(self, provider_id: str) -> None:
        import asyncio

        picker = self._header.model_picker
        try:
            models = await self._services.list_models(provider_id)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - listing is a convenience; typing a model still works
            log.info("could not list the models of %s: %s", provider_id, exc)
            if not self._closed:
                import html

                picker.setToolTip(f"<p>Could not list models: {html.escape(str(exc))}</p>")
            return
        if self._closed:
            return
        self._listed[provider_id] = list(models)
        picker.setToolTip(f"{len(models)} models listed by the provider; any id can be typed")
        if provider_id == self.provider_id():
            self._fill_models()

    def shutdown(self) -> None:
        """Cancel a listing in progress; nothing is updated afterwards."""
        self._closed = True
        if self._task is not None and not self._task.done():
            self._task.cancel()

    def _on_provider_picked(self, provider_id: str | None) -> None:
        if provider_id == self.provider_id() and self.provider is not None:
            return
        self.provider = provider_id
        self.model = None
        self._fill_models()
        self.request_models()
        self.changed.emit()

    def _on_model_entered(self, text: str) -> None:
        model = text or None
        if model != self.model:
            self.model = model
            self.changed.emit()
