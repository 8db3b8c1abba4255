"""Freed memory goes back to the system (issue 28 #3): glibc keeps what ``free()`` returns inside its
heap, so RSS does not drop when a node's views are freed; ``heap.trim`` hands the free pages back."""

from __future__ import annotations

import sys

import pytest

from desktop.core import heap

PAGE = 4096


def _rss_mb() -> float:
    with open("/proc/self/statm", encoding="ascii") as fh:
        return int(fh.read().split()[1]) * PAGE / 2**20


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc_trim")
def test_trim_gives_back_freed_holes_of_the_heap() -> None:
    # 4 KiB blocks go through malloc (past pymalloc's small-object limit) and sit in the brk heap;
    # a small keeper after each one makes the freed blocks holes, which glibc never trims by itself.
    blocks = []
    keepers = []
    for i in range(25_000):
        blocks.append(bytes(4000) + i.to_bytes(4, "little"))
        keepers.append(bytes(600) + i.to_bytes(4, "little"))
    full = _rss_mb()
    blocks.clear()
    kept = _rss_mb()
    assert heap.trim()
    after = _rss_mb()
    freed = full - after
    assert kept > full - 20, "glibc gave the holes back without a trim: nothing left to test"
    assert freed >= 50, f"RSS {full:.0f} MB full, {kept:.0f} MB after free, {after:.0f} MB after trim"
    assert len(keepers) == 25_000


def test_trim_says_false_where_the_c_library_has_none(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(heap, "_malloc_trim", lambda: None)
    assert heap.trim() is False
