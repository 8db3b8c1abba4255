"""The usage ledger: one JSON line per model response in ``<config dir>/usage.jsonl``.

Writing: each record is one line, written with ONE ``os.write`` on a file descriptor opened with
``O_APPEND``, so lines appended by two windows or two processes at once never interleave within a line
(POSIX appends to a regular file are atomic with respect to the file offset; lines are far below a
page). ``os.write`` bypasses every user-space buffer, so a record is in the kernel (safe from a crash of
the app) when ``append`` returns; ``fsync`` (off by default, a response is not worth a disk flush) also
makes it survive a power cut. If the file does not end with a newline (a torn line left by a crash),
the new line starts with one, so the damage stays confined to the torn line. Writers hold an advisory
``flock`` from that check to the end of their write (the lock is released with the descriptor, also
when a process dies); readers take no lock and treat an unfinished last line as torn.

Reading never fails on content: a torn last line (no newline yet) is skipped and reported, a corrupt
line anywhere else is skipped and counted. Lines are written in a fixed key order (``ts`` first, then
the money fields, the strings, and ``reasoning`` last), which lets the readers use one compiled regular
expression over the whole file instead of a ``json.loads`` per line; any line not in that exact shape
(another writer, a hand edit) falls back to ``json.loads`` plus validation.

On Windows ``O_APPEND`` is emulated by the C runtime (seek, then write), so concurrent appends from two
processes are only as safe as that emulation.
"""

from __future__ import annotations

import json
import logging
import math
import os
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

from desktop.core.chat.cost import Price, cost_of, price_for
from desktop.core.chat.types import Usage

log = logging.getLogger(__name__)

__all__ = [
    "LEDGER_FILE",
    "UsageRecord",
    "LedgerScan",
    "Totals",
    "UsageLedger",
    "ledger_path",
    "normalize_project",
    "record_for",
    "saved_by_cache",
    "append_record",
    "read_records",
    "totals",
]

LEDGER_FILE = "usage.jsonl"
"""File name of the ledger inside the config folder."""

MAX_TITLE_CHARS = 200
"""Node titles are cut to this length in the ledger (keeps every line far below a page)."""

_COUNT_FIELDS = ("input", "output", "cache_read", "cache_write", "reasoning")


def ledger_path(config_dir: Path) -> Path:
    """``config_dir / "usage.jsonl"``."""
    return Path(config_dir) / LEDGER_FILE


def _clean(text: str) -> str:
    """``text`` as valid UTF-8 (lone surrogates from odd file names become ``?``)."""
    return text.encode("utf-8", "replace").decode("utf-8")


def normalize_project(project: str | os.PathLike[str]) -> str:
    """The form a project folder is stored and compared in: absolute, normalised, valid UTF-8."""
    text = os.fspath(project)
    if not text:
        return ""
    return _clean(os.path.normpath(os.path.abspath(text)))


@dataclass(frozen=True, slots=True)
class UsageRecord:
    """One ledger line: the usage and cost of one model response.

    Attributes:
        ts: When the response ended, epoch milliseconds.
        project: The project folder (absolute path).
        node: The chat node's id.
        node_title: The node's title when the response ended.
        provider: Provider id.
        model: Model id as sent to the provider.
        input: Uncached input tokens.
        output: Output tokens (reasoning included).
        cache_read: Input tokens read from the prompt cache.
        cache_write: Input tokens written to the prompt cache.
        reasoning: The part of ``output`` spent on reasoning.
        usd: Cost in USD, None when the model has no price.
        estimated: True when the cost is not a measured figure: the model has no price, or the token
            counts were estimated instead of reported by the provider.
        saved_usd: What the cache reads saved compared with the uncached input price; None when unpriced.
    """

    ts: int
    project: str
    node: str
    node_title: str
    provider: str
    model: str
    input: int
    output: int
    cache_read: int
    cache_write: int
    reasoning: int
    usd: float | None
    estimated: bool
    saved_usd: float | None

    def to_dict(self) -> dict[str, Any]:
        """The record as a JSON-ready dict, in the ledger's key order."""
        return {
            "ts": self.ts, "usd": self.usd, "saved_usd": self.saved_usd, "estimated": self.estimated,
            "project": self.project, "provider": self.provider, "model": self.model, "node": self.node,
            "node_title": self.node_title, "input": self.input, "output": self.output,
            "cache_read": self.cache_read, "cache_write": self.cache_write, "reasoning": self.reasoning,
        }

    def to_line(self) -> bytes:
        """The ledger line (UTF-8, ending with a newline)."""
        text = json.dumps(self.to_dict(), ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        return (text + "\n").encode("utf-8")

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> UsageRecord:
        """Validate a decoded line (extra keys are ignored; missing counts are 0).

        Raises:
            ValueError: A required field is missing or a field has the wrong type or a negative value.
        """
        ts = _count(data.get("ts"), "ts")
        counts = {name: _count(data.get(name, 0), name) for name in _COUNT_FIELDS}
        strings: dict[str, str] = {}
        for name in ("project", "node", "node_title", "provider", "model"):
            value = data.get(name, "")
            if not isinstance(value, str):
                raise ValueError(f"bad {name}: {value!r}")
            strings[name] = value
        estimated = data.get("estimated", False)
        if not isinstance(estimated, bool):
            raise ValueError(f"bad estimated: {estimated!r}")
        return cls(
            ts=ts, project=strings["project"], node=strings["node"], node_title=strings["node_title"],
            provider=strings["provider"], model=strings["model"], input=counts["input"],
            output=counts["output"], cache_read=counts["cache_read"], cache_write=counts["cache_write"],
            reasoning=counts["reasoning"], usd=_money(data.get("usd"), "usd"), estimated=estimated,
            saved_usd=_money(data.get("saved_usd"), "saved_usd"),
        )


def _count(value: object, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"bad {name}: {value!r}")
    return value


def _money(value: object, name: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"bad {name}: {value!r}")
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"bad {name}: {value!r}")
    return float(value)


