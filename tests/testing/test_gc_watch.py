"""The session's rule once Qt exists: garbage is collected on the main thread only, and a collection
started on another thread is reported (tests/conftest.py fails the test it happened in)."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from desktop.testing.gc_watch import SESSION, MainThreadCollections, qt_exists


@pytest.fixture
def watch() -> Iterator[MainThreadCollections]:
    was_enabled = gc.isenabled()
    collections = MainThreadCollections()
    try:
        yield collections
    finally:
        collections.close()
        if was_enabled:
            gc.enable()


def _collect_on_a_worker() -> None:
    worker = threading.Thread(target=gc.collect, name="worker")
    worker.start()
    worker.join()


def test_a_collection_on_a_worker_thread_is_reported_once_qt_exists(
    qapp: Any, watch: MainThreadCollections
) -> None:
    assert qt_exists()
    gc.enable()
    watch.begin()
    assert not gc.isenabled(), "automatic collection stays on while Qt objects exist"
    _collect_on_a_worker()
    gc.collect()  # the main thread's own collections are the rule
    assert watch.end() == ["worker"]
    SESSION.off_main.clear()  # this test's worker collection is on purpose
    assert watch.end() == [], "each test hears only of its own"


def test_due_collections_run_on_the_main_thread_after_the_test(
    qapp: Any, watch: MainThreadCollections
) -> None:
    watch.begin()
    seen: list[str] = []

    def note(phase: str, _info: dict[str, int]) -> None:
        if phase == "start":
            seen.append(threading.current_thread().name)

    gc.callbacks.append(note)
    try:
        keep = [[] for _ in range(gc.get_threshold()[0] + 10)]  # past generation 0's threshold
        assert watch.end() == []
        del keep
    finally:
        gc.callbacks.remove(note)
    assert seen == [threading.main_thread().name]
    assert not gc.isenabled()
