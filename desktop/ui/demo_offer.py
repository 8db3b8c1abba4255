"""The offline demo as the UI sees it: what ``desktop.app`` injects (:class:`DemoOffer`) and the demo
provider in the effective settings, never in the saved ones.

``desktop.app`` describes the demo it ships as a :class:`DemoOffer`; ``AppContext.start_demo`` starts
its server and :func:`with_demo_provider` adds an "Offline demo" provider to the settings in use, in
memory only: :func:`without_demo_provider` takes it out again before the settings are saved.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from desktop.core.settings import Settings

__all__ = ["DemoOffer", "DemoServer", "with_demo_provider", "without_demo_provider"]


class DemoServer(Protocol):
    """A running offline demo provider (the loopback fake provider in practice)."""

    @property
    def base_url(self) -> str:
        """The server's root URL."""
        ...

    @property
    def anthropic_base_url(self) -> str:
        """The base URL of its Anthropic-protocol endpoint."""
        ...

    def stop(self) -> None:
        """Stop serving (idempotent)."""
        ...


@dataclass(frozen=True)
class DemoOffer:
    """Everything the window needs to offer the offline demo, injected by ``desktop.app``.

    Attributes:
        provider_id: The id of the in-memory demo provider in the effective settings.
        model: The demo's default model.
        models: Every model the demo provider lists.
        first_prompt: What a new demo project offers to send first (the demo answers it with its tour).
        start: Starts the demo server; takes the streaming speed in tokens per second (None: unthrottled).
    """

    provider_id: str
    model: str
    models: tuple[str, ...]
    first_prompt: str
    start: Callable[[float | None], DemoServer]


def with_demo_provider(settings: Settings, offer: DemoOffer, server: DemoServer) -> Settings:
    """A copy of ``settings`` whose first provider, and default, is the running demo."""
    from desktop.core.settings import ProviderSettings  # start-up: this module loads before the settings

    eff = settings.copy()
    eff.providers = [p for p in eff.providers if p.id != offer.provider_id]
    eff.providers.insert(0, ProviderSettings(
        id=offer.provider_id,
        name="Offline demo",
        api="anthropic",
        base_url=server.anthropic_base_url,
        needs_key=False,
        key_env=None,
        models=list(offer.models),
    ))
    eff.default_provider = offer.provider_id
    eff.default_model = offer.model
    return eff


def without_demo_provider(settings: Settings, offer: DemoOffer | None, saved: Settings) -> Settings:
    """A copy of ``settings`` without the demo provider; a demo default falls back to ``saved``'s."""
    clean = settings.copy()
    demo_id = offer.provider_id if offer is not None else None
    if demo_id is not None:
        clean.providers = [p for p in clean.providers if p.id != demo_id]
        if clean.default_provider == demo_id:
            clean.default_provider = saved.default_provider
            clean.default_model = saved.default_model
    return clean
