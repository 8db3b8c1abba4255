"""Hostile ledger lines: one validity rule for every reader (issue 24, item 3), and appends that write a
whole line or nothing on a full disk (item 7)."""

from __future__ import annotations

import datetime as _dt
import json
import math
import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from desktop.core.usage import (
    MonthlyTally,
    UsageLedger,
    UsageRecord,
    app_budget_status,
    append_record,
    ledger_path,
    load_summary,
    month_range,
    read_records,
    record_for,
    tightest_budget,
    totals,
)

ROOT = Path(__file__).resolve().parents[2]
NOW = _dt.datetime(2026, 5, 20, 12, 0)
IN_MONTH = month_range(NOW)[0] + 3_600_000


def rec(ts: int = IN_MONTH, usd: float | None = 0.25, **kw: object) -> UsageRecord:
    fields: dict[str, object] = dict(
        ts=ts, project="/p/one", node="n1", node_title="Title", provider="anthropic", model="m",
        input=10, output=20, cache_read=0, cache_write=0, reasoning=0, usd=usd, estimated=usd is None,
        saved_usd=None if usd is None else 0.0,
    )
    fields.update(kw)
    return UsageRecord(**fields)  # type: ignore[arg-type]


def raw_line(record: UsageRecord | None = None, **raw: str) -> bytes:
    """``record``'s line in the canonical key order, with some values replaced by raw JSON text."""
    items = (record or rec()).to_dict()
    parts = [f'"{k}":{raw[k] if k in raw else json.dumps(v, ensure_ascii=False)}' for k, v in items.items()]
    return ("{" + ",".join(parts) + "}").encode("utf-8")


def write(path: Path, lines: list[bytes], tail: bytes = b"") -> None:
    path.write_bytes(b"".join(line + b"\n" for line in lines) + tail)


# --- item 3: 1e999 and friends ---------------------------------------------------------------------------

def test_an_infinite_cost_is_a_corrupt_line_that_reaches_no_budget_and_no_dashboard(tmp_path: Path) -> None:
    path = ledger_path(tmp_path)
    write(path, [rec(usd=0.5).to_line()[:-1], raw_line(usd="1e999"), rec(usd=0.25).to_line()[:-1],
                 raw_line(saved_usd="1E400")])
    t = totals(path, *month_range(NOW))
    assert (t.responses, t.usd, t.corrupt) == (2, 0.75, 2)
    scan = read_records(path)
    assert [r.usd for r in scan.records] == [0.5, 0.25] and scan.corrupt == 2
    tally = MonthlyTally(path, clock=lambda: NOW)
    assert tally.totals().usd == pytest.approx(0.75) and math.isfinite(tally.totals("/p/one").usd)
    check = tightest_budget(tally, 10.0, "/p/one", 1.0)  # raised OverflowError before
    assert check is not None and check.status.percent == 75
    assert app_budget_status(path, 10.0, NOW).percent == 7
    summary = load_summary(UsageLedger(path), NOW)
    assert summary.totals["month"].usd == pytest.approx(0.75) and summary.corrupt == 2
    assert all(math.isfinite(v) for day in summary.daily.usd for v in day.values())


@pytest.mark.parametrize("line", [
    raw_line(input="-5"),                         # a negative count in the middle of a canonical line
    raw_line(output="1.5"),                       # a count that is not whole
    raw_line(cache_read="1e3"),
    raw_line(provider="5"),                       # a number where a string belongs
    raw_line(node_title='"bad \\q escape"'),      # not a JSON escape
    raw_line(node_title='"lone \\ud800 surrogate"'),
    raw_line(node_title='"raw \x01 control"'),
    raw_line(input="00012"),                      # leading zeros: not JSON
    raw_line(ts="12345678901234567"),             # 17 digits: past the rule's 16
    raw_line(usd="NaN"),
    raw_line(usd="-0.5"),
    raw_line(usd="1e10"),                          # above MAX_USD: a sum of such lines could overflow
    b"\xc2\xa0",                                  # a no-break space: not blank, not JSON
    b"\x1c\x1d",
])
def test_both_readers_reject_the_same_lines(tmp_path: Path, line: bytes) -> None:
    path = ledger_path(tmp_path)
    write(path, [rec(usd=0.5).to_line()[:-1], line, rec(usd=0.25).to_line()[:-1]])
    scan = read_records(path)
    t = totals(path)
    assert (len(scan.records), scan.corrupt) == (2, 1)
    assert (t.responses, t.usd, t.corrupt) == (2, 0.75, 1)


