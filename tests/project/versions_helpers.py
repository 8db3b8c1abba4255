"""Helpers of the versions tests of this folder: JSON depth, and what a user sees of versions."""

from __future__ import annotations

from typing import Any

from desktop.core.chat.conversation import Conversation
from desktop.core.chat.versions import all_responses, stored_versions, version_controls, versions_at

FLAT_DEPTH = 16
"""The deepest a saved project.json gets whatever its versions (ours: about 12)."""


def json_depth(value: object) -> int:
    """How deeply ``value`` nests lists and objects (iterative)."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if not isinstance(item, (dict, list)):
            continue
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in (item.values() if isinstance(item, dict) else item))
    return deepest


def state(conv: Conversation) -> dict[str, Any]:
    """Everything a user can see of a conversation's versions."""
    return {
        "path": [[m.id, m.role, m.content] for m in conv.messages],
        "versions_at": {m.id: list(versions_at(conv, m.id)) for m in conv.messages},
        "controls": version_controls(conv),
        "responses": sorted(m.id for m in all_responses(conv)),
        "stored": [[label, [m.id for m in tail]] for label, tail in stored_versions(conv.messages)],
    }
