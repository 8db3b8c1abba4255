"""Application settings: the model, the ``settings.json`` store, provider presets and key resolution.

``settings.json`` lives in the config folder (``default_config_dir()``) and never holds a secret::

    {"version": 1,
     "providers": [{"id", "name", "api": "openai"|"anthropic", "base_url", "needs_key", "key_env",
                    "models": [...], "max_tokens", "thinking_budget"}],
     "default_provider": id, "default_model": str,
     "price_overrides": {prefix: {"input", "output", "cache_read"?, "cache_write"?}},
     "history_cap_kib": 200, "max_iterations": 10}

Unknown keys (top level and per provider) are kept in ``extra`` and written back.

A key for provider ``id`` is looked up in this order (DESIGN §2.5, D15): the environment variable
``CHATNODES_PROVIDER_KEY_<ID>`` (upper-cased, non-alphanumerics as ``_``), the provider's conventional
variable (``key_env``, e.g. ``OPENAI_API_KEY``), then the secret store (keyring, or a session-only key).
"""

from __future__ import annotations

import copy
import json
import logging
import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeAlias, cast

from ._atomic import atomic_write_bytes, move_aside
from .chat.types import ApiKind, ProviderConfig

if TYPE_CHECKING:
    from .chat.cost import Price

__all__ = [
    "CONFIG_DIR_ENV",
    "ENV_KEY_PREFIX",
    "SETTINGS_VERSION",
    "KeyLookup",
    "KeyResolution",
    "KeySourceName",
    "PROVIDER_PRESETS",
    "ProviderSettings",
    "SendTarget",
    "Settings",
    "SettingsCorruptError",
    "SettingsError",
    "SettingsStore",
    "default_config_dir",
    "default_settings",
    "env_var_for_provider",
    "preset",
    "price_overrides_as_prices",
    "resolve_key",
    "resolve_provider",
    "settings_from_dict",
    "settings_to_dict",
]

log = logging.getLogger(__name__)

