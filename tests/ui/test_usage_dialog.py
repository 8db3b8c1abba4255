"""The usage dashboard against a known ledger: the amounts it shows, the tables, the chart, the CSV export."""

from __future__ import annotations

import csv
import dataclasses
import datetime as _dt
import io
import threading
from pathlib import Path
from typing import Any, TypeVar

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QWidget,
)

from desktop.core.usage import UsageRecord, append_record, ledger_path
from desktop.ui.money.usage_chart import OTHER_LABEL, UsageChart, axis_labels, axis_ticks
from desktop.ui.money.usage_dialog import UsageDialog, format_usd

NOW = _dt.datetime(2026, 3, 18, 15, 0)  # a Wednesday


def ms(year: int, month: int, day: int, hour: int) -> int:
    return int(_dt.datetime(year, month, day, hour).timestamp() * 1000)


def rec(when: tuple[int, int, int, int], model: str, provider: str, project: str, node: str, title: str,
        usd: float | None, saved: float = 0.0) -> UsageRecord:
    return UsageRecord(ts=ms(*when), project=project, node=node, node_title=title, provider=provider,
                       model=model, input=1000, output=100, cache_read=500, cache_write=0, reasoning=0,
                       usd=usd, estimated=usd is None, saved_usd=None if usd is None else saved)


KNOWN = [
    rec((2026, 1, 5, 12), "gpt-4o", "openai", "/p/beta", "n2", "Docs", 100.0),  # outside everything
    rec((2026, 2, 20, 11), "claude-haiku-4-5", "anthropic", "/p/alpha", "n4", "Old", 3.0),
    rec((2026, 3, 2, 9), "gpt-4o", "openai", "/p/beta", "n2", "Docs", 2.0),
    rec((2026, 3, 10, 16), "llama3:8b", "ollama", "/p/beta", "n3", "Local", None),
    rec((2026, 3, 16, 8), "claude-sonnet-4-5", "anthropic", "/p/alpha", "n1", "Parser", 0.25, 0.05),
    rec((2026, 3, 17, 9), "gpt-4o", "openai", "/p/beta", "n2", "Docs", 1.25),
    rec((2026, 3, 18, 10), "claude-sonnet-4-5", "anthropic", "/p/alpha", "n1", "Parser v2", 0.5, 0.1),
]


@pytest.fixture
def ledger(tmp_path: Path) -> Path:
    path = ledger_path(tmp_path / "config")
    for r in KNOWN:
        append_record(path, r)
    return path


def wait_loaded(qtbot: Any, dlg: UsageDialog) -> None:
    """The ledger is read on a worker thread: wait until the figures are shown."""
    qtbot.waitUntil(lambda: dlg.summary is not None and not dlg.is_loading(), timeout=10_000)


@pytest.fixture
def dialog(qtbot: Any, ledger: Path) -> UsageDialog:
    dlg = UsageDialog(ledger, clock=lambda: NOW)
    qtbot.addWidget(dlg)
    dlg.resize(900, 720)
    dlg.show()
    qtbot.waitExposed(dlg)
    wait_loaded(qtbot, dlg)
    return dlg


_W = TypeVar("_W", bound=QWidget)


def child(dlg: UsageDialog, cls: type[_W], name: str) -> _W:
    widget = dlg.findChild(cls, name)
    assert isinstance(widget, cls), name
    return widget


def label(dlg: UsageDialog, name: str) -> str:
    return child(dlg, QLabel, name).text()


def cell(table: QTableWidget, row: int, column: int) -> QTableWidgetItem:
    item = table.item(row, column)
    assert item is not None, (row, column)
    return item


def cells(table: QTableWidget) -> list[list[str]]:
    return [[cell(table, r, c).text() for c in range(table.columnCount())] for r in range(table.rowCount())]


def test_amount_format_uses_four_decimals_under_a_dollar() -> None:
    assert [format_usd(x) for x in (0.0, 0.0125, 0.99994, 1.0, 1234.5)] == [
        "$0.0000", "$0.0125", "$0.9999", "$1.00", "$1,234.50"]


def test_the_dialog_shows_the_totals_of_the_known_ledger(dialog: UsageDialog) -> None:
    assert dialog.objectName() == "usageDialog"
    assert label(dialog, "monthTotal") == "≥ $4.00"  # one unpriced response this month
    assert label(dialog, "monthDetail") == "5 responses, 1 unpriced"
    assert label(dialog, "weekTotal") == "$2.00"
    assert label(dialog, "weekDetail") == "3 responses"
    assert label(dialog, "todayTotal") == "$0.5000"
    assert label(dialog, "todayDetail") == "1 response"
    assert label(dialog, "unpricedLabel") == (
        "1 response without a price in the last 30 days (not in the amounts)")
    assert label(dialog, "savingsLabel") == "Prompt caching saved $0.1500 in the last 30 days"
    assert not child(dialog, QLabel, "usageStatus").isVisible()


