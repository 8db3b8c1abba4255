"""Local model servers found by themselves, and a readable message when one is not running.

``probe_local_servers(client)`` asks the usual local servers, all at once, each within 300 ms:

| server | where | models from |
|---|---|---|
| Ollama | ``127.0.0.1:11434`` | ``GET /api/tags``; context length from ``POST /api/show`` |
| LM Studio | ``127.0.0.1:1234`` | ``GET /v1/models`` |
| llama.cpp's server | ``127.0.0.1:8080`` | ``GET /v1/models`` (``meta.n_ctx_train``) |
| vLLM | ``127.0.0.1:8000`` | ``GET /v1/models`` (``max_model_len``) |

and returns each server that answered like one as a ``LocalServer``, whose ``provider()`` is a
provider preset (OpenAI-compatible, no key, the server's own models). It never raises and never
waits longer than its timeout per request; the host and ports are arguments (tests run fake
servers on ephemeral ports).

``local_server_error(err, base_url)`` turns a connection failure to one of these servers into
``"Ollama is not running at http://127.0.0.1:11434 — start it with `ollama serve`"`` (the
drivers apply it to their connection errors).
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import httpx

from desktop.core.chat.types import ChatError

from ..config import ProviderSettings, preset

__all__ = [
    "LOCAL_SERVER_KINDS",
    "PROBE_TIMEOUT",
    "LocalServer",
    "LocalServerKind",
    "local_server_error",
    "local_server_hint",
    "probe_local_servers",
]

log = logging.getLogger(__name__)

PROBE_TIMEOUT = 0.3
"""Seconds each probe request may take (a server on this computer answers in milliseconds)."""
_MAX_SHOW = 32  # context lengths asked for at most this many Ollama models


@dataclass(frozen=True, slots=True)
class LocalServerKind:
    """A kind of local model server.

    Attributes:
        id: Provider id (``ollama``, ``lmstudio``, ``llamacpp``, ``vllm``).
        name: Display name.
        port: Its usual port.
        models_path: Where it lists its models.
        start_hint: How to start it, for the "not running" message.
    """

    id: str
    name: str
    port: int
    models_path: str
    start_hint: str


LOCAL_SERVER_KINDS: tuple[LocalServerKind, ...] = (
    LocalServerKind("ollama", "Ollama", 11434, "/api/tags", "start it with `ollama serve`"),
    LocalServerKind("lmstudio", "LM Studio", 1234, "/v1/models",
                    "start its server in LM Studio (Developer → Start server) or with `lms server start`"),
    LocalServerKind("llamacpp", "llama.cpp server", 8080, "/v1/models",
                    "start it with `llama-server -m MODEL.gguf`"),
    LocalServerKind("vllm", "vLLM", 8000, "/v1/models", "start it with `vllm serve MODEL`"),
)
"""The servers probed, in the order they are offered."""


@dataclass(frozen=True, slots=True)
class LocalServer:
    """A local server that answered.

    Attributes:
        kind: What it is.
        base_url: Its OpenAI-compatible API base (``http://127.0.0.1:11434/v1``).
        models: Its models, as it lists them.
        context_lengths: ``{model: tokens}`` where the server tells.
    """

    kind: LocalServerKind
    base_url: str
    models: tuple[str, ...]
    context_lengths: Mapping[str, int] = field(default_factory=dict)

    def provider(self) -> ProviderSettings:
        """This server as a provider preset: OpenAI-compatible, no key, its own models and the context
        lengths it reported (the context meter's source for them)."""
        base = preset(self.kind.id)
        if base is None:
            base = ProviderSettings(id=self.kind.id, name=self.kind.name, api="openai",
                                    base_url=self.base_url)
        base.base_url = self.base_url
        base.needs_key = False
        base.key_env = None
        base.models = list(self.models)
        base.context_lengths = dict(self.context_lengths)
        return base

    def add_to(self, providers: list[ProviderSettings]) -> ProviderSettings:
        """Offer this server in ``providers`` (in place): the entry with its id gets its address, models
        and context lengths and needs no key (its name and other fields are kept), else ``provider()``
        is appended.

        Returns:
            The entry in ``providers``.
        """
        found = self.provider()
        for entry in providers:
            if entry.id == found.id:
                entry.base_url, entry.models = found.base_url, found.models
                entry.context_lengths = found.context_lengths
                entry.needs_key, entry.key_env = False, None
                return entry
        providers.append(found)
        return found


def _host(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def _context_from_show(payload: object) -> int | None:
    if not isinstance(payload, dict):
        return None
    info = payload.get("model_info")
    if isinstance(info, dict):
        arch = info.get("general.architecture")
        value = info.get(f"{arch}.context_length") if isinstance(arch, str) else None
        if value is None:
            value = next((v for k, v in info.items() if isinstance(k, str) and k.endswith(".context_length")),
                         None)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None


async def _json(client: httpx.AsyncClient, method: str, url: str, timeout: float,
                body: dict[str, Any] | None = None) -> object:
    resp = await client.request(method, url, json=body, timeout=timeout)
    if resp.status_code != 200:
        return None
    try:
        return resp.json()
    except ValueError:
        return None


async def _ollama(client: httpx.AsyncClient, root: str, timeout: float) -> LocalServer | None:
    kind = LOCAL_SERVER_KINDS[0]
    payload = await _json(client, "GET", root + kind.models_path, timeout)
    listed = payload.get("models") if isinstance(payload, dict) else None
    if not isinstance(listed, list):
        return None
    models = [m["name"] for m in listed if isinstance(m, dict) and isinstance(m.get("name"), str)]

    async def show(name: str) -> tuple[str, int | None]:
        try:
            return name, _context_from_show(await _json(client, "POST", root + "/api/show", timeout,
                                                        {"model": name}))
        except (httpx.HTTPError, OSError) as exc:
            log.debug("ollama /api/show %s: %s", name, exc)
            return name, None

    shown = await asyncio.gather(*(show(m) for m in models[:_MAX_SHOW]))
    return LocalServer(kind, root + "/v1", tuple(models), {m: n for m, n in shown if n is not None})


async def _openai_like(client: httpx.AsyncClient, kind: LocalServerKind, root: str,
                       timeout: float) -> LocalServer | None:
    payload = await _json(client, "GET", root + kind.models_path, timeout)
    data = payload.get("data") if isinstance(payload, dict) else None
    if not isinstance(data, list):
        return None
    models: list[str] = []
    contexts: dict[str, int] = {}
    for m in data:
        if not isinstance(m, dict) or not isinstance(m.get("id"), str):
            continue
        models.append(m["id"])
        meta = m.get("meta")
        ctx = m.get("max_model_len") or (meta.get("n_ctx_train") if isinstance(meta, dict) else None)
        if isinstance(ctx, int) and not isinstance(ctx, bool) and ctx > 0:
            contexts[m["id"]] = ctx
    return LocalServer(kind, root + "/v1", tuple(models), contexts)


async def _probe_one(client: httpx.AsyncClient, kind: LocalServerKind, host: str, port: int,
                     timeout: float) -> LocalServer | None:
    root = f"http://{_host(host)}:{port}"
    try:
        async with asyncio.timeout(timeout * 2.5):  # the listing, then the /api/show calls in parallel
            if kind.id == "ollama":
                return await _ollama(client, root, timeout)
            return await _openai_like(client, kind, root, timeout)
    except (httpx.HTTPError, OSError, TimeoutError, ValueError, RuntimeError) as exc:
        log.debug("no %s at %s: %s", kind.name, root, exc)
        return None


async def probe_local_servers(
    client: httpx.AsyncClient,
    *,
    host: str = "127.0.0.1",
    ports: Mapping[str, int] | None = None,
    kinds: Sequence[LocalServerKind] = LOCAL_SERVER_KINDS,
    timeout: float = PROBE_TIMEOUT,
) -> list[LocalServer]:
    """Find the local model servers that are running; never raises.

    Args:
        client: The HTTP client to use (the app's shared one).
        host: Where to look.
        ports: ``{kind id: port}`` overriding the usual ports (tests).
        kinds: The servers to look for.
        timeout: Seconds each request may take.

    Returns:
        The servers that answered like one, in ``kinds`` order.
    """
    ports = ports or {}
    try:
        found = await asyncio.gather(*(_probe_one(client, k, host, ports.get(k.id, k.port), timeout)
                                       for k in kinds))
    except Exception as exc:  # never raise into start-up or a settings page
        log.warning("probing local servers failed: %s", exc)
        return []
    return [s for s in found if s is not None]


def _is_loopback(host: str) -> bool:
    if host.lower() in ("localhost", "localhost.localdomain", "0.0.0.0"):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def local_server_hint(
    base_url: str | None, kinds: Sequence[LocalServerKind] = LOCAL_SERVER_KINDS
) -> str | None:
    """``"Ollama is not running at http://127.0.0.1:11434 — start it with `ollama serve`"`` when
    ``base_url`` is a known local server on this computer (by its port), else None."""
    if not base_url:
        return None
    try:
        parts = urlsplit(base_url)
        port = parts.port
    except ValueError:
        return None
    host = parts.hostname or ""
    if port is None or not _is_loopback(host):
        return None
    for kind in kinds:
        if kind.port == port:
            return f"{kind.name} is not running at {parts.scheme}://{_host(host)}:{port} — {kind.start_hint}"
    return None


def local_server_error(err: ChatError, base_url: str | None,
                       kinds: Sequence[LocalServerKind] = LOCAL_SERVER_KINDS) -> ChatError:
    """``err`` with the "not running" hint in front when it is a failure to connect to a known local
    server (``err`` itself otherwise)."""
    if err.kind != "network" or "cannot connect" not in err.message and "timed out" not in err.message:
        return err
    hint = local_server_hint(base_url, kinds)
    if hint is None:
        return err
    return ChatError(f"{hint} ({err.message})", provider=err.provider, status=err.status, kind=err.kind)
