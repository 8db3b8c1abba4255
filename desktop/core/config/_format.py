"""The settings model and its JSON mapping: ``ProviderSettings``, ``Settings``, validation.

``settings.json`` (see ``desktop.core.config._settings``) maps to ``Settings``; ``settings_from_dict`` checks
every field and names each problem, ``settings_to_dict`` writes unknown keys back verbatim.
"""

from __future__ import annotations

import copy
import logging
import math
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from ..chat.types import ApiKind
from ..usage import budget_block, parse_budget

if TYPE_CHECKING:
    from ..chat.cost import Price

__all__ = [
    "SETTINGS_VERSION",
    "ProviderSettings",
    "Settings",
    "SettingsError",
    "price_overrides_as_prices",
    "settings_from_dict",
    "settings_to_dict",
]

log = logging.getLogger(__name__)

SETTINGS_VERSION = 1
_API_KINDS: tuple[ApiKind, ...] = ("openai", "anthropic")
_ENV_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_PROVIDER_KEYS = frozenset(
    {"id", "name", "api", "base_url", "needs_key", "key_env", "models", "max_tokens", "thinking_budget",
     "context_lengths"}
)
_SETTINGS_KEYS = frozenset(
    {
        "version",
        "providers",
        "default_provider",
        "default_model",
        "price_overrides",
        "history_cap_kib",
        "max_iterations",
        "prompt_caching",
        "budget",
    }
)
_PRICE_FIELDS = ("input", "output", "cache_read", "cache_write")


# ---------------------------------------------------------------------------------------------
# Model


@dataclass(slots=True)
class ProviderSettings:
    """One configured provider.

    Attributes:
        id: Stable id (``openai``, ``my-local``...); the keyring user name and the env-var suffix.
        name: Display name.
        api: ``openai`` (Chat Completions compatible) or ``anthropic`` (Messages).
        base_url: API base URL.
        needs_key: False for keyless local servers (Ollama, LM Studio).
        key_env: The provider's conventional key variable (``OPENAI_API_KEY``), or None.
        models: Known model ids, the first is the provider's default.
        max_tokens: Output budget sent with each request (Anthropic requires one).
        thinking_budget: Turns on Anthropic extended thinking with this many tokens.
        context_lengths: ``{model id: tokens}`` the provider itself reported (a local server found by
            ``probe_local_servers``); the context meter prefers them to the built-in tables.
        extra: Unknown keys of this provider's JSON object, written back verbatim.
    """

    id: str
    name: str
    api: ApiKind
    base_url: str
    needs_key: bool = True
    key_env: str | None = None
    models: list[str] = field(default_factory=list)
    max_tokens: int = 8192
    thinking_budget: int | None = None
    context_lengths: dict[str, int] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)

    def copy(self) -> ProviderSettings:
        """Return an independent deep copy."""
        return copy.deepcopy(self)


@dataclass(slots=True)
class Settings:
    """All application settings (never any secret).

    Attributes:
        version: Format version (1).
        providers: Configured providers, in display order.
        default_provider: Id of the provider new nodes use, or None.
        default_model: Model new nodes use with the default provider, or None for its first model.
        price_overrides: ``{model or prefix: {"input", "output", "cache_read"?, "cache_write"?}}`` in
            USD per million tokens; they beat the built-in prices.
        history_cap_kib: Per-node history kept in ``project.json`` (older exchanges are archived).
        max_iterations: Model calls per send in the tool loop.
        prompt_caching: Mark Anthropic prompt cache breakpoints in every request (on by default).
        monthly_budget_usd: The app-wide monthly budget in USD (``"budget": {"monthly_usd": X}``), or
            None for no budget.
        extra: Unknown top-level keys, written back verbatim.
    """

    version: int = SETTINGS_VERSION
    providers: list[ProviderSettings] = field(default_factory=list)
    default_provider: str | None = None
    default_model: str | None = None
    price_overrides: dict[str, dict[str, Any]] = field(default_factory=dict)
    history_cap_kib: int = 200
    max_iterations: int = 10
    prompt_caching: bool = True
    monthly_budget_usd: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def provider(self, provider_id: str | None) -> ProviderSettings | None:
        """Return the provider with this id, or None."""
        if provider_id is None:
            return None
        for p in self.providers:
            if p.id == provider_id:
                return p
        return None

    @property
    def history_cap_bytes(self) -> int:
        """``history_cap_kib`` in bytes."""
        return self.history_cap_kib * 1024

    def copy(self) -> Settings:
        """Return an independent deep copy (the settings dialog edits a copy)."""
        return copy.deepcopy(self)

    def validate(self) -> None:
        """Check every field.

        Raises:
            SettingsError: Listing every problem found, one per line.
        """
        settings_from_dict(settings_to_dict(self))


# ---------------------------------------------------------------------------------------------
# JSON mapping and validation


