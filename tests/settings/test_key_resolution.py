"""Key and provider resolution (DESIGN §2.5, D15) and price overrides."""

from __future__ import annotations

from dataclasses import dataclass

import keyring
import pytest
from keyring.backends import fail

from desktop.core.chat.types import ProviderConfig
from desktop.core.config import (
    KeyResolution,
    ProviderSettings,
    SecretStore,
    Settings,
    default_settings,
    env_var_for_provider,
    resolve_key,
    resolve_provider,
)

SECRET = "sk-resolve-SECRET-42"


@dataclass
class Req:
    provider: str | None = None
    model: str | None = None


def _local(pid: str = "my-local", *, needs_key: bool = True) -> ProviderSettings:
    return ProviderSettings(
        id=pid, name="Mine", api="openai", base_url="http://127.0.0.1:8080/v1", needs_key=needs_key,
        key_env="MY_LOCAL_TOKEN", models=["m1", "m2"],
    )


@pytest.mark.parametrize(
    ("pid", "var"),
    [
        ("openai", "CHATNODES_PROVIDER_KEY_OPENAI"),
        ("my-local", "CHATNODES_PROVIDER_KEY_MY_LOCAL"),
        ("a.b c/d", "CHATNODES_PROVIDER_KEY_A_B_C_D"),
        ("lm-studio2", "CHATNODES_PROVIDER_KEY_LM_STUDIO2"),
        ("ölama", "CHATNODES_PROVIDER_KEY__LAMA"),
    ],
)
def test_env_var_name(pid: str, var: str) -> None:
    assert env_var_for_provider(pid) == var


def test_resolution_order(memory_keyring) -> None:
    provider = _local()
    secrets = SecretStore()
    env: dict[str, str] = {}
    assert resolve_key(provider, secrets, env) == KeyResolution(None, None)
    secrets.set("my-local", "from-keyring")
    assert resolve_key(provider, secrets, env) == KeyResolution("from-keyring", "keyring")
    env["MY_LOCAL_TOKEN"] = "from-key-env"
    assert resolve_key(provider, secrets, env) == KeyResolution("from-key-env", "key_env", "MY_LOCAL_TOKEN")
    env["CHATNODES_PROVIDER_KEY_MY_LOCAL"] = "from-env"
    r = resolve_key(provider, secrets, env)
    assert r == KeyResolution("from-env", "env", "CHATNODES_PROVIDER_KEY_MY_LOCAL")
    assert r.from_environment


def test_blank_env_values_count_as_unset(memory_keyring) -> None:
    secrets = SecretStore()
    secrets.set("my-local", "from-keyring")
    env = {"CHATNODES_PROVIDER_KEY_MY_LOCAL": "  ", "MY_LOCAL_TOKEN": ""}
    assert resolve_key(_local(), secrets, env).source == "keyring"


def test_raw_id_env_var_is_not_used() -> None:
    env = {"CHATNODES_PROVIDER_KEY_MY-LOCAL": SECRET}
    assert resolve_key(_local(), None, env).key is None


