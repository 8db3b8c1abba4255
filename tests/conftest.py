"""Shared by every test folder: no test ever sees the developer's real keys, keyring or config.

* ``memory_keyring`` (autouse): a fresh ``desktop.testing.keyring.MemoryKeyring`` installed with
  ``keyring.set_keyring`` for each test, the previous backend restored afterwards.
* ``_isolated_env`` (autouse): ``CHATNODES_CONFIG_DIR``, ``CHATNODES_LOG_DIR`` and ``CHATNODES_DATA_DIR``
  point at temp folders, and every provider key variable (``CHATNODES_PROVIDER_KEY_*``, ``*_API_KEY``)
  is removed.
* ``anyio_backend``: async tests marked ``@pytest.mark.anyio`` run on asyncio (anyio's pytest plugin,
  a fresh event loop per test), never on trio.
* ``_gc_on_main_thread_once_qt_exists`` (autouse): the app's rule for the rest of the session once a
  ``QApplication`` exists (every later test shares its Qt objects): no automatic garbage collection,
  which starts on whichever thread allocates (a server's stderr reader, a child watcher, the
  loopback provider); due collections run on the main thread between tests; a test during which a
  collection ran on another thread fails. A qasync loop collected on a worker thread crashed a later
  test inside Qt's event processing (docs/ARCHITECTURE.md, "Qt objects die on the GUI thread").
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import keyring
import keyring.core
import pytest

from desktop.testing.gc_watch import SESSION
from desktop.testing.keyring import MemoryKeyring


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


@pytest.fixture
def anyio_backend() -> str:
    """The event loop anyio's pytest plugin runs ``@pytest.mark.anyio`` tests on."""
    return "asyncio"


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
    monkeypatch.setenv("CHATNODES_LOG_DIR", str(tmp_path_factory.mktemp("logs")))  # never the user's log
    monkeypatch.setenv("CHATNODES_DATA_DIR", str(tmp_path_factory.mktemp("data")))  # nor their search index
    return config_dir


@pytest.fixture(autouse=True)
def _gc_on_main_thread_once_qt_exists() -> Iterator[None]:
    """Once a QApplication exists: collect garbage on the main thread only; fail a test that did not."""
    SESSION.begin()
    yield
    threads = SESSION.end()
    if threads:
        pytest.fail(f"garbage was collected on {threads} while Qt objects exist: a Qt object freed there "
                    "crashes the GUI thread later (collect on the main thread only)", pytrace=False)
