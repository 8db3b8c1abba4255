"""An in-memory keyring backend for tests and tools that must never touch the real keyring.

Example::

    backend = MemoryKeyring({("chatnodes", "anthropic"): "sk-ant-made-up"})
    keyring.set_keyring(backend)        # or SecretStore(backend=backend)
"""

from __future__ import annotations

from collections.abc import Mapping

import keyring.backend
import keyring.errors

__all__ = ["MemoryKeyring"]


class MemoryKeyring(keyring.backend.KeyringBackend):
    """A real ``keyring`` backend that keeps passwords in a dict of ``(service, username) -> password``.

    It follows the backend contract: ``get_password`` returns None for a missing entry and
    ``delete_password`` raises ``PasswordDeleteError`` for one.

    Args:
        passwords: Entries to start with (copied).

    Attributes:
        passwords: The stored entries, for tests to inspect.
    """

    priority = 1

    def __init__(self, passwords: Mapping[tuple[str, str], str] | None = None) -> None:
        super().__init__()  # type: ignore[no-untyped-call]  # keyring leaves it unannotated
        self.passwords: dict[tuple[str, str], str] = dict(passwords or {})

    def __repr__(self) -> str:
        return f"MemoryKeyring(entries={len(self.passwords)})"

    def get_password(self, service: str, username: str) -> str | None:
        """The password stored for ``username`` in ``service``, or None."""
        return self.passwords.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        """Store ``password`` for ``username`` in ``service`` (replacing any)."""
        self.passwords[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        """Remove the entry.

        Raises:
            keyring.errors.PasswordDeleteError: There is no such entry.
        """
        try:
            del self.passwords[(service, username)]
        except KeyError:
            raise keyring.errors.PasswordDeleteError(f"no password for {username!r} in {service!r}") from None
