"""This month's spending, kept current by reading only what was appended to the ledger since last time.

Budgets are checked before every send and the status bar shows the app budget after every response,
so reading the whole ledger each time would put that cost on the hot path. :class:`MonthlyTally` counts
the month once through the ledger's block index (``_index``: only the blocks that can hold the month
are read), then only the bytes appended since (by this window, another window or another instance): a
check costs one ``stat``, a 128-byte read and a read of the new lines. A new month, or a ledger that is
not the one counted (shorter, another file, or other bytes just before the counted offset), starts the
count again.
"""

from __future__ import annotations

import datetime as _dt
import logging
import os
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from ._index import LedgerIndex
from ._lines import pick, split_tail, sum_body
from ._periods import local_now, month_range
from ._record import Totals, project_key

log = logging.getLogger(__name__)

__all__ = ["MonthlyTally"]

_MARK = 128


def _add(a: Totals, b: Totals) -> Totals:
    return Totals(a.usd + b.usd, a.responses + b.responses, a.unpriced + b.unpriced,
                  a.saved_usd + b.saved_usd, a.corrupt + b.corrupt, b.torn_tail)


class MonthlyTally:
    """Running totals of the calendar month: app-wide and per project.

    Args:
        path: The ledger file (``usage.jsonl``).
        clock: Returns the current local time (tests pass a fixed one).
    """

    def __init__(self, path: Path, clock: Callable[[], _dt.datetime] = local_now) -> None:
        self.path = Path(path)
        self._clock = clock
        self._index = LedgerIndex(self.path)
        self._month: tuple[int, int] | None = None
        self._offset = 0
        self._mark: tuple[int, int, int] | None = None  # (device, inode, CRC of the bytes before _offset)
        self._sums: dict[bytes | None, Totals] = {}

    def totals(self, project: str | os.PathLike[str] | None = None) -> Totals:
        """This month's totals, of ``project`` only when given; an unreadable ledger counts nothing."""
        key = project_key(project) if project is not None else None
        try:
            self._refresh()
            if key not in self._sums:  # first question about this project: count what was counted so far
                assert self._month is not None
                self._sums[key] = self._index.totals(*self._month, key, upto=self._offset)[0]
        except OSError as exc:
            log.warning("usage ledger: cannot read %s: %s", self.path, exc.strerror or exc)
            return Totals()
        return self._sums[key]

    def _refresh(self) -> None:
        month = month_range(self._clock())
        try:
            fh = open(self.path, "rb", buffering=0)  # noqa: SIM115 - closed by the with block
        except FileNotFoundError:
            self._month, self._offset, self._mark = month, 0, None
            self._sums = {key: Totals() for key in self._sums} or {None: Totals()}
            return
        with fh:
            st = os.fstat(fh.fileno())
            size = st.st_size
            moved = size < self._offset or self._mark != self._mark_of(fh, st, self._offset)
            if month != self._month or moved:
                self._recount(month, fh, st)
                return
            if size == self._offset:
                return
            fh.seek(self._offset)
            body, _ = split_tail(fh.read(size - self._offset))  # an unfinished last line waits for its end
            if not body:
                return
            sums = sum_body(body, *month)
            for key in list(self._sums):
                add = Totals(corrupt=sums.stats.corrupt)
                for acc in pick(sums.by_project, key):
                    add = _add(add, Totals(acc[2], int(acc[0]), int(acc[1]), acc[3]))
                self._sums[key] = _add(self._sums[key], add)
            self._offset += len(body)
            self._mark = self._mark_of(fh, st, self._offset)

    def _recount(self, month: tuple[int, int], fh: BinaryIO, st: os.stat_result) -> None:
        """Count the month again from the ledger (through the index) for every project asked so far."""
        keys = list(self._sums) or [None]
        self._month = month
        first, self._offset = self._index.totals(*month, keys[0])
        self._sums = {keys[0]: first}
        for key in keys[1:]:
            self._sums[key] = self._index.totals(*month, key, upto=self._offset)[0]
        self._mark = self._mark_of(fh, st, self._offset)

    @staticmethod
    def _mark_of(fh: BinaryIO, st: os.stat_result, offset: int) -> tuple[int, int, int]:
        start = max(0, offset - _MARK)
        fh.seek(start)
        return st.st_dev, st.st_ino, zlib.crc32(fh.read(offset - start))
