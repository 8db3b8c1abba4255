"""MemoryKeyring: a real keyring backend (the tests' process keyring) that keeps passwords in a dict."""

from __future__ import annotations

import keyring
import keyring.backend
import keyring.errors
import pytest

from desktop.core.config import SecretStore
from desktop.testing.keyring import MemoryKeyring


def test_it_is_the_process_keyring_of_every_test(memory_keyring: MemoryKeyring) -> None:
    assert isinstance(memory_keyring, keyring.backend.KeyringBackend)
    assert keyring.get_keyring() is memory_keyring
    keyring.set_password("svc", "user", "pw")
    assert memory_keyring.passwords == {("svc", "user"): "pw"}


def test_get_set_replace_and_delete() -> None:
    backend = MemoryKeyring()
    assert backend.get_password("svc", "user") is None
    backend.set_password("svc", "user", "one")
    backend.set_password("svc", "user", "two")
    assert backend.get_password("svc", "user") == "two"
    assert backend.get_password("other", "user") is None
    backend.delete_password("svc", "user")
    assert backend.get_password("svc", "user") is None


def test_deleting_a_missing_entry_raises_like_a_real_backend() -> None:
    with pytest.raises(keyring.errors.PasswordDeleteError):
        MemoryKeyring().delete_password("svc", "nobody")


def test_initial_entries_are_copied() -> None:
    seed = {("chatnodes", "anthropic"): "sk-ant-made-up-7f3a"}
    backend = MemoryKeyring(seed)
    backend.set_password("chatnodes", "anthropic", "changed")
    assert seed == {("chatnodes", "anthropic"): "sk-ant-made-up-7f3a"}


def test_repr_never_shows_a_password() -> None:
    backend = MemoryKeyring({("chatnodes", "anthropic"): "sk-ant-made-up-7f3a"})
    assert "7f3a" not in repr(backend) and "entries=1" in repr(backend)


def test_a_secret_store_reads_a_seeded_key_through_it() -> None:
    store = SecretStore(backend=MemoryKeyring({("chatnodes", "anthropic"): "sk-ant-made-up-7f3a"}))
    assert store.get("anthropic") == "sk-ant-made-up-7f3a"
