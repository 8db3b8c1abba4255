"""The block index beside the ledger (issue 24, item 8): a month or a dashboard window reads only the blocks
that can hold it, and the index is never believed over the ledger."""

from __future__ import annotations

import datetime as _dt
import json
import os
import random
from pathlib import Path

import pytest

from desktop.core.usage import (
    MonthlyTally,
    UsageLedger,
    UsageRecord,
    append_record,
    ledger_path,
    load_summary,
    month_range,
    read_records,
    summarize,
    summary_window,
    totals,
)
from desktop.core.usage._index import INDEX_SUFFIX, LedgerIndex, _check, index_path
from desktop.core.usage._lines import scan_records, split_tail, sum_lines

NOW = _dt.datetime(2026, 5, 20, 12, 0)
DAY = 86_400_000
PROJECTS = ["/p/one", "/p/two", '/p/wé"ird']


def history(n: int, days: int, *, seed: int = 3, garbage_every: int = 0, shuffle: bool = False) -> bytes:
    """``n`` lines spread over the ``days`` days before NOW (in time order unless ``shuffle``)."""
    rng = random.Random(seed)
    end = month_range(NOW)[0] + 19 * DAY + 12 * 3_600_000
    start = end - days * DAY
    lines = []
    for i in range(n):
        usd = None if i % 7 == 0 else round(rng.random() / 10, 6)
        lines.append(UsageRecord(
            ts=start + (end - start) * i // n, project=PROJECTS[i % 3], node=f"n{i % 50}",
            node_title=rng.choice(['Plan "v2"', "Résumé", "调试"]), provider=rng.choice(["a", "o"]),
            model=rng.choice(["m1", "m2", "m3"]), input=rng.randrange(10_000), output=rng.randrange(500),
            cache_read=rng.randrange(3) * 1000, cache_write=0, reasoning=0, usd=usd, estimated=usd is None,
            saved_usd=None if usd is None else 0.001,
        ).to_line())
        if garbage_every and i % garbage_every == 0:
            lines.append(b'{"ts":1,"usd":1e999}\n')
    if shuffle:
        rng.shuffle(lines)
    return b"".join(lines)


def plain_totals(path: Path, start: int | None, end: int | None, project: str | None = None) -> tuple:
    body, _ = split_tail(path.read_bytes())
    want = None if project is None else json.dumps(project, ensure_ascii=False)[1:-1].encode()
    t = sum_lines(body, start, end, want)
    return t.responses, t.unpriced, round(t.usd, 6), round(t.saved_usd, 6), t.corrupt


def index_totals(index: LedgerIndex, start: int | None, end: int | None, project: str | None = None) -> tuple:
    want = None if project is None else json.dumps(project, ensure_ascii=False)[1:-1].encode()
    t = index.totals(start, end, want)[0]
    return t.responses, t.unpriced, round(t.usd, 6), round(t.saved_usd, 6), t.corrupt


def plain_records(path: Path, start: int | None, end: int | None) -> tuple[list[UsageRecord], int]:
    scan = scan_records(path.read_bytes(), start, end)
    return scan.records, scan.stats.corrupt


def same_as_plain(index: LedgerIndex, path: Path) -> None:
    for start, end in [(None, None), month_range(NOW), month_range(NOW - _dt.timedelta(days=70)),
                       summary_window(NOW)]:
        for project in (None, *PROJECTS):
            assert index_totals(index, start, end, project) == plain_totals(path, start, end, project)
        records, corrupt, torn = index.read(start, end)
        assert (records, corrupt) == plain_records(path, start, end) and torn is False


