"""What the settings pages share: the application context they need, key masking and checking,
and the key edits waiting for OK."""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol

import httpx

from desktop.core.config import SecretStore, Settings

__all__ = ["MASK", "KeyEdits", "SettingsContext", "key_problem", "mask_key"]

MASK = "••••••••"


class SettingsContext(Protocol):
    """What the dialog needs of the application context (``desktop.app.AppContext`` has it)."""

    @property
    def settings(self) -> Settings:
        """The saved settings."""

    @property
    def secrets(self) -> SecretStore:
        """The key store."""

    @property
    def environ(self) -> Mapping[str, str]:
        """The environment keys may come from."""

    @property
    def client(self) -> httpx.AsyncClient:
        """The HTTP client of the connection test."""

    def scrub(self, text: str) -> str:
        """``text`` without any known key and without anything shaped like one."""

    def save_settings(self, settings: Settings) -> None:
        """Validate, save and adopt ``settings`` (raises ``SettingsError`` or ``OSError``)."""

    def keyed_providers(self) -> frozenset[str]:
        """The providers a key is found for (environment or key store)."""

    def keys_changed(self) -> None:
        """Keys were stored or removed: what depends on them looks again."""


def mask_key(key: str) -> str:
    """``••••••••abcd``: the key's last 4 characters behind a fixed-width mask (never the whole key)."""
    tail = key[-4:] if len(key) >= 12 else ""
    return MASK + tail


_CONTROL_NAMES = {"\n": "a line break", "\r": "a line break", "\t": "a tab"}


def key_problem(text: str) -> str | None:
    """Why ``text`` cannot be an API key, or None when it can.

    A key with a control character (C0, DEL or C1: a line break, a tab...) is refused: it would
    break the request's header and slip past key scrubbing. The message never quotes the key.

    Args:
        text: The key as typed or pasted.

    Returns:
        A sentence for the user, or None.
    """
    for ch in text:
        if unicodedata.category(ch) == "Cc":
            what = _CONTROL_NAMES.get(ch, f"a control character (U+{ord(ch):04X})")
            return (f"This key contains {what}, so it was not accepted. "
                    "Paste the key alone, on one line.")
    return None


@dataclass
class KeyEdits:
    """Key changes made in the dialog, applied to the key store on OK (provider id → ...).

    Attributes:
        pending: New keys typed.
        deleted: Providers whose stored key is to be forgotten.
        removed: Providers removed from the list (their stored key goes too).
        session_only: The "this session only" choice per provider.
        rejected: Providers whose key field holds a refused key (see ``key_problem``): OK is refused.
    """

    pending: dict[str, str] = field(default_factory=dict)
    deleted: set[str] = field(default_factory=set)
    removed: set[str] = field(default_factory=set)
    session_only: dict[str, bool] = field(default_factory=dict)
    rejected: set[str] = field(default_factory=set)
