"""One ledger record, the rule that says which values a record may hold, and the sums over records.

The rule (shared by every reader, see ``_lines``): ``ts`` and the five token counts are whole numbers
``0 <= n < 10**16`` (at most 16 digits); ``usd`` and ``saved_usd`` are null or finite numbers
``0 <= x <= MAX_USD`` (so no sum over any ledger can overflow to ``inf``); the five strings are valid
Unicode (no lone surrogates); ``estimated`` is a boolean.
"""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from desktop.core.chat.cost import Price, cost_of, price_for
from desktop.core.chat.types import Usage

__all__ = [
    "MAX_COUNT",
    "MAX_USD",
    "MAX_TITLE_CHARS",
    "UsageRecord",
    "Totals",
    "normalize_project",
    "project_key",
    "record_for",
    "saved_by_cache",
]

MAX_TITLE_CHARS = 200
"""Node titles are cut to this length in the ledger (keeps every line far below a page)."""

MAX_COUNT = 10**16 - 1
"""The largest ``ts`` or token count a valid line holds (16 digits: a regular expression can check it)."""

MAX_USD = 1e9
"""The largest ``usd`` / ``saved_usd`` a valid line holds: a sum over 10**15 lines stays finite."""

_COUNT_FIELDS = ("input", "output", "cache_read", "cache_write", "reasoning")
_STRING_FIELDS = ("project", "node", "node_title", "provider", "model")


def _clean(text: str) -> str:
    """``text`` as valid UTF-8 (lone surrogates from odd file names become ``?``)."""
    return text.encode("utf-8", "replace").decode("utf-8")


def normalize_project(project: str | os.PathLike[str]) -> str:
    """The form a project folder is stored and compared in: absolute, normalised, valid UTF-8."""
    text = os.fspath(project)
    if not text:
        return ""
    return _clean(os.path.normpath(os.path.abspath(text)))


def project_key(project: str | os.PathLike[str]) -> bytes:
    """How a project folder appears inside a ledger line (JSON-escaped UTF-8, without the quotes)."""
    return escaped(normalize_project(project))


def escaped(text: str) -> bytes:
    """``text`` as the ledger writes a JSON string body (UTF-8, no surrounding quotes)."""
    return json.dumps(text, ensure_ascii=False)[1:-1].encode("utf-8")