def test_the_tables_list_top_nodes_and_models(dialog: UsageDialog) -> None:
    nodes = child(dialog, QTableWidget, "topNodesTable")
    models = child(dialog, QTableWidget, "topModelsTable")
    assert cells(nodes) == [
        ["Docs", "beta", "2", "$3.25"],
        ["Old", "alpha", "1", "$3.00"],
        ["Parser v2", "alpha", "2", "$0.7500"],
        ["Local", "beta", "1", "n/a"],
    ]
    assert cells(models) == [
        ["gpt-4o", "openai", "2", "$3.25"],
        ["claude-haiku-4-5", "anthropic", "1", "$3.00"],
        ["claude-sonnet-4-5", "anthropic", "2", "$0.7500"],
        ["llama3:8b", "ollama", "1", "n/a"],
    ]
    assert cell(nodes, 0, 0).toolTip() == "Docs\n3.2k tokens"


def test_the_chart_stacks_by_model_and_the_switch_restacks(dialog: UsageDialog, qtbot: Any) -> None:
    chart = child(dialog, UsageChart, "usageChart")
    assert chart.series() == ["gpt-4o", "claude-haiku-4-5", "claude-sonnet-4-5"]
    totals = chart.day_totals()
    assert len(totals) == 30 and totals[-1] == 0.5 and totals[-2] == 1.25
    assert sum(totals) == pytest.approx(7.0)
    assert chart.stacks()[-1] == [0.0, 0.0, 0.5]
    assert chart.tooltip_for(29) == "Wed 2026-03-18: $0.5000\nclaude-sonnet-4-5: $0.5000"

    combo = child(dialog, QComboBox, "groupByCombo")
    combo.setCurrentIndex(combo.findData("provider"))
    assert dialog.group_by() == "provider" and chart.series() == ["anthropic", "openai"]
    combo.setCurrentIndex(combo.findData("project"))
    assert chart.series() == ["/p/alpha", "/p/beta"]
    assert chart.stacks()[-2] == [0.0, 1.25]
    dialog.grab()  # paints without error
    assert chart.day_at(chart._bars[-1].center().x()) == 29  # noqa: SLF001 - laid out by the paint


def test_the_chart_folds_small_groups_into_other(qtbot: Any, tmp_path: Path) -> None:
    path = ledger_path(tmp_path)
    for i in range(12):
        append_record(path, rec((2026, 3, 18, 9), f"model-{i:02d}", "p", "/p", f"n{i}", "t", float(i + 1)))
    dlg = UsageDialog(path, clock=lambda: NOW)
    qtbot.addWidget(dlg)
    wait_loaded(qtbot, dlg)
    chart = dlg.chart
    assert len(chart.series()) == 8 and chart.series()[-1] == OTHER_LABEL
    assert chart.series()[0] == "model-11"
    assert chart.stacks()[-1][-1] == pytest.approx(sum(range(1, 6)))  # the five smallest
    assert chart.day_totals()[-1] == pytest.approx(sum(range(1, 13)))


def test_axis_ticks_are_round_money() -> None:
    assert axis_labels(axis_ticks(0.92)) == ["$0", "$0.25", "$0.50", "$0.75", "$1.00"]
    assert axis_labels(axis_ticks(250)) == ["$0", "$100", "$200", "$300"]
    assert axis_labels(axis_ticks(0.05)) == ["$0", "$0.02", "$0.04", "$0.06"]
    assert axis_labels(axis_ticks(0.0)) == ["$0", "$0.25", "$0.50", "$0.75", "$1.00"]


def test_export_csv_writes_the_ledger_through_the_file_dialog(dialog: UsageDialog, qtbot: Any,
                                                              monkeypatch: pytest.MonkeyPatch,
                                                              tmp_path: Path) -> None:
    dest = tmp_path / "export.csv"
    asked: list[str] = []

    def fake_save(parent: Any, caption: str, suggested: str, filters: str) -> tuple[str, str]:
        asked.append(suggested)
        return str(dest), filters

    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(fake_save))
    with qtbot.waitSignal(dialog.exported, timeout=10_000):
        qtbot.mouseClick(child(dialog, QPushButton, "exportCsvButton"), Qt.MouseButton.LeftButton)
    assert asked and asked[0].endswith("chatnodes-usage-2026-03-18.csv")
    rows = list(csv.DictReader(io.StringIO(dest.read_text(encoding="utf-8"))))
    assert len(rows) == len(KNOWN)
    assert [r["model"] for r in rows] == [r.model for r in KNOWN]
    assert (rows[-1]["usd"], rows[-1]["node_title"], rows[-1]["project"]) == ("0.5", "Parser v2", "/p/alpha")
    assert rows[3]["usd"] == "" and rows[3]["estimated"] == "true"
    status = child(dialog, QLabel, "usageStatus")
    assert status.isVisible() and status.text() == f"Exported 7 rows to {dest}"


