"""Model data refreshed from a litellm wheel: the shipped file, the refresh script, context windows."""

from __future__ import annotations

import importlib.util
import json
import zipfile
from importlib import resources
from pathlib import Path
from types import ModuleType

import pytest

from desktop.core.usage import context_window, load_model_data, model_data

ROOT = Path(__file__).resolve().parents[2]


def _refresh_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("refresh_prices", ROOT / "packaging" / "refresh_prices.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_shipped_model_data_is_small_sourced_and_covers_every_provider() -> None:
    data_file = resources.files("desktop.core.chat").joinpath("model_prices_litellm.json")
    text = data_file.read_text(encoding="utf-8")
    assert len(text.encode()) < 300 * 1024
    doc = json.loads(text)
    assert doc["source"].startswith("litellm ") and len(doc["date"]) == 10
    md = model_data()
    assert md.source == doc["source"] and md.date == doc["date"]
    for model in ("gpt-4o", "gpt-4.1", "claude-sonnet-4-5", "claude-haiku-4-5", "gemini-2.5-pro",
                  "deepseek-chat", "mistral-large-latest", "grok-4.3", "gpt-oss-120b"):
        assert model in md.prices, model
        assert md.prices[model].output > 0
    for row in doc["models"].values():
        assert set(row) == {"input", "output", "cache_read", "cache_write", "context", "vision", "pdf"}


@pytest.mark.parametrize(("model", "window"), [
    ("claude-sonnet-4-5", 200_000),
    ("claude-sonnet-4-5-20250929", 200_000),  # dated snapshot
    ("anthropic/Claude-Sonnet-4-5", 200_000),  # vendor prefix, any case
    ("gpt-4o", 128_000),
    ("gpt-4o-2024-08-06", 128_000),
    ("openrouter/openai/gpt-4o:free", 128_000),  # tag
    ("gpt-4.1", 1_047_576),
    ("gemini-2.5-pro", 1_048_576),
    ("deepseek-chat", 131_072),
])
def test_context_window_of_known_models(model: str, window: int) -> None:
    assert context_window(model) == window


def test_context_window_family_prefix_and_unknown_models() -> None:
    newest_sonnet = context_window("claude-sonnet-")
    assert newest_sonnet is not None and context_window("claude-sonnet-99-preview") == newest_sonnet
    assert context_window("gemini-next-ultra") == context_window("gemini-")
    assert context_window("my-local-llama") is None
    assert context_window("") is None and context_window(None) is None


def test_load_model_data_skips_bad_rows_and_rejects_a_bad_document() -> None:
    md = load_model_data({"source": "s", "date": "d", "models": {
        "A/Good": {"input": 1, "output": 2, "cache_read": 0.1, "cache_write": None, "context": 1000},
        "no-price": {"input": None, "output": 2, "context": 5},
        "bad-context": {"input": 1, "output": 1, "context": True},
        "junk": 5,
    }})
    assert set(md.prices) == {"good", "bad-context"} and md.contexts == {"good": 1000, "no-price": 5}
    assert md.prices["good"].cache_read == 0.1 and md.prices["good"].cache_write is None
    with pytest.raises(ValueError):
        load_model_data({"models": []})


def _fake_wheel(path: Path, data: dict[str, object]) -> Path:
    wheel = path / "litellm-9.8.7-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        meta = "Metadata-Version: 2.1\nName: litellm\nVersion: 9.8.7\n"
        zf.writestr("litellm-9.8.7.dist-info/METADATA", meta)
        zf.writestr("litellm/model_prices_and_context_window_backup.json", json.dumps(data))
    return wheel


def test_refresh_script_extracts_chat_models_of_the_listed_providers(tmp_path: Path) -> None:
    row = {"litellm_provider": "openai", "mode": "chat", "input_cost_per_token": 2.5e-06,
           "output_cost_per_token": 1e-05, "cache_read_input_token_cost": 1.25e-06,
           "max_input_tokens": 128000}
    data = {
        "sample_spec": {"note": "not a model"},
        "gpt-4o": row,
        "openrouter/openai/gpt-4o": {**row, "litellm_provider": "openrouter"},  # other host: left out
        "deepseek/deepseek-chat": {**row, "litellm_provider": "deepseek", "input_cost_per_token": 9e-06},
        "deepseek-chat": {**row, "litellm_provider": "deepseek", "input_cost_per_token": 2.8e-07},
        "groq/openai/gpt-oss-120b": {**row, "litellm_provider": "groq", "max_input_tokens": None,
                                     "max_tokens": 131072},
        "dall-e-3": {**row, "mode": "image_generation"},
        "ft:gpt-4o-2024-08-06": row,
        "claude-x": {"litellm_provider": "anthropic", "mode": "chat", "input_cost_per_token": 3e-06},
    }
    module = _refresh_module()
    out = tmp_path / "model-data.json"
    assert module.main([str(_fake_wheel(tmp_path, data)), "-o", str(out), "--date", "2026-12-01"]) == 0
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert doc["source"] == "litellm 9.8.7" and doc["date"] == "2026-12-01"
    unknown = {"vision": None, "pdf": None}
    assert doc["models"] == {
        "deepseek-chat": {"input": 0.28, "output": 10.0, "cache_read": 1.25, "cache_write": None,
                          "context": 128000, **unknown},
        "gpt-4o": {"input": 2.5, "output": 10.0, "cache_read": 1.25, "cache_write": None, "context": 128000,
                   **unknown},
        "gpt-oss-120b": {"input": 2.5, "output": 10.0, "cache_read": 1.25, "cache_write": None,
                         "context": 131072, **unknown},
    }
    assert load_model_data(doc).contexts["gpt-oss-120b"] == 131072