def saved_by_cache(usage: Usage, price: Price | None) -> float | None:
    """USD the cache reads of ``usage`` saved against paying the uncached input rate; None unpriced."""
    if price is None:
        return None
    read_rate = price.cache_read if price.cache_read is not None else price.input
    return max(0.0, usage.cache_read_tokens * (price.input - read_rate) / 1_000_000)


def record_for(
    usage: Usage,
    model: str,
    *,
    provider: str,
    project: str | os.PathLike[str],
    node: str,
    node_title: str = "",
    overrides: Mapping[str, Price] | None = None,
    ts_ms: int | None = None,
    tokens_estimated: bool = False,
) -> UsageRecord:
    """Build the ledger record of one response, priced with ``desktop.core.chat.cost``.

    Args:
        usage: The response's usage report.
        model: The model id the request used.
        provider: Provider id.
        project: The project folder (stored absolute and normalised).
        node: The chat node's id.
        node_title: The node's title (cut to ``MAX_TITLE_CHARS``).
        overrides: The user's price overrides, as for ``price_for``.
        ts_ms: Epoch milliseconds (default: now).
        tokens_estimated: The token counts were estimated locally, not reported by the provider.
    """
    price = price_for(model, overrides)
    cost = cost_of(usage, model, overrides)
    usd = None if price is None or not math.isfinite(cost.usd) else cost.usd
    saved = saved_by_cache(usage, price)
    return UsageRecord(
        ts=int(time.time() * 1000) if ts_ms is None else int(ts_ms),
        project=normalize_project(project),
        node=_clean(node),
        node_title=_clean(node_title[:MAX_TITLE_CHARS]),
        provider=_clean(provider),
        model=_clean(model),
        input=max(0, int(usage.input_tokens)),
        output=max(0, int(usage.output_tokens)),
        cache_read=max(0, int(usage.cache_read_tokens)),
        cache_write=max(0, int(usage.cache_write_tokens)),
        reasoning=max(0, int(usage.reasoning_tokens)),
        usd=usd,
        estimated=usd is None or cost.estimated or tokens_estimated,
        saved_usd=saved if saved is not None and math.isfinite(saved) else None,
    )


def append_record(path: Path, record: UsageRecord, *, fsync: bool = False) -> None:
    """Append ``record`` as one line with a single ``os.write`` (see the module docstring).

    Raises:
        OSError: The folder or file cannot be created or written.
    """
    line = record.to_line()
    path.parent.mkdir(parents=True, exist_ok=True)
    flags = os.O_RDWR | os.O_APPEND | os.O_CREAT | getattr(os, "O_BINARY", 0)
    fd = os.open(path, flags, 0o600)
    try:
        if fcntl is not None:
            # Only for the fresh-line check: without it, a writer could read the size of another
            # writer's line half-copied into the page cache and start a needless empty line.
            fcntl.flock(fd, fcntl.LOCK_EX)
        size = os.fstat(fd).st_size
        if size and _last_byte(fd, size) != b"\n":
            line = b"\n" + line  # a crash left a torn line: start ours on a fresh one
        written = os.write(fd, line)
        if written != len(line):
            log.warning("usage ledger: short write (%d of %d bytes) to %s", written, len(line), path)
        if fsync:
            os.fsync(fd)
    finally:
        os.close(fd)  # also releases the lock


