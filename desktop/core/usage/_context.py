"""Model data refreshed from LiteLLM (``model_prices_litellm.json``) and the context window of a model.

``model_prices_litellm.json`` is written by ``packaging/refresh_prices.py`` from a ``litellm`` wheel and ships
as package data; nothing reads ``litellm`` at run time. Each model has its rates in USD per million
tokens, ``context``, its maximum number of input tokens, and ``vision``/``pdf``: whether it takes
images and PDFs (``null`` when LiteLLM does not say; read by ``desktop.core.usage.model_capabilities``).

``context_window`` matches ids exactly like ``desktop.core.chat.cost.price_for`` (it reuses that
module's candidate generator): case-insensitive, on the part after the last ``/``; the id itself, a
dated snapshot (``-`` and a digit), a tag (``@``/``:``), or a family prefix (``claude-sonnet-``...)
standing for the family's newest model. For a family, when several newest models have different
windows the smallest is used, so the meter errs towards warning early. Ids missing from
``model_prices_litellm.json`` fall back to the ``context`` field of the chat price table
(``model_prices.json``). What the provider itself reported beats both: a local server's context
lengths (Ollama's ``/api/show``, kept in the provider's settings as ``context_lengths``) are passed
as ``known``.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

from desktop.core.chat.cost import (
    FAMILY_PREFIXES,
    Price,
    _candidates,
    _version,
    normalize_model_id,
)
from desktop.core.chat.types import ChatMessage

log = logging.getLogger(__name__)

__all__ = [
    "ContextUse", "ModelData", "load_model_data", "model_data", "context_use", "context_window",
    "context_table",
]

DATA_FILE = "model_prices_litellm.json"


@dataclass(frozen=True, slots=True)
class ModelData:
    """The refreshed model data.

    Attributes:
        source: Where it came from (``"litellm 1.110.2"``).
        date: When it was refreshed (ISO date).
        prices: Rates by model id (USD per million tokens).
        contexts: Context windows (max input tokens) by model id; models without one are absent.
        capabilities: ``(vision, pdf)`` by model id, each True, False or None (unknown); every
            model of the file is present, also when LiteLLM says nothing about it.
    """

    source: str
    date: str
    prices: dict[str, Price]
    contexts: dict[str, int]
    capabilities: dict[str, tuple[bool | None, bool | None]] = field(default_factory=dict)


def _rate(row: Mapping[str, Any], key: str) -> float | None:
    value = row.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        return None
    return float(value)


def load_model_data(doc: Mapping[str, Any]) -> ModelData:
    """Build ``ModelData`` from the decoded file; rows with a missing or invalid rate are left out.

    Raises:
        ValueError: The document is not shaped like ``model_prices_litellm.json``.
    """
    models = doc.get("models")
    if not isinstance(models, Mapping):
        raise ValueError("model data: 'models' is not an object")
    prices: dict[str, Price] = {}
    contexts: dict[str, int] = {}
    capabilities: dict[str, tuple[bool | None, bool | None]] = {}
    for model_id, row in models.items():
        if not isinstance(row, Mapping):
            continue
        key = normalize_model_id(str(model_id))
        capabilities[key] = (_flag(row.get("vision")), _flag(row.get("pdf")))
        context = row.get("context")
        if isinstance(context, int) and not isinstance(context, bool) and context > 0:
            contexts[key] = context
        input_rate, output_rate = _rate(row, "input"), _rate(row, "output")
        if input_rate is not None and output_rate is not None:
            prices[key] = Price(input_rate, output_rate, _rate(row, "cache_read"), _rate(row, "cache_write"))
    return ModelData(str(doc.get("source", "")), str(doc.get("date", "")), prices, contexts, capabilities)


def _flag(value: object) -> bool | None:
    return value if isinstance(value, bool) else None


@cache
def model_data() -> ModelData:
    """The shipped ``model_prices_litellm.json`` (loaded once)."""
    text = resources.files("desktop.core.chat").joinpath(DATA_FILE).read_text(encoding="utf-8")
    return load_model_data(json.loads(text))


def _chat_table_contexts() -> dict[str, int]:
    """``context`` of every id and alias of the chat price table (``desktop.core.chat``)."""
    try:
        text = resources.files("desktop.core.chat").joinpath("model_prices.json").read_text(encoding="utf-8")
        data = json.loads(text)
    except (OSError, ValueError) as exc:  # pragma: no cover - the file ships with the package
        log.warning("chat price table unreadable: %s", exc)
        return {}
    contexts: dict[str, int] = {}
    if not isinstance(data, Mapping):
        return contexts
    for model_id, row in data.items():
        if not isinstance(row, Mapping):
            continue
        context = row.get("context")
        if not isinstance(context, int) or isinstance(context, bool) or context <= 0:
            continue
        contexts[str(model_id).lower()] = context
        for alias in row.get("aliases") or ():
            contexts.setdefault(str(alias).lower(), context)
    return contexts


@cache
def context_table() -> dict[str, int]:
    """Context windows by model key, family prefixes included (loaded once)."""
    table = _chat_table_contexts()
    table.update(model_data().contexts)
    for family in FAMILY_PREFIXES:
        members = [(key, value) for key, value in table.items() if key.startswith(family) and key != family]
        if not members:
            continue
        newest = max(_version(key) for key, _ in members)
        table[family] = min(value for key, value in members if _version(key) == newest)
    return table


def _known_window(model: str, known: Mapping[str, int]) -> int | None:
    """``model``'s entry in ``known``: the id itself, any case, or its ``:latest`` tag (Ollama)."""
    lowered = model.lower()
    wanted = {lowered, lowered + ":latest", lowered.removesuffix(":latest")}
    for key, value in known.items():
        if key.lower() in wanted and isinstance(value, int) and value > 0:
            return value
    return None


def context_window(model: str | None, known: Mapping[str, int] | None = None) -> int | None:
    """The context window (max input tokens) of ``model``, or None when unknown.

    Args:
        model: A model id, possibly ``vendor/model`` and any case.
        known: ``{model id: tokens}`` the provider reported (a local server's); beats the tables.
    """
    if not model:
        return None
    if known:
        value = _known_window(model, known)
        if value is not None:
            return value
    name = normalize_model_id(model)
    if not name:
        return None
    table = context_table()
    exact = table.get(name)
    if exact is not None:
        return exact
    for key in _candidates(name):
        value = table.get(key)
        if value is not None:
            return value
    return None


@dataclass(frozen=True)
class ContextUse:
    """How full a conversation's context window is, as the provider last reported it.

    Attributes:
        used: Input (cached included) plus output tokens of the last exchange that reported usage.
        window: The model's context window in tokens.
        model: The model the window belongs to.
    """

    used: int
    window: int
    model: str

    @property
    def fraction(self) -> float:
        """``used / window`` (may exceed 1.0)."""
        return self.used / self.window


def context_use(messages: Sequence[ChatMessage], fallback_model: str | None = None,
                known: Mapping[str, int] | None = None) -> ContextUse | None:
    """The context meter's reading for a conversation: the last assistant message with usage.

    Args:
        messages: The active conversation.
        fallback_model: The node's model, used when the message does not name one.
        known: Context lengths the node's provider reported (see ``context_window``).

    Returns:
        None when no response reported usage yet or the model's window is unknown.
    """
    for msg in reversed(messages):
        if msg.role == "assistant" and msg.usage is not None:
            model = msg.model or fallback_model
            window = context_window(model, known)
            if model is None or window is None or window <= 0:
                return None
            return ContextUse(msg.usage.total_input_tokens + msg.usage.output_tokens, window, model)
    return None
