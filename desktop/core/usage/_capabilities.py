"""Whether a model takes images and PDFs: LiteLLM's ``supports_vision`` and ``supports_pdf_input``.

The values come from ``model_prices_litellm.json`` (``vision`` and ``pdf`` per model, see
``_context``); each is True, False or None (LiteLLM does not say). Ids match like prices and
context windows (``desktop.core.chat.cost``): case-insensitive, the part after the last ``/``, the
id itself, then a dated snapshot, a tag or a family prefix. The first key found decides, also when
its value is unknown (``gpt-3.5-turbo`` stays unknown rather than borrowing the ``gpt-`` family's
answer). A family prefix (``claude-``, ``gpt-``...) answers for an unknown member only what every
member with a known answer agrees on, else None: unlike prices, a wrong "no" would keep an image
from a model that sees it, so no single "newest" member speaks for the family (every Claude model
takes images and PDFs, so an unknown ``claude-`` id does too; ``gpt-`` ids disagree, so an unknown
one stays unknown). An id that matches nothing is unknown: a caller lets the user try (unknown is
allowed, see ``desktop.core.attachments``).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from desktop.core.chat.cost import FAMILY_PREFIXES, _candidates, normalize_model_id

from ._context import model_data

__all__ = ["ModelCapabilities", "capability_table", "model_capabilities"]

_Caps = tuple[bool | None, bool | None]


@dataclass(frozen=True, slots=True)
class ModelCapabilities:
    """What a model takes besides text.

    Attributes:
        vision: True when it takes images, False when it does not, None when unknown.
        pdf: True when it takes PDF documents, False when it does not, None when unknown.
    """

    vision: bool | None = None
    pdf: bool | None = None


def _agree(values: list[bool | None]) -> bool | None:
    known = {v for v in values if v is not None}
    return known.pop() if len(known) == 1 else None


@cache
def capability_table() -> dict[str, _Caps]:
    """``(vision, pdf)`` by model key, family prefixes included (loaded once)."""
    table = dict(model_data().capabilities)
    for family in FAMILY_PREFIXES:
        members = [caps for key, caps in table.items() if key.startswith(family) and key != family]
        if members:
            table[family] = (_agree([c[0] for c in members]), _agree([c[1] for c in members]))
    return table


def model_capabilities(model: str | None) -> ModelCapabilities:
    """Whether ``model`` takes images and PDFs (each None when unknown; see the module doc).

    Args:
        model: A model id, possibly ``vendor/model`` and any case.
    """
    if not model:
        return ModelCapabilities()
    name = normalize_model_id(model)
    if not name:
        return ModelCapabilities()
    table = capability_table()
    found = table.get(name)
    if found is None:
        found = next((table[key] for key in _candidates(name) if key in table), None)
    return ModelCapabilities(*found) if found is not None else ModelCapabilities()