def _last_byte(fd: int, size: int) -> bytes:
    if hasattr(os, "pread"):
        return os.pread(fd, 1, size - 1)
    os.lseek(fd, size - 1, os.SEEK_SET)  # pragma: no cover - Windows
    return os.read(fd, 1)  # pragma: no cover - Windows


# --- reading -------------------------------------------------------------------------------------------

_NUM = rb"(?:\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)"
_STR = rb'"([^"\\\n]*(?:\\.[^"\\\n]*)*)"'
# Totals only need the money head and the project; the tail proves the line was written whole
# (`,"reasoning":` with bare quotes cannot occur inside a JSON string, and it is the last key).
_HEAD = (
    rb'\{"ts":(\d{1,16}),"usd":(null|' + _NUM + rb'),"saved_usd":(null|' + _NUM + rb'),'
    rb'"estimated":(true|false),'
)
_TOTALS_RE = re.compile(
    _HEAD + rb'"project":' + _STR + rb',[^\n]*,"reasoning":\d+\}\n|([^\n]*)\n'
)
_FULL_RE = re.compile(
    (
        _HEAD + rb'"project":' + _STR + rb',"provider":' + _STR + rb',"model":' + _STR + rb',"node":' + _STR
        + rb',"node_title":' + _STR + rb',"input":(\d+),"output":(\d+),"cache_read":(\d+),'
        rb'"cache_write":(\d+),"reasoning":(\d+)\}\n|([^\n]*)\n'
    ).decode("ascii")
)


@dataclass(frozen=True, slots=True)
class LedgerScan:
    """What a read found.

    Attributes:
        records: The valid records in the asked period, in file order.
        corrupt: Lines (anywhere but the end) that were not a valid record; skipped.
        torn_tail: The file ended in an unfinished line (a crash, or a write in progress); skipped.
    """

    records: list[UsageRecord]
    corrupt: int = 0
    torn_tail: bool = False


@dataclass(frozen=True, slots=True)
class Totals:
    """Sums over a period.

    Attributes:
        usd: Spent on priced responses.
        responses: Every response in the period.
        unpriced: Responses whose model had no price (not in ``usd``).
        saved_usd: What cache reads saved.
        corrupt: Corrupt lines skipped in the whole file.
        torn_tail: The file ended in an unfinished line.
    """

    usd: float = 0.0
    responses: int = 0
    unpriced: int = 0
    saved_usd: float = 0.0
    corrupt: int = 0
    torn_tail: bool = False

    @property
    def priced(self) -> int:
        """Responses with a price."""
        return self.responses - self.unpriced


def _read_bytes(path: Path) -> bytes | None:
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except FileNotFoundError:
        return None


def _split_tail(data: bytes) -> tuple[bytes, bool]:
    """(the complete lines, whether an unfinished last line was cut off)."""
    if not data or data.endswith(b"\n"):
        return data, False
    cut = data.rfind(b"\n") + 1
    return data[:cut], True


def _fallback(line: str | bytes) -> UsageRecord | None:
    """Decode a line that is not in the canonical shape; None when it is not a valid record."""
    try:
        data = json.loads(line)
        if not isinstance(data, dict):
            return None
        return UsageRecord.from_dict(data)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None


def _in(ts: int, start_ms: int | None, end_ms: int | None) -> bool:
    return (start_ms is None or ts >= start_ms) and (end_ms is None or ts < end_ms)


def read_records(path: Path, start_ms: int | None = None, end_ms: int | None = None) -> LedgerScan:
    """All valid records with ``start_ms <= ts < end_ms`` (open bounds when None); never raises on content.

    Raises:
        OSError: The file exists but cannot be read.
    """
    data = _read_bytes(path)
    if data is None:
        return LedgerScan([])
    body, torn = _split_tail(data)
    text = body.decode("utf-8", "replace")
    records: list[UsageRecord] = []
    corrupt = 0
    append = records.append
    cache: dict[str, str] = {}
    for groups in _FULL_RE.findall(text):
        ts_text = groups[0]
        if not ts_text:
            other = groups[14]
            if not other.strip():
                continue
            record = _fallback(other)
            if record is None:
                corrupt += 1
            elif _in(record.ts, start_ms, end_ms):
                append(record)
            continue
        ts = int(ts_text)
        if (start_ms is not None and ts < start_ms) or (end_ms is not None and ts >= end_ms):
            continue
        try:
            strings = [_decode(s, cache) for s in groups[4:9]]
        except ValueError:
            corrupt += 1
            continue
        usd = groups[1]
        saved = groups[2]
        append(UsageRecord(
            ts, strings[0], strings[3], strings[4], strings[1], strings[2],
            int(groups[9]), int(groups[10]), int(groups[11]), int(groups[12]), int(groups[13]),
            None if usd == "null" else float(usd), groups[3] == "true",
            None if saved == "null" else float(saved),
        ))
    return LedgerScan(records, corrupt, torn)


