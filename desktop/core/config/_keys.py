"""Key and provider resolution: which key, which model and which ``ProviderConfig`` a send uses.

A key for provider ``id`` is looked up in this order (D15): the environment variable
``CHATNODES_PROVIDER_KEY_<ID>`` (upper-cased, non-alphanumerics as ``_``), the provider's conventional
variable (``key_env``, e.g. ``OPENAI_API_KEY``), then the secret store (keyring, or a session-only key).
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import Literal, Protocol, TypeAlias

from ..chat.types import ProviderConfig
from ._format import ProviderSettings, Settings

__all__ = [
    "ENV_KEY_PREFIX",
    "KeyCache",
    "KeyLookup",
    "KeyResolution",
    "KeySourceName",
    "SendTarget",
    "choose_model",
    "env_var_for_provider",
    "ProviderTarget",
    "follow_keys",
    "keyed_providers",
    "known_keys",
    "provider_config",
    "resolve_key",
    "resolve_provider",
]

ENV_KEY_PREFIX = "CHATNODES_PROVIDER_KEY_"

KeySourceName: TypeAlias = Literal["env", "key_env", "keyring", "session"]


class KeyLookup(Protocol):
    """What key resolution needs from a secret store (``SecretStore`` provides it)."""

    def lookup(self, provider_id: str) -> tuple[str | None, Literal["keyring", "session"] | None]: ...


class SendTarget(Protocol):
    """The part of a send request provider resolution reads (``ChatSendRequest`` has it)."""

    @property
    def provider(self) -> str | None: ...

    @property
    def model(self) -> str | None: ...


@dataclass(frozen=True, slots=True)
class KeyResolution:
    """The key found for a provider and where it came from (the key is never shown in repr).

    Attributes:
        key: The key, or None.
        source: ``env`` (``CHATNODES_PROVIDER_KEY_<ID>``), ``key_env`` (the provider's variable),
            ``keyring``, ``session``, or None when no key was found.
        env_var: The variable the key came from, for ``env``/``key_env`` (the dialog shows it).
    """

    key: str | None = field(repr=False)
    source: KeySourceName | None
    env_var: str | None = None

    @property
    def from_environment(self) -> bool:
        """True when an environment variable overrides the stored key."""
        return self.source in ("env", "key_env")


def env_var_for_provider(provider_id: str) -> str:
    """``CHATNODES_PROVIDER_KEY_<ID>``: upper-cased, every non-alphanumeric as ``_`` (``my-local`` ->
    ``CHATNODES_PROVIDER_KEY_MY_LOCAL``)."""
    return ENV_KEY_PREFIX + re.sub(r"[^A-Za-z0-9]", "_", provider_id).upper()


def resolve_key(
    provider: ProviderSettings,
    secrets: KeyLookup | None,
    environ: Mapping[str, str] = os.environ,
) -> KeyResolution:
    """Find the key of ``provider``: env ``CHATNODES_PROVIDER_KEY_<ID>``, then ``provider.key_env``,
    then the secret store (session key, then keyring). Empty or blank variables count as unset."""
    var = env_var_for_provider(provider.id)
    value = environ.get(var, "").strip()
    if value:
        return KeyResolution(value, "env", var)
    if provider.key_env:
        value = environ.get(provider.key_env, "").strip()
        if value:
            return KeyResolution(value, "key_env", provider.key_env)
    if secrets is not None:
        key, where = secrets.lookup(provider.id)
        if key:
            return KeyResolution(key, where)
    return KeyResolution(None, None)


@dataclass(frozen=True, slots=True)
class ProviderTarget:
    """A minimal :class:`SendTarget`: a provider id (None: the default) and a model (None: its default)."""

    provider: str | None = None
    model: str | None = None


def known_keys(
    settings: Settings, secrets: KeyLookup | None, environ: Mapping[str, str] = os.environ
) -> list[str]:
    """Every key found for the providers of ``settings`` (to scrub them from texts); never raises.

    Keys shorter than 4 characters are left out (scrubbing them would mangle ordinary text).
    """
    keys: list[str] = []
    for provider in settings.providers:
        try:
            key = resolve_key(provider, secrets, environ).key
        except Exception:  # noqa: BLE001 - scrubbing must never fail the error path
            key = None
        if key and len(key) >= 4:
            keys.append(key)
    return keys


def keyed_providers(
    settings: Settings, secrets: KeyLookup | None, environ: Mapping[str, str] = os.environ
) -> frozenset[str]:
    """The ids of the providers a key is found for (environment, session or keyring; see
    :func:`resolve_key`). One key-store lookup per provider: callers cache the answer."""
    return frozenset(p.id for p in settings.providers if resolve_key(p, secrets, environ).key)


def follow_keys(settings: Settings, keyed: Collection[str]) -> Settings:
    """``settings`` whose default provider is one that works with the keys there are.

    The default stays when it works (it needs no key, or ``keyed`` holds it). Otherwise the first
    provider that needs a key and has one becomes the default, with its own first model (the saved
    default model belonged to the old default); a copy is returned and ``settings`` is unchanged.
    With no provider working, ``settings`` is returned as it is.

    Args:
        settings: The saved settings.
        keyed: The providers a key is found for (:func:`keyed_providers`).
    """
    current = settings.provider(settings.default_provider) if settings.default_provider else None
    if current is not None and (not current.needs_key or current.id in keyed):
        return settings
    for provider in settings.providers:
        if provider.needs_key and provider.id in keyed:
            chosen = settings.copy()
            chosen.default_provider = provider.id
            chosen.default_model = provider.models[0] if provider.models else None
            return chosen
    return settings


def choose_model(settings: Settings, provider_id: str | None, requested: str | None = None) -> str | None:
    """The model a send to ``provider_id`` uses: the requested one, else (for the default provider
    only) the default model, else the provider's first listed model; None when nothing is known."""
    if requested:
        return requested
    provider_id = provider_id or settings.default_provider
    if provider_id == settings.default_provider and settings.default_model:
        return settings.default_model
    provider = settings.provider(provider_id) if provider_id else None
    if provider is not None and provider.models:
        return provider.models[0]
    return None


def provider_config(
    provider: ProviderSettings, *, key: str | None, model: str | None = None, prompt_caching: bool = True
) -> ProviderConfig:
    """The driver configuration for ``provider`` with the resolved ``key`` and ``model``.

    Args:
        provider: The provider's settings.
        key: The resolved key, or None.
        model: The model, or None for the provider's default.
        prompt_caching: The global ``Settings.prompt_caching`` switch (Anthropic cache breakpoints).
    """
    return ProviderConfig(
        id=provider.id,
        name=provider.name,
        api=provider.api,
        base_url=provider.base_url,
        api_key=key,
        model=model or None,
        max_tokens=provider.max_tokens,
        thinking_budget=provider.thinking_budget,
        prompt_caching=prompt_caching,
    )


def resolve_provider(
    settings: Settings,
    req: SendTarget,
    *,
    secrets: KeyLookup | None,
    environ: Mapping[str, str] = os.environ,
) -> ProviderConfig | None:
    """Build the ``ProviderConfig`` for a send request, or None when it cannot be used.

    The provider is ``req.provider`` or the default provider; None when it is unknown or needs a key
    and none is found. The model is ``req.model``, else (for the default provider only) the default
    model, else the provider's first model. A keyless provider still gets a key when one is set.
    ``settings.prompt_caching`` is passed on.
    """
    provider_id = req.provider or settings.default_provider
    provider = settings.provider(provider_id)
    if provider is None:
        return None
    resolution = resolve_key(provider, secrets, environ)
    if provider.needs_key and not resolution.key:
        return None
    return provider_config(
        provider,
        key=resolution.key,
        model=choose_model(settings, provider.id, req.model),
        prompt_caching=settings.prompt_caching,
    )



class KeyCache:
    """The keys there are, looked up once per change of the settings or the keys (a window's view).

    ``keyed_providers`` is asked on every repaint of a provider picker and ``recent_keys`` by the log
    filter for every record, while each answer costs one key-store lookup per provider: this keeps
    the last answer until :meth:`changed` is called or the settings object changes (and, for
    ``recent_keys``, for at most ``max_age_s`` seconds).

    Attributes:
        version: Bumped by every :meth:`changed` (a caller may key its own caches on it).
    """

    def __init__(self, environ: Mapping[str, str], *, max_age_s: float = 2.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._environ = environ
        self._max_age_s = max_age_s
        self._clock = clock
        self.version = 0
        self._keyed: tuple[Settings, int, frozenset[str]] | None = None
        self._recent: tuple[float, list[str]] | None = None

    def changed(self) -> None:
        """Keys were stored or removed, or the key store became available: look again."""
        self.version += 1
        self._recent = None

    def keyed_providers(self, settings: Settings, secrets: KeyLookup | None) -> frozenset[str]:
        """:func:`keyed_providers`, cached for this ``settings`` object and :attr:`version`."""
        cached = self._keyed
        if cached is None or cached[0] is not settings or cached[1] != self.version:
            cached = self._keyed = (settings, self.version, keyed_providers(settings, secrets, self._environ))
        return cached[2]

    def known_keys(self, settings: Settings, secrets: KeyLookup | None) -> list[str]:
        """:func:`known_keys` (looked up now)."""
        return known_keys(settings, secrets, self._environ)

    def recent_keys(self, settings: Settings, secrets: KeyLookup | None) -> list[str]:
        """:meth:`known_keys`, looked up at most every ``max_age_s`` seconds."""
        now = self._clock()
        if self._recent is None or now - self._recent[0] > self._max_age_s:
            self._recent = (now, self.known_keys(settings, secrets))
        return self._recent[1]