@pytest.mark.parametrize("line", [
    json.dumps({"model": "m", "ts": IN_MONTH, "usd": 0.125, "node_title": "caf\udce9"[:3]}).encode()
    + b"\xff",  # another writer's key order with a stray invalid byte after the object: not JSON
    b'{"ts": 5, "usd": 0.125, "node_title": "caf\xe9"}',  # another writer, Latin-1 bytes: read as U+FFFD
    raw_line(node_title='"a \\ud83d\\ude00 pair"'),     # an escaped surrogate pair is one character
])
def test_both_readers_accept_or_reject_the_same_odd_lines(tmp_path: Path, line: bytes) -> None:
    path = ledger_path(tmp_path)
    write(path, [line])
    scan = read_records(path)
    t = totals(path)
    assert (t.responses, t.corrupt) == (len(scan.records), scan.corrupt)
    assert t.usd == sum(r.usd or 0 for r in scan.records)


def test_the_issue_file_counts_the_same_on_the_budget_path_and_on_the_dashboard(tmp_path: Path) -> None:
    path = ledger_path(tmp_path)
    write(path, [
        rec(usd=0.5).to_line()[:-1], rec(usd=0.25).to_line()[:-1],
        raw_line(rec(usd=0.01), input="-1"), raw_line(rec(usd=0.01), provider="[]"),
        raw_line(rec(usd=0.01), node="\"\\x\""), raw_line(rec(usd=0.01), reasoning="2.0"),
        raw_line(usd="1e999"),
    ])
    tally = MonthlyTally(path, clock=lambda: NOW).totals()
    dash = load_summary(UsageLedger(path), NOW).totals["month"]
    assert (tally.responses, tally.usd, tally.corrupt) == (2, 0.75, 5)
    assert (dash.responses, dash.usd, dash.corrupt) == (2, 0.75, 5)


def test_record_for_never_builds_a_line_the_readers_reject(tmp_path: Path) -> None:
    from desktop.core.chat.cost import Price
    from desktop.core.chat.types import Usage

    huge = Usage(10**20, 10**20, cache_read_tokens=10**20)
    costly = record_for(huge, "m", provider="p", project=tmp_path, node="n\ud800", node_title="t\ud800",
                        overrides={"m": Price(1e3, 1e3, 1.0)}, ts_ms=10**17)
    endless = record_for(huge, "m", provider="p", project=tmp_path, node="n",
                         overrides={"m": Price(1e300, 1e300, 1e300)})
    path = ledger_path(tmp_path)
    append_record(path, costly)
    append_record(path, endless)
    scan = read_records(path)
    assert scan.corrupt == 0 and scan.records == [costly, endless]
    assert costly.usd == 1e9 and costly.input == 10**16 - 1 and costly.ts == 10**16 - 1
    assert endless.usd is None and endless.estimated  # an infinite cost is no price


# --- item 3: the property ------------------------------------------------------------------------------

_PROJECTS = ["/p/one", "/p/two", "/p/wé\"ird"]
_NUMBERS = ["0", "1", "-0", "0.5", "1e999", "-1e999", "1E400", "1e-400", "NaN", "Infinity", "-1", "1.5",
            "00", "01", "9999999999999999", "10000000000000000", "1e9", "1000000001", "true", "null",
            '"7"', "[]", "{}", "1" * 400, "1" * 5000]
_STRINGS = ['"x"', '"\\q"', '"\\ud800"', '"\\udc00\\ud800"', '"\\ud83d\\ude00"', '"\\u00e9"', '"\\/p\\/one"',
            '"tab\tin"', '"\\u0000"', "5", "null", '"\x7f"']


@st.composite
def records(draw: st.DrawFn) -> UsageRecord:
    usd = draw(st.one_of(st.none(), st.floats(0, 100, allow_nan=False)))
    return rec(
        ts=draw(st.integers(0, 40)) * 1_000 + 1_000,
        usd=usd,
        saved_usd=None if usd is None else draw(st.floats(0, 1, allow_nan=False)),
        project=draw(st.sampled_from(_PROJECTS)),
        node_title=draw(st.text(max_size=8)).encode("utf-8", "replace").decode("utf-8"),
        input=draw(st.integers(0, 10**6)),
    )


