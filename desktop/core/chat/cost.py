"""Token cost accounting: model prices, per-message, per-conversation cost and the cost chip text.

Prices are USD per million tokens, loaded at import time from the package data file
``model_prices.json`` (derived from LiteLLM's price list; a row's ``litellm_key``, when present,
names the LiteLLM entry it came from under another id). Long-context tiers (``tiers``) are ignored:
every request is priced at the base rate, so very long prompts on tiered models are undercounted.

Matching (case-insensitive, on the part of the id after the last ``/``): a model key matches the
id itself, or the id continued by ``-`` and a digit (a dated snapshot: ``gpt-4o-2024-08-06``) or
by ``@``/``:`` (a tag), so ``o3`` never prices ``o3-pro``. Keys ending in ``-`` are family
prefixes matching any id that starts with them. Order: exact override, longest matching override,
exact default, longest matching default.

Family prefixes (``gpt-``, ``claude-opus-``, ``claude-sonnet-``, ``claude-haiku-``, ``claude-``,
``gemini-``, ``deepseek-``) are priced as the family's newest model in the table. "Newest" is
decided from the ids alone, deterministically: the version is the first run of numbers in the id
(``claude-opus-4-8`` -> (4, 8), ``gpt-5.4-mini`` -> (5, 4), ``deepseek-v4-pro`` -> (4,),
``deepseek-chat`` -> ()); the highest version wins, and among models of the same version the
most expensive one (output, then input price) wins, so a guessed price errs on the high side.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from importlib import resources
from typing import TYPE_CHECKING, Any

from .types import ChatMessage, Usage

log = logging.getLogger(__name__)

__all__ = [
    "Price",
    "Cost",
    "ConversationCost",
    "DEFAULT_PRICES",
    "default_prices",
    "price_source",
    "FAMILY_PREFIXES",
    "normalize_model_id",
    "price_for",
    "cost_of",
    "message_cost",
    "conversation_cost",
    "cache_savings",
    "conversation_cache_savings",
    "format_cost",
    "load_prices",
]

FAMILY_PREFIXES: tuple[str, ...] = (
    "gpt-",
    "claude-opus-",
    "claude-sonnet-",
    "claude-haiku-",
    "claude-",
    "gemini-",
    "deepseek-",
)


@dataclass(frozen=True, slots=True)
class Price:
    """USD per million tokens. ``None`` cache rates fall back to the input rate."""

    input: float
    output: float
    cache_read: float | None = None
    cache_write: float | None = None


@dataclass(frozen=True, slots=True)
class Cost:
    """Cost of one response; ``estimated`` is True (and ``usd`` 0) when no price is known."""

    usd: float
    estimated: bool


@dataclass(frozen=True, slots=True)
class ConversationCost:
    """Total cost of a conversation.

    Attributes:
        usd: Sum over the priced assistant messages.
        estimated: True when no message had a price (also when nothing has usage): show "n/a", or
            "$0.00" when nothing has usage (``format_cost``).
        unpriced: Assistant messages with usage but no known price: show "≥ $x" when > 0.
        cache_saved: What the priced messages' cache reads saved, in USD, compared with paying the
            uncached input price for those tokens (see ``cache_savings``).
    """

    usd: float
    estimated: bool
    unpriced: int = 0
    cache_saved: float = 0.0


_VERSION_RE = re.compile(r"\d+(?:[.\-]\d+)*")


def _version(model_id: str) -> tuple[int, ...]:
    match = _VERSION_RE.search(model_id)
    if match is None:
        return ()
    return tuple(int(part) for part in re.split(r"[.\-]", match.group(0)))


def _price_from_row(model_id: str, row: Mapping[str, Any]) -> Price:
    def rate(key: str, required: bool) -> float | None:
        value = row.get(key)
        if value is None and not required:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
            raise ValueError(f"model prices: {model_id!r} has an invalid {key!r}: {value!r}")
        return float(value)

    input_rate = rate("input", True)
    output_rate = rate("output", True)
    assert input_rate is not None and output_rate is not None
    return Price(input_rate, output_rate, rate("cache_read", False), rate("cache_write", False))


def load_prices(data: Mapping[str, Any]) -> dict[str, Price]:
    """Build the price table (ids, aliases and family prefixes) from the decoded JSON.

    Raises:
        ValueError: A row has a missing or invalid price.
    """
    table: dict[str, Price] = {}
    models: list[tuple[str, Price]] = []
    for model_id, row in data.items():
        if not isinstance(row, Mapping):
            raise ValueError(f"model prices: {model_id!r} is not an object")
        price = _price_from_row(model_id, row)
        key = model_id.lower()
        models.append((key, price))
        table[key] = price
        for alias in row.get("aliases") or ():
            table.setdefault(str(alias).lower(), price)
    for family in FAMILY_PREFIXES:
        members = [(key, price) for key, price in models if key.startswith(family)]
        if not members:
            continue
        _, newest = max(members, key=lambda kp: (_version(kp[0]), kp[1].output, kp[1].input, kp[0]))
        table[family] = newest
    return table


LITELLM_FILE = "model_prices_litellm.json"
"""Prices (and context windows) refreshed from a LiteLLM release by ``packaging/refresh_prices.py``."""


def _load_default_prices() -> dict[str, Price]:
    package = resources.files(__package__)
    table = load_prices(json.loads(package.joinpath("model_prices.json").read_text(encoding="utf-8")))
    refreshed = json.loads(package.joinpath(LITELLM_FILE).read_text(encoding="utf-8"))
    for model_id, row in refreshed.get("models", {}).items():
        try:
            table.setdefault(model_id.lower(), _price_from_row(model_id, row))
        except ValueError:
            continue  # a row without a usable price stays out
    return table


_defaults: dict[str, Price] | None = None

if TYPE_CHECKING:
    DEFAULT_PRICES: dict[str, Price]  # module ``__getattr__`` below


def default_prices() -> dict[str, Price]:
    """Built-in prices: every model id and alias of ``model_prices.json`` with the family prefixes,
    plus every chat model of the LiteLLM refresh (``model_prices_litellm.json``) the curated table
    lacks. Read on first use (not at import: a new window prices nothing before its first answer);
    ``DEFAULT_PRICES`` is the same table."""
    global _defaults
    if _defaults is None:
        _defaults = _load_default_prices()
    return _defaults


def __getattr__(name: str) -> Any:
    """``DEFAULT_PRICES``: the built-in table, read on first use."""
    if name == "DEFAULT_PRICES":
        return default_prices()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def price_source() -> tuple[str, str]:
    """(source, date) of the refreshed price data, e.g. ``("litellm 1.110.2", "2026-12-01")``."""
    data = json.loads(resources.files(__package__).joinpath(LITELLM_FILE).read_text(encoding="utf-8"))
    return str(data.get("source", "")), str(data.get("date", ""))


def normalize_model_id(model: str) -> str:
    """Lower-cased part after the last ``/`` (``openai/GPT-4o`` -> ``gpt-4o``)."""
    return model.strip().lower().rsplit("/", 1)[-1]


def _candidates(name: str) -> Iterable[str]:
    """Keys that match ``name`` other than ``name`` itself, longest first."""
    for i in range(len(name) - 1, 0, -1):
        char = name[i]
        if char == "-":
            yield name[: i + 1]  # family prefix, e.g. "gpt-"
            if i + 1 < len(name) and name[i + 1].isdigit():
                yield name[:i]  # dated snapshot of a model key
        elif char in "@:":
            yield name[:i]  # tagged model key


def _lookup(name: str, table: Mapping[str, Price]) -> tuple[Price | None, Price | None]:
    """(exact match, longest non-exact match) of ``name`` in ``table``."""
    exact = table.get(name)
    for key in _candidates(name):
        price = table.get(key)
        if price is not None:
            return exact, price
    return exact, None


def _normalize_overrides(overrides: Mapping[str, Price] | None) -> dict[str, Price]:
    if not overrides:
        return {}
    return {normalize_model_id(k): v for k, v in overrides.items()}


def _price(name: str, overrides: Mapping[str, Price]) -> Price | None:
    if overrides:
        exact, longest = _lookup(name, overrides)
        if exact is not None:
            return exact
        if longest is not None:
            return longest
    exact, longest = _lookup(name, default_prices())
    return exact if exact is not None else longest


def price_for(model: str | None, overrides: Mapping[str, Price] | None = None) -> Price | None:
    """Return the price of ``model``, or None when nothing matches.

    Args:
        model: A model id, possibly ``vendor/model`` (OpenRouter) and any case.
        overrides: User prices by model key or family prefix (``"claude-"``); they always beat
            built-ins.
    """
    if not model:
        return None
    name = normalize_model_id(model)
    if not name:
        return None
    return _price(name, _normalize_overrides(overrides))


def _usd(usage: Usage, price: Price) -> float:
    cache_read = price.cache_read if price.cache_read is not None else price.input
    cache_write = price.cache_write if price.cache_write is not None else price.input
    # Reasoning tokens are part of output_tokens: they are not added again.
    return (
        usage.input_tokens * price.input
        + usage.output_tokens * price.output
        + usage.cache_read_tokens * cache_read
        + usage.cache_write_tokens * cache_write
    ) / 1_000_000


def _saved(usage: Usage, price: Price) -> float:
    if price.cache_read is None:  # cache reads are priced as input: nothing saved
        return 0.0
    return usage.cache_read_tokens * (price.input - price.cache_read) / 1_000_000


def cache_savings(
    usage: Usage, model: str | None, overrides: Mapping[str, Price] | None = None
) -> float | None:
    """USD that the cache reads of one response saved, compared with the uncached input price.

    ``cache_read_tokens × (input rate − cache read rate)``. Cache writes cost more than plain input,
    but they are part of the price of the response and are not subtracted here. A model
    without a cache read rate saves nothing (its cache reads are priced at the input rate). An
    override whose cache read rate is above its input rate gives a negative amount.

    Args:
        usage: The response's usage.
        model: The model that answered (any id ``price_for`` accepts).
        overrides: The user's price overrides.

    Returns:
        The amount saved in USD, or None when the model has no price.
    """
    price = price_for(model, overrides)
    if price is None:
        return None
    return _saved(usage, price)


def cost_of(usage: Usage, model: str | None, overrides: Mapping[str, Price] | None = None) -> Cost:
    """Cost of one response; ``Cost(0.0, estimated=True)`` when the model has no price."""
    price = price_for(model, overrides)
    if price is None:
        return Cost(0.0, True)
    return Cost(_usd(usage, price), False)


def message_cost(
    msg: ChatMessage, fallback_model: str | None = None, overrides: Mapping[str, Price] | None = None
) -> Cost | None:
    """Cost of one message (priced with ``msg.model``, else ``fallback_model``); None without usage."""
    if msg.usage is None:
        return None
    return cost_of(msg.usage, msg.model or fallback_model, overrides)


def _priced_usages(
    messages: Iterable[ChatMessage], model: str | None, overrides: Mapping[str, Price] | None
) -> Iterator[tuple[Usage, Price | None]]:
    """(usage, price or None) of each assistant message with usage, priced with its own model,
    else ``model``; each model id is looked up once."""
    normalized = _normalize_overrides(overrides)
    cache: dict[str, Price | None] = {}
    for msg in messages:
        if msg.role != "assistant" or msg.usage is None:
            continue
        model_id = msg.model or model
        name = normalize_model_id(model_id) if model_id else ""
        if name in cache:
            price = cache[name]
        else:
            price = cache[name] = _price(name, normalized) if name else None
        yield msg.usage, price


def conversation_cost(
    messages: Iterable[ChatMessage], model: str | None, overrides: Mapping[str, Price] | None = None
) -> ConversationCost:
    """Sum the cost of the assistant messages that carry usage.

    Each message is priced with its own ``model``, else ``model``. ``estimated`` is True when no
    message had a price; ``unpriced`` counts assistant messages with usage but no price;
    ``cache_saved`` sums ``cache_savings`` over the priced messages.
    """
    usd = 0.0
    saved = 0.0
    priced = 0
    unpriced = 0
    for usage, price in _priced_usages(messages, model, overrides):
        if price is None:
            unpriced += 1
        else:
            priced += 1
            usd += _usd(usage, price)
            saved += _saved(usage, price)
    return ConversationCost(usd, priced == 0, unpriced, saved)


def conversation_cache_savings(
    messages: Iterable[ChatMessage], model: str | None, overrides: Mapping[str, Price] | None = None
) -> float | None:
    """Sum ``cache_savings`` over the assistant messages that carry usage and have a price.

    Args:
        messages: The conversation's messages.
        model: Prices the messages that do not name their model (the node's model).
        overrides: The user's price overrides.

    Returns:
        USD saved by cache reads, or None when no message with usage has a price.
    """
    total: float | None = None
    for usage, price in _priced_usages(messages, model, overrides):
        if price is not None:
            total = (total or 0.0) + _saved(usage, price)
    return total


def format_cost(cost: ConversationCost) -> str:
    """Text of the cost chip: ``"$0.0123"``, ``"$0.00"`` (no response yet), ``"n/a"`` (responses, none
    with a known price) or ``"≥ $0.0123"`` (some unpriced)."""
    if cost.estimated and not cost.unpriced:
        return "$0.00"  # nothing to price: no response carried usage
    if cost.estimated:
        return "n/a"
    text = f"${cost.usd:.4f}"
    return f"≥ {text}" if cost.unpriced else text