SETTINGS_VERSION = 1
CONFIG_DIR_ENV = "CHATNODES_CONFIG_DIR"
ENV_KEY_PREFIX = "CHATNODES_PROVIDER_KEY_"
_API_KINDS: tuple[ApiKind, ...] = ("openai", "anthropic")
_ENV_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_PROVIDER_KEYS = frozenset(
    {"id", "name", "api", "base_url", "needs_key", "key_env", "models", "max_tokens", "thinking_budget"}
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
        extra: Unknown top-level keys, written back verbatim.
    """

    version: int = SETTINGS_VERSION
    providers: list[ProviderSettings] = field(default_factory=list)
    default_provider: str | None = None
    default_model: str | None = None
    price_overrides: dict[str, dict[str, Any]] = field(default_factory=dict)
    history_cap_kib: int = 200
    max_iterations: int = 10
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
# Presets

PROVIDER_PRESETS: list[ProviderSettings] = [
    ProviderSettings(
        id="openai",
        name="OpenAI",
        api="openai",
        base_url="https://api.openai.com/v1",
        key_env="OPENAI_API_KEY",
        models=["gpt-5.4-mini", "gpt-5.5", "gpt-5.4", "gpt-5.4-nano", "gpt-5.2", "gpt-5-mini", "gpt-4.1",
                "gpt-4o-mini"],
    ),
    ProviderSettings(
        id="anthropic",
        name="Anthropic",
        api="anthropic",
        base_url="https://api.anthropic.com",
        key_env="ANTHROPIC_API_KEY",
        models=["claude-sonnet-5-5", "claude-opus-5-5", "claude-haiku-5-5", "claude-sonnet-4-6",
                "claude-opus-4-7", "claude-haiku-4-5"],
    ),
    ProviderSettings(
        id="deepseek",
        name="DeepSeek",
        api="openai",
        base_url="https://api.deepseek.com",
        key_env="DEEPSEEK_API_KEY",
        models=["deepseek-v4-flash", "deepseek-v4-pro", "deepseek-chat", "deepseek-reasoner"],
    ),
    ProviderSettings(
        id="openrouter",
        name="OpenRouter",
        api="openai",
        base_url="https://openrouter.ai/api/v1",
        key_env="OPENROUTER_API_KEY",
        models=["anthropic/claude-sonnet-5-5", "openai/gpt-5.4", "google/gemini-3.5-flash",
                "deepseek/deepseek-v4-flash"],
    ),
    ProviderSettings(
        id="gemini",
        name="Gemini",
        api="openai",
        base_url="https://generativelanguage.googleapis.com/v1beta/openai",
        key_env="GEMINI_API_KEY",
        models=["gemini-3.5-flash", "gemini-3.1-pro-preview", "gemini-3.1-flash-lite", "gemini-2.5-pro",
                "gemini-2.5-flash"],
    ),
    ProviderSettings(
        id="groq",
        name="Groq",
        api="openai",
        base_url="https://api.groq.com/openai/v1",
        key_env="GROQ_API_KEY",
        models=["openai/gpt-oss-120b", "openai/gpt-oss-20b", "llama-3.3-70b-versatile",
                "llama-3.1-8b-instant"],
    ),
    ProviderSettings(
        id="ollama",
        name="Ollama",
        api="openai",
        base_url="http://localhost:11434/v1",
        needs_key=False,
        models=["llama3.2", "qwen3", "gpt-oss:20b"],
    ),
    ProviderSettings(
        id="lmstudio",
        name="LM Studio",
        api="openai",
        base_url="http://localhost:1234/v1",
        needs_key=False,
        models=["openai/gpt-oss-20b", "qwen/qwen3-8b"],
    ),
]
"""Providers offered by the settings dialog; ``default_settings()`` starts with all of them."""


def preset(provider_id: str) -> ProviderSettings | None:
    """Return a fresh copy of the preset with this id, or None."""
    for p in PROVIDER_PRESETS:
        if p.id == provider_id:
            return p.copy()
    return None


def default_settings() -> Settings:
    """Settings for a first start: every preset, OpenAI as the default provider."""
    providers = [p.copy() for p in PROVIDER_PRESETS]
    return Settings(providers=providers, default_provider="openai", default_model=providers[0].models[0])


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
    }
    for k, v in settings.extra.items():
        if k not in out:
            out[k] = copy.deepcopy(v)
    return out


def price_overrides_as_prices(settings: Settings) -> dict[str, Price]:
    """Convert ``settings.price_overrides`` into ``Price`` objects for the cost functions.

    Entries that are not valid (they cannot come from a loaded file) are skipped with a warning.
    """
    from .chat.cost import Price

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


# ---------------------------------------------------------------------------------------------
# Store


class SettingsCorruptError(Exception):
    """``settings.json`` could not be used; it was kept aside and the user should be told.

    Attributes:
        path: The settings file.
        moved_to: Where the unreadable file now is (``settings.json.corrupt-<timestamp>``), or None when
            it could not be read or moved (then it is left in place and ``save`` refuses to overwrite it).
        reason: What was wrong.
        recovered_from: The backup the settings were restored from, or None (defaults were used).
    """

    def __init__(
        self, path: Path, moved_to: Path | None, reason: str, recovered_from: Path | None = None
    ) -> None:
        self.path = path
        self.moved_to = moved_to
        self.reason = reason
        self.recovered_from = recovered_from
        where = (
            f"it was kept as {moved_to}"
            if moved_to is not None
            else "it was left in place and is not overwritten"
        )
        then = (
            f"; the last good settings were restored from {recovered_from.name}"
            if recovered_from is not None
            else "; default settings are in use"
        )
        super().__init__(f"{path.name} could not be read ({reason}); {where}{then}")


def _parse_settings_bytes(data: bytes) -> Settings:
    try:
        raw = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise SettingsError([f"not UTF-8 text ({exc.reason} at byte {exc.start})"]) from None
    except json.JSONDecodeError as exc:
        raise SettingsError([f"not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})"]) from None
    return settings_from_dict(raw)


def _short_reason(exc: SettingsError) -> str:
    return "; ".join(exc.problems)


class SettingsStore:
    """Loads and saves ``settings.json`` in a config folder.

    Args:
        config_dir: The config folder (created on first save).

    Attributes:
        path: ``config_dir / "settings.json"``.
        backup_path: ``settings.json.bak``, the last good file.
        last_error: A readable message about the last load problem, or None.
        last_corrupt: The same problem as a typed error, or None.
    """

    FILE_NAME = "settings.json"

    def __init__(self, config_dir: Path) -> None:
        self.config_dir = Path(config_dir)
        self.path = self.config_dir / self.FILE_NAME
        self.backup_path = self.config_dir / (self.FILE_NAME + ".bak")
        self.last_error: str | None = None
        self.last_corrupt: SettingsCorruptError | None = None
        self._blocked: str | None = None

    def load(self) -> Settings:
        """Return the stored settings.

        A missing file gives ``default_settings()``. An unreadable or invalid file is moved aside to
        ``settings.json.corrupt-<timestamp>`` (never overwritten), the last good ``settings.json.bak``
        is used when it is valid (else the defaults), and ``last_error``/``last_corrupt`` describe it.
        """
        self.last_error = None
        self.last_corrupt = None
        self._blocked = None
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return default_settings()
        except OSError as exc:
            # Unreadable (permissions...): leave it where it is and refuse to overwrite it.
            reason = f"{type(exc).__name__}: {exc.strerror or exc}"
            self._blocked = reason
            self._report(SettingsCorruptError(self.path, None, reason))
            return default_settings()
        try:
            return _parse_settings_bytes(data)
        except SettingsError as exc:
            reason = _short_reason(exc)
        moved_to: Path | None
        try:
            moved_to = move_aside(self.path)
        except OSError as exc:
            log.error("could not move the bad settings file aside: %s", exc)
            moved_to = None
            self._blocked = reason
        recovered: Settings | None = None
        try:
            recovered = _parse_settings_bytes(self.backup_path.read_bytes())
        except (OSError, SettingsError):
            recovered = None
        err = SettingsCorruptError(
            self.path, moved_to, reason, self.backup_path if recovered is not None else None
        )
        self._report(err)
        return recovered if recovered is not None else default_settings()

    def _report(self, err: SettingsCorruptError) -> None:
        self.last_corrupt = err
        self.last_error = str(err)
        log.warning("%s", err)

    def save(self, settings: Settings) -> None:
        """Validate and write ``settings`` atomically; the previous good file becomes ``.bak``.

        Raises:
            SettingsError: The settings are invalid (nothing is written).
            OSError: Writing failed (the previous file is unchanged), or the current file could not
                be read at load time and was left in place (it is not overwritten).
        """
        settings.validate()
        if self._blocked is not None:
            raise OSError(
                f"{self.path} could not be read earlier ({self._blocked}) and is not overwritten; "
                "fix or move it, then restart"
            )
        text = json.dumps(settings_to_dict(settings), ensure_ascii=False, indent=2) + "\n"
        atomic_write_bytes(
            self.path, text.encode("utf-8"), backup=self.backup_path, backup_if=self._is_good_file
        )
        self.last_error = None
        self.last_corrupt = None

    @staticmethod
    def _is_good_file(path: Path) -> bool:
        try:
            _parse_settings_bytes(path.read_bytes())
        except (OSError, SettingsError):
            return False
        return True


def default_config_dir(environ: Mapping[str, str] | None = None) -> Path:
    """The config folder: ``$CHATNODES_CONFIG_DIR`` when set, else the platform's user config dir."""
    env = os.environ if environ is None else environ
    override = env.get(CONFIG_DIR_ENV, "").strip()
    if override:
        return Path(override).expanduser()
    import platformdirs

    return Path(platformdirs.user_config_dir("chatnodes", appauthor=False))


# ---------------------------------------------------------------------------------------------
# Key and provider resolution

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
    provider: ProviderSettings, *, key: str | None, model: str | None = None
) -> ProviderConfig:
    """The driver configuration for ``provider`` with the resolved ``key`` and ``model``."""
    return ProviderConfig(
        id=provider.id,
        name=provider.name,
        api=provider.api,
        base_url=provider.base_url,
        api_key=key,
        model=model or None,
        max_tokens=provider.max_tokens,
        thinking_budget=provider.thinking_budget,
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
    """
    provider_id = req.provider or settings.default_provider
    provider = settings.provider(provider_id)
    if provider is None:
        return None
    resolution = resolve_key(provider, secrets, environ)
    if provider.needs_key and not resolution.key:
        return None
    return provider_config(provider, key=resolution.key, model=choose_model(settings, provider.id, req.model))
