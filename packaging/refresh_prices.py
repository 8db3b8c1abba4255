"""Refresh ``desktop/core/chat/model_prices_litellm.json`` from a ``litellm`` wheel (a maintenance script).

Usage::

    pip download --no-deps litellm -d /tmp/litellm-wheel
    python packaging/refresh_prices.py /tmp/litellm-wheel/litellm-*.whl

The wheel is only opened as a zip archive: ``litellm`` is never imported, installed or read at run
time. The script extracts ``litellm/model_prices_and_context_window_backup.json`` and keeps the chat
models of OpenAI, Anthropic, Google (Gemini), DeepSeek, Mistral, xAI and Groq-hosted models that have
an input and an output price. Ids are stored as the app matches them: lower-cased, the part after the
last ``/``; when two entries collide (``deepseek-chat`` and ``deepseek/deepseek-chat``) the one listed
under its own provider without a prefix wins, then the first one seen. Prices are converted from USD
per token to USD per million tokens; ``context`` is the maximum number of input tokens; ``vision`` and
``pdf`` are LiteLLM's ``supports_vision`` and ``supports_pdf_input`` (``null`` when LiteLLM does not say).

Output::

    {"source": "litellm <version>", "date": "YYYY-MM-DD",
     "models": {id: {"input", "output", "cache_read", "cache_write", "context", "vision", "pdf"}}}
"""

from __future__ import annotations

import argparse
import datetime as _dt
import email.parser
import json
import logging
import math
import sys
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

DATA_MEMBER = "litellm/model_prices_and_context_window_backup.json"
OUTPUT = Path(__file__).resolve().parent.parent / "desktop" / "core" / "chat" / "model_prices_litellm.json"
PROVIDERS = ("openai", "anthropic", "gemini", "deepseek", "mistral", "xai", "groq")
MODES = ("chat", "responses")
SKIP_PREFIXES = ("ft:",)  # fine-tune templates, not models anyone sends to


def wheel_version(wheel: zipfile.ZipFile, name: str) -> str:
    """The version from the wheel's ``METADATA`` (falls back to the file name)."""
    for member in wheel.namelist():
        if member.endswith(".dist-info/METADATA"):
            meta = email.parser.Parser().parsestr(wheel.read(member).decode("utf-8", "replace"))
            version = meta.get("Version")
            if version:
                return str(version)
    parts = Path(name).name.split("-")
    return parts[1] if len(parts) > 1 else "unknown"


def _per_million(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if not math.isfinite(value) or value < 0:
        return None
    return round(float(value) * 1_000_000, 6)


def _context(row: Mapping[str, Any]) -> int | None:
    value = row.get("max_input_tokens")
    if value is None:
        value = row.get("max_tokens")
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        return None
    return int(value)


def _flag(value: object) -> bool | None:
    """A LiteLLM ``supports_*`` field: True or False when it is a boolean, else None (unknown)."""
    return value if isinstance(value, bool) else None


def select_models(data: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The kept models by matching id, each with its rates (USD / million tokens), context window and
    whether it takes images (``vision``) and PDFs (``pdf``)."""
    chosen: dict[str, tuple[int, dict[str, Any]]] = {}
    for key, row in data.items():
        if not isinstance(row, Mapping) or row.get("litellm_provider") not in PROVIDERS:
            continue
        if row.get("mode") not in MODES or key.lower().startswith(SKIP_PREFIXES):
            continue
        input_rate = _per_million(row.get("input_cost_per_token"))
        output_rate = _per_million(row.get("output_cost_per_token"))
        if input_rate is None or output_rate is None:
            continue
        model_id = key.strip().lower().rsplit("/", 1)[-1]
        if not model_id:
            continue
        rank = 0 if "/" not in key else 1
        entry = {
            "input": input_rate,
            "output": output_rate,
            "cache_read": _per_million(row.get("cache_read_input_token_cost")),
            "cache_write": _per_million(row.get("cache_creation_input_token_cost")),
            "context": _context(row),
            "vision": _flag(row.get("supports_vision")),
            "pdf": _flag(row.get("supports_pdf_input")),
        }
        previous = chosen.get(model_id)
        if previous is None or rank < previous[0]:
            chosen[model_id] = (rank, entry)
    return {model_id: chosen[model_id][1] for model_id in sorted(chosen)}


def build(wheel_path: Path, date: str | None = None) -> dict[str, Any]:
    """The output document built from the wheel at ``wheel_path``.

    Raises:
        KeyError: The wheel has no price file.
        ValueError: The price file is not a JSON object.
    """
    with zipfile.ZipFile(wheel_path) as wheel:
        version = wheel_version(wheel, wheel_path.name)
        data = json.loads(wheel.read(DATA_MEMBER))
    if not isinstance(data, dict):
        raise ValueError(f"{DATA_MEMBER} is not a JSON object")
    return {
        "source": f"litellm {version}",
        "date": date or _dt.datetime.now(_dt.UTC).date().isoformat(),
        "models": select_models(data),
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Write the data file; print how many models and bytes."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("wheel", type=Path, help="a litellm wheel (pip download --no-deps litellm -d DIR)")
    parser.add_argument("-o", "--output", type=Path, default=OUTPUT, help=f"default: {OUTPUT}")
    parser.add_argument("--date", default=None, help="refresh date to record (default: today, UTC)")
    args = parser.parse_args(argv)
    doc = build(args.wheel, args.date)
    text = json.dumps(doc, indent=None, separators=(",", ":"), sort_keys=False)
    # One model per line: small, and diffs between refreshes stay readable.
    lines = [f'{{"source":{json.dumps(doc["source"])},"date":{json.dumps(doc["date"])},"models":{{']
    items = list(doc["models"].items())
    for i, (model_id, entry) in enumerate(items):
        sep = "," if i < len(items) - 1 else ""
        lines.append(f"{json.dumps(model_id)}:{json.dumps(entry, separators=(',', ':'))}{sep}")
    lines.append("}}")
    text = "\n".join(lines) + "\n"
    json.loads(text)  # the file must stay valid JSON
    args.output.write_text(text, encoding="utf-8")
    print(f"{args.output}: {len(items)} models from {doc['source']}, {len(text.encode()):,} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
