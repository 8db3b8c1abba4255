"""Shared by every test folder: no test ever sees the developer's real keys, keyring or config.

* ``memory_keyring`` (autouse): a fresh in-memory keyring backend installed with ``keyring.set_keyring``
  for each test, the previous backend restored afterwards.
* ``_isolated_env`` (autouse): ``CHATNODES_CONFIG_DIR`` points at a temp folder, and every provider key
  variable (``CHATNODES_PROVIDER_KEY_*``, ``*_API_KEY``) is removed.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import keyring
import keyring.backend
import keyring.core
import keyring.errors
import pytest


class MemoryKeyring(keyring.backend.KeyringBackend):
    """A real keyring backend that keeps passwords in a dict (one per test)."""

    priority = 1  # type: ignore[assignment]

    def __init__(self) -> None:
        super().__init__()
        self.passwords: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.passwords.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.passwords[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        try:
            del self.passwords[(service, username)]
        except KeyError:
            raise keyring.errors.PasswordDeleteError(f"no password for {username!r} in {service!r}") from None


@pytest.fixture(autouse=True)
def memory_keyring() -> Iterator[MemoryKeyring]:
    """A fresh in-memory keyring installed as the process keyring for this test."""
    previous = keyring.core._keyring_backend
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    try:
        yield backend
    finally:
        keyring.core._keyring_backend = previous


def _is_key_variable(name: str) -> bool:
    upper = name.upper()
    return upper.startswith("CHATNODES_PROVIDER_KEY_") or upper.endswith(("_API_KEY", "_API_TOKEN"))


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Point the config dir at a temp folder and hide every provider key variable."""
    for name in list(os.environ):
        if _is_key_variable(name):
            monkeypatch.delenv(name)
    config_dir = tmp_path_factory.mktemp("config")
    monkeypatch.setenv("CHATNODES_CONFIG_DIR", str(config_dir))
    return config_dir
