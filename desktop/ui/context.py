"""The services one main window runs on: :class:`AppContext`.

``desktop.app`` builds the context: it injects the offline demo (``demo_offer.DemoOffer``) and the
key-shape scrubber, so nothing in ``desktop.ui`` imports the demo package or the bootstrap module.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from desktop.core.config import KeyCache, price_overrides_as_prices
from desktop.core.redact import scrub_secrets
from desktop.ui.bridge import RuntimeBridge
from desktop.ui.demo_offer import DemoOffer, DemoRunner, DemoServer, without_demo_provider
from desktop.ui.services import LazyRuntime, LazyUsage

if TYPE_CHECKING:
    import asyncio

    import httpx

    from desktop.core.attachments import AttachmentResolver, AttachmentStore
    from desktop.core.chat.runtime import ChatRuntime, ChatRuntimeDeps
    from desktop.core.chat.types import ChatDriver, ChatEvent, ChatToolDef, ProviderConfig
    from desktop.core.config import SecretStore, SendTarget, Settings
    from desktop.core.usage import BudgetCheck, MonthlyTally, RunInfo, UsageRecorder
    from desktop.ui.mcp_hub import McpHub

log = logging.getLogger(__name__)

__all__ = ["AppContext", "AttachmentsFor"]

AttachmentsFor = Callable[[Path | None], "tuple[AttachmentStore | None, AttachmentResolver | None]"]
"""A project folder's attachment store and the resolver its sends use (``(None, None)``: none)."""


def _no_attachments(folder: Path | None) -> tuple[AttachmentStore | None, AttachmentResolver | None]:
    return None, None