def test_default_environ_is_os_environ(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CHATNODES_PROVIDER_KEY_MY_LOCAL", SECRET)
    assert resolve_key(_local(), None).key == SECRET


def test_session_key_resolves_without_keyring() -> None:
    keyring.set_keyring(fail.Keyring())
    secrets = SecretStore()
    assert not secrets.available
    secrets.set("openai", SECRET)
    settings = default_settings()
    r = resolve_key(settings.providers[0], secrets, {})
    assert (r.key, r.source) == (SECRET, "session")
    cfg = resolve_provider(settings, Req(), secrets=secrets, environ={})
    assert cfg is not None and cfg.api_key == SECRET


def test_repr_hides_the_key() -> None:
    r = KeyResolution(SECRET, "env", "CHATNODES_PROVIDER_KEY_X")
    assert SECRET not in repr(r) and "env" in repr(r)
    cfg = resolve_provider(
        Settings(providers=[_local()], default_provider="my-local"), Req(), secrets=None,
        environ={"MY_LOCAL_TOKEN": SECRET},
    )
    assert cfg is not None and SECRET not in repr(cfg)


def test_resolve_provider_defaults_and_models() -> None:
    settings = default_settings()
    env = {"OPENAI_API_KEY": SECRET, "ANTHROPIC_API_KEY": "sk-ant"}
    cfg = resolve_provider(settings, Req(), secrets=None, environ=env)
    assert cfg == ProviderConfig(
        id="openai", name="OpenAI", api="openai", base_url="https://api.openai.com/v1", api_key=SECRET,
        model=settings.default_model, max_tokens=8192, thinking_budget=None,
    )
    assert resolve_provider(settings, Req(model="gpt-4.1"), secrets=None, environ=env).model == "gpt-4.1"
    # The default model belongs to the default provider: another provider gets its own first model.
    ant = resolve_provider(settings, Req(provider="anthropic"), secrets=None, environ=env)
    assert ant is not None and ant.api == "anthropic" and ant.model == settings.providers[1].models[0]
    settings.default_model = None
    cfg = resolve_provider(settings, Req(), secrets=None, environ=env)
    assert cfg is not None and cfg.model == settings.providers[0].models[0]


def test_resolve_provider_carries_budgets() -> None:
    p = _local(needs_key=False)
    p.max_tokens = 2048
    p.thinking_budget = 1024
    cfg = resolve_provider(Settings(providers=[p]), Req(provider="my-local"), secrets=None, environ={})
    assert cfg is not None and (cfg.max_tokens, cfg.thinking_budget) == (2048, 1024)


def test_unknown_provider_or_missing_key_gives_none(memory_keyring) -> None:
    settings = default_settings()
    secrets = SecretStore()
    assert resolve_provider(settings, Req(provider="nope"), secrets=secrets, environ={}) is None
    assert resolve_provider(settings, Req(), secrets=secrets, environ={}) is None
    assert resolve_provider(Settings(), Req(), secrets=secrets, environ={}) is None
    secrets.set("openai", SECRET)
    cfg = resolve_provider(settings, Req(), secrets=secrets, environ={})
    assert cfg is not None and cfg.api_key == SECRET


def test_keyless_providers_resolve_without_a_key(memory_keyring) -> None:
    settings = default_settings()
    secrets = SecretStore()
    for pid, url in (("ollama", "http://localhost:11434/v1"), ("lmstudio", "http://localhost:1234/v1")):
        cfg = resolve_provider(settings, Req(provider=pid), secrets=secrets, environ={})
        assert cfg is not None and cfg.api_key is None and cfg.base_url == url and cfg.model
    # an optional key on a keyless server is still passed on
    secrets.set("ollama", SECRET)
    cfg = resolve_provider(settings, Req(provider="ollama"), secrets=secrets, environ={})
    assert cfg is not None and cfg.api_key == SECRET


def test_provider_without_models_gets_no_model() -> None:
    p = _local(needs_key=False)
    p.models = []
    cfg = resolve_provider(Settings(providers=[p]), Req(provider="my-local"), secrets=None, environ={})
    assert cfg is not None and cfg.model is None


def test_price_overrides_as_prices() -> None:
    from desktop.core.chat.cost import Price  # the project's own module: failing to import is a failure
    from desktop.core.config import price_overrides_as_prices

    s = Settings(
        price_overrides={
            "gpt-": {"input": 1, "output": 2},
            "claude-opus-": {"input": 3.5, "output": 10, "cache_read": 0.3, "cache_write": None},
            "broken": {"input": "x", "output": 1},
        }
    )
    prices = price_overrides_as_prices(s)
    assert prices == {
        "gpt-": Price(1.0, 2.0, None, None),
        "claude-opus-": Price(3.5, 10.0, 0.3, None),
    }


def test_the_default_follows_the_keys_there_are() -> None:
    from desktop.core.config import follow_keys, keyed_providers, known_keys
    from desktop.testing import MemoryKeyring

    settings = default_settings()  # OpenAI is the default; Ollama and LM Studio need no key
    store = SecretStore(backend=MemoryKeyring())
    assert keyed_providers(settings, store, {}) == frozenset()
    assert follow_keys(settings, frozenset()) is settings  # nothing works: nothing changes
    store.set("anthropic", SECRET)
    keyed = keyed_providers(settings, store, {"GROQ_API_KEY": "gsk-env-key-0001"})
    assert keyed == {"anthropic", "groq"}
    chosen = follow_keys(settings, keyed)
    assert chosen is not settings and settings.default_provider == "openai"  # a copy; the saved ones stay
    anthropic = chosen.provider("anthropic")
    assert anthropic is not None
    assert chosen.default_provider == "anthropic" and chosen.default_model == anthropic.models[0]
    assert follow_keys(settings, keyed | {"openai"}) is settings  # the default works: it stays
    local = settings.copy()
    local.default_provider = "ollama"
    assert follow_keys(local, keyed) is local  # a keyless default works without a key
    assert sorted(known_keys(settings, store, {"GROQ_API_KEY": "gsk-env-key-0001"})) == [
        "gsk-env-key-0001", SECRET]

