"""JSON string literals of long texts, kept from one save to the next.

Private module of :mod:`desktop.core.chat.conversation`.

Every autosave writes each message of each open node again, and escaping a long answer for JSON
(and measuring it for the history cap) was most of that work: C calls that hold the GIL throughout.
The save of a long project runs on a worker thread (``desktop.ui.window.save_worker``), but the GUI
thread waits whenever the worker holds the GIL: with eight nodes ending their answers within a second,
the saves took 30-90 ms each and the window, still streaming the other answers, froze for 100-260 ms
at a time (issue 28). A message's text does not change once it is written, so its literal and the
literal's UTF-8 size are kept here, keyed by the message's id and the field: a hit is the same ``str``
object (or an equal one, read again from disk); a changed text (an answer still streaming when it was
saved) replaces its entry, so a message holds one entry at most. The cache lives from one save to the
next: ``ProjectStore.save`` calls :func:`sweep` when it is done, which drops what that save did not
use (messages archived, closed or deleted: their texts are freed with them), so it holds about what
``project.json`` holds; ``MAX_CHARS`` bounds it besides (the least recently used leave first).
"""

from __future__ import annotations

import json.encoder
import re
import threading
from collections import OrderedDict

__all__ = ["BIG", "MAX_CHARS", "escape", "quoted", "quoted_size", "repair_surrogates", "sweep", "utf8_size"]

BIG = 512
"""Texts from this many characters are kept; shorter ones cost less to escape than to look up."""
MAX_CHARS = 16 * 1024 * 1024
"""The cache's bound: characters of literals kept (about what ``project.json`` of 80 nodes holds)."""

escape = json.encoder.encode_basestring  # the C escaper when available: ensure_ascii=False rules
_SURROGATE = re.compile("[\ud800-\udfff]")
_lock = threading.Lock()  # the save worker and the GUI thread (a short project's save) both use it
_cache: OrderedDict[tuple[str, str], tuple[str, str, int]] = OrderedDict()  # key -> text, literal, size
_chars = 0
_used: set[tuple[str, str]] = set()  # the keys asked for since the last sweep


def repair_surrogates(text: str) -> str:
    """``text`` with every UTF-16 surrogate code point replaced by U+FFFD (``text`` itself when none).

    Python strings can hold lone surrogates (``json.loads('"\\ud83d"')``), which no UTF-8 encoder
    accepts; a replacement keeps the byte length (3) so size estimates stay exact.
    """
    if text.isascii() or _SURROGATE.search(text) is None:
        return text
    return _SURROGATE.sub("\ufffd", text)


def utf8_size(text: str) -> int:
    """UTF-8 byte length of ``text`` (no copy for ASCII text; lone surrogates count 3 bytes)."""
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def _entry(text: str, key: tuple[str, str] | None) -> tuple[str, int]:
    """``(literal, UTF-8 size of the literal)`` of ``text``, from the cache when it is long."""
    if key is None or len(text) < BIG:
        literal = repair_surrogates(escape(text))
        return literal, utf8_size(literal)
    global _chars
    with _lock:
        _used.add(key)
        hit = _cache.get(key)
        if hit is not None and (hit[0] is text or hit[0] == text):
            _cache.move_to_end(key)
            return hit[1], hit[2]
    literal = repair_surrogates(escape(text))  # outside the lock: the other thread need not wait
    size = utf8_size(literal)
    with _lock:
        old = _cache.pop(key, None)
        if old is not None:
            _chars -= len(old[1])
        _cache[key] = (text, literal, size)
        _chars += len(literal)
        while _chars > MAX_CHARS and _cache:
            _, (_text, gone, _size) = _cache.popitem(last=False)
            _chars -= len(gone)
    return literal, size


def quoted(text: str, key: tuple[str, str] | None = None) -> str:
    """``text`` as a JSON string literal: quotes and escapes as ``json.dumps(text,
    ensure_ascii=False)`` writes them, lone surrogates as U+FFFD.

    Args:
        text: The text.
        key: ``(message id, field)`` when ``text`` is a message's field: a long one is kept.
    """
    return _entry(text, key)[0]


def quoted_size(text: str, key: tuple[str, str] | None = None) -> int:
    """The UTF-8 byte length of ``quoted(text, key)``."""
    return _entry(text, key)[1]


def sweep() -> int:
    """Drop the entries nobody asked for since the last sweep (a save is done); returns how many."""
    global _chars
    with _lock:
        gone = [key for key in _cache if key not in _used]
        for key in gone:
            _chars -= len(_cache.pop(key)[1])
        _used.clear()
    return len(gone)
