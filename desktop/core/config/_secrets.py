"""API keys in the OS keyring, with a session-only fallback when no keyring is usable.

Keys are stored under service ``chatnodes`` with the provider id as the user name (DESIGN §2.5).
When the OS offers no usable keyring (no backend, only the ``fail``/``null`` backends, or only a
plaintext-file backend from ``keyrings.alt``), or the keyring fails at run time, keys are kept in
memory for this session only: nothing is ever written to a file by this module.

No key ever reaches a log line, a ``repr`` or an exception message: messages built from keyring
errors are scrubbed of the key involved before they are kept or logged.
"""

from __future__ import annotations

import logging
from typing import Literal, TypeAlias

import keyring
import keyring.backend
import keyring.errors
from keyring.backends import chainer, fail, null

__all__ = ["DEFAULT_SERVICE", "KeyLocation", "SecretStore"]

log = logging.getLogger(__name__)

DEFAULT_SERVICE = "chatnodes"

KeyLocation: TypeAlias = Literal["keyring", "session"]
"""Where a stored key lives: the OS keyring or this process's memory."""

_MAX_REASON = 300


def _backend_label(backend: object) -> str:
    cls = type(backend)
    return f"{cls.__module__}.{cls.__qualname__}"


def _is_plaintext_file_backend(backend: object) -> bool:
    """True for the ``keyrings.alt`` family (plaintext or home-made encrypted files)."""
    return type(backend).__module__.startswith("keyrings.alt")


def _unusable_reason(backend: keyring.backend.KeyringBackend) -> str | None:
    """Why ``backend`` must not hold keys, or None when it is a real OS keyring."""
    if isinstance(backend, fail.Keyring):
        return "no OS keyring found (keyring.backends.fail.Keyring)"
    if isinstance(backend, null.Keyring):
        return "the keyring is disabled (keyring.backends.null.Keyring)"
    if _is_plaintext_file_backend(backend):
        return f"only a file-based keyring is available ({_backend_label(backend)}), which is not used"
    return None


def _select_backend(
    backend: keyring.backend.KeyringBackend,
) -> tuple[keyring.backend.KeyringBackend | None, str | None]:
    """Pick the backend that will hold keys; unwrap a chainer to its best real OS keyring."""
    if isinstance(backend, chainer.ChainerBackend):
        reasons: list[str] = []
        try:
            candidates = list(backend.backends)
        except Exception as exc:  # a broken third-party backend can raise anything while probing
            return None, f"the keyring could not be initialised ({type(exc).__name__})"
        for candidate in candidates:
            reason = _unusable_reason(candidate)
            if reason is None:
                return candidate, None
            reasons.append(reason)
        return None, reasons[0] if reasons else "no OS keyring found (empty keyring chain)"
    reason = _unusable_reason(backend)
    if reason is not None:
        return None, reason
    return backend, None


def _scrub(text: str, secret: str | None) -> str:
    """Remove ``secret`` from ``text`` and keep it short."""
    if secret:
        text = text.replace(secret, "***")
    if len(text) > _MAX_REASON:
        text = text[: _MAX_REASON - 1] + "…"
    return text


def _failure(action: str, exc: BaseException, secret: str | None = None) -> str:
    """A readable reason for a keyring failure during ``action`` (the key is scrubbed out)."""
    if isinstance(exc, keyring.errors.NoKeyringError):
        return "no OS keyring found (keyring.errors.NoKeyringError)"
    return f"{action} failed ({_describe_error(exc, secret)})"


def _describe_error(exc: BaseException, secret: str | None = None) -> str:
    cls = type(exc)
    detail = _scrub(str(exc).strip(), secret)
    name = f"{cls.__module__}.{cls.__qualname__}" if cls.__module__.startswith("keyring") else cls.__name__
    return f"{name}: {detail}" if detail else name