def test_a_month_reads_only_the_blocks_that_can_hold_it(tmp_path: Path) -> None:
    path = ledger_path(tmp_path)
    path.write_bytes(history(6_000, 720, garbage_every=500))
    size = path.stat().st_size
    built = LedgerIndex(path, block_bytes=16_384)
    same_as_plain(built, path)  # builds the index (reads everything once), then answers from it
    assert len(built.blocks) > 50 and index_path(path).exists()
    assert oct(index_path(path).stat().st_mode & 0o777) == "0o600"

    index = LedgerIndex(path, block_bytes=16_384)  # a new window: the index comes from the file
    t, offset = index.totals(*month_range(NOW), None)
    assert offset == size and index.bytes_read < size / 10
    assert (t.responses, t.corrupt) == plain_totals(path, *month_range(NOW))[::4]
    before = index.bytes_read
    records, corrupt, _ = index.read(*summary_window(NOW))
    assert index.bytes_read - before < size / 5
    assert (records, corrupt) == plain_records(path, *summary_window(NOW))


def test_the_index_follows_appends_and_is_reused_from_disk(tmp_path: Path) -> None:
    path = ledger_path(tmp_path)
    path.write_bytes(history(2_000, 300, seed=1))
    index = LedgerIndex(path, block_bytes=8_192)
    same_as_plain(index, path)
    count = len(index.blocks)
    with open(path, "ab") as fh:
        fh.write(history(500, 30, seed=2))
        fh.write(b'{"ts":5,"us')  # a torn line at the end is never part of a block
    records, corrupt, torn = index.read()
    assert torn is True and len(records) == 2_500 and corrupt == 0
    assert len(index.blocks) > count and index.blocks[-1].end <= path.stat().st_size - 11
    fresh = LedgerIndex(path, block_bytes=8_192)
    assert fresh.read() == (records, corrupt, torn)
    assert [b.end for b in fresh.blocks] == [b.end for b in index.blocks]


