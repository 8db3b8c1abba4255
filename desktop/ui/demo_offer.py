"""The offline demo as the UI sees it: what ``desktop.app`` injects (:class:`DemoOffer`) and the demo
provider in the effective settings, never in the saved ones.

``desktop.app`` describes the demo it ships as a :class:`DemoOffer`; ``AppContext.start_demo`` starts
its server and :func:`with_demo_provider` adds an "Offline demo" provider to the settings in use, in
memory only: :func:`without_demo_provider` takes it out again before the settings are saved.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from desktop.core.config import Settings

log = logging.getLogger(__name__)

__all__ = ["DemoOffer", "DemoRunner", "DemoServer", "with_demo_provider", "without_demo_provider"]


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


def with_demo_provider(settings: Settings, offer: DemoOffer, server: DemoServer, *,
                       default: bool = True) -> Settings:
    """A copy of ``settings`` whose first provider (and with ``default`` its default) is the running demo.

    Without ``default`` the demo is only listed: nodes that ran on it keep it (a demo node stays a
    demo node after a restart), new nodes follow the saved default.
    """
    from desktop.core.config import ProviderSettings

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
    if default:
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


class DemoRunner:
    """The offline demo of one application context: its server, and whether it is the default.

    The demo is the default provider in demo mode (``--demo``, "Try the offline demo"). Its server
    also runs, without being the default, for a node that ran on it: after a restart a demo node
    stays a demo node while new nodes follow the user's providers.

    Args:
        offer: The demo the app ships (None: no demo available).
    """

    def __init__(self, offer: DemoOffer | None) -> None:
        self.offer = offer
        self.server: DemoServer | None = None
        self.default = False

    def is_demo(self, provider_id: str | None) -> bool:
        """True when ``provider_id`` names the demo provider."""
        return self.offer is not None and provider_id == self.offer.provider_id

    def start(self, tokens_per_second: float | None, *, default: bool) -> None:
        """Start the server (idempotent); with ``default`` the demo becomes the default provider.

        Raises:
            RuntimeError: The app offers no demo.
        """
        if self.server is None:
            if self.offer is None:
                raise RuntimeError("this build has no offline demo")
            self.server = self.offer.start(tokens_per_second)
            log.info("offline demo provider listening on %s", self.server.base_url)
        self.default = self.default or default

    def stop(self) -> None:
        """Stop the server if it runs (the demo is no default any more)."""
        server, self.server = self.server, None
        self.default = False
        if server is not None:
            server.stop()

    def apply(self, settings: Settings) -> Settings:
        """``settings`` with the demo provider while its server runs (the default in demo mode)."""
        if self.server is None or self.offer is None:
            return settings
        return with_demo_provider(settings, self.offer, self.server, default=self.default)
