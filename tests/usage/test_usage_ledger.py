"""The usage ledger: records, one-write appends from two processes, torn and corrupt lines, fast totals."""

from __future__ import annotations

import datetime as _dt
import json
import os
import random
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from desktop.core.chat.cost import Price, cost_of
from desktop.core.chat.types import Usage
from desktop.core.usage import (
    LEDGER_FILE,
    UsageLedger,
    UsageRecord,
    append_record,
    ledger_path,
    month_range,
    normalize_project,
    read_records,
    record_for,
    saved_by_cache,
    totals,
)

PRICE = Price(3.0, 15.0, 0.3, 3.75)
OVERRIDES = {"test-model": PRICE}
ROOT = Path(__file__).resolve().parents[2]


def rec(ts: int = 1_700_000_000_000, usd: float | None = 0.5, **kw: object) -> UsageRecord:
    fields: dict[str, object] = dict(
        ts=ts, project="/p/one", node="n1", node_title="Title", provider="anthropic", model="test-model",
        input=10, output=20, cache_read=0, cache_write=0, reasoning=0, usd=usd, estimated=usd is None,
        saved_usd=None if usd is None else 0.0,
    )
    fields.update(kw)
    return UsageRecord(**fields)  # type: ignore[arg-type]


# --- records ---------------------------------------------------------------------------------------------

def test_record_for_prices_the_response_and_what_the_cache_saved(tmp_path: Path) -> None:
    usage = Usage(1_000, 200, cache_read_tokens=10_000, cache_write_tokens=2_000, reasoning_tokens=50)
    r = record_for(usage, "vendor/Test-Model-2025-01-01", provider="anthropic", project=tmp_path, node="n-1",
                   node_title="Refactor", overrides=OVERRIDES, ts_ms=123)
    assert (r.ts, r.node, r.node_title, r.provider, r.model) == (123, "n-1", "Refactor", "anthropic",
                                                                  "vendor/Test-Model-2025-01-01")
    assert r.project == normalize_project(tmp_path) == str(tmp_path.resolve())
    assert (r.input, r.output, r.cache_read, r.cache_write, r.reasoning) == (1_000, 200, 10_000, 2_000, 50)
    expected = (1_000 * 3 + 200 * 15 + 10_000 * 0.3 + 2_000 * 3.75) / 1e6
    assert r.usd == pytest.approx(expected) == pytest.approx(cost_of(usage, "test-model", OVERRIDES).usd)
    assert r.saved_usd == pytest.approx(10_000 * (3.0 - 0.3) / 1e6)
    assert r.estimated is False


def test_record_for_an_unpriced_model_has_null_money_and_is_estimated(tmp_path: Path) -> None:
    r = record_for(Usage(5, 6, 7), "my-local-llama", provider="ollama", project=tmp_path, node="n")
    assert r.usd is None and r.saved_usd is None and r.estimated is True
    line = json.loads(r.to_line())
    assert line["usd"] is None and line["saved_usd"] is None and line["estimated"] is True


def test_record_for_marks_locally_estimated_tokens_and_cuts_long_titles(tmp_path: Path) -> None:
    r = record_for(Usage(5, 6), "test-model", provider="p", project=tmp_path, node="n", node_title="x" * 1000,
                   overrides=OVERRIDES, tokens_estimated=True)
    assert r.estimated is True and r.usd is not None
    assert len(r.node_title) == 200


def test_saved_by_cache_is_zero_without_a_cache_rate_and_none_unpriced() -> None:
    assert saved_by_cache(Usage(1, 1, 1_000_000), Price(2.0, 4.0)) == 0.0
    assert saved_by_cache(Usage(1, 1, 1_000_000), Price(2.0, 4.0, 0.5)) == pytest.approx(1.5)
    assert saved_by_cache(Usage(1, 1, 1_000_000), None) is None


def test_a_line_has_exactly_the_documented_fields_and_round_trips() -> None:
    r = rec(node_title='a "quoted" \\ back\nslash — 漢字 😀', project="C:\\Users\\ada\\proj")
    line = r.to_line()
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    data = json.loads(line)
    assert list(data) == ["ts", "usd", "saved_usd", "estimated", "project", "provider", "model", "node",
                          "node_title", "input", "output", "cache_read", "cache_write", "reasoning"]
    assert UsageRecord.from_dict(data) == r


def test_ledger_path_is_in_the_config_dir(tmp_path: Path) -> None:
    assert ledger_path(tmp_path) == tmp_path / LEDGER_FILE == tmp_path / "usage.jsonl"