@st.composite
def lines(draw: st.DrawFn) -> bytes:
    kind = draw(st.integers(0, 9))
    base = draw(records())
    if kind <= 2:
        return base.to_line()[:-1]
    if kind == 3:  # a value replaced by something hostile
        key = draw(st.sampled_from(["ts", "usd", "saved_usd", "input", "reasoning"]))
        return raw_line(base, **{key: draw(st.sampled_from(_NUMBERS))})
    if kind == 4:
        key = draw(st.sampled_from(["project", "provider", "model", "node", "node_title"]))
        return raw_line(base, **{key: draw(st.sampled_from(_STRINGS))})
    if kind == 5:  # another writer: other key order, spaces, extra keys
        data = dict(base.to_dict(), extra=[1, {"x": None}])
        return json.dumps(dict(sorted(data.items())), ensure_ascii=draw(st.booleans())).encode()
    if kind == 6:  # raw bytes, invalid UTF-8 included
        return draw(st.binary(max_size=30)).replace(b"\n", b" ")
    if kind == 7:  # a canonical line with a few bytes changed
        line = bytearray(base.to_line()[:-1])
        for _ in range(draw(st.integers(1, 3))):
            line[draw(st.integers(0, len(line) - 1))] = draw(st.integers(0, 255))
        return bytes(line).replace(b"\n", b" ")
    if kind == 8:  # blank-looking lines
        return draw(st.sampled_from([b"", b" ", b"\t\r", b"\x0b\x0c", b"\xc2\xa0", b"\x1c"]))
    return base.to_line()[: draw(st.integers(0, 60))].replace(b"\n", b" ")  # cut short


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(lines(), max_size=25), st.binary(max_size=20), st.integers(0, 42), st.integers(0, 42),
       st.sampled_from([None, *_PROJECTS]), st.integers(1, 600))
def test_every_reader_counts_and_sums_an_arbitrary_ledger_alike(
    body: list[bytes], tail: bytes, a: int, b: int, project: str | None, block: int
) -> None:
    from desktop.core.usage._index import LedgerIndex
    from desktop.core.usage._record import project_key

    start, end = sorted((a * 1_000, b * 1_000))
    with tempfile.TemporaryDirectory() as tmp:
        path = ledger_path(Path(tmp))
        write(path, body, tail.replace(b"\n", b" "))
        scan = read_records(path, start, end)
        chosen = [r for r in scan.records if project is None or r.project == project]
        t = totals(path, start, end, project)
        assert (t.responses, t.unpriced, t.corrupt, t.torn_tail) == (
            len(chosen), sum(r.usd is None for r in chosen), scan.corrupt, scan.torn_tail)
        assert math.isfinite(t.usd) and math.isfinite(t.saved_usd)
        assert t.usd == pytest.approx(sum(r.usd or 0.0 for r in chosen))
        assert t.saved_usd == pytest.approx(sum(r.saved_usd or 0.0 for r in chosen))
        everything = read_records(path)
        assert all(0 <= r.ts < 10**16 and (r.usd is None or 0 <= r.usd <= 1e9) for r in everything.records)
        # The same through an index of tiny blocks (built, then read back from its file), and the tally.
        for _ in range(2):
            index = LedgerIndex(path, block_bytes=block)
            assert index.read(start, end) == (scan.records, scan.corrupt, scan.torn_tail)
            it = index.totals(start, end, None if project is None else project_key(project))[0]
            assert (it.responses, it.unpriced, it.corrupt) == (t.responses, t.unpriced, t.corrupt)
            assert it.usd == pytest.approx(t.usd) and it.saved_usd == pytest.approx(t.saved_usd)
        clock = _dt.datetime.fromtimestamp(20)
        month = totals(path, *month_range(clock), project)
        tally = MonthlyTally(path, clock=lambda: clock).totals(project)
        assert (tally.responses, tally.unpriced, tally.corrupt) == (month.responses, month.unpriced,
                                                                     month.corrupt)
        assert tally.usd == pytest.approx(month.usd)


@settings(max_examples=500, deadline=None)
@given(lines())
def test_a_canonical_line_is_valid_exactly_when_json_and_the_record_rule_say_so(line: bytes) -> None:
    from desktop.core.usage._lines import fallback, scan_records, sum_body

    scan = scan_records(line + b"\n")
    if not line.strip(b" \t\r\x0b\x0c"):
        assert (scan.records, scan.stats.corrupt) == ([], 0)
        return
    expected = fallback(line)
    assert scan.records == ([] if expected is None else [expected])
    assert scan.stats.corrupt == (expected is None)
    sums = sum_body(line + b"\n")
    assert (sums.stats.valid, sums.stats.corrupt) == (scan.stats.valid, scan.stats.corrupt)


# --- item 7: a full disk -------------------------------------------------------------------------------

