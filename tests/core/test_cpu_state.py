"""``clear_upper_state`` runs in the stream decoding loop at every slice.

What it costs per call is a benchmark row (``cpu.clear_upper_state`` in ``benchmarks/hot_paths.py``,
budget ≤ 25 µs a call), not a test: a busy machine cannot fail this file.
"""

from __future__ import annotations

from desktop.core.cpu_state import clear_upper_state


def test_clearing_the_vector_state_is_a_plain_call_that_returns_nothing() -> None:
    assert [clear_upper_state() for _ in range(2_000)] == [None] * 2_000
