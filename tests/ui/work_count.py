"""Work counted, not timed: how many Python lines a call executes (deterministic for a given input).

A linearity check compares the count for an input with the count for the input doubled (or ten
times): linear code scales by the same factor, a quadratic rescan by its square, whatever the
machine's load. What the work costs in time is the benchmarks' business (``benchmarks/``).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from types import FrameType
from typing import Any

__all__ = ["python_lines"]


def python_lines(call: Callable[[], object]) -> int:
    """Run ``call()`` and return how many Python source lines it executed (``sys.settrace`` line
    events; work done inside C functions counts as the one line that called them)."""
    count = 0

    def local(frame: FrameType, event: str, arg: Any) -> Any:
        nonlocal count
        if event == "line":
            count += 1
        return local

    def enter(frame: FrameType, event: str, arg: Any) -> Any:
        return local

    previous = sys.gettrace()
    sys.settrace(enter)
    try:
        call()
    finally:
        sys.settrace(previous)
    return count
