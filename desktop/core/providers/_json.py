"""JSON decoding for provider data: every string comes out as valid Unicode.

``json.loads`` keeps a lone UTF-16 surrogate escape (``"\\ud83d"``, which some servers send when
they cut an emoji) as an unencodable code point; one such character in a message would make every
later save, send and export fail. The drivers decode with :func:`loads`, which replaces lone
surrogates with U+FFFD; a valid pair (``"\\ud83d\\ude00"``) still decodes to the emoji.
"""

from __future__ import annotations

import json
import re
from typing import Any

from desktop.core.chat.conversation import repair_surrogates

__all__ = ["loads", "has_surrogate_escape", "repair_value", "clean_arguments"]

# A \uD800-\uDFFF escape: the only way JSON text read as UTF-8 (errors replaced) yields a surrogate.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def has_surrogate_escape(text: str | bytes) -> bool:
    """True when ``text`` may decode to a surrogate (it holds a ``\\uD800``-``\\uDFFF`` escape)."""
    if isinstance(text, bytes):
        return re.search(rb"\\u[dD][89a-fA-F]", text) is not None
    return _SURROGATE_ESCAPE.search(text) is not None


def repair_value(value: Any) -> Any:
    """``value`` (decoded JSON) with lone surrogates replaced by U+FFFD in every string and key.

    Containers are repaired in place, without recursion (any nesting depth ``json.loads`` accepts).
    """
    if isinstance(value, str):
        return repair_surrogates(value)
    if not isinstance(value, (dict, list)):
        return value
    stack: list[dict[str, Any] | list[Any]] = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            for i, item in enumerate(node):
                if isinstance(item, str):
                    node[i] = repair_surrogates(item)
                elif isinstance(item, (dict, list)):
                    stack.append(item)
            continue
        renamed = False
        for key, item in node.items():
            if isinstance(item, str):
                node[key] = repair_surrogates(item)
            elif isinstance(item, (dict, list)):
                stack.append(item)
            if repair_surrogates(key) is not key:
                renamed = True
        if renamed:
            items = [(repair_surrogates(k), v) for k, v in node.items()]
            node.clear()
            node.update(items)
    return value


def loads(text: str | bytes) -> Any:
    """``json.loads(text)`` with lone surrogates replaced by U+FFFD in every string and key.

    Raises:
        ValueError: ``text`` is not JSON (``json.JSONDecodeError``, or a ``UnicodeDecodeError``
            for bytes that are not UTF-8).
    """
    value = json.loads(text)
    if has_surrogate_escape(text):
        value = repair_value(value)
    return value


def clean_arguments(args: str, parsed: Any) -> str:
    """The tool-arguments text to keep: ``args``, or ``parsed`` re-encoded when ``args`` escapes a
    lone surrogate (the tool would otherwise decode it again). ``parsed`` is ``loads(args)``."""
    if not has_surrogate_escape(args):
        return args
    if json.loads(args) == parsed:
        return args  # only valid pairs: nothing was replaced
    return json.dumps(parsed, ensure_ascii=False)
