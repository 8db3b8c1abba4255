"""Valid Unicode at the boundary: lone UTF-16 surrogates become U+FFFD.

JSON allows an escaped lone surrogate (``"\\ud83d"``, as some servers emit when they cut an emoji in
two); Python decodes it into a ``str`` that cannot be encoded as UTF-8, so every later save, send or
export would raise ``UnicodeEncodeError``. These helpers repair such text: a proper high+low pair is
joined into its character, every lone surrogate becomes U+FFFD (the replacement character).

Drivers can call ``repair_text`` on decoded text; the stores call ``repair_surrogates`` on a parsed
document and ``utf8_bytes`` when encoding, as a last line of defence.
"""

from __future__ import annotations

import re
from typing import Any, TypeVar

__all__ = ["REPLACEMENT", "has_surrogates", "repair_surrogates", "repair_text", "utf8_bytes"]

REPLACEMENT = "\ufffd"
_SURROGATE = re.compile("[\ud800-\udfff]")
_T = TypeVar("_T")


def has_surrogates(text: str) -> bool:
    """True when ``text`` holds any surrogate code point (it cannot be encoded as UTF-8)."""
    return _SURROGATE.search(text) is not None


def repair_text(text: str) -> str:
    """Return ``text`` with surrogate pairs joined and lone surrogates replaced by U+FFFD.

    Text without surrogates is returned as is (the same object).
    """
    if _SURROGATE.search(text) is None:
        return text
    # UTF-16 round trip: "surrogatepass" keeps every code unit, decoding joins valid pairs and turns
    # each unpaired unit into U+FFFD.
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def repair_surrogates(obj: _T) -> tuple[_T, int]:
    """Repair every string (keys included) of a parsed JSON value; iterative, any depth.

    Args:
        obj: A value built of dicts, lists, strings and scalars (what ``json.loads`` returns).

    Returns:
        ``(value, count)``: the repaired value and how many strings were changed. When ``count`` is
        0 the value is ``obj`` itself; otherwise the containers holding a bad string were changed in
        place (keys are re-inserted in their original order).
    """
    if isinstance(obj, str):
        fixed = repair_text(obj)
        return (fixed, 1) if fixed is not obj else (obj, 0)  # type: ignore[return-value]
    count = 0
    stack: list[Any] = [obj]
    while stack:
        item = stack.pop()
        if isinstance(item, list):
            for i, value in enumerate(item):
                if isinstance(value, str):
                    fixed = repair_text(value)
                    if fixed is not value:
                        item[i] = fixed
                        count += 1
                elif isinstance(value, (list, dict)):
                    stack.append(value)
        elif isinstance(item, dict):
            bad_keys = [k for k in item if isinstance(k, str) and _SURROGATE.search(k) is not None]
            if bad_keys:
                entries = list(item.items())
                item.clear()
                for k, v in entries:
                    item[repair_text(k) if isinstance(k, str) else k] = v
                count += len(bad_keys)
            for key, value in item.items():
                if isinstance(value, str):
                    fixed = repair_text(value)
                    if fixed is not value:
                        item[key] = fixed
                        count += 1
                elif isinstance(value, (list, dict)):
                    stack.append(value)
    return obj, count


def utf8_bytes(text: str) -> tuple[bytes, bool]:
    """Encode ``text`` as UTF-8, repairing surrogates instead of raising.

    Returns:
        ``(data, repaired)``: ``repaired`` is True when a surrogate had to be replaced.
    """
    try:
        return text.encode("utf-8"), False
    except UnicodeEncodeError:
        return repair_text(text).encode("utf-8"), True