class AppContext:
    """The services one main window runs on.

    One shared ``httpx.AsyncClient``, the settings store and the current settings, the secret store,
    the chat runtime and its Qt bridge, and (in demo mode) the loopback demo provider. The demo
    provider is added to the settings in memory only: :meth:`effective_settings` shows it,
    :attr:`settings` (what is saved) never holds it.

    With ``defer_services`` building the context reads the settings only: the key store, the HTTP
    client, the runtime, the usage ledger and the MCP hub load on first use, or together in
    :meth:`load_services`, which the app calls right after its first paint (so a window with a node
    accepting input comes first).

    Args:
        config_dir: The settings folder.
        key_scrubber: Replaces anything shaped like a provider key in a text (used by :meth:`scrub`).
        demo_offer: The offline demo the app ships (None: no demo available).
        demo: Start the demo provider now and make it the default (needs ``demo_offer``).
        environ: Environment used for key resolution (default ``os.environ``).
        secrets: The key store (default: the OS keyring, or session-only when there is none).
        attachments_for: A project's attachment store and resolver (``desktop.app`` passes the
            ``QImage`` one); without it, attachments cannot be stored or sent.
        defer_services: Leave the key store, HTTP client, runtime, ledger and MCP hub for
            :meth:`load_services` (or their first use); False loads them now.
    """

    def __init__(
        self,
        *,
        config_dir: Path,
        key_scrubber: Callable[[str], str],
        demo_offer: DemoOffer | None = None,
        demo: bool = False,
        environ: Mapping[str, str] | None = None,
        secrets: SecretStore | None = None,
        defer_services: bool = False,
        attachments_for: AttachmentsFor | None = None,
    ) -> None:
        from desktop.core.config import GrantStore, SettingsStore

        self.config_dir = Path(config_dir)
        self.environ: Mapping[str, str] = os.environ if environ is None else environ
        self.settings_store = SettingsStore(self.config_dir)
        self.grants = GrantStore(self.config_dir)
        """Always-allow grants: the user's own, in the config dir, keyed by project folder."""
        self.settings: Settings = self.settings_store.load()
        self.settings_error: str | None = self.settings_store.last_error
        self.demo_offer = demo_offer
        self._demo = DemoRunner(demo_offer)
        self._attachments_for: AttachmentsFor = attachments_for or _no_attachments
        """A project's attachment store and the resolver its sends use (the app injects the ``QImage``
        one, ``desktop.ui.attachments.images.project_attachments``)."""
        self._keys = KeyCache(self.environ)  # the keys there are, looked up once per change
        self._effective: tuple[tuple[object, ...], Settings] | None = None
        self.project_dir: Path | None = None
        self.bridge = RuntimeBridge()
        self.runtime_handle = LazyRuntime(lambda: self.runtime, lambda: self._runtime)
        """What the nodes use (``AppServices.runtime``): it loads the runtime on the first send."""
        self._key_scrubber = key_scrubber
        self.log_file: Path | None = None
        """The app's log file (``desktop.app`` sets it): the error banner says where the details are."""
        self.node_title: Callable[[str], str] = lambda _node_id: ""
        """The title of a node, for the usage ledger (the window sets it when it opens a project)."""
        self._run_provider: dict[str, tuple[str, str | None]] = {}
        self._closed = False
        self._inflight: set[asyncio.Future[list[str]]] = set()
        # The services below load on first use, or all at once in load_services() (right after the
        # window's first paint): the keyring, httpx, the runtime, the usage ledger and the MCP hub.
        self._secrets = secrets
        self._client: httpx.AsyncClient | None = None
        self._deps: ChatRuntimeDeps | None = None
        self._runtime: ChatRuntime | None = None
        overrides = lambda: price_overrides_as_prices(self.settings)  # noqa: E731
        self._usage = LazyUsage(self.config_dir, self._describe_run, overrides,
                                self.bridge.usage_unsaved.emit)  # a failed ledger write: status bar
        self._mcp: McpHub | None = None
        self._services_loaded = False
        self._after_load: list[Callable[[], object]] = []
        if demo:
            self.start_demo()
        if not defer_services:
            self.load_services()

    # -- deferred services ---------------------------------------------------------------------
    @property
    def secrets(self) -> SecretStore:
        """The key store (the OS keyring, or session-only when there is none); loaded on first use."""
        if self._secrets is None:
            from desktop.core.config import SecretStore

            self._secrets = SecretStore()  # what it logs meanwhile is scrubbed without it (known_keys)
            self._keys.changed()  # the keys it holds count from now on
        return self._secrets

    @property
    def client(self) -> httpx.AsyncClient:
        """The one shared HTTP client (created on first use)."""
        if self._client is None:
            import httpx

            self._client = httpx.AsyncClient(timeout=httpx.Timeout(60.0, connect=10.0))
        return self._client

    @property
    def runtime(self) -> ChatRuntime:
        """The chat runtime (created on first use; nodes go through :attr:`runtime_handle`)."""
        if self._runtime is None:
            from desktop.core.chat.runtime import ChatRuntimeDeps, create_chat_runtime

            self._deps = ChatRuntimeDeps(
                resolve_provider=self.resolve_provider,
                broadcast=self._broadcast,
                tools_for=self.tools_for,
                driver_for=self._driver_for,
                log=logging.getLogger("desktop.runtime").info,
                max_iterations=self.settings.max_iterations,
            )
            self._runtime = create_chat_runtime(self._deps)
        return self._runtime

    @property
    def usage(self) -> UsageRecorder:
        """Writes every response's usage to the ledger (created on first use)."""
        return self._usage.recorder

    @property
    def tally(self) -> MonthlyTally:
        """This month's spending (app-wide and per project), kept current from the ledger."""
        return self._usage.tally

    @property
    def mcp(self) -> McpHub:
        """The MCP servers (cheap until one is configured; the SDK loads when a server starts)."""
        if self._mcp is None:
            from desktop.ui.mcp_hub import McpHub  # deferred like the other services: it brings asyncio

            self._mcp = McpHub(
                runtime=self.runtime_handle,
                settings=lambda: self.settings,
                secrets=self.secrets,
                environ=self.environ,
                project_dir=lambda: self.project_dir,
                builtin_tools=self.builtin_tools,
                grants=self.grants,
            )
        return self._mcp

    @property
    def services_loaded(self) -> bool:
        """True once :meth:`load_services` ran."""
        return self._services_loaded

    def load_services(self) -> None:
        """Load every deferred service now (the app calls it right after its first paint), then run
        the callbacks given to :meth:`after_load`. Idempotent."""
        if self._services_loaded:
            return
        self._services_loaded = True
        for name in ("secrets", "client", "runtime", "usage", "tally", "mcp"):
            getattr(self, name)
        from desktop.core import providers  # noqa: F401  (the first send and model listing need them)

        callbacks, self._after_load = self._after_load, []
        for callback in callbacks:
            callback()

    def after_load(self, callback: Callable[[], object]) -> None:
        """Call ``callback`` once the services are loaded (at once when they are)."""
        if self._services_loaded:
            callback()
        else:
            self._after_load.append(callback)

    async def stop_runs(self) -> None:
        """Stop every run (nothing runs when the runtime was never loaded)."""
        if self._runtime is not None:
            await self._runtime.aclose()

    def needs_async_close(self) -> bool:
        """True when closing must await something (a runtime, MCP hub or HTTP client exists)."""
        return any(x is not None for x in (self._runtime, self._mcp, self._client)) or bool(self._inflight)

    # -- settings -------------------------------------------------------------------------------
    @property
    def demo(self) -> bool:
        """True in demo mode: the demo provider runs and is the default (``--demo``, "Try the offline
        demo"), not only for the nodes that ran on it (``start_demo(default=False)``)."""
        return self._demo.server is not None and self._demo.default

    @property
    def demo_server(self) -> DemoServer | None:
        """The running demo provider, or None."""
        return self._demo.server

    def effective_settings(self) -> Settings:
        """The settings in use (the same object until they, the keys or the demo change): the saved
        ones with a default that works with the keys there are (``follow_keys``), plus the demo
        provider while it runs (the default in demo mode)."""
        state = (self.settings, self._demo.server, self._demo.default, self._keys.version)
        cached = self._effective
        if cached is not None and all(a is b or a == b for a, b in zip(cached[0], state, strict=True)):
            return cached[1]
        from desktop.core.config import follow_keys

        effective = self._demo.apply(self.settings)
        if not self.demo:
            effective = follow_keys(effective, self.keyed_providers())
        self._effective = (state, effective)
        return effective

    def keyed_providers(self) -> frozenset[str]:
        """The providers a key is found for (the environment's; the key store's once it is loaded)."""
        return self._keys.keyed_providers(self.settings, self._secrets)

    def keys_changed(self) -> None:
        """Keys were stored or removed: the default provider and the provider marks look again."""
        self._keys.changed()

    def save_settings(self, settings: Settings) -> None:
        """Validate, save and adopt ``settings`` (the demo provider is never saved).

        Raises:
            SettingsError: The settings are invalid (nothing changes).
            OSError: Writing failed.
        """
        clean = without_demo_provider(settings, self.demo_offer, self.settings)
        self.settings_store.save(clean)
        self.settings = clean
        self.settings_error = None
        self.keys_changed()  # a key may have changed with the settings
        if self._deps is not None:
            self._deps.max_iterations = clean.max_iterations
        self.mcp.apply()  # MCP servers added, changed or removed in Settings

    # -- runtime dependencies ------------------------------------------------------------------
    def resolve_provider(self, req: SendTarget) -> ProviderConfig | None:
        """``ChatRuntimeDeps.resolve_provider``: the current settings and keys."""
        from desktop.core.config import resolve_provider

        if self._demo.server is None and self._demo.is_demo(getattr(req, "provider", None)):
            self.start_demo(default=False)  # a node that ran on the demo stays on it (after a restart too)
        config = resolve_provider(self.effective_settings(), req, secrets=self.secrets, environ=self.environ)
        node_id = getattr(req, "node_id", None)
        if config is not None and isinstance(node_id, str):
            self._run_provider[node_id] = (config.id, config.model)
        return config

    def _broadcast(self, node_id: str, event: ChatEvent) -> None:
        """``ChatRuntimeDeps.broadcast``: to the UI, and every response's usage to the ledger."""
        self.usage.observe(node_id, event)  # first: the node's cost update then sees the new total
        self.bridge.broadcast(node_id, event)

    def budget_check(self, project_budget: float | None = None) -> BudgetCheck | None:
        """The tightest of the app-wide budget and ``project_budget`` (the open project's), or None."""
        from desktop.core.usage import tightest_budget

        return tightest_budget(self.tally, self.settings.monthly_budget_usd, self.project_dir, project_budget)

    def _describe_run(self, node_id: str) -> RunInfo | None:
        from desktop.core.usage import RunInfo

        run = self._run_provider.get(node_id)
        if run is None or self.project_dir is None:
            return None
        if self._demo.is_demo(run[0]):
            return None  # the offline demo costs nothing and would only pollute the user's totals
        try:
            title = self.node_title(node_id)
        except Exception:  # noqa: BLE001 - a closed node has no title; the line is still written
            title = ""
        return RunInfo(provider=run[0], project=str(self.project_dir), node_title=title, model=run[1])

    def provider_config(self, provider_id: str | None, model: str | None = None) -> ProviderConfig | None:
        """The provider configuration for ``provider_id`` (the default when None), or None."""
        from desktop.core.config import ProviderTarget

        return self.resolve_provider(ProviderTarget(provider_id, model))

    def builtin_tools(self) -> list[ChatToolDef]:
        """The built-in project tools, rooted at the open project folder (none without a project)."""
        if self.project_dir is None:
            return []
        from desktop.core.tools import project_tools

        return list(project_tools(self.project_dir))

    def tools_for(self, req: object) -> list[ChatToolDef]:
        """``ChatRuntimeDeps.tools_for``: the project tools and the MCP tools the node kept switched on."""
        node_id = getattr(req, "node_id", None)
        builtin = self.builtin_tools()
        if not isinstance(node_id, str):
            return builtin
        return self.mcp.filter_tools(node_id, builtin)

    def attachment_store(self) -> AttachmentStore | None:
        """The open project's attachment files (None without a project); made again for a new project."""
        return self._attachments_for(self.project_dir)[0]

    def _driver_for(self, config: ProviderConfig) -> ChatDriver:
        from desktop.core.providers import driver_for

        return driver_for(config, self.client, attachments=self._attachments_for(self.project_dir)[1])

    async def list_models(self, provider_id: str) -> list[str]:
        """``AppServices.list_models``: the provider's models (its configured list when keyless and down).

        Raises:
            ChatError: The provider refused or could not be reached.
        """
        import asyncio

        from desktop.core.aio import retrieve
        from desktop.core.chat.types import ChatError
        from desktop.core.providers import list_models

        config = self.provider_config(provider_id)
        if config is None:
            raise ChatError(
                f"{provider_id}: no key configured (Settings → Providers)", provider=provider_id, kind="auth"
            )
        if self._closed:
            raise ChatError("the application is shutting down", provider=provider_id, kind="network")
        # Run as a task the context holds, so shutdown can wait for its connection to be released
        # before the client closes (a cancelled caller alone would leave the socket to the GC).
        task = asyncio.ensure_future(list_models(config, self.client))
        self._inflight.add(task)
        task.add_done_callback(self._inflight.discard)
        task.add_done_callback(retrieve)  # its caller may have stopped waiting (a newer listing)
        return list(await asyncio.shield(task))

    def has_usable_provider(self) -> bool:
        """True when the default provider can be used (a key found, or a keyless provider)."""
        return self.provider_config(None) is not None

    # -- demo -----------------------------------------------------------------------------------
    def start_demo(self, *, tokens_per_second: float | None = 60.0, default: bool = True) -> None:
        """Start the loopback demo provider (idempotent; ``tokens_per_second`` None: unthrottled), the
        default with ``default``, in memory only; else listed for the nodes that ran on it.

        Raises:
            RuntimeError: The app offers no demo (no ``demo_offer``).
        """
        self._demo.start(tokens_per_second, default=default)

    # -- secrets hygiene -----------------------------------------------------------------------
    def known_keys(self) -> list[str]:
        """Every key the app could have put in a text (to scrub them from messages): the environment's,
        and the stored ones once the key store is loaded."""
        # Only a key the app has read can be in a text it makes: before the key store is loaded (at
        # start-up, or while it is created) those are the environment's, and logging never loads it.
        return self._keys.known_keys(self.settings, self._secrets)

    def recent_keys(self) -> list[str]:
        """:meth:`known_keys`, looked up at most every couple of seconds (the log filter asks per record)."""
        return self._keys.recent_keys(self.settings, self._secrets)

    def scrub(self, text: str) -> str:
        """``text`` without any known key (nor any 8+ character run of one), nor anything shaped like one."""
        return self._key_scrubber(scrub_secrets(text, self.known_keys(), replacement="***"))

    # -- shutdown -------------------------------------------------------------------------------
    async def aclose(self) -> None:
        """Stop every run and every MCP server, try the unsaved usage records once more, close the HTTP
        client and the demo server. Idempotent."""
        if self._closed:
            return
        self._closed = True
        from desktop.core.aio import cancel_and_wait

        if self._runtime is not None:
            try:
                await self._runtime.aclose()
            except Exception:
                log.exception("stopping the runs failed")
        if not self._usage.retry():  # the last chance: what is still refused now is lost
            log.error("usage ledger: %d responses could not be saved", self.usage.unsaved)
        await cancel_and_wait(self._inflight)
        if self._mcp is not None:
            try:
                await self._mcp.aclose()  # every stdio server process ends here
            except Exception:
                log.exception("stopping the MCP servers failed")
        if self._client is not None:
            await self._client.aclose()
        self.stop_demo_server()

    def close_now(self) -> None:
        """Close a context whose services never loaded (see :meth:`needs_async_close`): stop the demo.

        Raises:
            RuntimeError: Something needs an async close (use :meth:`aclose`).
        """
        if self.needs_async_close():
            raise RuntimeError("the context has services to close: use aclose()")
        self._closed = True
        self.stop_demo_server()

    def stop_demo_server(self) -> None:
        """Stop the demo server if it runs."""
        self._demo.stop()

