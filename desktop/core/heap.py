"""Give the C heap's free memory back to the operating system.

glibc keeps memory freed by ``free()`` inside its heaps for the next allocation; Python and Qt free
many small blocks, so after a node with thousands of views and documents is closed the memory is
free for the process but still counts in its resident size (RSS stays where it was). glibc's
``malloc_trim(0)`` returns every free page of every arena (the main heap and each thread's) to the
kernel. On other C libraries (macOS, Windows, musl) :func:`trim` does nothing and says so.
"""

from __future__ import annotations

import functools
import logging
import sys
import time
from collections.abc import Callable

log = logging.getLogger(__name__)

__all__ = ["trim"]

@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's ``malloc_trim``, looked up once; None where the C library has none."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes  # here: only a trim needs it (start-up stays lean)

    try:
        fn = ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError):  # not glibc (musl has no malloc_trim)
        return None
    fn.argtypes = [ctypes.c_size_t]
    fn.restype = ctypes.c_int
    return fn


def trim() -> bool:
    """Return the heap's free pages to the operating system (glibc's ``malloc_trim(0)``).

    Returns:
        True when memory was given back; False when nothing was, or the C library has no such call.
    """
    fn = _malloc_trim()
    if fn is None:
        return False
    start = time.perf_counter()
    released = bool(fn(0))
    log.debug("malloc_trim: %s in %.1f ms", "released" if released else "nothing",
              (time.perf_counter() - start) * 1000)
    return released
