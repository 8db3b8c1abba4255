"""SecretStore: keyring first-class, a readable no-keyring mode, and keys never leaking."""

from __future__ import annotations

import logging
from pathlib import Path

import keyring
import keyring.backend
import keyring.errors
import pytest
from keyring.backends import chainer, fail, null

from desktop.core.config import SecretStore

SECRET = "sk-test-SECRET-0123456789abcdef"


class BrokenKeyring(keyring.backend.KeyringBackend):
    """Raises on every call, quoting the password in its messages like a careless backend would."""

    priority = 1  # type: ignore[assignment]

    def get_password(self, service: str, username: str) -> str | None:
        raise keyring.errors.KeyringLocked("collection is locked")

    def set_password(self, service: str, username: str, password: str) -> None:
        raise keyring.errors.PasswordSetError(f"could not store {password}")

    def delete_password(self, service: str, username: str) -> None:
        raise keyring.errors.KeyringLocked("collection is locked")


class ForgetfulKeyring(keyring.backend.KeyringBackend):
    """Accepts writes and silently drops them (what an empty ChainerBackend does)."""

    priority = 1  # type: ignore[assignment]

    def get_password(self, service: str, username: str) -> str | None:
        return None

    def set_password(self, service: str, username: str, password: str) -> None:
        return None

    def delete_password(self, service: str, username: str) -> None:
        raise keyring.errors.PasswordDeleteError("missing")


def test_keyring_round_trip_uses_service_and_provider_id(memory_keyring) -> None:
    store = SecretStore()
    assert store.available and store.unavailable_reason is None
    assert store.get("openai") is None
    assert store.set("openai", f"  {SECRET}\n") == "keyring"
    assert memory_keyring.passwords == {("chatnodes", "openai"): SECRET}
    assert store.get("openai") == SECRET
    assert store.lookup("openai") == (SECRET, "keyring")
    assert not store.has_session_key("openai")
    assert store.delete("openai") is True
    assert store.get("openai") is None
    assert store.delete("openai") is False


def test_custom_service_and_injected_backend(memory_keyring) -> None:
    other = type(memory_keyring)()
    store = SecretStore("chatnodes-test", backend=other)
    store.set("anthropic", SECRET)
    assert other.passwords == {("chatnodes-test", "anthropic"): SECRET}
    assert memory_keyring.passwords == {}


def test_empty_key_or_id_is_rejected() -> None:
    store = SecretStore()
    with pytest.raises(ValueError, match="empty"):
        store.set("openai", "   ")
    with pytest.raises(ValueError, match="provider id"):
        store.set("", SECRET)


