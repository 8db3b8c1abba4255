"""Keep API keys out of text shown to the user, written to logs or raised in exceptions.

Two scrubbers and a logging filter:

- :func:`scrub_secrets` removes known secrets, and any run of 8 or more characters copied from one
  (a server that echoes a key without its first characters, or cuts it in the middle).
- :func:`scrub_key_shapes` removes anything shaped like a provider key (``sk-…``, ``gsk_…``,
  ``AIza…``) even when the key is not known.
- :class:`KeyScrubFilter` applies both to every log record that passes a handler.

Pure Python, no Qt.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable
from functools import lru_cache

__all__ = [
    "REDACTED",
    "KEY_SHAPE_MARK",
    "MIN_SECRET_RUN",
    "scrub_secrets",
    "scrub_key_shapes",
    "has_control_characters",
    "KeyScrubFilter",
]

#: What a known secret (or a run copied from one) is replaced with.
REDACTED = "[redacted]"
#: What a key-shaped word is replaced with.
KEY_SHAPE_MARK = "***"
#: The shortest run of a secret's characters that counts as a leak.
MIN_SECRET_RUN = 8
#: Secrets shorter than this are replaced only whole (a 3-character "key" would redact words).
_MIN_WHOLE_SECRET = 4

_KEY_PATTERN = re.compile(r"\b(sk-[A-Za-z0-9_\-]{8,}|gsk_[A-Za-z0-9]{8,}|AIza[0-9A-Za-z_\-]{20,})")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def has_control_characters(text: str) -> bool:
    """True when ``text`` holds a C0/C1 control character (a line break, a tab, NUL...)."""
    return _CONTROL.search(text) is not None


def _variants(secret: str) -> tuple[str, ...]:
    """The forms a secret takes in text: itself and its escaped forms (``\\n`` as two characters),
    which is how a key holding a control character shows in a ``repr`` or an error message."""
    forms = [secret]
    if has_control_characters(secret) or not secret.isascii():
        for escaped in (secret.encode("unicode_escape").decode("ascii"), repr(secret)[1:-1]):
            if escaped not in forms:
                forms.append(escaped)
    return tuple(forms)


@lru_cache(maxsize=32)
def _matcher(secrets: tuple[str, ...]) -> tuple[re.Pattern[str] | None, tuple[str, ...], tuple[str, ...]]:
    """(regex of every ``MIN_SECRET_RUN``-character window, long forms, short whole secrets)."""
    long_forms: list[str] = []
    short: list[str] = []
    for secret in secrets:
        if len(secret) >= MIN_SECRET_RUN:
            long_forms.extend(v for v in _variants(secret) if v not in long_forms)
        elif len(secret) >= _MIN_WHOLE_SECRET:
            short.append(secret)
    windows = {
        form[i : i + MIN_SECRET_RUN] for form in long_forms for i in range(len(form) - MIN_SECRET_RUN + 1)
    }
    pattern = None
    if windows:
        alternation = "|".join(re.escape(w) for w in sorted(windows, reverse=True))
        pattern = re.compile(f"(?:{alternation})")
    return pattern, tuple(long_forms), tuple(sorted(short, key=len, reverse=True))


def scrub_secrets(text: str, secrets: Iterable[str | None], replacement: str = REDACTED) -> str:
    """``text`` with every known secret, and every run of 8+ characters copied from one, replaced.

    A run is any substring of a secret (or of its escaped form, for a key holding a control
    character) at least ``MIN_SECRET_RUN`` characters long, wherever it starts; the longest run at
    each place is replaced by ``[redacted]``. Secrets of 4 to 7 characters are replaced only whole;
    shorter ones and empty or None entries are ignored.

    Args:
        text: The text to clean.
        secrets: The known secrets (API keys).
        replacement: What stands in for each removed run.

    Returns:
        The cleaned text (``text`` itself when nothing matched).
    """
    known = tuple(sorted({s for s in secrets if s and len(s) >= _MIN_WHOLE_SECRET}))
    if not known or not text:
        return text
    pattern, forms, short = _matcher(known)
    if pattern is not None:
        parts: list[str] = []
        pos = 0
        while True:
            found = pattern.search(text, pos)
            if found is None:
                break
            start = found.start()
            end = found.end()
            # Extend to the longest run that is still a substring of one form of a secret.
            while end < len(text) and any(text[start : end + 1] in form for form in forms):
                end += 1
            parts.append(text[pos:start])
            parts.append(replacement)
            pos = end
        if parts:
            parts.append(text[pos:])
            text = "".join(parts)
    for secret in short:
        if secret in text:
            text = text.replace(secret, replacement)
    return text


def scrub_key_shapes(text: str) -> str:
    """``text`` with anything shaped like a provider key (``sk-…``, ``gsk_…``, ``AIza…``) as ``***``."""
    return _KEY_PATTERN.sub(KEY_SHAPE_MARK, text)


class KeyScrubFilter(logging.Filter):
    """A logging filter that removes secrets and key shapes from every record it sees.

    Install it on handlers (a filter on a logger does not see records of its child loggers). The
    record's message is formatted with its arguments and cleaned, and so is the text of an
    attached exception and stack; the record always passes.

    Args:
        secrets: Returns the known secrets at the time of each record (keys change while the app
            runs); None scrubs key shapes only.
    """

    def __init__(self, secrets: Callable[[], Iterable[str | None]] | None = None) -> None:
        super().__init__()
        self._secrets = secrets

    def _clean(self, text: str, known: Iterable[str | None]) -> str:
        return scrub_key_shapes(scrub_secrets(text, known))

    def filter(self, record: logging.LogRecord) -> bool:
        """Clean ``record`` in place; always True (the record is kept)."""
        try:
            known = list(self._secrets()) if self._secrets is not None else []
        except Exception:  # a failing secret source must not break logging
            known = []
        try:
            message = record.getMessage()
        except Exception:  # malformed arguments: logging reports those itself
            return True
        record.msg = self._clean(message, known)
        record.args = None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = self._clean(record.exc_text, known)
        if record.stack_info:
            record.stack_info = self._clean(record.stack_info, known)
        return True
