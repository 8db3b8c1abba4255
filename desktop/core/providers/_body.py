"""Reading response bodies with bounded memory, decompression included.

httpx decompresses a whole network read at once: 64 KiB of gzip can inflate to 64 MiB, so a
hostile server (a "gzip bomb") could make one read cost gigabytes. The readers here take the raw
bytes and inflate ``gzip``/``deflate`` in pieces of at most :data:`PIECE_BYTES`, and requests ask
only for those encodings (:data:`ACCEPT_ENCODING`).
"""

from __future__ import annotations

import logging
import zlib
from collections.abc import AsyncGenerator, Iterator
from contextlib import aclosing

import httpx

log = logging.getLogger(__name__)

__all__ = [
    "ACCEPT_ENCODING",
    "PIECE_BYTES",
    "MODEL_LIST_LIMIT",
    "BodyDecodeError",
    "iter_body",
    "read_limited",
]

#: The encodings the bounded readers can inflate piecewise; sent as ``accept-encoding``.
ACCEPT_ENCODING = "gzip, deflate"
#: The largest piece of decoded body handed out at once.
PIECE_BYTES = 64 * 1024
#: At most this many (decompressed) bytes of a model list are read.
MODEL_LIST_LIMIT = 4 * 1024 * 1024


class BodyDecodeError(ValueError):
    """The compressed body is corrupt."""


class _Inflater:
    """Incremental gzip/deflate decoder that never produces more than ``piece`` bytes per step."""

    def __init__(self, encoding: str, piece: int) -> None:
        self._gzip = encoding != "deflate"
        self._piece = piece
        self._first = True
        self._z = self._new(zlib_header=True)

    def _new(self, *, zlib_header: bool) -> zlib._Decompress:
        if self._gzip:
            return zlib.decompressobj(wbits=zlib.MAX_WBITS | 16)
        return zlib.decompressobj(wbits=zlib.MAX_WBITS if zlib_header else -zlib.MAX_WBITS)

    def feed(self, data: bytes) -> Iterator[bytes]:
        """Inflate ``data`` lazily: each decoded piece is made only when the previous was taken."""
        buf = data
        while buf:
            try:
                out = self._z.decompress(buf, self._piece)
            except zlib.error as exc:
                if self._first and not self._gzip:  # "deflate" sent without the zlib header
                    self._first = False
                    self._z = self._new(zlib_header=False)
                    continue
                raise BodyDecodeError(f"corrupt {'gzip' if self._gzip else 'deflate'} body: {exc}") from None
            self._first = False
            if out:
                yield out
            if self._z.eof:
                rest = self._z.unused_data
                if not rest.strip(b"\0"):
                    return
                self._z = self._new(zlib_header=True)  # another gzip member follows
                buf = rest
            else:
                buf = self._z.unconsumed_tail


async def iter_body(response: httpx.Response, *, piece: int = PIECE_BYTES) -> AsyncGenerator[bytes, None]:
    """The decoded body of a streamed ``response``, in pieces of at most ``piece`` bytes when
    compressed with gzip or deflate (other encodings are left to httpx).

    Raises:
        BodyDecodeError: The compressed body is corrupt.
    """
    if response.is_stream_consumed:  # a body already in memory (read before, or built with content=)
        content = response.content
        for start in range(0, len(content), piece):
            yield content[start : start + piece]
        return
    encoding = response.headers.get("content-encoding", "").strip().lower()
    if encoding in ("", "identity"):
        async for chunk in response.aiter_raw():
            yield chunk
    elif encoding in ("gzip", "x-gzip", "deflate"):
        inflater = _Inflater(encoding, piece)
        async for chunk in response.aiter_raw():
            for out in inflater.feed(chunk):
                yield out
    else:
        log.debug("body encoded as %r: decoded by httpx", encoding)
        async for chunk in response.aiter_bytes():
            yield chunk


async def read_limited(response: httpx.Response, limit: int) -> tuple[bytes, bool]:
    """At most ``limit`` decoded bytes of the body, and whether more followed (then not read).

    Raises:
        BodyDecodeError: The compressed body is corrupt.
    """
    parts: list[bytes] = []
    size = 0
    async with aclosing(iter_body(response, piece=min(PIECE_BYTES, limit + 1))) as body:
        async for chunk in body:
            parts.append(chunk)
            size += len(chunk)
            if size > limit:
                return b"".join(parts)[:limit], True
    return b"".join(parts), False
