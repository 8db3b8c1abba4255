"""settings.json: format, validation, unknown keys, corrupt files kept aside, atomic writes."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from desktop.core.config import (
    PROVIDER_PRESETS,
    ProviderSettings,
    Settings,
    SettingsCorruptError,
    SettingsError,
    SettingsStore,
    default_config_dir,
    default_settings,
    preset,
    provider_config,
    resolve_provider,
    settings_from_dict,
    settings_to_dict,
)

PRICES_FILE = Path(__file__).resolve().parents[2] / "desktop" / "core" / "chat" / "model_prices.json"


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def test_missing_file_gives_defaults_without_error(tmp_path: Path) -> None:
    store = SettingsStore(tmp_path)
    s = store.load()
    assert s == default_settings()
    assert store.last_error is None and store.last_corrupt is None
    assert not store.path.exists()


def test_defaults_hold_every_preset() -> None:
    s = default_settings()
    ids = [p.id for p in s.providers]
    assert ids == ["openai", "anthropic", "deepseek", "openrouter", "gemini", "groq", "ollama", "lmstudio"]
    assert s.default_provider == "openai"
    assert s.default_model == s.providers[0].models[0]
    assert (s.history_cap_kib, s.max_iterations, s.version) == (200, 10, 1)
    s.validate()
    by_id = {p.id: p for p in s.providers}
    assert by_id["anthropic"].api == "anthropic" and by_id["anthropic"].base_url == "https://api.anthropic.com"
    assert by_id["gemini"].base_url == "https://generativelanguage.googleapis.com/v1beta/openai"
    assert by_id["ollama"].needs_key is False and by_id["ollama"].key_env is None
    assert by_id["lmstudio"].base_url == "http://localhost:1234/v1" and not by_id["lmstudio"].needs_key
    assert all(p.models for p in s.providers)


def test_preset_models_are_priced_where_the_table_has_them() -> None:
    priced = set(json.loads(PRICES_FILE.read_text(encoding="utf-8")))
    for p in PROVIDER_PRESETS:
        if p.id in ("openai", "anthropic", "deepseek", "gemini"):
            assert set(p.models) <= priced, p.id
        if p.id == "openrouter":
            assert {m.rsplit("/", 1)[1] for m in p.models} <= priced


def test_presets_are_copied_not_shared() -> None:
    s = default_settings()
    s.providers[0].models.append("mine")
    p = preset("openai")
    assert p is not None and "mine" not in p.models
    assert preset("nope") is None


def test_round_trip_is_exact_and_keeps_unknown_keys(tmp_path: Path) -> None:
    store = SettingsStore(tmp_path)
    raw = settings_to_dict(default_settings())
    raw["window"] = {"w": 1200, "h": 800}
    raw["providers"][0]["organization"] = "org-1"
    raw["price_overrides"] = {"gpt-": {"input": 1, "output": 2.5, "cache_read": 0.1, "note": "mine"}}
    _write(store.path, json.dumps(raw).encode())
    s = store.load()
    assert s.extra == {"window": {"w": 1200, "h": 800}}
    assert s.providers[0].extra == {"organization": "org-1"}
    store.save(s)
    assert json.loads(store.path.read_text(encoding="utf-8")) == raw
    assert SettingsStore(tmp_path).load() == s


def test_written_format_matches_design(tmp_path: Path) -> None:
    store = SettingsStore(tmp_path)
    store.save(default_settings())
    raw = json.loads(store.path.read_text(encoding="utf-8"))
    assert list(raw) == [
        "version", "providers", "default_provider", "default_model", "price_overrides", "history_cap_kib",
        "max_iterations", "prompt_caching",
    ]
    assert raw["providers"][0] == {
        "id": "openai", "name": "OpenAI", "api": "openai", "base_url": "https://api.openai.com/v1",
        "needs_key": True, "key_env": "OPENAI_API_KEY", "models": PROVIDER_PRESETS[0].models,
        "max_tokens": 8192, "thinking_budget": None,
    }


def test_a_providers_reported_context_lengths_round_trip_and_are_checked(tmp_path: Path) -> None:
    store = SettingsStore(tmp_path)
    s = default_settings()
    s.providers[-2].context_lengths = {"llama3.2:latest": 131072}
    store.save(s)
    raw = json.loads(store.path.read_text(encoding="utf-8"))
    assert raw["providers"][-2]["context_lengths"] == {"llama3.2:latest": 131072}
    assert "context_lengths" not in raw["providers"][0]  # written only where a server reported some
    assert SettingsStore(tmp_path).load() == s
    bad = {"providers": [{"id": "x", "api": "openai", "base_url": "http://127.0.0.1:9/v1",
                          "context_lengths": {"m": "big"}}]}
    with pytest.raises(SettingsError, match=r"providers\[0\]\.context_lengths"):
        settings_from_dict(bad)


def test_minimal_file_fills_defaults() -> None:
    s = settings_from_dict(
        {"providers": [{"id": "x", "api": "openai", "base_url": "http://127.0.0.1:9/v1"}]}
    )
    p = s.providers[0]
    assert (p.name, p.needs_key, p.key_env, p.models, p.max_tokens) == ("x", True, None, [], 8192)
    assert s.default_provider is None and s.price_overrides == {}
    assert s.prompt_caching is True


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (lambda r: r.update(version=2), "version: 2 is not supported"),
        (lambda r: r.update(providers={}), "providers: must be a list"),
        (lambda r: r["providers"][1].update(api="gemini"), "providers[1].api: must be 'openai'"),
        (lambda r: r["providers"][0].update(base_url="api.openai.com"), "providers[0].base_url"),
        (lambda r: r["providers"][0].update(needs_key="yes"), "providers[0].needs_key"),
        (lambda r: r["providers"][0].update(key_env="OPENAI API KEY"), "providers[0].key_env"),
        (lambda r: r["providers"][0].update(models=["ok", 3]), "providers[0].models"),
        (lambda r: r["providers"][0].update(max_tokens=0), "providers[0].max_tokens"),
        (lambda r: r["providers"][0].update(thinking_budget=True), "providers[0].thinking_budget"),
        (lambda r: r["providers"][0].update(thinking_budget=512), "at least 1024"),
        (lambda r: r["providers"][0].update(max_tokens=4096, thinking_budget=4096),
         "thinking_budget: must be below max_tokens (4096)"),
        (lambda r: r["providers"][0].update(id=""), "providers[0].id"),
        (lambda r: r["providers"][1].update(id="openai"), "providers[1].id: 'openai' is used twice"),
        (lambda r: r.update(default_provider="nope"), "default_provider: 'nope' is not one of the providers"),
        (lambda r: r.update(default_model=""), "default_model"),
        (lambda r: r.update(history_cap_kib=-1), "history_cap_kib"),
        (lambda r: r.update(max_iterations=1.5), "max_iterations"),
        (lambda r: r.update(prompt_caching="no"), "prompt_caching: must be true or false"),
        (lambda r: r.update(prompt_caching=0), "prompt_caching: must be true or false"),
        (lambda r: r.update(prompt_caching=None), "prompt_caching: must be true or false"),
        (lambda r: r.update(price_overrides=[]), "price_overrides: must be an object"),
        (lambda r: r.update(price_overrides={"x": {"input": 1}}), "price_overrides['x'].output"),
        (lambda r: r.update(price_overrides={"x": {"input": -1, "output": 1}}), "price_overrides['x'].input"),
        (
            lambda r: r.update(price_overrides={"x": {"input": 1, "output": 1, "cache_read": "a"}}),
            "price_overrides['x'].cache_read",
        ),
    ],
)
def test_validation_names_the_problem(mutate, expected: str) -> None:
    raw = settings_to_dict(default_settings())
    mutate(raw)
    with pytest.raises(SettingsError) as info:
        settings_from_dict(raw)
    assert expected in str(info.value)


def test_prompt_caching_is_on_by_default_kept_through_save_and_load_and_reaches_the_config(
    tmp_path: Path,
) -> None:
    assert Settings().prompt_caching is True
    assert settings_to_dict(default_settings())["prompt_caching"] is True
    store = SettingsStore(tmp_path)
    off = default_settings()
    off.prompt_caching = False
    store.save(off)
    raw = json.loads(store.path.read_text(encoding="utf-8"))
    assert raw["prompt_caching"] is False
    loaded = SettingsStore(tmp_path).load()
    assert loaded.prompt_caching is False
    assert loaded.copy().prompt_caching is False

    class Req:
        provider = "anthropic"
        model = None

    env = {"ANTHROPIC_API_KEY": "sk-test"}
    config = resolve_provider(loaded, Req(), secrets=None, environ=env)
    assert config is not None and config.api == "anthropic" and config.prompt_caching is False
    loaded.prompt_caching = True
    config = resolve_provider(loaded, Req(), secrets=None, environ=env)
    assert config is not None and config.prompt_caching is True
    # The driver configuration built directly keeps the default on, and takes the switch.
    provider = loaded.provider("anthropic")
    assert provider is not None
    assert provider_config(provider, key=None).prompt_caching is True
    assert provider_config(provider, key=None, prompt_caching=False).prompt_caching is False


def test_validation_lists_every_problem() -> None:
    raw = settings_to_dict(default_settings())
    raw["max_iterations"] = 0
    raw["providers"][2]["api"] = "x"
    with pytest.raises(SettingsError) as info:
        settings_from_dict(raw)
    assert len(info.value.problems) == 2


def test_save_refuses_invalid_settings_and_keeps_the_file(tmp_path: Path) -> None:
    store = SettingsStore(tmp_path)
    store.save(default_settings())
    before = store.path.read_bytes()
    bad = default_settings()
    bad.providers.append(ProviderSettings(id="openai", name="dup", api="openai", base_url="http://x"))
    with pytest.raises(SettingsError, match="used twice"):
        store.save(bad)
    assert store.path.read_bytes() == before


@pytest.mark.parametrize(
    "content",
    [b"{not json", b"\xff\xfe\x00garbage", b"[1, 2]", b'{"version": 1, "providers": [{"id": 5}]}', b""],
)
def test_corrupt_file_is_kept_aside_byte_identical(tmp_path: Path, content: bytes) -> None:
    store = SettingsStore(tmp_path)
    _write(store.path, content)
    s = store.load()
    assert s == default_settings()
    err = store.last_corrupt
    assert isinstance(err, SettingsCorruptError)
    assert err.moved_to is not None and err.moved_to.name.startswith("settings.json.corrupt-")
    assert err.moved_to.read_bytes() == content
    assert not store.path.exists()
    assert err.recovered_from is None
    assert store.last_error == str(err)
    assert str(err.moved_to) in store.last_error and "default settings" in store.last_error


def test_corrupt_files_never_overwrite_each_other(tmp_path: Path) -> None:
    store = SettingsStore(tmp_path)
    moved: list[Path] = []
    for i in range(3):
        _write(store.path, f"bad {i}".encode())
        store.load()
        assert store.last_corrupt is not None and store.last_corrupt.moved_to is not None
        moved.append(store.last_corrupt.moved_to)
    assert len(set(moved)) == 3
    assert sorted(p.read_bytes() for p in moved) == [b"bad 0", b"bad 1", b"bad 2"]


def test_corrupt_file_recovers_from_last_good_backup(tmp_path: Path) -> None:
    store = SettingsStore(tmp_path)
    first = default_settings()
    first.max_iterations = 3
    store.save(first)
    second = first.copy()
    second.max_iterations = 4
    store.save(second)
    assert store.backup_path.exists()
    _write(store.path, b"{broken")
    s = store.load()
    assert s.max_iterations == 3
    err = store.last_corrupt
    assert err is not None and err.recovered_from == store.backup_path
    assert "restored from settings.json.bak" in str(err)
    # a successful load clears the report
    store.save(s)
    assert SettingsStore(tmp_path).load().max_iterations == 3
    assert store.last_error is None


def test_bak_keeps_the_last_good_file_not_a_corrupt_one(tmp_path: Path) -> None:
    store = SettingsStore(tmp_path)
    good = default_settings()
    good.history_cap_kib = 77
    store.save(good)
    store.save(good)  # .bak = the 77 version
    _write(store.path, b"{corrupted after load")  # damaged behind our back
    store.save(default_settings())
    backup = json.loads(store.backup_path.read_text(encoding="utf-8"))
    assert backup["history_cap_kib"] == 77


def test_atomic_save_leaves_no_temp_files(tmp_path: Path) -> None:
    store = SettingsStore(tmp_path / "deep" / "config")
    for i in range(3):
        s = default_settings()
        s.max_iterations = i + 1
        store.save(s)
    names = sorted(p.name for p in store.config_dir.iterdir())
    assert names == ["settings.json", "settings.json.bak"]
    assert json.loads(store.backup_path.read_text(encoding="utf-8"))["max_iterations"] == 2


def test_failed_replace_keeps_old_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = SettingsStore(tmp_path)
    store.save(default_settings())
    before = store.path.read_bytes()

    def boom(src: object, dst: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", boom)
    changed = default_settings()
    changed.max_iterations = 99
    with pytest.raises(OSError, match="No space"):
        store.save(changed)
    monkeypatch.undo()
    assert store.path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["settings.json"]


def test_failed_fsync_keeps_old_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = SettingsStore(tmp_path)
    store.save(default_settings())
    before = store.path.read_bytes()

    def boom(fd: int) -> None:
        raise OSError(5, "I/O error")

    monkeypatch.setattr(os, "fsync", boom)
    with pytest.raises(OSError, match="I/O error"):
        store.save(Settings())
    monkeypatch.undo()
    assert store.path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["settings.json"]


def test_settings_copy_is_deep() -> None:
    s = default_settings()
    c = s.copy()
    c.providers[0].models.clear()
    c.price_overrides["x"] = {"input": 1, "output": 1}
    assert s.providers[0].models and "x" not in s.price_overrides
    assert s.provider("groq") is s.providers[5]
    assert s.provider(None) is None and s.provider("missing") is None
    assert s.history_cap_bytes == 200 * 1024


def test_default_config_dir_honours_override(tmp_path: Path) -> None:
    assert default_config_dir({"CHATNODES_CONFIG_DIR": str(tmp_path)}) == tmp_path
    assert default_config_dir() == Path(os.environ["CHATNODES_CONFIG_DIR"])
    platform_dir = default_config_dir({})
    assert platform_dir.name == "chatnodes" and platform_dir.is_absolute()


def test_unreadable_file_is_left_in_place_and_not_overwritten(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = SettingsStore(tmp_path)
    store.save(default_settings())
    before = store.path.read_bytes()
    real_read = Path.read_bytes

    def deny(self: Path) -> bytes:
        if self == store.path:
            raise PermissionError(13, "Permission denied")
        return real_read(self)

    monkeypatch.setattr(Path, "read_bytes", deny)
    assert store.load() == default_settings()
    err = store.last_corrupt
    assert err is not None and err.moved_to is None and "Permission denied" in err.reason
    assert "left in place" in (store.last_error or "")
    with pytest.raises(OSError, match="not overwritten"):
        store.save(default_settings())
    monkeypatch.undo()
    assert store.path.read_bytes() == before
    assert store.load() == default_settings() and store.last_error is None
    store.save(default_settings())  # readable again: saving works


def test_the_monthly_budget_round_trips_and_is_validated(tmp_path: Path) -> None:
    from desktop.core.config import SettingsError, settings_from_dict, settings_to_dict

    raw = settings_to_dict(default_settings())
    assert "budget" not in raw  # no budget: no block
    raw["budget"] = {"monthly_usd": 25}
    settings = settings_from_dict(raw)
    assert settings.monthly_budget_usd == 25.0
    assert settings_to_dict(settings)["budget"] == {"monthly_usd": 25.0}
    for bad in ({"monthly_usd": -1}, {"monthly_usd": "10"}, {"monthly_usd": float("inf")}, [1]):
        raw["budget"] = bad
        with pytest.raises(SettingsError, match="budget"):
            settings_from_dict(raw)
