"""Reading ledger lines: one validity rule, applied the same way by every reader.

A line is one of:

* **canonical**: exactly the shape ``UsageRecord.to_line`` writes (fixed key order, JSON-exact numbers
  and strings). One compiled regular expression recognises it over a whole block of lines at once;
  the pattern checks the counts (whole, at most 16 digits) and the strings (JSON escapes only, no lone
  surrogate escape), and the money fields are then checked by ``_record.money``'s range. A canonical
  line whose money breaks the rule is corrupt.
* **blank** (only ASCII whitespace): skipped, not counted.
* **anything else**: decoded as UTF-8 (invalid bytes become U+FFFD, as in canonical lines), then
  ``json.loads`` and ``UsageRecord.from_dict`` (the same rule); a line that fails is corrupt.

The careful reader (``scan_records``, every field) and the fast one (``sum_body``, the money and the
project only) use two compilations of ONE pattern template that differ only in which groups capture,
and the same checks after the match, so they agree on every line by construction (the property tests
feed both arbitrary bytes). Each also reports what a block index needs: the valid and corrupt line counts
and the smallest and largest ``ts``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from ._record import MAX_COUNT, MAX_USD, Totals, UsageRecord, escaped, money

__all__ = [
    "BodyStats",
    "RecordScan",
    "BodySums",
    "blank",
    "fallback",
    "decode_body",
    "scan_records",
    "sum_body",
    "sum_lines",
    "split_tail",
    "matches_project",
]

_NUM = rb"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?"
_INT = rb"(?:0|[1-9][0-9]{0,15})"
_CH = rb'[^"\\\x00-\x1f]'
_ESC = (
    rb'\\(?:["\\/bfnrt]|u(?![dD][89a-fA-F])[0-9a-fA-F]{4}'
    rb"|u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2})"
)
_BODY = _CH + rb"*(?:" + _ESC + _CH + rb"*)*"
_STRINGS = (b"project", b"provider", b"model", b"node", b"node_title")
_COUNTS = (b"input", b"output", b"cache_read", b"cache_write", b"reasoning")
_BLANK = b" \t\r\x0b\x0c"


def _pattern(every_field: bool) -> re.Pattern[bytes]:
    """The line pattern; ``every_field`` makes all fields capture, else only ts, money and project."""

    def group(body: bytes, capture: bool) -> bytes:
        return b"(" + body + b")" if capture else b"(?:" + body + b")"

    parts = [
        rb'\{"ts":' + group(_INT, True),
        rb',"usd":' + group(b"null|" + _NUM, True),
        rb',"saved_usd":' + group(b"null|" + _NUM, True),
        rb',"estimated":' + group(b"true|false", every_field),
    ]
    for name in _STRINGS:
        parts.append(b',"' + name + b'":"' + group(_BODY, every_field or name == b"project") + b'"')
    for name in _COUNTS:
        parts.append(b',"' + name + b'":' + group(_INT, every_field))
    return re.compile(b"".join(parts) + rb"\}\n|([^\n]*)\n")


_FULL_RE = _pattern(True)
_FAST_RE = _pattern(False)


def blank(line: bytes) -> bool:
    """True for a line of ASCII whitespace only (skipped, never counted as corrupt)."""
    return not line.strip(_BLANK)


def fallback(line: bytes) -> UsageRecord | None:
    """A line that is not canonical, decoded and validated; None when it breaks the rule."""
    try:
        data = json.loads(line.decode("utf-8", "replace"))
        if not isinstance(data, dict):
            return None
        return UsageRecord.from_dict(data)
    except (ValueError, RecursionError):
        return None


def decode_body(raw: bytes) -> str:
    """A canonical string body (already checked by the pattern) as text; never raises."""
    text = raw.decode("utf-8", "replace")
    if "\\" in text:
        decoded = json.loads('"' + text + '"')
        return decoded if isinstance(decoded, str) else text
    return text


def _money_or_bad(text: bytes) -> float | None | bool:
    """The canonical money field: None for null, the float, or False when the rule rejects it."""
    if text == b"null":
        return None
    try:
        return money(float(text), "usd")
    except ValueError:
        return False


def split_tail(data: bytes) -> tuple[bytes, bool]:
    """(the complete lines, whether an unfinished last line was cut off)."""
    if not data or data.endswith(b"\n"):
        return data, False
    cut = data.rfind(b"\n") + 1
    return data[:cut], True


@dataclass(slots=True)
class BodyStats:
    """What a block index keeps about a run of complete lines.

    Attributes:
        valid: Lines that are records.
        corrupt: Lines that are neither records nor blank.
        lo: The smallest ``ts`` of a record (``MAX_COUNT + 1`` without records).
        hi: The largest ``ts`` of a record (-1 without records).
    """

    valid: int = 0
    corrupt: int = 0
    lo: int = MAX_COUNT + 1
    hi: int = -1


@dataclass(slots=True)
class RecordScan:
    """The careful reader's result: the records in the asked window and the stats of every line."""

    records: list[UsageRecord] = field(default_factory=list)
    stats: BodyStats = field(default_factory=BodyStats)


@dataclass(slots=True)
class BodySums:
    """The fast reader's result.

    Attributes:
        by_project: Raw project body (as in the line) → ``[responses, unpriced, usd, saved_usd]`` of the
            records in the asked window.
        stats: The stats of every line (not only of the window).
    """

    by_project: dict[bytes, list[float]] = field(default_factory=dict)
    stats: BodyStats = field(default_factory=BodyStats)


