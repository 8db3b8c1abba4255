"""A block index beside the ledger, so reading a month or a dashboard window skips the rest of the file.

The ledger only grows, so its complete lines can be cut into blocks of about ``BLOCK_BYTES`` that never
change. ``<ledger>.index`` (JSON with a CRC-32 of its own blocks, written atomically, mode 0600) keeps
for each block its byte range, how many valid and corrupt lines it holds, the smallest and largest
``ts``, a CRC-32 of its last 128 bytes, and the sums of its records per project (responses, unpriced,
USD, cache savings; left out when a block names more than ``MAX_BLOCK_PROJECTS`` projects). The ledger
is not assumed to be in time order (two instances, a merged file): a block's ``ts`` range is what its
lines hold. A query then:

* skips every block whose ``ts`` range misses the asked period (adding only its corrupt count),
* takes the sums of a block that lies wholly inside the period from the index (totals only),
* parses the other blocks and the lines past the last block (less than a block) with ``_lines``.

The index is a cache, never trusted over the ledger: it is checked against the file on every query
(the file is at least as long as the indexed range and every block's CRC matches), and every block
parsed for a query must give the indexed counts and ``ts`` range again. A mismatch (the ledger was
replaced, cut or edited; the index is damaged, from another format or unreadable) throws the index away
and rebuilds it from the ledger. The one edit not noticed is one that keeps every block's length and
last 128 bytes; deleting ``usage.jsonl.index`` is always safe. Building the index reads the whole
ledger once (as every query did before it existed); after that a query reads the blocks it needs and
the lines appended since, and the index file is rewritten only when a new block is complete.
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import os
import tempfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from ._lines import BodyStats, decode_body, pick, scan_records, split_tail, sum_body
from ._record import MAX_COUNT, MAX_USD, Totals, UsageRecord, project_key

log = logging.getLogger(__name__)

__all__ = ["INDEX_SUFFIX", "BLOCK_BYTES", "MAX_BLOCK_PROJECTS", "Block", "BlockScan", "LedgerIndex",
           "StaleIndexError", "index_path", "totals_for"]

INDEX_SUFFIX = ".index"
"""The index of ``usage.jsonl`` is ``usage.jsonl.index``."""

BLOCK_BYTES = 1 << 20
"""A block holds the complete lines of about this many bytes (a line longer than that is a block)."""

MAX_BLOCK_PROJECTS = 64
"""A block naming more projects keeps no per-project sums (its lines are parsed when asked)."""

_FORMAT = 1
_TAIL = 128
_MAX_INDEX_BYTES = 64 << 20

Sums = tuple[int, int, float, float]


def index_path(ledger: Path) -> Path:
    """Where the index of ``ledger`` lives."""
    return ledger.with_name(ledger.name + INDEX_SUFFIX)


@dataclass(frozen=True, slots=True)
class Block:
    """One indexed run of complete ledger lines, ``[start, end)`` in bytes.

    Attributes:
        start: First byte.
        end: One past the last byte (just after a newline).
        valid: Records in the block.
        corrupt: Corrupt lines in the block.
        lo: Smallest ``ts`` of a record (meaningless without records).
        hi: Largest ``ts`` of a record (meaningless without records).
        crc: CRC-32 of the block's last 128 bytes (or all of it when shorter).
        sums: Decoded project folder → (responses, unpriced, usd, saved_usd), or None (too many projects).
    """

    start: int
    end: int
    valid: int
    corrupt: int
    lo: int
    hi: int
    crc: int
    sums: dict[str, Sums] | None

    def overlaps(self, lo: int, hi: int) -> bool:
        """Whether a record of the block may lie in ``[lo, hi)``."""
        return self.valid > 0 and self.hi >= lo and self.lo < hi

    def inside(self, lo: int, hi: int) -> bool:
        """Whether every record of the block lies in ``[lo, hi)``."""
        return lo <= self.lo and self.hi < hi

    def agrees(self, stats: BodyStats) -> bool:
        """Whether a fresh parse of the block gives what the index says."""
        return (stats.valid, stats.corrupt) == (self.valid, self.corrupt) and (
            self.valid == 0 or (stats.lo, stats.hi) == (self.lo, self.hi))


@dataclass(frozen=True, slots=True)
class BlockScan:
    """Records of one piece of the ledger, as the careful reader gives them (see ``LedgerIndex.scans``).

    Attributes:
        records: The records in the asked period, in file order.
        corrupt: Corrupt lines of the piece (also those of skipped blocks).
        torn_tail: The piece is the end of the file and the file ends in an unfinished line.
    """

    records: list[UsageRecord]
    corrupt: int
    torn_tail: bool = False


class _Stale(Exception):
    """A block parsed for a query does not match the index."""


class StaleIndexError(OSError):
    """A block read for ``LedgerIndex.scans`` did not match the index; the index was thrown away."""


def _crc(body: bytes) -> int:
    return zlib.crc32(body[-_TAIL:])


def _block_of(start: int, body: bytes) -> Block:
    result = sum_body(body)
    stats = result.stats
    sums: dict[str, list[float]] | None = {}
    for raw, acc in result.by_project.items():
        assert sums is not None
        merged = sums.setdefault(decode_body(raw), [0, 0, 0.0, 0.0])
        for i in range(4):
            merged[i] += acc[i]
        if len(sums) > MAX_BLOCK_PROJECTS:
            sums = None
            break
    return Block(start, start + len(body), stats.valid, stats.corrupt, stats.lo, stats.hi, _crc(body),
                 None if sums is None else {k: (int(v[0]), int(v[1]), v[2], v[3]) for k, v in sums.items()})


def _count(value: Any, upper: int = MAX_COUNT) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= upper:
        raise ValueError("bad count")
    return value


def _amount(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError("bad amount")
    number = float(value)
    if not (math.isfinite(number) and number >= 0):
        raise ValueError("bad amount")
    return number


def _parse_block(item: Any, start: int) -> Block:
    if not isinstance(item, list) or len(item) != 8:
        raise ValueError("bad block")
    begin, end, valid, corrupt, lo, hi, crc = (_count(v, 2**63) for v in item[:7])
    if begin != start or end <= begin or crc >= 2**32:
        raise ValueError("blocks do not follow each other")
    if valid and not lo <= hi <= MAX_COUNT:
        raise ValueError("bad ts range")
    raw = item[7]
    sums: dict[str, Sums] | None = None
    if raw is not None:
        if not isinstance(raw, dict) or len(raw) > MAX_BLOCK_PROJECTS:
            raise ValueError("bad sums")
        sums = {}
        for name, acc in raw.items():
            if not isinstance(acc, list) or len(acc) != 4:
                raise ValueError("bad sums")
            n, unpriced = _count(acc[0], valid), _count(acc[1], valid)
            usd, saved = _amount(acc[2]), _amount(acc[3])
            if usd > n * MAX_USD or saved > n * MAX_USD:
                raise ValueError("bad sums")
            sums[name] = (n, unpriced, usd, saved)
    return Block(begin, end, valid, corrupt, lo, hi, crc, sums)


class LedgerIndex:
    """The block index of one ledger file, kept in memory and in ``index_path(ledger)``.

    Args:
        ledger: The ledger file.
        block_bytes: Target block size (tests use small blocks).
        persist: Write the index file (False: keep it in memory only).
    """

    def __init__(self, ledger: Path, *, block_bytes: int = BLOCK_BYTES, persist: bool = True) -> None:
        self.ledger = Path(ledger)
        self.file = index_path(self.ledger)
        self.block_bytes = max(1, block_bytes)
        self.persist = persist
        self._blocks: list[Block] | None = None
        self._dirty = False  # the index file does not hold what is known (it was bad)
        self.bytes_read = 0
        """Bytes of the ledger read so far (index checks included): what the index saves is visible."""

    @property
    def blocks(self) -> list[Block]:
        """The blocks known now (empty before the first query)."""
        return list(self._blocks or [])

    # --- queries -------------------------------------------------------------------------------------

    def read(
        self, start_ms: int | None = None, end_ms: int | None = None
    ) -> tuple[list[UsageRecord], int, bool]:
        """(records with ``start_ms <= ts < end_ms`` in file order, corrupt lines, torn last line).

        Raises:
            OSError: The ledger exists but cannot be read.
        """
        try:
            fh = open(self.ledger, "rb", buffering=0)  # noqa: SIM115 - closed by the with block
        except FileNotFoundError:
            return [], 0, False
        with fh:
            size = os.fstat(fh.fileno()).st_size
            for attempt in range(3):
                blocks, covered = self._sync(fh, size) if attempt < 2 else ([], 0)
                records: list[UsageRecord] = []
                corrupt = 0
                torn = False
                try:
                    for piece in self._pieces(fh, size, blocks, covered, start_ms, end_ms):
                        records.extend(piece.records)
                        corrupt += piece.corrupt
                        torn = torn or piece.torn_tail
                except _Stale:
                    self._stale()
                    continue
                return records, corrupt, torn
        raise AssertionError("unreachable")  # pragma: no cover - the last attempt has no index

    def scans(self, start_ms: int | None = None, end_ms: int | None = None) -> Iterator[BlockScan]:
        """The records with ``start_ms <= ts < end_ms``, one piece of the ledger at a time (bounded memory).

        Raises:
            StaleIndexError: A parsed block did not match the index (the ledger was edited while or
                before it was read); the index is rebuilt, a second try reads the right records.
            OSError: The ledger exists but cannot be read.
        """
        try:
            fh = open(self.ledger, "rb", buffering=0)  # noqa: SIM115 - closed by the with block
        except FileNotFoundError:
            return
        with fh:
            size = os.fstat(fh.fileno()).st_size
            blocks, covered = self._sync(fh, size)
            try:
                yield from self._pieces(fh, size, blocks, covered, start_ms, end_ms)
            except _Stale:
                self._stale()
                raise StaleIndexError(f"the usage ledger {self.ledger} changed while it was read; "
                                      "try again") from None

    def _pieces(
        self, fh: BinaryIO, size: int, blocks: list[Block], covered: int, start_ms: int | None,
        end_ms: int | None,
    ) -> Iterator[BlockScan]:
        lo = -1 if start_ms is None else start_ms
        hi = MAX_COUNT + 1 if end_ms is None else end_ms
        pending = 0  # corrupt lines of skipped blocks, reported with the next piece
        for block in blocks:
            if not block.overlaps(lo, hi):
                pending += block.corrupt
                continue
            scan = scan_records(self._read_at(fh, block.start, block.end - block.start), start_ms, end_ms)
            if not block.agrees(scan.stats):
                raise _Stale
            yield BlockScan(scan.records, scan.stats.corrupt + pending)
            pending = 0
        body, torn = split_tail(self._read_at(fh, covered, size - covered))
        tail = scan_records(body, start_ms, end_ms)
        yield BlockScan(tail.records, tail.stats.corrupt + pending, torn)

    def totals(
        self, start_ms: int | None, end_ms: int | None, want: bytes | None, upto: int | None = None
    ) -> tuple[Totals, int]:
        """Sums of the records with ``start_ms <= ts < end_ms`` (of the project ``want`` only when given).

        Args:
            start_ms: Start of the period (inclusive), or None.
            end_ms: End of the period (exclusive), or None.
            want: ``project_key`` of the one project to count, or None for every project.
            upto: Count only the bytes before this offset (the end of a complete line), e.g. the offset
                a running tally has reached; None for the whole file.

        Returns:
            The totals and the offset just past the last complete line counted.

        Raises:
            OSError: The ledger exists but cannot be read.
        """
        try:
            fh = open(self.ledger, "rb", buffering=0)  # noqa: SIM115 - closed by the with block
        except FileNotFoundError:
            return Totals(), 0
        with fh:
            size = os.fstat(fh.fileno()).st_size
            for attempt in range(2):
                blocks, covered = self._sync(fh, size)
                try:
                    return self._totals(fh, size, blocks, covered, start_ms, end_ms, want, upto)
                except _Stale:
                    self._stale()
                    if attempt:
                        return self._totals(fh, size, [], 0, start_ms, end_ms, want, upto)
        raise AssertionError("unreachable")  # pragma: no cover

    def _totals(
        self, fh: BinaryIO, size: int, blocks: list[Block], covered: int, start_ms: int | None,
        end_ms: int | None, want: bytes | None, upto: int | None,
    ) -> tuple[Totals, int]:
        lo = -1 if start_ms is None else start_ms
        hi = MAX_COUNT + 1 if end_ms is None else end_ms
        limit = size if upto is None else min(upto, size)
        want_text = None if want is None else decode_body(want)
        acc = [0, 0, 0.0, 0.0]
        corrupt = 0
        pos = 0
        for block in blocks:
            if block.end > limit:
                break
            pos = block.end
            if not block.overlaps(lo, hi):
                corrupt += block.corrupt
            elif block.inside(lo, hi) and block.sums is not None:
                corrupt += block.corrupt
                for name, kept in block.sums.items():
                    if want_text is None or name == want_text:
                        _add(acc, kept)
            else:
                result = sum_body(self._read_at(fh, block.start, block.end - block.start), start_ms, end_ms)
                if not block.agrees(result.stats):
                    raise _Stale
                corrupt += result.stats.corrupt
                for sums in pick(result.by_project, want):
                    _add(acc, sums)
        body, torn = split_tail(self._read_at(fh, pos, limit - pos))
        result = sum_body(body, start_ms, end_ms)
        corrupt += result.stats.corrupt
        for sums in pick(result.by_project, want):
            _add(acc, sums)
        totals = Totals(acc[2], int(acc[0]), int(acc[1]), acc[3], corrupt, torn and upto is None)
        return totals, pos + len(body)

    # --- keeping the index ---------------------------------------------------------------------------

    def _read_at(self, fh: BinaryIO, pos: int, size: int) -> bytes:
        fh.seek(pos)
        parts = []
        while size > 0:
            data = fh.read(size)
            if not data:
                break
            parts.append(data)
            size -= len(data)
            self.bytes_read += len(data)
        return b"".join(parts)

    def _stale(self) -> None:
        log.warning("usage ledger index of %s is out of date; rebuilding it", self.ledger)
        self._blocks = []
        self._dirty = True

    def _sync(self, fh: BinaryIO, size: int) -> tuple[list[Block], int]:
        """The blocks checked against the open ledger and extended to its complete lines; (blocks, end)."""
        if self._blocks is None:
            self._blocks = self._load()
        blocks = self._blocks
        if blocks and not self._matches(fh, size, blocks):
            log.info("usage ledger index of %s does not match the ledger; rebuilding it", self.ledger)
            blocks = self._blocks = []
            self._dirty = True
        covered = blocks[-1].end if blocks else 0
        added = False
        while size - covered >= self.block_bytes:
            body = self._next_body(fh, covered, size)
            if not body:
                break
            blocks.append(_block_of(covered, body))
            covered += len(body)
            added = True
        if (added or self._dirty) and self.persist:
            self._save(blocks)  # also a bad index of a ledger now shorter than a block: not read again
            self._dirty = False
        return blocks, covered

    def _next_body(self, fh: BinaryIO, pos: int, size: int) -> bytes:
        """The complete lines of about one block from ``pos`` (a longer line whole); b"" if none ends."""
        parts: list[bytes] = []
        while pos < size:
            data = self._read_at(fh, pos, min(self.block_bytes, size - pos))
            if not data:
                break
            cut = data.rfind(b"\n") + 1
            if cut:
                parts.append(data[:cut])
                return b"".join(parts)
            parts.append(data)
            pos += len(data)
        return b""

    def _matches(self, fh: BinaryIO, size: int, blocks: list[Block]) -> bool:
        if blocks[-1].end > size:
            return False
        for block in blocks:
            length = min(_TAIL, block.end - block.start)
            if zlib.crc32(self._read_at(fh, block.end - length, length)) != block.crc:
                return False
        return True

    def _load(self) -> list[Block]:
        try:
            with open(self.file, "rb") as fh:
                data = fh.read(_MAX_INDEX_BYTES + 1)
        except FileNotFoundError:
            return []
        except OSError as exc:
            log.info("usage ledger index %s unreadable (%s); rebuilding it", self.file, exc.strerror or exc)
            self._dirty = True
            return []
        try:
            if len(data) > _MAX_INDEX_BYTES:
                raise ValueError("too large")
            doc = json.loads(data)
            if not isinstance(doc, dict) or doc.get("format") != _FORMAT:
                raise ValueError("unknown format")
            if not isinstance(doc.get("blocks"), list):
                raise ValueError("no blocks")
            if doc.get("check") != _check(doc["blocks"]):
                raise ValueError("checksum mismatch")
            blocks: list[Block] = []
            for item in doc["blocks"]:
                blocks.append(_parse_block(item, blocks[-1].end if blocks else 0))
            return blocks
        except (ValueError, RecursionError) as exc:
            log.info("usage ledger index %s is damaged (%s); rebuilding it", self.file, exc)
            self._dirty = True
            return []

    def _save(self, blocks: list[Block]) -> None:
        items = [
            [b.start, b.end, b.valid, b.corrupt, b.lo, b.hi, b.crc,
             None if b.sums is None else {k: list(v) for k, v in b.sums.items()}]
            for b in blocks
        ]
        doc = {"format": _FORMAT, "ledger": self.ledger.name, "check": _check(items), "blocks": items}
        data = json.dumps(doc, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        try:
            fd, name = tempfile.mkstemp(prefix=f".{self.file.name}.", suffix=".tmp", dir=self.file.parent)
        except OSError as exc:
            log.debug("usage ledger index %s not saved: %s", self.file, exc.strerror or exc)
            return
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(data)
            os.replace(name, self.file)
        except OSError as exc:
            log.debug("usage ledger index %s not saved: %s", self.file, exc.strerror or exc)
            with contextlib.suppress(OSError):
                os.unlink(name)


def _check(items: Any) -> int:
    """CRC-32 of the blocks as JSON: a damaged index (a changed digit) is noticed, not believed."""
    return zlib.crc32(json.dumps(items, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))


def _add(acc: list[float], sums: Sums | list[float]) -> None:
    acc[0] += sums[0]
    acc[1] += sums[1]
    acc[2] += sums[2]
    acc[3] += sums[3]


def totals_for(index: LedgerIndex, start_ms: int | None, end_ms: int | None,
               project: str | os.PathLike[str] | None) -> Totals:
    """``index.totals`` of a project given as a folder (or every project)."""
    return index.totals(start_ms, end_ms, None if project is None else project_key(project))[0]

