"""This month's spending, kept current by reading only what was appended to the ledger since last time.

Budgets are checked before every send and the status bar shows the app budget after every response,
so reading the whole ledger each time (100,000 lines: ~150 ms) would put that cost on the hot path.
:class:`MonthlyTally` reads the file once, then only the bytes appended since (by this window, another
window or another instance): a check costs one ``stat`` and a read of the new lines. A new month, or a
ledger that shrank (replaced by hand), starts the count again from the file.
"""

from __future__ import annotations

import datetime as _dt
import logging
import os
from collections.abc import Callable
from pathlib import Path

from ._ledger import Totals, project_key, sum_lines
from ._periods import local_now, month_range

log = logging.getLogger(__name__)

__all__ = ["MonthlyTally"]


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
        self._month: tuple[int, int] | None = None
        self._offset = 0
        self._sums: dict[bytes | None, Totals] = {}

    def totals(self, project: str | os.PathLike[str] | None = None) -> Totals:
        """This month's totals, of ``project`` only when given; an unreadable ledger counts nothing."""
        key = project_key(project) if project is not None else None
        try:
            self._refresh()
            if key not in self._sums:  # first question about this project: count what was read so far
                self._sums[key] = self._sum(self._read(0, self._offset), key)
        except OSError as exc:
            log.warning("usage ledger: cannot read %s: %s", self.path, exc.strerror or exc)
            return Totals()
        return self._sums[key]

    def _refresh(self) -> None:
        month = month_range(self._clock())
        try:
            size = self.path.stat().st_size
        except FileNotFoundError:
            size = 0
        if month != self._month or size < self._offset:
            self._month, self._offset = month, 0
            self._sums = {key: Totals() for key in self._sums} or {None: Totals()}
        if size == self._offset:
            return
        data = self._read(self._offset, size)
        cut = data.rfind(b"\n") + 1  # an unfinished last line waits for its end
        body = data[:cut]
        self._offset += len(body)
        for key in list(self._sums):
            self._sums[key] = _add(self._sums[key], self._sum(body, key))

    def _read(self, start: int, end: int) -> bytes:
        if end <= start:
            return b""
        try:
            with open(self.path, "rb") as fh:
                fh.seek(start)
                data = fh.read(end - start)
        except FileNotFoundError:
            return b""
        return data[: data.rfind(b"\n") + 1]

    def _sum(self, body: bytes, key: bytes | None) -> Totals:
        assert self._month is not None
        return sum_lines(body, self._month[0], self._month[1], key)
