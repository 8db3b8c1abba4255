"""Whether a model takes images and PDFs: LiteLLM's flags carried by the refresh into the shipped
data, and ``model_capabilities`` reading them (unknown is None, and a family never says "no" for an
unknown member on the word of one model)."""

from __future__ import annotations

import importlib.util
import json
import zipfile
from importlib import resources
from pathlib import Path
from types import ModuleType

import pytest

from desktop.core.usage import ModelCapabilities, load_model_data, model_capabilities, model_data

ROOT = Path(__file__).resolve().parents[2]


def _refresh_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("refresh_prices", ROOT / "packaging" / "refresh_prices.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_refresh_carries_supports_vision_and_supports_pdf_input(tmp_path: Path) -> None:
    row = {"litellm_provider": "openai", "mode": "chat", "input_cost_per_token": 1e-06,
           "output_cost_per_token": 2e-06, "max_input_tokens": 1000}
    data = {
        "seeing": {**row, "supports_vision": True, "supports_pdf_input": True},
        "blind": {**row, "supports_vision": False},
        "silent": row,
        "odd": {**row, "supports_vision": "yes", "supports_pdf_input": 1},  # not booleans: unknown
    }
    wheel = tmp_path / "litellm-1.2.3-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        meta = "Metadata-Version: 2.1\nName: litellm\nVersion: 1.2.3\n"
        zf.writestr("litellm-1.2.3.dist-info/METADATA", meta)
        zf.writestr("litellm/model_prices_and_context_window_backup.json", json.dumps(data))
    out = tmp_path / "data.json"
    assert _refresh_module().main([str(wheel), "-o", str(out), "--date", "2026-12-01"]) == 0
    models = json.loads(out.read_text(encoding="utf-8"))["models"]
    assert {k: (v["vision"], v["pdf"]) for k, v in models.items()} == {
        "seeing": (True, True), "blind": (False, None), "silent": (None, None), "odd": (None, None),
    }
    md = load_model_data(json.loads(out.read_text(encoding="utf-8")))
    assert md.capabilities == {"seeing": (True, True), "blind": (False, None), "silent": (None, None),
                               "odd": (None, None)}


def test_the_shipped_data_says_which_models_see_images_and_read_pdfs() -> None:
    doc = json.loads(resources.files("desktop.core.chat").joinpath("model_prices_litellm.json")
                     .read_text(encoding="utf-8"))
    rows = doc["models"].values()
    assert all(row["vision"] in (True, False, None) and row["pdf"] in (True, False, None) for row in rows)
    assert sum(row["vision"] is True for row in rows) > 100
    assert any(row["vision"] is False for row in rows)
    assert model_data().capabilities["gpt-4o"] == (True, True)


@pytest.mark.parametrize(("model", "vision", "pdf"), [
    ("gpt-4o", True, True),
    ("openai/GPT-4o-2024-08-06", True, True),  # vendor prefix, any case, dated snapshot
    ("claude-sonnet-4-5", True, True),
    ("claude-sonnet-99-preview", True, True),  # unknown Claude: every Claude model agrees
    ("o3-mini", False, None),  # LiteLLM: no images
    ("gpt-3.5-turbo", None, None),  # known id, LiteLLM silent: stays unknown, no family guess
    ("gpt-9-imaginary", None, True),  # gpt- models disagree on vision: unknown
    ("deepseek-chat", None, None),
    ("llava:13b", None, None),  # a local model: unknown, so allowed
    ("", None, None),
    (None, None, None),
])
def test_model_capabilities(model: str | None, vision: bool | None, pdf: bool | None) -> None:
    assert model_capabilities(model) == ModelCapabilities(vision, pdf)