@dataclass(frozen=True, slots=True)
class UsageRecord:
    """One ledger line: the usage and cost of one model response.

    Attributes:
        ts: When the response ended, epoch milliseconds.
        project: The project folder (absolute path).
        node: The chat node's id.
        node_title: The node's title when the response ended.
        provider: Provider id.
        model: Model id as sent to the provider.
        input: Uncached input tokens.
        output: Output tokens (reasoning included).
        cache_read: Input tokens read from the prompt cache.
        cache_write: Input tokens written to the prompt cache.
        reasoning: The part of ``output`` spent on reasoning.
        usd: Cost in USD, None when the model has no price.
        estimated: True when the cost is not a measured figure: the model has no price, or the token
            counts were estimated instead of reported by the provider.
        saved_usd: What the cache reads saved compared with the uncached input price; None when unpriced.
    """

    ts: int
    project: str
    node: str
    node_title: str
    provider: str
    model: str
    input: int
    output: int
    cache_read: int
    cache_write: int
    reasoning: int
    usd: float | None
    estimated: bool
    saved_usd: float | None

    def to_dict(self) -> dict[str, Any]:
        """The record as a JSON-ready dict, in the ledger's key order."""
        return {
            "ts": self.ts, "usd": self.usd, "saved_usd": self.saved_usd, "estimated": self.estimated,
            "project": self.project, "provider": self.provider, "model": self.model, "node": self.node,
            "node_title": self.node_title, "input": self.input, "output": self.output,
            "cache_read": self.cache_read, "cache_write": self.cache_write, "reasoning": self.reasoning,
        }

    def to_line(self) -> bytes:
        """The ledger line (UTF-8, ending with a newline)."""
        text = json.dumps(self.to_dict(), ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        return (text + "\n").encode("utf-8")

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> UsageRecord:
        """Validate a decoded line by the module's rule (extra keys are ignored; missing counts are 0).

        Raises:
            ValueError: A required field is missing or a field breaks the rule.
        """
        ts = _count(data.get("ts"), "ts")
        counts = {name: _count(data.get(name, 0), name) for name in _COUNT_FIELDS}
        strings = {name: _text(data.get(name, ""), name) for name in _STRING_FIELDS}
        estimated = data.get("estimated", False)
        if not isinstance(estimated, bool):
            raise ValueError(f"bad estimated: {estimated!r}")
        return cls(
            ts=ts, project=strings["project"], node=strings["node"], node_title=strings["node_title"],
            provider=strings["provider"], model=strings["model"], input=counts["input"],
            output=counts["output"], cache_read=counts["cache_read"], cache_write=counts["cache_write"],
            reasoning=counts["reasoning"], usd=money(data.get("usd"), "usd"), estimated=estimated,
            saved_usd=money(data.get("saved_usd"), "saved_usd"),
        )


def _count(value: object, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_COUNT:
        raise ValueError(f"bad {name}: {value!r}"[:200])
    return value


def _text(value: object, name: str) -> str:
    if not isinstance(value, str):
        raise ValueError(f"bad {name}: {type(value).__name__}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(f"bad {name}: not valid Unicode") from None
    return value


def money(value: object, name: str) -> float | None:
    """A ``usd`` / ``saved_usd`` value checked by the rule: None, or a float in ``[0, MAX_USD]``.

    Raises:
        ValueError: Not null, not a number, negative, not finite or above ``MAX_USD``.
    """
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"bad {name}: {value!r}"[:200])
    try:
        number = float(value)
    except OverflowError:  # an integer too big for a float
        raise ValueError(f"bad {name}: too large") from None
    if not 0.0 <= number <= MAX_USD:  # also false for nan
        raise ValueError(f"bad {name}: {value!r}"[:200])
    return number + 0.0  # -0.0 reads as 0.0


@dataclass(frozen=True, slots=True)
class Totals:
    """Sums over a period.

    Attributes:
        usd: Spent on priced responses.
        responses: Every response in the period.
        unpriced: Responses whose model had no price (not in ``usd``).
        saved_usd: What cache reads saved.
        corrupt: Corrupt lines skipped in the whole file.
        torn_tail: The file ended in an unfinished line.
    """

    usd: float = 0.0
    responses: int = 0
    unpriced: int = 0
    saved_usd: float = 0.0
    corrupt: int = 0
    torn_tail: bool = False

    @property
    def priced(self) -> int:
        """Responses with a price."""
        return self.responses - self.unpriced


def saved_by_cache(usage: Usage, price: Price | None) -> float | None:
    """USD the cache reads of ``usage`` saved against paying the uncached input rate; None unpriced."""
    if price is None:
        return None
    read_rate = price.cache_read if price.cache_read is not None else price.input
    return max(0.0, usage.cache_read_tokens * (price.input - read_rate) / 1_000_000)


def _bounded_count(value: float) -> int:
    return min(max(0, int(value)), MAX_COUNT)


def _bounded_usd(value: float | None) -> float | None:
    if value is None or not math.isfinite(value) or value < 0:
        return None
    return min(value, MAX_USD)


def record_for(
    usage: Usage,
    model: str,
    *,
    provider: str,
    project: str | os.PathLike[str],
    node: str,
    node_title: str = "",
    overrides: Mapping[str, Price] | None = None,
    ts_ms: int | None = None,
    tokens_estimated: bool = False,
) -> UsageRecord:
    """Build the ledger record of one response, priced with ``desktop.core.chat.cost``.

    Counts and amounts are clamped into the rule's ranges, so a record this function builds always
    reads back (a provider reporting absurd token counts cannot make an unreadable line).

    Args:
        usage: The response's usage report.
        model: The model id the request used.
        provider: Provider id.
        project: The project folder (stored absolute and normalised).
        node: The chat node's id.
        node_title: The node's title (cut to ``MAX_TITLE_CHARS``).
        overrides: The user's price overrides, as for ``price_for``.
        ts_ms: Epoch milliseconds (default: now).
        tokens_estimated: The token counts were estimated locally, not reported by the provider.
    """
    price = price_for(model, overrides)
    cost = cost_of(usage, model, overrides)
    usd = None if price is None else _bounded_usd(cost.usd)
    saved = saved_by_cache(usage, price)
    return UsageRecord(
        ts=_bounded_count(time.time() * 1000 if ts_ms is None else ts_ms),
        project=normalize_project(project),
        node=_clean(node),
        node_title=_clean(node_title[:MAX_TITLE_CHARS]),
        provider=_clean(provider),
        model=_clean(model),
        input=_bounded_count(usage.input_tokens),
        output=_bounded_count(usage.output_tokens),
        cache_read=_bounded_count(usage.cache_read_tokens),
        cache_write=_bounded_count(usage.cache_write_tokens),
        reasoning=_bounded_count(usage.reasoning_tokens),
        usd=usd,
        estimated=usd is None or cost.estimated or tokens_estimated,
        saved_usd=_bounded_usd(saved),
    )
