"""A window's first run, and what a change of provider does to its nodes.

Without a usable provider the window shows the welcome banner (``welcomeBanner``: Open Settings, Try
the offline demo) and probes the keyless local servers in the background (the core's
``probe_local_servers``: Ollama, LM Studio, llama.cpp, vLLM, all at once, 300 ms each; start-up never
waits for it): each that answers gets a "Use … (found on this computer)" button, which adds it to the
settings with its models and context lengths and makes it the default. A provider is usable when the
default works or, failing that, any provider has a key (``AppContext.effective_settings`` makes that
one the default), so the banner follows the keys there are: gone once a key is stored, back when the
last one is removed. Choosing a provider (a local server, the demo, or the settings dialog's OK)
reloads every node's providers; switching to the demo also moves the idle nodes whose own provider
does not work onto it.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Coroutine, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from desktop.ui.banner import Banner, BannerArea, BannerKind, KeepNodesFilled

if TYPE_CHECKING:
    import asyncio

    from PySide6.QtWidgets import QMdiArea

    from desktop.core.providers import LocalServer
    from desktop.core.store import ProjectStore
    from desktop.ui.context import AppContext
    from desktop.ui.node.chat_node import ChatNodeWidget
    from desktop.ui.window.node_area import NodeArea

__all__ = ["FirstRun", "FirstRunHost"]


class FirstRunHost(Protocol):
    """What :class:`FirstRun` needs of its window (a ``MainWindow``; a Protocol, so this module does
    not import the window's module back)."""

    @property
    def context(self) -> AppContext: ...
    @property
    def banner_area(self) -> BannerArea: ...
    @property
    def mdi(self) -> QMdiArea: ...
    @property
    def node_area(self) -> NodeArea: ...
    @property
    def store(self) -> ProjectStore | None: ...
    def show_banner(self, text: str, *, kind: BannerKind = "info", object_name: str = "banner") -> Banner: ...
    def open_settings(self) -> object: ...
    def nodes(self) -> list[ChatNodeWidget]: ...
    def active_node(self) -> ChatNodeWidget | None: ...
    def schedule_save(self) -> None: ...
    def hold(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]: ...
    def update_title(self) -> None: ...


class FirstRun:
    """The first run of one main window (see the module docstring).

    Attributes:
        probe_task: The probe of the local servers (its result: the ``LocalServer``s found).
        local_ports: ``{server kind: port}`` to probe instead of the usual ports (tests point it at
            fake servers), or None.
    """

    def __init__(self, window: FirstRunHost) -> None:
        self._window = window
        self._keep_filled: KeepNodesFilled | None = None
        self._checked = False
        self.probe_task: asyncio.Task[Any] | None = None
        self.local_ports: Mapping[str, int] | None = None

    def check(self) -> None:
        """Without a usable provider, show the welcome banner and probe local servers."""
        self._checked = True
        if not self._window.context.has_usable_provider():
            self._welcome()

    def _welcome(self) -> None:
        window = self._window
        banner = window.show_banner(
            "Welcome to Chat Nodes! No provider is set up yet: add an API key in Settings, "
            "or try the offline demo (no key, no network).",
            kind="info",
            object_name="welcomeBanner",
        )
        banner.add_action("Open Settings", window.open_settings, object_name="openSettingsButton")
        if window.context.demo_offer is not None:
            banner.add_action("Try the offline demo", self.try_demo, object_name="tryDemoButton")
        banner.dismissed.connect(self.focus_message_input)
        if self._keep_filled is None:  # the node keeps filling the area as the banner goes
            self._keep_filled = KeepNodesFilled(window.mdi, window.banner_area)
        try:
            self.probe_task = window.hold(self._probe_local_servers())
        except RuntimeError:  # no running loop (should not happen in the app)
            self.probe_task = None

    async def _probe_local_servers(self) -> list[LocalServer]:
        from desktop.core.providers import probe_local_servers  # start-up: the shell is built before it

        window = self._window
        found = await probe_local_servers(window.context.client, ports=self.local_ports)
        banner = window.banner_area.find("welcomeBanner")
        if banner is not None:
            for server in found:
                count = len(server.models)
                banner.add_action(f"Use {server.kind.name} (found on this computer, "
                                  f"{count} model{'' if count == 1 else 's'})",
                                  functools.partial(self.use_local_server, server),
                                  object_name="useLocalProviderButton")
        return found

    def use_local_server(self, server: LocalServer) -> None:
        """Add the local ``server`` to the settings (its models and context lengths, no key), make it the
        default provider (saved) and drop the welcome."""
        window = self._window
        settings = window.context.settings.copy()
        provider = server.add_to(settings.providers)
        settings.default_provider = provider.id
        settings.default_model = provider.models[0] if provider.models else None
        try:
            window.context.save_settings(settings)
        except Exception as exc:
            window.show_banner(f"Could not save the settings: {exc}", kind="error",
                               object_name="settingsErrorBanner")
            return
        self.after_provider_change()

    def try_demo(self) -> None:
        """Switch to the offline demo: start the demo provider and move idle unconfigured nodes onto it."""
        window = self._window
        if not window.context.demo:
            try:
                window.context.start_demo()
            except Exception as exc:
                window.show_banner(f"The offline demo could not start: {exc}", kind="error",
                                   object_name="demoErrorBanner")
                return
        self.after_provider_change(switch_to_demo=True)

    def after_provider_change(self, *, switch_to_demo: bool = False) -> None:
        """The providers changed: the nodes reload them (and move to the demo when switching to it)."""
        window = self._window
        context = window.context
        store = window.store
        if store is not None:
            store.history_cap_bytes = context.effective_settings().history_cap_bytes
        welcome = window.banner_area.find("welcomeBanner")
        if context.has_usable_provider():  # a key stored (keyring or environment), a local server...
            if welcome is not None:
                welcome.dismiss()
        elif welcome is None and self._checked:  # the last key was removed
            self._welcome()
        for node in list(window.nodes()):
            node.reload_settings()
        offer = context.demo_offer
        if switch_to_demo and offer is not None:
            for node in list(window.nodes()):
                state = node.to_state()
                if node.is_busy() or state.provider in (None, offer.provider_id):
                    continue  # a node without a provider of its own follows the default: the demo
                if context.provider_config(state.provider, state.model) is not None:
                    continue  # a working provider is left alone
                demo_state = dataclasses.replace(state, provider=offer.provider_id, model=offer.model)
                window.node_area.replace_node(node, demo_state)
            window.schedule_save()
        if switch_to_demo:
            self.focus_message_input()

    def focus_message_input(self) -> None:
        """Put the keyboard focus in the active (else the first) node's message input."""
        window = self._window
        node = window.active_node() or next(iter(window.nodes()), None)
        if node is not None:
            node.chat_input.setFocus()
        window.update_title()