_CHILD = textwrap.dedent("""
    import datetime, json, resource, signal, sys
    from pathlib import Path
    from desktop.core.chat.types import Done, Usage, UsageReport
    from desktop.core.usage import MonthlyTally, RunInfo, UsageLedger, UsageRecord, UsageRecorder

    path, limit, mode = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    now = datetime.datetime(2026, 5, 20, 12, 0)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # past the limit a write fails with EFBIG instead
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    ledger = UsageLedger(path)
    tally = MonthlyTally(path, clock=lambda: now)
    # The recorder stamps records with the real clock: count them over all time there.
    count = (lambda: tally.totals().responses) if mode == "append" else (lambda: ledger.totals().responses)
    out = {"before": count()}

    def record(usd):
        return UsageRecord(ts=1_779_300_000_000, project="/p/one", node="n", node_title="T", provider="x",
                           model="m", input=1, output=2, cache_read=0, cache_write=0, reasoning=0, usd=usd,
                           estimated=False, saved_usd=0.0)

    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, hard))  # the disk is full from here on
    if mode == "append":
        out["ok"] = ledger.append(record(0.5))
        out["error"] = getattr(ledger, "last_error", None)
        out["during"] = count()
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))  # space again
        out["ok2"] = ledger.append(record(0.25))
    else:
        errors, saved = [], []
        recorder = UsageRecorder(ledger, lambda node: RunInfo("x", "/p/one", "T", "m"),
                                 on_record=saved.append, on_error=errors.append)
        recorder.observe("a", UsageReport(Usage(1, 2), "m", message_id="msg-a"))
        recorder.observe("a", Done("complete", message_id="msg-a"))
        out["errors"], out["unsaved"], out["saved"] = errors, recorder.unsaved, len(saved)
        out["during"] = count()
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        recorder.observe("b", UsageReport(Usage(3, 4), "m", message_id="msg-b"))
        recorder.observe("b", Done("complete", message_id="msg-b"))
        out["unsaved2"], out["saved2"] = recorder.unsaved, [r.node for r in saved]
    out["after"] = count()
    print(json.dumps(out))
""")


def _full_disk(path: Path, limit: int, mode: str) -> dict[str, object]:
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
           "PYTHONDONTWRITEBYTECODE": "1"}
    proc = subprocess.run([sys.executable, "-c", _CHILD, str(path), str(limit), mode], env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result: dict[str, object] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


needs_rlimit = pytest.mark.skipif(not hasattr(os, "fork") or sys.platform == "darwin",
                                  reason="RLIMIT_FSIZE with SIGXFSZ ignored is a Linux behaviour")


@needs_rlimit
@pytest.mark.parametrize("room", [0, 25])
def test_a_full_disk_leaves_no_partial_line_and_the_append_reports_it(tmp_path: Path, room: int) -> None:
    path = ledger_path(tmp_path)
    append_record(path, rec(usd=1.0))
    before = path.read_bytes()
    out = _full_disk(path, len(before) + room, "append")  # `room` bytes fit: a short write
    assert out["ok"] is False and "File too large" in str(out["error"]) and str(path) in str(out["error"])
    assert out["before"] == out["during"] == 1  # the tally did not count the lost record
    assert out["ok2"] is True and out["after"] == 2
    after = path.read_bytes()
    assert after.startswith(before) and after.count(b"\n") == 2  # no torn line, nothing merged
    scan = read_records(path)
    assert [r.usd for r in scan.records] == [1.0, 0.25] and scan.corrupt == 0 and not scan.torn_tail


@needs_rlimit
def test_a_torn_line_from_a_crash_and_then_a_full_disk_cost_only_the_torn_line(tmp_path: Path) -> None:
    path = ledger_path(tmp_path)
    append_record(path, rec(usd=1.0))
    with open(path, "ab") as fh:
        fh.write(rec(usd=9.0).to_line()[:30])  # a crash in the middle of a write
    before = path.read_bytes()
    out = _full_disk(path, len(before) + 40, "append")
    assert out["ok"] is False and out["ok2"] is True
    scan = read_records(path)
    assert [r.usd for r in scan.records] == [1.0, 0.25] and scan.corrupt == 1 and not scan.torn_tail


@needs_rlimit
def test_the_recorder_keeps_an_unsaved_record_reports_it_and_saves_it_with_the_next(tmp_path: Path) -> None:
    path = ledger_path(tmp_path)
    append_record(path, rec(usd=1.0))
    out = _full_disk(path, path.stat().st_size + 10, "recorder")
    errors = out["errors"]
    assert isinstance(errors, list) and len(errors) == 1
    assert "File too large" in errors[0] and "1 response waiting" in errors[0]
    assert (out["unsaved"], out["saved"], out["during"]) == (1, 0, 1)
    assert out["unsaved2"] == 0 and out["saved2"] == ["a", "b"] and out["after"] == 3
    scan = read_records(path)
    assert [r.node for r in scan.records] == ["n1", "a", "b"] and scan.corrupt == 0


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_no_space_left_is_reported_not_raised() -> None:
    ledger = UsageLedger(Path("/dev/full"))
    assert ledger.append(rec()) is False
    assert ledger.last_error is not None and "No space left on device" in ledger.last_error
