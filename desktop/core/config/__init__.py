"""The user's configuration: settings, provider presets, API keys, the OS keyring, permission grants.

Qt-free. ``settings.json`` (``_settings``, ``_format``, ``_presets``); which key a provider uses,
the environment first (``_keys``); the OS keyring (``_secrets``: loads ``keyring`` on first use of
its names, for start-up time); the always-allow grants, the user's and never a project's
(``_permissions``). Imports ``files`` and ``chat``'s types.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from desktop.core.chat._lazy import lazy_getattr

from ._format import (
    SETTINGS_VERSION,
    ProviderSettings,
    Settings,
    SettingsError,
    price_overrides_as_prices,
    settings_from_dict,
    settings_to_dict,
)
from ._keys import (
    ENV_KEY_PREFIX,
    KeyCache,
    KeyLookup,
    KeyResolution,
    KeySourceName,
    ProviderTarget,
    SendTarget,
    choose_model,
    env_var_for_provider,
    follow_keys,
    keyed_providers,
    known_keys,
    provider_config,
    resolve_key,
    resolve_provider,
)
from ._permissions import GRANTS_FILE, GrantsCorruptError, GrantStore, NodeGrants
from ._presets import PROVIDER_PRESETS, default_settings, preset
from ._settings import CONFIG_DIR_ENV, SettingsCorruptError, SettingsStore, default_config_dir

if TYPE_CHECKING:
    from ._secrets import DEFAULT_SERVICE, KeyLocation, SecretStore

_LAZY: dict[str, str] = {
    "DEFAULT_SERVICE": "_secrets",
    "KeyLocation": "_secrets",
    "SecretStore": "_secrets",
}
__getattr__ = lazy_getattr(__name__, _LAZY, globals())

__all__ = [
    "CONFIG_DIR_ENV",
    "DEFAULT_SERVICE",
    "ENV_KEY_PREFIX",
    "GRANTS_FILE",
    "GrantStore",
    "GrantsCorruptError",
    "KeyCache",
    "KeyLocation",
    "KeyLookup",
    "KeyResolution",
    "KeySourceName",
    "NodeGrants",
    "PROVIDER_PRESETS",
    "ProviderSettings",
    "ProviderTarget",
    "SETTINGS_VERSION",
    "SecretStore",
    "SendTarget",
    "Settings",
    "SettingsCorruptError",
    "SettingsError",
    "SettingsStore",
    "choose_model",
    "default_config_dir",
    "default_settings",
    "env_var_for_provider",
    "follow_keys",
    "keyed_providers",
    "known_keys",
    "preset",
    "price_overrides_as_prices",
    "provider_config",
    "resolve_key",
    "resolve_provider",
    "settings_from_dict",
    "settings_to_dict",
]