def test_a_failed_export_is_reported_inline(dialog: UsageDialog, qtbot: Any, monkeypatch: pytest.MonkeyPatch,
                                            tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    monkeypatch.setattr(QFileDialog, "getSaveFileName",
                        staticmethod(lambda *a: (str(blocker / "sub" / "out.csv"), "")))
    with qtbot.waitSignal(dialog.exported, timeout=10_000):
        qtbot.mouseClick(dialog.export_button, Qt.MouseButton.LeftButton)
    assert dialog.status_label.text().startswith(f"Could not export to {blocker / 'sub' / 'out.csv'}")


def test_cancelling_the_export_writes_nothing(dialog: UsageDialog, qtbot: Any,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(lambda *a: ("", "")))
    qtbot.mouseClick(dialog.export_button, Qt.MouseButton.LeftButton)
    assert dialog.status_label.text() == ""


def test_refresh_picks_up_new_lines_and_damaged_lines_are_reported(dialog: UsageDialog, ledger: Path,
                                                                   qtbot: Any) -> None:
    with open(ledger, "ab") as fh:
        fh.write(b"garbage\n")
    append_record(ledger, rec((2026, 3, 18, 14), "gpt-4o", "openai", "/p/beta", "n2", "Docs", 0.5))
    with open(ledger, "ab") as fh:
        fh.write(b'{"ts":1')  # torn
    qtbot.mouseClick(child(dialog, QPushButton, "refreshButton"), Qt.MouseButton.LeftButton)
    wait_loaded(qtbot, dialog)
    assert label(dialog, "todayTotal") == "$1.00"
    status = child(dialog, QLabel, "usageStatus")
    assert status.isVisible()
    assert status.text() == (f"1 damaged line in {ledger} skipped; "
                             "the last line of the ledger is unfinished and was skipped")


def test_an_empty_ledger_shows_zeros(qtbot: Any, tmp_path: Path) -> None:
    dlg = UsageDialog(tmp_path / "missing" / "usage.jsonl", clock=lambda: NOW)
    qtbot.addWidget(dlg)
    wait_loaded(qtbot, dlg)
    assert label(dlg, "monthTotal") == "$0.0000" and label(dlg, "todayDetail") == "0 responses"
    assert label(dlg, "unpricedLabel") == "Every response of the last 30 days had a price"
    assert child(dlg, QTableWidget, "topNodesTable").rowCount() == 0
    assert dlg.chart.series() == [] and dlg.chart.day_totals() == [0.0] * 30
    dlg.grab()


def test_the_switch_restacks_what_was_read_and_refresh_reads_again(dialog: UsageDialog, ledger: Path,
                                                                    qtbot: Any) -> None:
    append_record(ledger, rec((2026, 3, 18, 14), "gpt-4o", "openai", "/p/beta", "n2", "Docs", 0.25))
    combo = child(dialog, QComboBox, "groupByCombo")
    combo.setCurrentIndex(combo.findData("provider"))
    assert label(dialog, "todayTotal") == "$0.5000" and dialog.chart.day_totals()[-1] == 0.5
    dialog.refresh()
    wait_loaded(qtbot, dialog)
    assert label(dialog, "todayTotal") == "$0.7500" and dialog.chart.series() == ["anthropic", "openai"]
    assert dialog.summary is not None and dialog.summary.group_by == "provider"


def test_the_ledger_is_read_off_the_gui_thread_with_a_loading_state(qtbot: Any, ledger: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from desktop.core.usage import UsageLedger

    readers: list[int] = []
    read = UsageLedger.read

    def spy(self: UsageLedger, *args: Any) -> Any:
        readers.append(threading.get_ident())
        return read(self, *args)

    monkeypatch.setattr(UsageLedger, "read", spy)
    dlg = UsageDialog(ledger, clock=lambda: NOW)
    qtbot.addWidget(dlg)
    assert dlg.is_loading() and label(dlg, "monthTotal") == "…"  # nothing read on the GUI thread yet
    assert label(dlg, "usageStatus") == "Loading the usage ledger…"
    assert not dlg.refresh_button.isEnabled() and not dlg.export_button.isEnabled()
    with qtbot.waitSignal(dlg.loaded, timeout=10_000):
        pass
    assert readers and threading.get_ident() not in readers
    assert label(dlg, "monthTotal") == "≥ $4.00" and dlg.refresh_button.isEnabled()
    assert label(dlg, "demoNote") == "Offline demo answers are not recorded here (the demo costs nothing)."


def test_the_export_says_what_it_could_not_date_and_what_it_skipped(dialog: UsageDialog, ledger: Path,
                                                                   qtbot: Any, tmp_path: Path) -> None:
    with open(ledger, "ab") as fh:
        fh.write(b"garbage\n")
    far = rec((2026, 3, 18, 14), "gpt-4o", "openai", "/p/beta", "n2", "Docs", 0.5)
    append_record(ledger, dataclasses.replace(far, ts=9_999_999_999_999_999))  # year > 9999: no date
    dest = tmp_path / "out.csv"
    with qtbot.waitSignal(dialog.exported, timeout=10_000):
        dialog.export_to(dest)
    expected = f"Exported 8 rows to {dest}, 1 without a date, 1 damaged line skipped"
    assert dialog.status_label.text() == expected
