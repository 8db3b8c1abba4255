"""Shared helpers of the app-shell tests (imported by test_app*, test_main_window*, test_settings_dialog*,
test_project*): a context factory that always closes what it opens, a window factory, and a file scanner."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from desktop.app import AppContext
from desktop.core.secrets import SecretStore
from desktop.testing import FakeProvider


@pytest.fixture
def fake() -> Iterator[FakeProvider]:
    """A running loopback fake provider (echoes the last user message when nothing is scripted)."""
    with FakeProvider() as provider:
        yield provider


@pytest.fixture
def make_context(qloop: asyncio.AbstractEventLoop, qtbot: Any, tmp_path: Path) -> Iterator[Callable[..., AppContext]]:
    """``make_context(environ=None, secrets=None, demo=False, config_dir=None) -> AppContext``; closed at teardown."""
    made: list[AppContext] = []

    def _make(*, environ: dict[str, str] | None = None, secrets: SecretStore | None = None, demo: bool = False,
              config_dir: Path | None = None) -> AppContext:
        ctx = AppContext(config_dir=config_dir or tmp_path / "config", demo=demo,
                         environ={} if environ is None else environ, secrets=secrets)
        made.append(ctx)
        return ctx

    yield _make
    for ctx in made:
        task = qloop.create_task(ctx.aclose())
        qtbot.waitUntil(task.done, timeout=10_000)


def files_containing(folder: Path, needle: str) -> list[Path]:
    """Every file under ``folder`` whose bytes contain ``needle``."""
    data = needle.encode("utf-8")
    return [p for p in folder.rglob("*") if p.is_file() and data in p.read_bytes()]
