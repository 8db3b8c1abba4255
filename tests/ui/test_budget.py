"""Monthly budgets in the window: the session chip's state, Settings → General and the project's budget."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDoubleSpinBox, QFrame, QLabel, QPlainTextEdit, QPushButton
from test_app_support import fake_provider_entry, write_settings

from desktop.core.usage import UsageRecord, append_record
from desktop.testing import FakeProvider, Turn

pytest_plugins = ["test_app_support"]


def _spent(config: Path, project: Path, usd: float) -> None:
    append_record(config / "usage.jsonl", UsageRecord(
        ts=int(time.time() * 1000), project=str(project.resolve()), node="n", node_title="t", provider="p",
        model="m", input=1, output=1, cache_read=0, cache_write=0, reasoning=0, usd=usd, estimated=False,
        saved_usd=0.0))


def _sends(fake: FakeProvider) -> int:
    return sum(1 for r in fake.requests if r.method == "POST")  # chat requests, not model listings


def _budget(config: Path, usd: float) -> None:
    path = config / "settings.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data["budget"] = {"monthly_usd": usd}
    path.write_text(json.dumps(data), encoding="utf-8")


def test_the_session_chip_turns_amber_at_80_percent_and_counts_new_spending(
        qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path) -> None:
    project, config = tmp_path / "p", tmp_path / "c"
    write_settings(config, fake_provider_entry(fake), default="fake", model="gpt-4o-mini")
    _budget(config, 10.0)
    _spent(config, tmp_path / "elsewhere", 7.9)  # another project counts for the app-wide budget
    window = open_window(project, config)
    chip = window.findChild(QLabel, "sessionCostLabel")
    # The month is first counted on a worker thread (it may build the ledger's index): then the budget.
    qtbot.waitUntil(lambda: "$7.90 of the $10.00 app-wide monthly budget" in chip.toolTip(), timeout=10_000)
    assert chip.property("budget") == "ok" and "% of budget" not in chip.text()
    usage = {"input": 1_000_000, "output": 0, "cache_read": 0, "cache_write": 0}  # $0.15
    fake.script(Turn(text="one", usage=usage, model="gpt-4o-mini"))
    with qtbot.waitSignal(window.nodes()[0].run_finished, timeout=10_000):
        window.nodes()[0].submit("q")
    qtbot.waitUntil(lambda: chip.property("budget") == "warn")
    assert chip.text().endswith("· 80% of budget")
    _spent(config, tmp_path / "elsewhere", 5.0)  # another instance spent more
    window.nodes()[0].cost_changed.emit()
    assert chip.property("budget") == "over" and "130% of budget" in chip.text()


def test_the_project_budget_dialog_writes_project_json(qtbot: Any, open_window: Any, tmp_path: Path) -> None:
    project, config = tmp_path / "p", tmp_path / "c"
    window = open_window(project, config)
    _spent(config, project, 4.5)
    dialog = window.money.open_project_budget()
    assert dialog is not None and dialog.objectName() == "projectBudgetDialog"
    assert "$4.50" in dialog.findChild(QLabel, "projectSpentLabel").text()
    dialog.findChild(QDoubleSpinBox, "projectBudgetSpin").setValue(5.0)
    dialog.accept()
    saved = json.loads((project / "project.json").read_text(encoding="utf-8"))
    assert saved["budget"] == {"monthly_usd": 5.0}
    chip = window.findChild(QLabel, "sessionCostLabel")
    qtbot.waitUntil(lambda: chip.property("budget") == "warn", timeout=10_000)  # once the month is counted
    assert "90% of budget" in chip.text()
    assert "monthly budget of this project" in chip.toolTip()
    again = window.money.open_project_budget()
    assert again is not None
    assert again.findChild(QDoubleSpinBox, "projectBudgetSpin").value() == 5.0
    again.findChild(QDoubleSpinBox, "projectBudgetSpin").setValue(0.0)  # "No budget"
    again.accept()
    assert "budget" not in json.loads((project / "project.json").read_text(encoding="utf-8"))
    assert chip.property("budget") == "ok"


def test_a_spent_budget_holds_the_send_until_send_anyway(qtbot: Any, open_window: Any, fake: FakeProvider,
                                                         tmp_path: Path) -> None:
    project, config = tmp_path / "p", tmp_path / "c"
    write_settings(config, fake_provider_entry(fake), default="fake", model="gpt-4o-mini")
    _budget(config, 5.0)
    _spent(config, tmp_path / "elsewhere", 5.0)
    window = open_window(project, config)
    node = window.nodes()[0]
    box = node.findChild(QPlainTextEdit, "chatInput")
    box.setPlainText("an expensive question")
    qtbot.keyClick(box, Qt.Key.Key_Return)
    card = node.findChild(QFrame, "budgetCard")
    assert card.isVisible()
    assert "$5.00 of the $5.00 app-wide monthly budget" in card.findChild(QLabel, "budgetText").text()
    assert box.toPlainText() == "an expensive question"  # nothing lost, nothing sent
    assert _sends(fake) == 0 and node.conversation.messages == []
    fake.script(Turn(text="answered anyway"))
    with qtbot.waitSignal(node.run_finished, timeout=10_000):
        qtbot.mouseClick(card.findChild(QPushButton, "sendAnywayButton"), Qt.MouseButton.LeftButton)
    assert not card.isVisible() and box.toPlainText() == ""
    assert [m.content for m in node.conversation.messages] == ["an expensive question", "answered anyway"]
    box.setPlainText("and another")
    qtbot.keyClick(box, Qt.Key.Key_Return)  # "Send anyway" was for one message only
    assert card.isVisible() and _sends(fake) == 1
    qtbot.mouseClick(card.findChild(QPushButton, "budgetSettingsButton"), Qt.MouseButton.LeftButton)
    dialog = window.settings_dialog
    assert dialog is not None and dialog.tabs.currentWidget() is dialog.general_page
    dialog.budget_spin.setValue(50.0)
    dialog.accept()
    qtbot.keyClick(box, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: _sends(fake) == 2, timeout=10_000)  # under budget again: it goes out
    assert not card.isVisible()


def test_the_held_send_survives_a_restart(qtbot: Any, open_window: Any, fake: FakeProvider,
                                          tmp_path: Path) -> None:
    from test_app_support import close_window

    project, config = tmp_path / "p", tmp_path / "c"
    write_settings(config, fake_provider_entry(fake), default="fake", model="gpt-4o-mini")
    _budget(config, 1.0)
    _spent(config, project, 2.0)
    close_window(qtbot, open_window(project, config))
    window = open_window(project, config)  # the ledger is the source: a restart resets nothing
    node = window.nodes()[0]
    node.submit("still over")
    assert node.findChild(QFrame, "budgetCard").isVisible() and _sends(fake) == 0
    chip = window.findChild(QLabel, "sessionCostLabel")
    qtbot.waitUntil(lambda: chip.property("budget") == "over", timeout=10_000)  # the month counted
