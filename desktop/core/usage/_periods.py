"""Calendar periods in local time, as epoch-millisecond ranges ``[start, end)``.

Every function takes ``now`` explicitly (a clock injected by the caller), as a naive local
``datetime`` or an aware one (converted to local time). Day, week and month starts are local
midnights, so a day is 23 or 25 hours long across a daylight-saving change.
"""

from __future__ import annotations

import datetime as _dt
from typing import Literal

__all__ = ["Period", "PERIODS", "local_now", "to_local", "ms_of", "period_range", "month_range",
           "day_starts"]

Period = Literal["month", "week", "today"]
PERIODS: tuple[Period, ...] = ("month", "week", "today")


def local_now() -> _dt.datetime:
    """The current local time (naive)."""
    return _dt.datetime.now()


def to_local(now: _dt.datetime) -> _dt.datetime:
    """``now`` as a naive local datetime."""
    if now.tzinfo is not None:
        return now.astimezone().replace(tzinfo=None)
    return now


def ms_of(moment: _dt.datetime) -> int:
    """Epoch milliseconds of a naive local (or aware) datetime."""
    return int(round(moment.timestamp() * 1000))


def _midnight(day: _dt.date) -> _dt.datetime:
    return _dt.datetime(day.year, day.month, day.day)


def month_range(now: _dt.datetime) -> tuple[int, int]:
    """The calendar month holding ``now``: first local midnight to the next month's."""
    local = to_local(now)
    first = _dt.date(local.year, local.month, 1)
    following = _dt.date(local.year + (local.month == 12), local.month % 12 + 1, 1)
    return ms_of(_midnight(first)), ms_of(_midnight(following))


def period_range(period: Period, now: _dt.datetime) -> tuple[int, int]:
    """``[start, end)`` of this month, this week (Monday to Monday) or today, in local time.

    Raises:
        ValueError: Unknown period.
    """
    local = to_local(now)
    today = local.date()
    if period == "month":
        return month_range(local)
    if period == "week":
        monday = today - _dt.timedelta(days=today.weekday())
        return ms_of(_midnight(monday)), ms_of(_midnight(monday + _dt.timedelta(days=7)))
    if period == "today":
        return ms_of(_midnight(today)), ms_of(_midnight(today + _dt.timedelta(days=1)))
    raise ValueError(f"unknown period: {period!r}")


def day_starts(now: _dt.datetime, days: int) -> tuple[list[_dt.date], list[int]]:
    """The last ``days`` local days ending today, and their ``days + 1`` midnight boundaries in ms.

    ``bounds[i] <= ts < bounds[i + 1]`` is day ``dates[i]``; the last bound is tomorrow's midnight.
    """
    today = to_local(now).date()
    dates = [today - _dt.timedelta(days=days - 1 - i) for i in range(days)]
    bounds = [ms_of(_midnight(d)) for d in dates]
    bounds.append(ms_of(_midnight(today + _dt.timedelta(days=1))))
    return dates, bounds
