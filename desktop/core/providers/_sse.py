"""Incremental WHATWG server-sent-events decoder.

Bytes go in as they arrive from the network (cut anywhere, even inside a multi-byte UTF-8
character or between ``\\r`` and ``\\n``); complete events come out. Lines may end with
CRLF, LF or CR; lines starting with ``:`` are comments; several ``data:`` lines join with
``\\n``. Unlike a strict WHATWG parser, :meth:`SSEDecoder.flush` dispatches a final event
that is not followed by a blank line (real servers end bodies that way).

The decoder is on the hot path of every streamed response, so it works on whole chunks
with ``str.split`` and keeps per-line work to a couple of string tests.
"""

from __future__ import annotations

import codecs
import logging
from dataclasses import dataclass

log = logging.getLogger(__name__)

__all__ = ["SSEEvent", "SSEDecoder", "SSEError", "MAX_LINE_CHARS", "MAX_EVENT_CHARS"]

#: A single SSE line longer than this is treated as a broken stream (protects memory).
MAX_LINE_CHARS = 16 * 1024 * 1024
#: An event whose data lines add up to more than this is treated as a broken stream.
MAX_EVENT_CHARS = 16 * 1024 * 1024
# Each data line is charged this much on top of its length (a Python string's own size), so a
# flood of tiny ``data:`` lines is bounded in memory too, not only in characters.
_LINE_COST = 64


class SSEError(ValueError):
    """The byte stream cannot be decoded as server-sent events (e.g. an endless line)."""


@dataclass(frozen=True, slots=True)
class SSEEvent:
    """One dispatched event.

    Attributes:
        event: The ``event:`` field, or ``"message"`` when none was given.
        data: The data lines joined with ``\\n``.
        id: The last ``id:`` field seen, if any.
    """

    event: str
    data: str
    id: str | None = None


class SSEDecoder:
    """Turns a byte stream into :class:`SSEEvent` objects, one chunk at a time."""

    __slots__ = ("_decoder", "_tail", "_tail_len", "_after_cr", "_data", "_data_len", "_event", "_last_id",
                 "_started", "_max_line", "_max_event")

    def __init__(
        self, *, max_line_chars: int = MAX_LINE_CHARS, max_event_chars: int = MAX_EVENT_CHARS
    ) -> None:
        """Create a decoder.

        Args:
            max_line_chars: The longest line accepted (characters).
            max_event_chars: The most data characters one event may gather over all its lines
                (each line also counts 64 for its bookkeeping).
        """
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._tail: list[str] = []  # pieces of the current, not yet terminated line
        self._tail_len = 0
        self._after_cr = False  # the previous chunk ended with "\r": a leading "\n" belongs to it
        self._data: list[str] = []
        self._data_len = 0
        self._event = ""
        self._last_id: str | None = None
        self._started = False
        self._max_line = max_line_chars
        self._max_event = max_event_chars

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        """Decode one network chunk and return the events it completes.

        Raises:
            SSEError: A line grew beyond ``max_line_chars`` or an event beyond ``max_event_chars``.
        """
        return self._feed_text(self._decoder.decode(chunk))

    def flush(self) -> list[SSEEvent]:
        """Signal the end of the body: return the remaining events, including an unterminated one."""
        out = self._feed_text(self._decoder.decode(b"", True))
        if self._tail:
            line = "".join(self._tail)
            self._tail.clear()
            self._tail_len = 0
            self._line(line, out)
        self._dispatch(out)
        return out

    # -----------------------------------------------------------------------------------------

    def _feed_text(self, text: str) -> list[SSEEvent]:
        out: list[SSEEvent] = []
        if not text:
            return out
        if not self._started:
            self._started = True
            if text[0] == "\ufeff":
                text = text[1:]
        if "\r" in text or self._after_cr:
            if self._after_cr and text[:1] == "\n":
                text = text[1:]
            self._after_cr = text[-1:] == "\r"
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        if "\n" not in text:
            self._tail.append(text)
            self._tail_len += len(text)
            if self._tail_len > self._max_line:
                raise SSEError(f"an event-stream line is longer than {self._max_line} characters")
            if self._tail_len + self._data_len > self._max_event:
                self._too_big()
            return out
        lines = text.split("\n")
        if self._tail:
            self._tail.append(lines[0])
            lines[0] = "".join(self._tail)
            self._tail.clear()
        last = lines.pop()
        if last:
            self._tail.append(last)
        self._tail_len = len(last)
        if self._tail_len > self._max_line:
            raise SSEError(f"an event-stream line is longer than {self._max_line} characters")
        data = self._data
        for line in lines:
            if not line:
                if data:
                    self._dispatch(out)
                else:
                    self._event = ""
            elif line[:5] == "data:":
                data.append(line[6:] if line[5:6] == " " else line[5:])
                self._data_len += len(line) + _LINE_COST
                if self._data_len > self._max_event:
                    self._too_big()
            else:
                self._line(line, out)
        if self._tail_len + self._data_len > self._max_event:
            self._too_big()
        return out

    def _too_big(self) -> None:
        self._data.clear()
        self._tail.clear()
        self._data_len = self._tail_len = 0
        raise SSEError(f"an event-stream event is longer than {self._max_event} characters")

    def _line(self, line: str, out: list[SSEEvent]) -> None:
        """Process one line that is not a plain ``data:`` line (or any line at EOF)."""
        if not line:
            self._dispatch(out)
            return
        if line[0] == ":":
            return
        name, sep, value = line.partition(":")
        if sep and value[:1] == " ":
            value = value[1:]
        if name == "data":
            self._data.append(value)
            self._data_len += len(value) + _LINE_COST
            if self._data_len > self._max_event:
                self._too_big()
        elif name == "event":
            self._event = value
        elif name == "id":
            if "\0" not in value:
                self._last_id = value
        # "retry" and unknown fields are ignored, as the standard says.

    def _dispatch(self, out: list[SSEEvent]) -> None:
        if self._data:
            out.append(SSEEvent(self._event or "message", "\n".join(self._data), self._last_id))
            self._data.clear()
            self._data_len = 0
        self._event = ""
