"""``clear_upper_state`` runs in the stream decoding loop at every slice: it must stay cheap."""

from __future__ import annotations

import time

from desktop.core.cpu_state import clear_upper_state


def test_clearing_the_vector_state_costs_microseconds() -> None:
    clear_upper_state()
    start = time.perf_counter()
    for _ in range(2_000):
        clear_upper_state()
    # ~0.5 us a call here; a 150 ms stream has ~100 slices. 25 us a call would still be noise.
    assert (time.perf_counter() - start) / 2_000 < 25e-6