class SettingsError(ValueError):
    """Settings that cannot be used; the message lists each problem on its own line.

    Attributes:
        problems: The individual problems, e.g. ``"providers[1].api: must be 'openai' or 'anthropic'"``.
    """

    def __init__(self, problems: list[str]) -> None:
        self.problems = list(problems)
        super().__init__("invalid settings:\n" + "\n".join(f"- {p}" for p in self.problems))


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: object) -> bool:
    return (_is_int(value) or isinstance(value, float)) and math.isfinite(cast(float, value))


def _provider_from_dict(raw: object, where: str, problems: list[str]) -> ProviderSettings | None:
    if not isinstance(raw, dict):
        problems.append(f"{where}: must be an object")
        return None
    start = len(problems)
    pid = raw.get("id")
    if not isinstance(pid, str) or not pid.strip() or pid != pid.strip():
        problems.append(f"{where}.id: must be a non-empty string without surrounding spaces")
    name = raw.get("name", pid)
    if not isinstance(name, str) or not name.strip():
        problems.append(f"{where}.name: must be a non-empty string")
    api = raw.get("api")
    if api not in _API_KINDS:
        problems.append(f"{where}.api: must be 'openai' or 'anthropic', not {api!r}")
    base_url = raw.get("base_url")
    if not isinstance(base_url, str) or not re.match(r"https?://[^/\s]+", base_url):
        problems.append(f"{where}.base_url: must be an http:// or https:// URL")
    needs_key = raw.get("needs_key", True)
    if not isinstance(needs_key, bool):
        problems.append(f"{where}.needs_key: must be true or false")
    key_env = raw.get("key_env")
    if key_env is not None and (not isinstance(key_env, str) or not _ENV_NAME_RE.fullmatch(key_env)):
        problems.append(f"{where}.key_env: must be null or an environment variable name like OPENAI_API_KEY")
    models = raw.get("models", [])
    if not isinstance(models, list) or not all(isinstance(m, str) and m.strip() for m in models):
        problems.append(f"{where}.models: must be a list of non-empty model ids")
    max_tokens = raw.get("max_tokens", 8192)
    if not _is_int(max_tokens) or max_tokens < 1:
        problems.append(f"{where}.max_tokens: must be a positive integer")
    budget = raw.get("thinking_budget")
    if budget is not None and (not _is_int(budget) or budget < 1024):
        # Anthropic rejects every request with a budget under 1024 or not below max_tokens.
        problems.append(f"{where}.thinking_budget: must be null or an integer of at least 1024")
    elif budget is not None and _is_int(max_tokens) and budget >= max_tokens:
        problems.append(f"{where}.thinking_budget: must be below max_tokens ({max_tokens})")
    contexts = raw.get("context_lengths", {})
    if not isinstance(contexts, dict) or not all(_is_int(v) and v > 0 for v in contexts.values()):
        problems.append(f"{where}.context_lengths: must be an object of model id → positive integer (tokens)")
    if len(problems) > start:
        return None
    return ProviderSettings(
        id=cast(str, pid),
        name=cast(str, name),
        api=cast(ApiKind, api),
        base_url=cast(str, base_url),
        needs_key=cast(bool, needs_key),
        key_env=cast("str | None", key_env),
        models=list(cast(list[str], models)),
        max_tokens=cast(int, max_tokens),
        thinking_budget=cast("int | None", budget),
        context_lengths=dict(cast("dict[str, int]", contexts)),
        extra={k: copy.deepcopy(v) for k, v in raw.items() if k not in _PROVIDER_KEYS},
    )


def _check_price_overrides(raw: object, problems: list[str]) -> dict[str, dict[str, Any]]:
    if not isinstance(raw, dict):
        problems.append("price_overrides: must be an object {model or prefix: {input, output, ...}}")
        return {}
    out: dict[str, dict[str, Any]] = {}
    for key, entry in raw.items():
        where = f"price_overrides[{key!r}]"
        if not key.strip():
            problems.append(f"{where}: the model or prefix must not be empty")
            continue
        if not isinstance(entry, dict):
            problems.append(f"{where}: must be an object with input and output prices")
            continue
        ok = True
        for name in _PRICE_FIELDS:
            value = entry.get(name)
            required = name in ("input", "output")
            if value is None and not required:
                continue
            if not _is_number(value) or cast(float, value) < 0:
                what = "a number ≥ 0" if required else "null or a number ≥ 0"
                problems.append(f"{where}.{name}: must be {what} (USD per million tokens)")
                ok = False
        if ok:
            out[key] = copy.deepcopy(entry)
    return out


