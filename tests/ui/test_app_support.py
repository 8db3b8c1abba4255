"""Shared helpers of the app-shell tests (imported by test_app*, test_main_window*, test_settings_dialog*,
test_project*): a context factory that always closes what it opens, a window factory, and a file scanner."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from desktop import app
from desktop.core.config import SecretStore
from desktop.testing import FakeProvider, Turn
from desktop.ui.context import AppContext


@pytest.fixture
def fake() -> Iterator[FakeProvider]:
    """A running loopback fake provider (echoes the last user message when nothing is scripted)."""
    with FakeProvider() as provider:
        yield provider


@pytest.fixture
def make_context(
    qloop: asyncio.AbstractEventLoop, qtbot: Any, tmp_path: Path
) -> Iterator[Callable[..., AppContext]]:
    """``make_context(environ=None, secrets=None, demo=False, config_dir=None) -> AppContext``.

    Every context made is closed (runs stopped, HTTP client and demo server closed) at teardown."""
    made: list[AppContext] = []

    def _make(*, environ: dict[str, str] | None = None, secrets: SecretStore | None = None,
              demo: bool = False, config_dir: Path | None = None) -> AppContext:
        ctx = app.make_context(config_dir=config_dir or tmp_path / "config", demo=demo,
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


def write_settings(config_dir: Path, *providers: dict[str, Any], default: str | None = None,
                   model: str | None = None) -> None:
    """Write a settings.json with ``providers`` (dicts in the file's format) through the real store."""
    from desktop.core.config import SettingsStore, settings_from_dict

    raw = {"version": 1, "providers": list(providers), "default_provider": default, "default_model": model}
    SettingsStore(config_dir).save(settings_from_dict(raw))


def send_and_wait(qtbot: Any, node: Any, text: str) -> None:
    """Submit ``text`` in ``node`` and wait until its run finished."""
    with qtbot.waitSignal(node.run_finished, timeout=10_000):
        node.submit(text)


def write_capped_settings(config: Path, fake: FakeProvider, cap_kib: int) -> None:
    """Settings with the fake provider as the default and a history cap of ``cap_kib`` KiB."""
    write_settings(config, fake_provider_entry(fake), default="fake")
    settings = json.loads((config / "settings.json").read_text(encoding="utf-8"))
    settings["history_cap_kib"] = cap_kib
    (config / "settings.json").write_text(json.dumps(settings), encoding="utf-8")


def open_capped_with_three_exchanges(qtbot: Any, open_window: Callable[..., Any], fake: FakeProvider,
                                     project: Path, config: Path) -> tuple[Any, Any]:
    """A window whose node holds 3 exchanges of ~0.7 KB under a 1 KiB history cap; (window, node)."""
    write_capped_settings(config, fake, 1)
    window = open_window(project, config)
    node = window.nodes()[0]
    for i in range(3):
        fake.script(Turn(text=f"answer {i} " + "x" * 700))
        send_and_wait(qtbot, node, f"question {i}")
    return window, node


def fake_provider_entry(fake: FakeProvider, *, pid: str = "fake", needs_key: bool = False) -> dict[str, Any]:
    """A settings.json provider entry for the fake server's OpenAI endpoint."""
    return {"id": pid, "name": "Fake", "api": "openai", "base_url": fake.openai_base_url,
            "needs_key": needs_key, "key_env": None, "models": ["gpt-4o-mini"]}


@pytest.fixture
def open_window(qloop: asyncio.AbstractEventLoop, qtbot: Any) -> Iterator[Callable[..., Any]]:
    """``open_window(project_dir, config_dir, demo=False) -> MainWindow`` via ``create_main_window``,
    shown; every window still open at teardown is closed through its real shutdown path."""
    from desktop.app import create_main_window

    made: list[Any] = []

    def _open(project_dir: Path, config_dir: Path, *, demo: bool = False, show: bool = True) -> Any:
        window = create_main_window(project_dir=project_dir, config_dir=config_dir, demo=demo)
        made.append(window)
        if show:
            window.show()
            qtbot.waitExposed(window)
        return window

    yield _open
    for window in made:
        close_window(qtbot, window)


def close_window(qtbot: Any, window: Any) -> None:
    """Close ``window`` and wait until its asynchronous shutdown finished."""
    if window.is_shut_down():
        return
    with qtbot.waitSignal(window.closed, timeout=10_000):
        window.close()