def _bounds(start_ms: int | None, end_ms: int | None) -> tuple[int, int]:
    return (-1 if start_ms is None else start_ms), (MAX_COUNT + 1 if end_ms is None else end_ms)


def scan_records(body: bytes, start_ms: int | None = None, end_ms: int | None = None) -> RecordScan:
    """The valid records with ``start_ms <= ts < end_ms`` in ``body`` (complete lines), in file order."""
    lo, hi = _bounds(start_ms, end_ms)
    out = RecordScan()
    stats = out.stats
    append = out.records.append
    cache: dict[bytes, str] = {}
    for groups in _FULL_RE.findall(body):
        ts_text = groups[0]
        if not ts_text:
            other = groups[14]
            if blank(other):
                continue
            record = fallback(other)
            if record is None:
                stats.corrupt += 1
                continue
            ts = record.ts
        else:
            usd = _money_or_bad(groups[1])
            saved = _money_or_bad(groups[2])
            if usd is False or saved is False:
                stats.corrupt += 1
                continue
            ts = int(ts_text)
            record = None
        stats.valid += 1
        if ts < stats.lo:
            stats.lo = ts
        if ts > stats.hi:
            stats.hi = ts
        if ts < lo or ts >= hi:
            continue
        if record is None:
            strings = []
            for raw in groups[4:9]:
                text = cache.get(raw)
                if text is None:
                    text = cache[raw] = decode_body(raw)
                strings.append(text)
            record = UsageRecord(
                ts, strings[0], strings[3], strings[4], strings[1], strings[2],
                int(groups[9]), int(groups[10]), int(groups[11]), int(groups[12]), int(groups[13]),
                usd, groups[3] == b"true", saved,
            )
        append(record)
    return out


def sum_body(body: bytes, start_ms: int | None = None, end_ms: int | None = None) -> BodySums:
    """Sums per raw project of the records with ``start_ms <= ts < end_ms`` in ``body`` (complete lines)."""
    lo, hi = _bounds(start_ms, end_ms)
    out = BodySums()
    stats = out.stats
    by_project = out.by_project
    valid = corrupt = 0
    ts_lo, ts_hi = stats.lo, stats.hi
    for ts_text, usd_text, saved_text, proj, other in _FAST_RE.findall(body):
        if ts_text:
            if usd_text == b"null":
                usd = None
            else:
                usd = float(usd_text)
                if not 0.0 <= usd <= MAX_USD:
                    corrupt += 1
                    continue
            if saved_text == b"null":
                saved = None
            else:
                saved = float(saved_text)
                if not 0.0 <= saved <= MAX_USD:
                    corrupt += 1
                    continue
            ts = int(ts_text)
        else:
            if blank(other):
                continue
            record = fallback(other)
            if record is None:
                corrupt += 1
                continue
            ts, usd, saved, proj = record.ts, record.usd, record.saved_usd, escaped(record.project)
        valid += 1
        if ts < ts_lo:
            ts_lo = ts
        if ts > ts_hi:
            ts_hi = ts
        if ts < lo or ts >= hi:
            continue
        acc = by_project.get(proj)
        if acc is None:
            acc = by_project[proj] = [0, 0, 0.0, 0.0]
        acc[0] += 1
        if usd is None:
            acc[1] += 1
        else:
            acc[2] += usd
        if saved is not None:
            acc[3] += saved
    stats.valid, stats.corrupt, stats.lo, stats.hi = valid, corrupt, ts_lo, ts_hi
    return out


def matches_project(raw: bytes, want: bytes, want_text: str, cache: dict[bytes, bool]) -> bool:
    """Whether a line's raw project body names the folder ``want`` (``project_key``) decodes to."""
    if raw == want:
        return True
    same = cache.get(raw)
    if same is None:  # the same text written with other escapes, or with invalid UTF-8
        same = cache[raw] = (b"\\" in raw or not raw.isascii()) and decode_body(raw) == want_text
    return same


def pick(by_project: dict[bytes, list[float]], want: bytes | None) -> Iterator[list[float]]:
    """The sums of ``by_project`` that count for the project ``want`` (every one when None)."""
    if want is None:
        yield from by_project.values()
        return
    want_text = decode_body(want)
    cache: dict[bytes, bool] = {}
    for raw, acc in by_project.items():
        if matches_project(raw, want, want_text, cache):
            yield acc


def sum_lines(
    body: bytes, start_ms: int | None, end_ms: int | None, want: bytes | None, torn: bool = False
) -> Totals:
    """``totals`` of complete ledger lines already read (``body`` ends with a newline or is empty).

    Args:
        body: Complete lines of the ledger.
        start_ms: Start of the period (inclusive), or None.
        end_ms: End of the period (exclusive), or None.
        want: ``project_key`` of the one project to count, or None for every project.
        torn: Passed through to ``Totals.torn_tail``.
    """
    sums = sum_body(body, start_ms, end_ms)
    usd = saved = 0.0
    responses = unpriced = 0
    for acc in pick(sums.by_project, want):
        responses += int(acc[0])
        unpriced += int(acc[1])
        usd += acc[2]
        saved += acc[3]
    return Totals(usd, responses, unpriced, saved, sums.stats.corrupt, torn)
