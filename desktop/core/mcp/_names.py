"""Model-facing tool names: ``mcp__<server>__<tool>``, safe for every provider.

Characters outside ``[A-Za-z0-9_-]`` become ``_``; a name longer than 64 characters is cut and ends
with ``_`` plus 8 hex digits of a SHA-256 of the original pair, so it stays stable across runs.
When several pairs give the same name, the first (in sorted order) of those that needed no change
keeps the plain name and every other one gets the hash suffix: the outcome depends only on the set
of pairs, never on their order.

What a permission card names is what the model uses: ``card_names`` gives the cleaned server and
tool names (the parts of ``mcp__<server>__<tool>``, plain ``[A-Za-z0-9_-]``) and, when the server's
own names differ, those names made visible (``desktop.core.visible``) and cut, so a name holding a
newline, a bidi override or zero-width characters can never make the card claim another server
or tool.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass

from desktop.core.visible import visible_prefix

__all__ = ["CARD_NAME_LIMIT", "MAX_TOOL_NAME", "CardNames", "ToolNameMap", "card_names", "clean_name",
           "mangle_tool_name"]

MAX_TOOL_NAME = 64
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
_HASH_LEN = 8


def _digest(server: str, tool: str) -> str:
    return hashlib.sha256(f"{server}\x00{tool}".encode()).hexdigest()[:_HASH_LEN]


def clean_name(name: str) -> str:
    """A server or tool name as it appears in model-facing names: characters outside
    ``[A-Za-z0-9_-]`` become ``_`` (nothing in it can hide or fake anything)."""
    return _UNSAFE.sub("_", name)


def _plain(server: str, tool: str) -> str:
    return f"mcp__{clean_name(server)}__{clean_name(tool)}"


def _with_suffix(server: str, tool: str, base: str) -> str:
    suffix = f"_{_digest(server, tool)}"
    return base[: MAX_TOOL_NAME - len(suffix)] + suffix


def mangle_tool_name(server: str, tool: str) -> str:
    """The model-facing name of ``tool`` of ``server`` when nothing collides with it."""
    plain = _plain(server, tool)
    return plain if len(plain) <= MAX_TOOL_NAME else _with_suffix(server, tool, plain)


class ToolNameMap:
    """Names for a set of (server, tool) pairs and the reverse map, collisions resolved deterministically."""

    def __init__(self, pairs: Iterable[tuple[str, str]]) -> None:
        unique = sorted(set(pairs))
        groups: dict[str, list[tuple[str, str]]] = {}
        for server, tool in unique:
            groups.setdefault(mangle_tool_name(server, tool), []).append((server, tool))
        self._by_name: dict[str, tuple[str, str]] = {}
        self._by_pair: dict[tuple[str, str], str] = {}
        for name, members in groups.items():
            keeper: tuple[str, str] | None = members[0]
            if len(members) > 1:
                keeper = next((m for m in members if _plain(*m) == f"mcp__{m[0]}__{m[1]}" == name), None)
            for pair in members:
                self._add(name if pair == keeper else _with_suffix(*pair, _plain(*pair)), pair)

    def _add(self, name: str, pair: tuple[str, str]) -> None:
        candidate, n = name, 2
        while candidate in self._by_name:
            tail = f"_{n}"
            candidate = name[: MAX_TOOL_NAME - len(tail)] + tail
            n += 1
        self._by_name[candidate] = pair
        self._by_pair[pair] = candidate

    def name_for(self, server: str, tool: str) -> str:
        """The model-facing name of a pair given to the constructor.

        Raises:
            KeyError: The pair is unknown.
        """
        return self._by_pair[(server, tool)]

    def resolve(self, name: str) -> tuple[str, str] | None:
        """The (server, tool) pair behind a model-facing name, or None."""
        return self._by_name.get(name)

    def names(self) -> list[str]:
        """Every model-facing name."""
        return list(self._by_name)

    def __len__(self) -> int:
        return len(self._by_name)


CARD_NAME_LIMIT = 80
"""Characters of a server's own name a card shows before "…" (``card_names``)."""


@dataclass(frozen=True, slots=True)
class CardNames:
    """The names a permission card shows for an MCP call, all safe to show as plain text.

    Attributes:
        model_name: The model-facing name of the call (``mcp__<server>__<tool>``, what the model
            called and what "Always allow this tool" grants).
        server: The server's name, cleaned as in ``model_name`` (``clean_name``).
        tool: The tool's name, cleaned as in ``model_name``.
        server_given: The server's name as configured, made visible and cut to
            ``CARD_NAME_LIMIT`` (ending with "…" when cut); None when it equals ``server``.
        tool_given: The tool's name as the server gave it, likewise; None when it equals ``tool``.
    """

    model_name: str
    server: str
    tool: str
    server_given: str | None
    tool_given: str | None


def _given(raw: str, cleaned: str, limit: int) -> str | None:
    if raw == cleaned:
        return None
    shown, cut = visible_prefix(raw, limit)
    return shown + "\u2026" if cut else shown


def card_names(model_name: str, server: str, tool: str, *, limit: int = CARD_NAME_LIMIT) -> CardNames:
    """What a permission card names for a call of ``tool`` of ``server`` (an ``McpToolInfo``'s
    ``name``, ``server`` and ``tool``): the cleaned names first, the given ones only beside them.

    ``model_name`` is cleaned too (it already is when it comes from ``ToolNameMap``).
    """
    clean_server, clean_tool = clean_name(server), clean_name(tool)
    return CardNames(
        model_name=clean_name(model_name),
        server=clean_server,
        tool=clean_tool,
        server_given=_given(server, clean_server, limit),
        tool_given=_given(tool, clean_tool, limit),
    )
