"""The usage ledger's UI wiring left from issue 24 (items 7 and 8): a failed ledger write says so in the
status bar and is tried again (with the next response, and on quit); this month is first counted off
the GUI thread."""

from __future__ import annotations

import json
import shutil
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QLabel
from test_app_support import close_window, fake_provider_entry, write_settings

from desktop.testing import FakeProvider, Turn

pytest_plugins = ["test_app_support"]  # fixtures: fake, make_context, open_window

USAGE = {"input": 1000, "output": 100, "cache_read": 0, "cache_write": 0}


def _send(qtbot: Any, node: Any, text: str) -> None:
    with qtbot.waitSignal(node.run_finished, timeout=10_000):
        node.submit(text)


def _lines(config: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (config / "usage.jsonl").read_text(encoding="utf-8").splitlines()]


def test_an_unsaved_response_is_reported_and_saved_with_the_next(
    qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path
) -> None:
    project, config = tmp_path / "p", tmp_path / "c"
    write_settings(config, fake_provider_entry(fake), default="fake", model="gpt-4o-mini")
    window = open_window(project, config)
    (config / "usage.jsonl").mkdir()  # the ledger cannot be written (as on a full disk)
    node = window.nodes()[0]
    fake.script(Turn(text="one", usage=USAGE, model="gpt-4o-mini"), Turn(text="two", usage=USAGE,
                                                                        model="gpt-4o-mini"))
    _send(qtbot, node, "first")
    message = window.statusBar().currentMessage()
    assert message.startswith(f"Usage not saved to {config / 'usage.jsonl'}: Is a directory")
    assert "(1 response waiting; tried again with the next)" in message
    (config / "usage.jsonl").rmdir()  # space again
    _send(qtbot, node, "second")
    assert len(_lines(config)) == 2  # the kept record first, then the new one


def test_unsaved_responses_are_tried_again_on_quit(
    qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path
) -> None:
    project, config = tmp_path / "p", tmp_path / "c"
    write_settings(config, fake_provider_entry(fake), default="fake", model="gpt-4o-mini")
    window = open_window(project, config)
    blocker = config / "usage.jsonl"
    blocker.mkdir()
    fake.script(Turn(text="one", usage=USAGE, model="gpt-4o-mini"))
    _send(qtbot, window.nodes()[0], "first")
    assert "Usage not saved" in window.statusBar().currentMessage()
    shutil.rmtree(blocker)
    close_window(qtbot, window)  # quitting tries once more
    assert len(_lines(config)) == 1


def test_the_month_is_first_counted_off_the_gui_thread(
    qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import desktop.core.usage as usage

    counted_on: list[int] = []
    totals = usage.totals

    def spy(*args: Any, **kwargs: Any) -> Any:
        counted_on.append(threading.get_ident())
        return totals(*args, **kwargs)

    monkeypatch.setattr(usage, "totals", spy)
    project, config = tmp_path / "p", tmp_path / "c"
    write_settings(config, fake_provider_entry(fake), default="fake", model="gpt-4o-mini")
    settings = json.loads((config / "settings.json").read_text(encoding="utf-8"))
    settings["budget"] = {"monthly_usd": 1.0}
    (config / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
    usage.append_record(usage.ledger_path(config), usage.UsageRecord(
        ts=int(time.time() * 1000), project="/elsewhere", node="n", node_title="T", provider="fake",
        model="gpt-4o-mini", input=1, output=1, cache_read=0, cache_write=0, reasoning=0, usd=0.25,
        estimated=False, saved_usd=0.0))
    window = open_window(project, config)
    chip = window.findChild(QLabel, "sessionCostLabel")
    qtbot.waitUntil(lambda: "$0.25 of the $1.00 app-wide monthly budget" in chip.toolTip(), timeout=10_000)
    assert counted_on and threading.get_ident() not in counted_on  # (and it wrote the index, if any)