# --- appending and reading -------------------------------------------------------------------------------

def test_append_creates_the_file_and_reads_back_in_order(tmp_path: Path) -> None:
    path = ledger_path(tmp_path / "new" / "dir")
    ledger = UsageLedger(path)
    records = [rec(ts=i, usd=None if i % 3 == 0 else i / 7, node_title=f"t{i} \"q\" ü") for i in range(1, 30)]
    for r in records:
        assert ledger.append(r) is True
    scan = ledger.read()
    assert scan.records == records and scan.corrupt == 0 and scan.torn_tail is False
    assert path.read_bytes() == b"".join(r.to_line() for r in records)
    if os.name == "posix":
        assert path.stat().st_mode & 0o777 == 0o600


def test_a_missing_ledger_reads_as_empty(tmp_path: Path) -> None:
    scan = read_records(tmp_path / "usage.jsonl")
    assert scan.records == [] and scan.corrupt == 0 and not scan.torn_tail
    assert totals(tmp_path / "usage.jsonl").responses == 0


def test_append_into_an_unwritable_place_returns_false_and_raises_nothing(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert UsageLedger(blocker / "usage.jsonl").append(rec()) is False


def test_a_torn_last_line_is_skipped_and_the_next_append_starts_a_fresh_line(tmp_path: Path) -> None:
    path = ledger_path(tmp_path)
    first, second = rec(ts=1, usd=0.25), rec(ts=2, usd=0.5)
    append_record(path, first)
    torn = first.to_line()[:40]
    with open(path, "ab") as fh:
        fh.write(torn)  # a crash in the middle of a write
    scan = read_records(path)
    assert scan.records == [first] and scan.torn_tail is True and scan.corrupt == 0
    assert totals(path).responses == 1 and totals(path).torn_tail is True

    append_record(path, second)
    assert path.read_bytes() == first.to_line() + torn + b"\n" + second.to_line()
    scan = read_records(path)
    assert scan.records == [first, second] and scan.torn_tail is False and scan.corrupt == 1
    t = totals(path)
    assert (t.responses, t.usd, t.corrupt, t.torn_tail) == (2, 0.75, 1, False)


@pytest.mark.parametrize("garbage", [
    b"not json at all",
    b"[1, 2, 3]",
    b'{"ts": "yesterday", "usd": 1}',
    b'{"ts": 5, "usd": -1.0, "model": "m"}',
    b'{"ts": 5, "usd": 1e999, "model": "m"}',
    b'{"ts": 5, "usd": 0.1, "input": true}',
    b'{"ts": 5, "usd": 0.1, "node_title": 7}',
    b'{"ts":5,"usd":0.1,"saved_usd":null,"estimated":false,"project":"/p","provider":"x","model":"m","no',
    b"\xff\xfe\x00 binary",
])
def test_corrupt_middle_lines_are_skipped_and_counted_by_both_readers(tmp_path: Path, garbage: bytes) -> None:
    path = ledger_path(tmp_path)
    good = [rec(ts=1, usd=0.125), rec(ts=2, usd=0.25)]
    path.write_bytes(good[0].to_line() + garbage + b"\n\n" + good[1].to_line())
    scan = read_records(path)
    assert scan.records == good and scan.corrupt == 1
    t = totals(path)
    assert (t.responses, t.usd, t.corrupt) == (2, 0.375, 1)


def test_lines_from_another_writer_in_any_key_order_are_read(tmp_path: Path) -> None:
    path = ledger_path(tmp_path)
    r = rec(ts=7, usd=0.125, project="/p/one")
    other = json.dumps({"model": "test-model", "ts": 7, "usd": 0.125, "project": "/p/one", "node": "n1",
                        "node_title": "Title", "provider": "anthropic", "input": 10, "output": 20,
                        "estimated": False, "saved_usd": 0.0, "extra": {"future": True}}, indent=None)
    path.write_bytes(other.encode() + b"\r\n")
    assert read_records(path).records == [r]
    assert totals(path, project="/p/one").usd == 0.125


def test_reads_filter_by_period_and_totals_by_project(tmp_path: Path) -> None:
    path = ledger_path(tmp_path)
    rows = [
        rec(ts=100, usd=1.0, project="/p/a"),
        rec(ts=200, usd=2.0, project="/p/b", saved_usd=0.5),
        rec(ts=300, usd=None, project="/p/a"),
        rec(ts=400, usd=4.0, project='/p/we"ird\\dir', saved_usd=0.25),
    ]
    for r in rows:
        append_record(path, r)
    assert [r.ts for r in read_records(path, 200, 400).records] == [200, 300]
    t = totals(path, 200, 401)
    assert (t.responses, t.unpriced, t.priced, t.usd, t.saved_usd) == (3, 1, 2, 6.0, 0.75)
    a = totals(path, project="/p/a")
    assert (a.responses, a.unpriced, a.usd) == (2, 1, 1.0)
    assert totals(path, project='/p/we"ird\\dir').usd == 4.0
    assert totals(path, project="/p/a/../b").usd == 2.0  # compared normalised
    assert totals(path, project="/p/c").responses == 0


def test_fast_totals_agree_with_the_full_reader_on_a_random_ledger(tmp_path: Path) -> None:
    rng = random.Random(5)
    path = ledger_path(tmp_path)
    chunks = []
    for i in range(2_000):
        usd = None if rng.random() < 0.2 else rng.random() / 100
        r = rec(ts=rng.randrange(0, 10_000), usd=usd, project=rng.choice(["/a", "/b", "/ü"]),
                saved_usd=None if usd is None else rng.random() / 1000, node_title=rng.choice(["x", 'q"\\']))
        chunks.append(r.to_line())
        if i % 500 == 0:
            chunks.append(b"garbage\n")
    path.write_bytes(b"".join(chunks) + b'{"ts":1,"us')
    for start, end, project in ((None, None, None), (2_000, 7_000, None), (None, 5_000, "/ü")):
        records = [r for r in read_records(path, start, end).records
                   if project is None or r.project == project]
        t = totals(path, start, end, project)
        assert t.responses == len(records)
        assert t.unpriced == sum(r.usd is None for r in records)
        assert t.usd == pytest.approx(sum(r.usd or 0 for r in records))
        assert t.saved_usd == pytest.approx(sum(r.saved_usd or 0 for r in records))
        assert t.corrupt == 4 and t.torn_tail is True


_WRITER = textwrap.dedent("""
    import sys
    from pathlib import Path
    from desktop.core.usage import UsageRecord, append_record
    path, tag, count = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    sys.stdout.write("ready\\n"); sys.stdout.flush()
    sys.stdin.readline()  # start together
    for i in range(count):
        append_record(path, UsageRecord(
            ts=i, project="/p/" + tag * 40, node=tag, node_title=f"{tag} " + "é" * (i % 200), provider=tag,
            model="m", input=i, output=0, cache_read=0, cache_write=0, reasoning=0, usd=i / 1000,
            estimated=False, saved_usd=0.0))
""")


def test_two_processes_appending_at_once_never_interleave_within_a_line(tmp_path: Path) -> None:
    path = ledger_path(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    count = 2_000
    procs = [subprocess.Popen([sys.executable, "-c", _WRITER, str(path), tag, str(count)], env=env,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) for tag in "AB"]
    try:
        for p in procs:
            assert p.stdout is not None and p.stdout.readline() == "ready\n"
        for p in procs:
            assert p.stdin is not None
            p.stdin.write("go\n")
            p.stdin.close()
        for p in procs:
            assert p.wait(timeout=120) == 0
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
            for stream in (p.stdin, p.stdout):
                if stream is not None:
                    stream.close()
    lines = path.read_bytes().split(b"\n")
    assert lines[-1] == b""
    parsed = [json.loads(line) for line in lines[:-1]]  # every line parses on its own
    assert len(parsed) == 2 * count
    for tag in "AB":
        mine = [d for d in parsed if d["node"] == tag]
        assert [d["input"] for d in mine] == list(range(count))  # all there, in each writer's order
        assert all(d["project"] == "/p/" + tag * 40 and d["provider"] == tag for d in mine)
    scan = read_records(path)
    assert len(scan.records) == 2 * count and scan.corrupt == 0 and not scan.torn_tail


@pytest.mark.slow
def test_a_months_totals_from_100k_lines_counts_every_line(tmp_path: Path) -> None:
    """The benchmark's ledger, counted whole (its time is benchmarks/ledger.py's: ≤ 200 ms)."""
    from benchmarks.ledger import build_ledger

    now = _dt.datetime.now()
    path = ledger_path(tmp_path)
    build_ledger(path, 100_000, now)
    start, end = month_range(now)
    t = totals(path, start, end)
    assert t.responses == 100_000 and t.corrupt == 0
    assert t.usd == pytest.approx(sum(r.usd or 0.0 for r in read_records(path).records))