def settings_from_dict(raw: object) -> Settings:
    """Build settings from parsed ``settings.json``.

    Raises:
        SettingsError: Listing every problem found.
    """
    if not isinstance(raw, dict):
        raise SettingsError(["the file must hold a JSON object"])
    problems: list[str] = []
    version = raw.get("version", SETTINGS_VERSION)
    if version != SETTINGS_VERSION or not _is_int(version):
        problems.append(f"version: {version!r} is not supported (this app reads version {SETTINGS_VERSION})")
    providers: list[ProviderSettings] = []
    raw_providers = raw.get("providers", [])
    if not isinstance(raw_providers, list):
        problems.append("providers: must be a list")
        raw_providers = []
    seen: set[str] = set()
    for i, item in enumerate(raw_providers):
        p = _provider_from_dict(item, f"providers[{i}]", problems)
        if p is None:
            continue
        if p.id in seen:
            problems.append(f"providers[{i}].id: {p.id!r} is used twice")
            continue
        seen.add(p.id)
        providers.append(p)
    default_provider = raw.get("default_provider")
    if default_provider is not None:
        if not isinstance(default_provider, str):
            problems.append("default_provider: must be a provider id or null")
        elif default_provider not in seen and len(seen) == len(raw_providers):
            problems.append(f"default_provider: {default_provider!r} is not one of the providers")
    default_model = raw.get("default_model")
    if default_model is not None and (not isinstance(default_model, str) or not default_model.strip()):
        problems.append("default_model: must be a non-empty model id or null")
    overrides = _check_price_overrides(raw.get("price_overrides", {}), problems)
    cap = raw.get("history_cap_kib", 200)
    if not _is_int(cap) or cap < 1:
        problems.append("history_cap_kib: must be a positive integer (KiB)")
    iterations = raw.get("max_iterations", 10)
    if not _is_int(iterations) or iterations < 1:
        problems.append("max_iterations: must be a positive integer")
    prompt_caching = raw.get("prompt_caching", True)
    if not isinstance(prompt_caching, bool):
        problems.append("prompt_caching: must be true or false")
    budget: float | None = None
    try:
        budget = parse_budget(raw)
    except ValueError as exc:
        problems.append(str(exc))
    if problems:
        raise SettingsError(problems)
    return Settings(
        version=SETTINGS_VERSION,
        providers=providers,
        default_provider=cast("str | None", default_provider),
        default_model=cast("str | None", default_model),
        price_overrides=overrides,
        history_cap_kib=cast(int, cap),
        max_iterations=cast(int, iterations),
        prompt_caching=cast(bool, prompt_caching),
        monthly_budget_usd=budget,
        extra={k: copy.deepcopy(v) for k, v in raw.items() if k not in _SETTINGS_KEYS},
    )


def _provider_to_dict(p: ProviderSettings) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": p.id,
        "name": p.name,
        "api": p.api,
        "base_url": p.base_url,
        "needs_key": p.needs_key,
        "key_env": p.key_env,
        "models": list(p.models),
        "max_tokens": p.max_tokens,
        "thinking_budget": p.thinking_budget,
    }
    if p.context_lengths:
        out["context_lengths"] = dict(p.context_lengths)
    for k, v in p.extra.items():
        if k not in out:
            out[k] = copy.deepcopy(v)
    return out


def settings_to_dict(settings: Settings) -> dict[str, Any]:
    """Return the JSON object ``settings.json`` holds (unknown keys included)."""
    out: dict[str, Any] = {
        "version": settings.version,
        "providers": [_provider_to_dict(p) for p in settings.providers],
        "default_provider": settings.default_provider,
        "default_model": settings.default_model,
        "price_overrides": copy.deepcopy(settings.price_overrides),
        "history_cap_kib": settings.history_cap_kib,
        "max_iterations": settings.max_iterations,
        "prompt_caching": settings.prompt_caching,
    }
    if settings.monthly_budget_usd is not None:
        out["budget"] = budget_block(settings.monthly_budget_usd)
    for k, v in settings.extra.items():
        if k not in out:
            out[k] = copy.deepcopy(v)
    return out


def price_overrides_as_prices(settings: Settings) -> dict[str, Price]:
    """Convert ``settings.price_overrides`` into ``Price`` objects for the cost functions.

    Entries that are not valid (they cannot come from a loaded file) are skipped with a warning.
    """
    from ..chat.cost import Price

    out: dict[str, Price] = {}
    for key, entry in settings.price_overrides.items():
        try:
            values = [entry.get(name) for name in _PRICE_FIELDS]
            if not all(_is_number(v) for v in values[:2]) or not all(
                v is None or _is_number(v) for v in values[2:]
            ):
                raise ValueError("prices must be numbers")
            out[key] = Price(
                float(cast(float, values[0])),
                float(cast(float, values[1])),
                None if values[2] is None else float(values[2]),
                None if values[3] is None else float(values[3]),
            )
        except (ValueError, TypeError, AttributeError) as exc:
            log.warning("ignoring price override %r: %s", key, exc)
    return out


