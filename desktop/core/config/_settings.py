"""Application settings: the ``settings.json`` store (the model, presets and key resolution live in
``_format``, ``_presets`` and ``_keys``; the package's face exports them all).

``settings.json`` lives in the config folder (``default_config_dir()``) and never holds a secret::

    {"version": 1,
     "providers": [{"id", "name", "api": "openai"|"anthropic", "base_url", "needs_key", "key_env",
                    "models": [...], "max_tokens", "thinking_budget"}],
     "default_provider": id, "default_model": str,
     "price_overrides": {prefix: {"input", "output", "cache_read"?, "cache_write"?}},
     "history_cap_kib": 200, "max_iterations": 10}

Unknown keys (top level and per provider) are kept in ``extra`` and written back. Loading and saving
follow ``_docstore``: a bad file is moved aside and never crashes the app, text is repaired to valid
Unicode, writes are atomic with a last-good ``settings.json.bak``.

A key for provider ``id`` is looked up in this order (D15): the environment variable
``CHATNODES_PROVIDER_KEY_<ID>`` (upper-cased, non-alphanumerics as ``_``), the provider's conventional
variable (``key_env``, e.g. ``OPENAI_API_KEY``), then the secret store (keyring, or a session-only key).
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Mapping
from pathlib import Path

from ..files import DocumentCorruptError, DocumentStore, FileLock, LoadResult, LockState
from ._format import (
    Settings,
    SettingsError,
    settings_from_dict,
    settings_to_dict,
)
from ._presets import default_settings

__all__ = [
    "CONFIG_DIR_ENV",
    "SettingsCorruptError",
    "SettingsStore",
    "default_config_dir",
]

log = logging.getLogger(__name__)

CONFIG_DIR_ENV = "CHATNODES_CONFIG_DIR"
DEBRIS_MIN_AGE = 120.0
"""Without a folder lock, temp files younger than this (seconds) may belong to a running save."""


class SettingsCorruptError(DocumentCorruptError):
    """``settings.json`` could not be used; it was kept aside and the user should be told.

    The one corrupt-file error of ``_docstore`` (see ``DocumentCorruptError`` for the attributes:
    ``path``, ``moved_to``, ``reason``, ``recovered_from``).
    """


def _decode_settings(raw: object) -> Settings:
    try:
        return settings_from_dict(raw)
    except SettingsError as exc:
        raise ValueError("; ".join(exc.problems)) from None


def _encode_settings(settings: Settings) -> str:
    return json.dumps(settings_to_dict(settings), ensure_ascii=False, indent=2) + "\n"


class SettingsStore:
    """Loads and saves ``settings.json`` in a config folder.

    Args:
        config_dir: The config folder (created on first save).

    Attributes:
        config_dir: The config folder.
        path: ``config_dir / "settings.json"``.
        backup_path: ``settings.json.bak``, the last good file.
        last_load: The full result of the last load (notices, moved file...), or None.
        last_error: The last load's notices as one readable text (a bad file, repaired text), or None.
        last_corrupt: The last load's corrupt-file error, or None.
    """

    FILE_NAME = "settings.json"

    def __init__(self, config_dir: Path) -> None:
        self.config_dir = Path(config_dir)
        self.path = self.config_dir / self.FILE_NAME
        self.backup_path = self.config_dir / (self.FILE_NAME + ".bak")
        self.last_load: LoadResult[Settings] | None = None
        self.last_error: str | None = None
        self.last_corrupt: SettingsCorruptError | None = None
        self._doc: DocumentStore[Settings] = DocumentStore(
            self.path,
            decode=_decode_settings,
            encode=_encode_settings,
            default=default_settings,
            error_type=SettingsCorruptError,
            blocked_error=OSError,
            fallback="default settings are in use",
        )

    def open(self) -> LoadResult[Settings]:
        """Load the settings; never raises.

        A missing file gives ``default_settings()``. Temp files of interrupted saves are removed. An
        unreadable or invalid file (any parse failure: encoding, JSON, nesting depth, types) is moved
        aside to ``settings.json.corrupt-<timestamp>`` (never overwritten), the last good
        ``settings.json.bak`` is used when it is valid (else the defaults), and the result's
        ``notices`` say so. Lone surrogates in any string are replaced with U+FFFD (noticed too).
        """
        self._remove_debris()
        result = self._doc.load()
        self.last_load = result
        err = result.error
        self.last_corrupt = err if isinstance(err, SettingsCorruptError) else None
        self.last_error = "\n".join(result.notices) or None
        return result

    def load(self) -> Settings:
        """Return the stored settings: ``open().value`` (``last_error``/``last_corrupt`` tell problems)."""
        return self.open().value

    def save(self, settings: Settings) -> None:
        """Validate and write ``settings`` atomically; the previous good file becomes ``.bak``.

        Lone surrogates are replaced with U+FFFD in the file (the ``settings`` object is unchanged).

        Raises:
            SettingsError: The settings are invalid (nothing is written).
            OSError: Writing failed (the previous file is unchanged), or the current file could not
                be read at load time and was left in place (it is not overwritten).
        """
        settings.validate()
        self.config_dir.mkdir(parents=True, exist_ok=True)
        lock = FileLock(self.config_dir, directory=True)
        lock.acquire(timeout=2.0)  # keeps another instance's debris cleanup off our temp file
        try:
            self._doc.write(settings)
        finally:
            lock.release()
        self.last_error = None
        self.last_corrupt = None

    def _remove_debris(self) -> None:
        if not self.config_dir.is_dir():
            return
        lock = FileLock(self.config_dir, directory=True)
        state = lock.try_acquire()
        try:
            if state is LockState.HELD:
                self._doc.remove_debris()
            elif state is LockState.UNAVAILABLE:
                self._doc.remove_debris(min_age=DEBRIS_MIN_AGE)
        finally:
            lock.release()


def default_config_dir(environ: Mapping[str, str] | None = None) -> Path:
    """The config folder: ``$CHATNODES_CONFIG_DIR`` when set, else the platform's user config dir."""
    env = os.environ if environ is None else environ
    override = env.get(CONFIG_DIR_ENV, "").strip()
    if override:
        return Path(override).expanduser()
    import platformdirs

    return Path(platformdirs.user_config_dir("chatnodes", appauthor=False))