def _decode(raw: str, cache: dict[str, str]) -> str:
    """A JSON string body as text (plain bodies as they are; escapes decoded, memoised)."""
    if "\\" not in raw:
        return raw
    value = cache.get(raw)
    if value is None:
        decoded = json.loads('"' + raw + '"')
        if not isinstance(decoded, str):  # pragma: no cover - a quoted body always decodes to str
            raise ValueError("not a string")
        value = cache[raw] = decoded
    return value


def _project_key(project: str | os.PathLike[str]) -> bytes:
    return json.dumps(normalize_project(project), ensure_ascii=False)[1:-1].encode("utf-8")


def _same_project(raw: bytes, want: bytes) -> bool:
    try:
        return _project_key(_decode(raw.decode("utf-8", "replace"), {})) == want
    except ValueError:
        return False


def totals(
    path: Path,
    start_ms: int | None = None,
    end_ms: int | None = None,
    project: str | os.PathLike[str] | None = None,
) -> Totals:
    """Sums of the records with ``start_ms <= ts < end_ms``, optionally of one project only.

    This is the fast path (a month's totals, budgets): one regular expression over the file's bytes and
    a tight loop; lines not in the canonical shape are decoded with ``json.loads``.

    Raises:
        OSError: The file exists but cannot be read.
    """
    data = _read_bytes(path)
    if data is None:
        return Totals()
    body, torn = _split_tail(data)
    return sum_lines(body, start_ms, end_ms, _project_key(project) if project is not None else None, torn)

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
    escaped: dict[bytes, bool] = {}
    usd_sum = 0.0
    saved_sum = 0.0
    responses = 0
    unpriced = 0
    corrupt = 0
    lo = -1 if start_ms is None else start_ms
    hi = math.inf if end_ms is None else end_ms
    for ts_text, usd, saved, _est, proj, other in _TOTALS_RE.findall(body):
        if ts_text:
            ts = int(ts_text)
            if ts < lo or ts >= hi:
                continue
            if want is not None and proj != want:
                same = escaped.get(proj)
                if same is None:  # the same folder written with other escapes (another writer)
                    same = escaped[proj] = b"\\" in proj and _same_project(proj, want)
                if not same:
                    continue
            responses += 1
            if usd == b"null":
                unpriced += 1
            else:
                usd_sum += float(usd)
            if saved != b"null":
                saved_sum += float(saved)
            continue
        if not other.strip():
            continue
        record = _fallback(other)
        if record is None:
            corrupt += 1
            continue
        if not _in(record.ts, start_ms, end_ms):
            continue
        if want is not None and _project_key(record.project) != want:
            continue
        responses += 1
        if record.usd is None:
            unpriced += 1
        else:
            usd_sum += record.usd
        if record.saved_usd is not None:
            saved_sum += record.saved_usd
    return Totals(usd_sum, responses, unpriced, saved_sum, corrupt, torn)


def project_key(project: str | os.PathLike[str]) -> bytes:
    """How a project folder appears inside a ledger line (for ``sum_lines``)."""
    return _project_key(project)



class UsageLedger:
    """The ledger file of one config folder.

    Args:
        path: The ledger file (``ledger_path(config_dir)``).
        fsync: Also flush each line to disk (survives a power cut; costs a disk flush per response).
    """

    def __init__(self, path: Path, *, fsync: bool = False) -> None:
        self.path = Path(path)
        self.fsync = fsync

    def append(self, record: UsageRecord) -> bool:
        """Append one record; False (logged, never raised) when the file cannot be written."""
        try:
            append_record(self.path, record, fsync=self.fsync)
        except OSError as exc:
            log.warning("usage ledger: cannot append to %s: %s", self.path, exc.strerror or exc)
            return False
        return True

    def read(self, start_ms: int | None = None, end_ms: int | None = None) -> LedgerScan:
        """``read_records`` of this ledger; an unreadable file reads as empty (logged)."""
        try:
            return read_records(self.path, start_ms, end_ms)
        except OSError as exc:
            log.warning("usage ledger: cannot read %s: %s", self.path, exc.strerror or exc)
            return LedgerScan([])

    def totals(
        self,
        start_ms: int | None = None,
        end_ms: int | None = None,
        project: str | os.PathLike[str] | None = None,
    ) -> Totals:
        """``totals`` of this ledger; an unreadable file gives zero totals (logged)."""
        try:
            return totals(self.path, start_ms, end_ms, project)
        except OSError as exc:
            log.warning("usage ledger: cannot read %s: %s", self.path, exc.strerror or exc)
            return Totals()