@pytest.mark.parametrize("change", ["shrink", "replace_longer", "edit_a_tail", "prepend"])
def test_a_changed_ledger_throws_the_index_away(tmp_path: Path, change: str) -> None:
    path = ledger_path(tmp_path)
    path.write_bytes(history(2_000, 300, seed=4))
    index = LedgerIndex(path, block_bytes=8_192)
    index.read()
    data = path.read_bytes()
    if change == "shrink":
        path.write_bytes(data[: len(data) // 2].rpartition(b"\n")[0] + b"\n")
    elif change == "replace_longer":
        path.write_bytes(history(2_500, 300, seed=5))
    elif change == "edit_a_tail":
        end = index.blocks[3].end
        line_start = data.rfind(b"\n", 0, end - 1) + 1
        path.write_bytes(data[:line_start] + b"x" * (end - 1 - line_start) + data[end - 1:])
    else:
        path.write_bytes(history(1, 1, seed=6) + data)
    for reader in (index, LedgerIndex(path, block_bytes=8_192)):
        same_as_plain(reader, path)


@pytest.mark.parametrize("damage", ["garbage", "empty_object", "other_format", "one_digit", "huge_numbers",
                                    "not_contiguous", "forged_but_consistent"])
def test_a_damaged_index_is_rebuilt_not_believed(tmp_path: Path, damage: str) -> None:
    path = ledger_path(tmp_path)
    path.write_bytes(history(3_000, 300, seed=7, garbage_every=100))
    LedgerIndex(path, block_bytes=8_192).read()
    file = index_path(path)
    pristine = json.loads(file.read_bytes())
    doc = json.loads(file.read_bytes())

    if damage == "garbage":
        file.write_bytes(b"\x00\xff{" * 100)
    elif damage == "empty_object":
        file.write_text("{}")
    elif damage == "other_format":
        doc["format"] = 99
        file.write_text(json.dumps(doc))
    elif damage == "one_digit":  # a block claims other ts: the index's own checksum no longer matches
        doc["blocks"][5][4] += 1
        file.write_text(json.dumps(doc))
    elif damage == "huge_numbers":
        doc["blocks"][2][1] = 10**30
        doc["check"] = _check(doc["blocks"])
        file.write_text(json.dumps(doc))
    elif damage == "not_contiguous":
        doc["blocks"][3][0] += 1
        doc["check"] = _check(doc["blocks"])
        file.write_text(json.dumps(doc))
    else:  # a well-formed index that lies about a block the query must read: the parse catches it
        for block in doc["blocks"]:
            block[3] += 1
        doc["check"] = _check(doc["blocks"])
        file.write_text(json.dumps(doc))
    index = LedgerIndex(path, block_bytes=8_192)
    # This month: only the last blocks are parsed, block 5 is not.
    assert index_totals(index, *month_range(NOW)) == plain_totals(path, *month_range(NOW))
    assert json.loads(file.read_bytes()) == pristine  # rebuilt from the ledger
    same_as_plain(index, path)


def test_lines_out_of_time_order_are_all_found(tmp_path: Path) -> None:
    path = ledger_path(tmp_path)
    path.write_bytes(history(3_000, 400, seed=8, shuffle=True))
    index = LedgerIndex(path, block_bytes=4_096)
    same_as_plain(index, path)
    assert len(index.blocks) > 20


def test_the_public_readers_and_the_dashboard_agree_with_a_full_read(tmp_path: Path) -> None:
    path = ledger_path(tmp_path)
    path.write_bytes(history(12_000, 3 * 365, seed=9, garbage_every=1_000))  # ~3.5 MB: several blocks
    ledger = UsageLedger(path)
    everything = scan_records(path.read_bytes())
    for group_by in ("model", "provider", "project"):
        expected = summarize(everything.records, NOW, group_by=group_by, corrupt=everything.stats.corrupt)
        got = load_summary(ledger, NOW, group_by=group_by)
        assert got.daily == expected.daily and got.top_nodes == expected.top_nodes
        assert got.top_models == expected.top_models and got.corrupt == expected.corrupt
        for period, want in expected.totals.items():
            have = got.totals[period]
            assert (have.responses, have.unpriced) == (want.responses, want.unpriced)
            assert have.corrupt == want.corrupt
            assert have.usd == pytest.approx(want.usd) and have.saved_usd == pytest.approx(want.saved_usd)
    assert path.with_name(path.name + INDEX_SUFFIX).exists()
    month = totals(path, *month_range(NOW))
    assert (month.responses, month.corrupt) == plain_totals(path, *month_range(NOW))[::4]
    assert read_records(path).records == everything.records
    tally = MonthlyTally(path, clock=lambda: NOW)
    for project in (None, *PROJECTS):
        assert tally.totals(project).usd == pytest.approx(totals(path, *month_range(NOW), project).usd)


def test_the_tally_notices_a_replaced_ledger_even_when_it_is_longer(tmp_path: Path) -> None:
    path = ledger_path(tmp_path)
    start = month_range(NOW)[0]
    r = UsageRecord(start + 1, "/p/one", "n", "t", "a", "m", 1, 1, 0, 0, 0, 1.0, False, 0.0)
    append_record(path, r)
    tally = MonthlyTally(path, clock=lambda: NOW)
    assert tally.totals().usd == 1.0 and tally.totals("/p/one").usd == 1.0
    replacement = [UsageRecord(start + 2, "/p/two", "n", "t", "a", "m", 1, 1, 0, 0, 0, 0.25, False, 0.0)] * 3
    tmp = path.with_name("new.jsonl")
    tmp.write_bytes(b"".join(x.to_line() for x in replacement))
    os.replace(tmp, path)  # e.g. restored from a backup
    assert tally.totals().usd == 0.75 and tally.totals("/p/one").usd == 0.0
    assert tally.totals("/p/two").usd == 0.75


def test_a_bad_index_of_a_ledger_shorter_than_a_block_is_replaced_once(tmp_path: Path) -> None:
    path = ledger_path(tmp_path)
    path.write_bytes(history(50, 10))
    file = index_path(path)
    file.write_text("not json")
    index = LedgerIndex(path)
    assert index_totals(index, None, None) == plain_totals(path, None, None)
    empty = {"format": 1, "ledger": path.name, "check": _check([]), "blocks": []}
    assert json.loads(file.read_text()) == empty
    before = file.stat().st_mtime_ns
    index.read()
    LedgerIndex(path).read()
    assert file.stat().st_mtime_ns == before  # a good index is not written again