def test_fail_backend_means_unavailable_with_readable_reason(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    keyring.set_keyring(fail.Keyring())
    store = SecretStore()
    assert store.available is False
    assert store.unavailable_reason is not None
    assert "no OS keyring found" in store.unavailable_reason
    assert "session only" in store.unavailable_reason
    assert store.set("openai", SECRET) == "session"
    assert store.get("openai") == SECRET
    assert store.lookup("openai") == (SECRET, "session")
    assert store.has_session_key("openai")
    assert store.delete("openai") is True
    assert store.get("openai") is None
    assert list(tmp_path.iterdir()) == []  # nothing written anywhere near


def test_null_backend_is_unavailable() -> None:
    store = SecretStore(backend=null.Keyring())
    assert store.available is False
    assert "disabled" in (store.unavailable_reason or "")


def test_chainer_is_unwrapped_to_its_best_real_backend(memory_keyring) -> None:
    class Chain(chainer.ChainerBackend):
        backends = [fail.Keyring(), memory_keyring]  # type: ignore[assignment]

    store = SecretStore(backend=Chain())
    assert store.available
    store.set("openai", SECRET)
    assert memory_keyring.passwords == {("chatnodes", "openai"): SECRET}

    class FailChain(chainer.ChainerBackend):
        backends = [fail.Keyring()]  # type: ignore[assignment]

    class EmptyChain(chainer.ChainerBackend):
        backends = []  # type: ignore[assignment]

    assert "no OS keyring found" in (SecretStore(backend=FailChain()).unavailable_reason or "")
    assert "empty keyring chain" in (SecretStore(backend=EmptyChain()).unavailable_reason or "")


def test_plaintext_file_backend_is_refused() -> None:
    class PlaintextKeyring(ForgetfulKeyring):
        pass

    PlaintextKeyring.__module__ = "keyrings.alt.file"
    store = SecretStore(backend=PlaintextKeyring())
    assert store.available is False
    assert "file-based keyring" in (store.unavailable_reason or "")


def test_session_only_key_wins_over_keyring_and_is_not_stored(memory_keyring) -> None:
    store = SecretStore()
    store.set("openai", "sk-stored-in-keyring")
    assert store.set("openai", SECRET, session_only=True) == "session"
    assert store.get("openai") == SECRET
    assert store.has_session_key("openai")
    assert memory_keyring.passwords[("chatnodes", "openai")] == "sk-stored-in-keyring"
    # Storing in the keyring again makes the keyring key the one in use.
    assert store.set("openai", "sk-new") == "keyring"
    assert not store.has_session_key("openai")
    assert store.get("openai") == "sk-new"


def test_failing_keyring_falls_back_to_session_without_leaking(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    store = SecretStore(backend=BrokenKeyring())
    assert store.available
    assert store.set("openai", SECRET) == "session"
    assert store.available is False
    reason = store.unavailable_reason or ""
    assert "PasswordSetError" in reason and "***" in reason
    assert SECRET not in reason
    assert store.get("openai") == SECRET
    assert SECRET not in caplog.text
    assert SECRET not in repr(store)


def test_failing_read_marks_unavailable() -> None:
    store = SecretStore(backend=BrokenKeyring())
    assert store.get("openai") is None
    assert store.available is False
    assert "KeyringLocked" in (store.unavailable_reason or "")


def test_keyring_that_drops_writes_is_detected() -> None:
    store = SecretStore(backend=ForgetfulKeyring())
    assert store.set("openai", SECRET) == "session"
    assert store.available is False
    assert "did not keep the key" in (store.unavailable_reason or "")
    assert store.get("openai") == SECRET


def test_failing_delete_does_not_raise(memory_keyring) -> None:
    store = SecretStore(backend=BrokenKeyring())
    assert store.delete("openai") is False


def test_repr_never_shows_keys(memory_keyring) -> None:
    store = SecretStore()
    store.set("openai", SECRET)
    store.set("groq", SECRET + "x", session_only=True)
    assert SECRET not in repr(store)
    assert "session_keys=1" in repr(store)


def test_no_keyring_error_at_run_time_reads_well() -> None:
    class NoKeyring(ForgetfulKeyring):
        def get_password(self, service: str, username: str) -> str | None:
            raise keyring.errors.NoKeyringError("No recommended backend was available. " + "x" * 500)

    store = SecretStore(backend=NoKeyring())
    assert store.available
    assert store.get("openai") is None
    assert store.unavailable_reason == (
        "no OS keyring found (keyring.errors.NoKeyringError): keys are kept for this session only"
    )
    assert store.set("openai", SECRET) == "session" and store.get("openai") == SECRET


class FlakyKeyring(keyring.backend.KeyringBackend):
    """A real in-memory keyring that fails its first read (a keyring locked for a moment)."""

    priority = 1  # type: ignore[assignment]

    def __init__(self) -> None:
        super().__init__()
        self.passwords: dict[tuple[str, str], str] = {}
        self.failures = 1

    def get_password(self, service: str, username: str) -> str | None:
        if self.failures:
            self.failures -= 1
            raise keyring.errors.KeyringLocked("collection is locked")
        return self.passwords.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.passwords[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        if self.passwords.pop((service, username), None) is None:
            raise keyring.errors.PasswordDeleteError("missing")


def test_after_a_transient_failure_saving_and_forgetting_still_reach_the_keyring() -> None:
    backend = FlakyKeyring()
    backend.passwords[("chatnodes", "anthropic")] = "sk-ant-old-key-0000"
    store = SecretStore(backend=backend)
    assert store.get("openai") is None and store.available is False  # the one failed read
    # Forgetting a key must remove it from the OS keyring, or it comes back at the next start.
    store.delete("anthropic")
    assert ("chatnodes", "anthropic") not in backend.passwords
    # An explicit save tries the keyring again, and a success makes it the store again.
    assert store.set("openai", SECRET) == "keyring"
    assert backend.passwords[("chatnodes", "openai")] == SECRET
    assert store.available is True and store.unavailable_reason is None
    assert store.lookup("openai") == (SECRET, "keyring")
