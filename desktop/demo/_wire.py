"""HTTP/1.1 on the wire for the loopback provider: parse one request, write heads, bodies and chunks.

Requests are parsed by hand (request line, headers, ``Content-Length`` or chunked body) from an
``asyncio.StreamReader``; responses are written to an ``asyncio.StreamWriter``, streaming bodies with
chunked transfer encoding.
"""

from __future__ import annotations

import asyncio
import http
import json
import time
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from desktop.demo._spec import RecordedRequest

__all__ = [
    "MAX_HEADER_BYTES",
    "BadRequest",
    "chunk",
    "head",
    "read_request",
    "send",
    "write_chunked",
]

MAX_HEADER_BYTES = 64 * 1024
_MAX_BODY_BYTES = 64 * 1024 * 1024
_WRITE_SLICE = 1024 * 1024


class BadRequest(Exception):
    """The bytes on the wire are not an acceptable HTTP request.

    Attributes:
        status: The HTTP status to answer with (400, 413 or 431).
    """

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def _reason(status: int) -> str:
    if status == 529:
        return "Overloaded"
    try:
        return http.HTTPStatus(status).phrase
    except ValueError:
        return "Unknown"


def chunk(data: bytes) -> bytes:
    """``data`` framed as one chunk of a chunked transfer-encoded body."""
    return b"%x\r\n" % len(data) + data + b"\r\n"


async def read_request(reader: asyncio.StreamReader) -> RecordedRequest | None:
    """Read one request from ``reader``; None when the client closed the connection between requests.

    Raises:
        BadRequest: The request line, a header, the length or the body is not acceptable.
    """
    try:
        head_bytes = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as exc:
        if exc.partial.strip():
            raise BadRequest(400, "incomplete request head") from None
        return None
    except asyncio.LimitOverrunError:
        raise BadRequest(431, "request head too large") from None
    lines = head_bytes[:-4].decode("latin-1").split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
        raise BadRequest(400, f"bad request line: {lines[0][:100]!r}")
    method, target, _version = parts
    headers: dict[str, str] = {}
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if not sep:
            raise BadRequest(400, f"bad header line: {line[:100]!r}")
        headers[name.strip().lower()] = value.strip()
    if headers.get("transfer-encoding", "").lower() == "chunked":
        body = await _read_chunked(reader)
    else:
        try:
            length = int(headers.get("content-length", "0"))
        except ValueError:
            raise BadRequest(400, "bad content-length") from None
        if length < 0 or length > _MAX_BODY_BYTES:
            raise BadRequest(413, "request body too large")
        body = await reader.readexactly(length) if length else b""
    parsed: Any | None = None
    if body:
        try:
            parsed = json.loads(body)
        except ValueError:
            parsed = None
    url = urlsplit(target)
    return RecordedRequest(method.upper(), url.path, headers, body, parsed, dict(parse_qsl(url.query)))


async def _read_chunked(reader: asyncio.StreamReader) -> bytes:
    body = bytearray()
    while True:
        size_line = await reader.readuntil(b"\r\n")
        try:
            size = int(size_line.split(b";")[0].strip(), 16)
        except ValueError:
            raise BadRequest(400, "bad chunk size") from None
        if size == 0:
            while (await reader.readuntil(b"\r\n")) != b"\r\n":  # trailers
                pass
            return bytes(body)
        body += await reader.readexactly(size)
        await reader.readexactly(2)
        if len(body) > _MAX_BODY_BYTES:
            raise BadRequest(413, "request body too large")


def head(status: int, headers: dict[str, str], keep_alive: bool) -> bytes:
    """The status line and headers of a response (``date``, ``server`` and ``connection`` added)."""
    date = time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime())
    lines = [f"HTTP/1.1 {status} {_reason(status)}", f"date: {date}", "server: chatnodes-fake"]
    lines += [f"{k}: {v}" for k, v in headers.items()]
    lines.append("connection: keep-alive" if keep_alive else "connection: close")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


async def send(
    writer: asyncio.StreamWriter,
    status: int,
    body: bytes,
    *,
    keep_alive: bool,
    content_type: str = "application/json",
    extra: dict[str, str] | None = None,
) -> bool:
    """Write a complete response with a ``Content-Length`` body; returns ``keep_alive``."""
    headers = {"content-type": content_type, "content-length": str(len(body)), **(extra or {})}
    writer.write(head(status, headers, keep_alive) + body)
    await writer.drain()
    return keep_alive


async def write_chunked(writer: asyncio.StreamWriter, data: bytes) -> None:
    """Write ``data`` as chunks of at most 1 MiB, draining after each (no terminating chunk)."""
    view = memoryview(data)
    for start in range(0, len(view), _WRITE_SLICE):
        piece = view[start : start + _WRITE_SLICE]
        writer.write(b"%x\r\n" % len(piece))
        writer.write(piece)
        writer.write(b"\r\n")
        await writer.drain()