class SecretStore:
    """Provider API keys in the OS keyring, with an in-memory session fallback.

    Args:
        service: Keyring service name (user name = provider id).
        backend: The keyring backend to use; default: ``keyring.get_keyring()`` at construction.

    Attributes:
        service: The keyring service name.
        available: True while a real OS keyring is in use.
        unavailable_reason: A readable reason when ``available`` is False (never contains a key).
    """

    def __init__(
        self, service: str = DEFAULT_SERVICE, *, backend: keyring.backend.KeyringBackend | None = None
    ) -> None:
        self.service = service
        self._session: dict[str, str] = {}
        self._backend: keyring.backend.KeyringBackend | None = None
        # The real OS keyring found at start, kept after a run-time failure so that an explicit
        # save or delete tries it again (a locked or briefly unreachable keyring is not gone).
        self._os_backend: keyring.backend.KeyringBackend | None = None
        self.unavailable_reason: str | None = None
        try:
            chosen = backend if backend is not None else keyring.get_keyring()
        except Exception as exc:  # keyring's own initialisation can fail in odd environments
            self._mark_unavailable(f"the keyring could not be initialised ({_describe_error(exc)})")
            return
        selected, reason = _select_backend(chosen)
        if selected is None:
            self._mark_unavailable(reason or "no OS keyring found")
        else:
            self._backend = self._os_backend = selected
            log.debug("keys are stored in the OS keyring (%s)", _backend_label(selected))

    # ------------------------------------------------------------------------------------------
    @property
    def available(self) -> bool:
        """True while keys go to a real OS keyring."""
        return self._backend is not None

    def _mark_unavailable(self, reason: str) -> None:
        self._backend = None
        self.unavailable_reason = f"{reason}: keys are kept for this session only"
        log.warning("OS keyring unavailable: %s", self.unavailable_reason)

    def __repr__(self) -> str:
        return (
            f"SecretStore(service={self.service!r}, available={self.available!r}, "
            f"session_keys={len(self._session)})"
        )

    # ------------------------------------------------------------------------------------------
    def lookup(self, provider_id: str) -> tuple[str | None, KeyLocation | None]:
        """Return the key for ``provider_id`` and where it came from.

        A key set for this session only takes precedence over the keyring: it is the user's most
        recent choice (set with ``session_only=True``, or stored while the keyring was failing).
        """
        session_key = self._session.get(provider_id)
        if session_key is not None:
            return session_key, "session"
        backend = self._backend
        if backend is None:
            return None, None
        try:
            value = backend.get_password(self.service, provider_id)
        except Exception as exc:
            self._mark_unavailable(_failure("reading the keyring", exc))
            return None, None
        if value:
            return value, "keyring"
        return None, None

    def get(self, provider_id: str) -> str | None:
        """Return the stored key for ``provider_id`` (session key, then keyring), or None."""
        return self.lookup(provider_id)[0]

    def set(self, provider_id: str, key: str, *, session_only: bool = False) -> KeyLocation:
        """Store ``key`` for ``provider_id``; return where it went.

        Surrounding whitespace (from pasting) is removed. With ``session_only`` or when no keyring is
        usable, the key stays in memory for this session. When the keyring fails to store it (or does
        not return it when read back), the store switches to session mode and keeps the key there.

        Raises:
            ValueError: ``provider_id`` or ``key`` is empty.
        """
        if not provider_id:
            raise ValueError("provider id must not be empty")
        key = key.strip()
        if not key:
            raise ValueError("the API key is empty")
        backend = self._backend or self._os_backend  # after a failure, an explicit save retries
        if session_only or backend is None:
            self._session[provider_id] = key
            return "session"
        try:
            backend.set_password(self.service, provider_id, key)
            stored = backend.get_password(self.service, provider_id)
        except Exception as exc:
            self._mark_unavailable(_failure("storing a key in the keyring", exc, key))
            self._session[provider_id] = key
            return "session"
        if stored != key:
            self._mark_unavailable(f"the keyring ({_backend_label(backend)}) did not keep the key")
            self._session[provider_id] = key
            return "session"
        self._session.pop(provider_id, None)
        if self._backend is None:
            log.info("the OS keyring works again (%s)", _backend_label(backend))
            self._backend, self.unavailable_reason = backend, None
        return "keyring"

    def delete(self, provider_id: str) -> bool:
        """Forget the key of ``provider_id`` (session and keyring); True when one was removed."""
        removed = self._session.pop(provider_id, None) is not None
        backend = self._backend or self._os_backend  # a forgotten key must not come back at restart
        if backend is None:
            return removed
        try:
            if backend.get_password(self.service, provider_id) is None:
                return removed
            backend.delete_password(self.service, provider_id)
        except keyring.errors.PasswordDeleteError:
            return removed
        except Exception as exc:
            reason = _describe_error(exc)
            log.warning("deleting the key of %r from the keyring failed: %s", provider_id, reason)
            return removed
        return True

    def has_session_key(self, provider_id: str) -> bool:
        """True when ``provider_id`` has a key held in memory for this session only."""
        return provider_id in self._session
