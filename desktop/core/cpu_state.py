"""Put the CPU's vector registers back in their clean state after native code left them dirty.

On x86-64 CPUs since Skylake, once an AVX instruction has left the upper halves of the vector
registers dirty and no ``VZEROUPPER`` follows, every later legacy-SSE instruction pays a penalty,
and nearly all of CPython and its C extensions (the JSON scanner, string handling) is SSE code.
Qt's raster painting leaves that state behind (a 1×1 ``QImage.fill`` is enough), and on a glibc
that picks its EVEX string functions (AVX-512 CPUs, glibc ≥ 2.33) nothing in the process runs a
``VZEROUPPER`` afterwards. Measured on the 2-core Xeon the benchmarks run on: a loop-driven decode
of 2,500 SSE events takes 7.0–7.2 ms, 8.1–8.3 ms after any paint, 7.2–7.4 ms after a paint
followed by ``clear_upper_state()``; with glibc told to use its AVX2 functions instead (which do
end with ``VZEROUPPER``; ``GLIBC_TUNABLES=glibc.cpu.hwcaps=-AVX512F,...``), the benchmark's
plain-text stream into a node took 158.9 instead of 174.7 ms, the driver alone unchanged.

Python cannot run ``VZEROUPPER`` itself. OpenSSL's SHA-512 block function (its AVX2 path, the one
it picks on such CPUs) ends with one, so hashing an empty input (~0.5 us) leaves the registers
clean. Elsewhere (another CPU, another hash implementation) the call only costs that half
microsecond. The heavy Python work that follows paints while answers stream starts with it: each
decoding slice of a stream (``desktop.core.providers``) and each render tick (``desktop.ui.frames``).
(At the start of the transcript's window pass, the work after a scroll step, it made no measurable
difference: scroll frame p99 17.0 ms either way.)
"""

from __future__ import annotations

import hashlib
import logging

log = logging.getLogger(__name__)

__all__ = ["clear_upper_state"]

_sha512 = hashlib.sha512


def clear_upper_state() -> None:
    """Leave the CPU's upper vector register state clean (see the module docstring), ~0.5 us."""
    _sha512(b"").digest()
