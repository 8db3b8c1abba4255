"""Slash commands typed in the chat input: detection only (the UI applies their effects).

Private module of :mod:`desktop.core.chat.conversation` (import the public names from there).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, TypeAlias, cast, get_args

__all__ = ["SlashCommand", "SlashCommandName", "SLASH_COMMANDS", "detect_slash_command"]

SlashCommandName: TypeAlias = Literal["clear", "model", "system", "cost", "help"]
SLASH_COMMANDS: frozenset[str] = frozenset(get_args(SlashCommandName))


@dataclass(frozen=True, slots=True)
class SlashCommand:
    """A detected slash command; ``arg`` is the rest of the line, stripped (``""`` when missing)."""

    name: SlashCommandName
    arg: str = ""



def detect_slash_command(text: str) -> SlashCommand | None:
    """Detect ``/clear``, ``/model ID``, ``/system TEXT``, ``/cost`` or ``/help``.

    Surrounding whitespace is ignored and the command word is case-insensitive. ``arg`` is the
    rest of the text, stripped, ``""`` when missing (a bare ``/model`` is the command; the caller
    shows its usage). No leading slash or an unknown word returns None. Only detects.
    """
    stripped = text.strip()
    if not stripped.startswith("/"):
        return None
    body = stripped[1:]
    parts = body.split(maxsplit=1)
    if not parts or body[0].isspace():  # "/" alone, or "/ clear"
        return None
    word = parts[0].lower()
    if word not in SLASH_COMMANDS:
        return None
    arg = parts[1].strip() if len(parts) > 1 else ""
    return SlashCommand(name=cast(SlashCommandName, word), arg=arg)
