"""Secret scrubbing: known keys and any 8+ character run of them, key shapes, the logging filter."""

from __future__ import annotations

import io
import logging

import pytest

from desktop.core.redact import (
    REDACTED,
    KeyScrubFilter,
    has_control_characters,
    scrub_key_shapes,
    scrub_secrets,
)

KEY = "sk-proj-Abcdefghijklmnopqrstuvwxyz0123456789"


def test_whole_key_is_replaced() -> None:
    assert scrub_secrets(f"bad key {KEY}.", [KEY]) == f"bad key {REDACTED}."


@pytest.mark.parametrize(
    "piece",
    [
        KEY[3:],  # echoed without its first characters
        KEY[-8:],  # only the last 8
        KEY[:8],  # only the first 8
        KEY[10:30],  # from the middle
    ],
)
def test_any_run_of_eight_or_more_key_characters_is_replaced(piece: str) -> None:
    text = f"Incorrect API key provided: ...{piece}... try again"
    out = scrub_secrets(text, [KEY])
    assert piece not in out
    assert out == f"Incorrect API key provided: ...{REDACTED}... try again"


def test_runs_shorter_than_eight_characters_stay() -> None:
    text = f"id {KEY[5:12]} here"  # 7 characters of the key
    assert scrub_secrets(text, [KEY]) == text


def test_every_occurrence_and_every_secret_is_replaced() -> None:
    other = "ant-api03-ZYXWVUTSRQPONMLK"
    text = f"{KEY[4:20]} and {other} and {KEY}"
    out = scrub_secrets(text, [KEY, other, None, ""])
    assert out == f"{REDACTED} and {REDACTED} and {REDACTED}"


def test_short_secrets_are_replaced_only_whole_and_tiny_ones_ignored() -> None:
    assert scrub_secrets("pw abcd1 abcd", ["abcd1"]) == f"pw {REDACTED} abcd"
    assert scrub_secrets("a b c", ["a"]) == "a b c"


def test_key_with_a_control_character_is_caught_raw_and_escaped() -> None:
    key = "sk-live-0123456789\nabcdefghij"
    assert has_control_characters(key) and not has_control_characters(KEY)
    raw = f"header value {key}"
    escaped = f"Illegal header value b'Bearer {key!r}'"
    assert "0123456789" not in scrub_secrets(raw, [key])
    assert "abcdefghij" not in scrub_secrets(raw, [key])
    out = scrub_secrets(escaped, [key])
    assert "0123456789" not in out and "abcdefghij" not in out and REDACTED in out


def test_scrub_key_shapes() -> None:
    text = "a sk-abcdefghijklmnop b gsk_ABCDEFGH12 c AIza" + "x" * 30 + " d sk-short"
    assert scrub_key_shapes(text) == "a *** b *** c *** d sk-short"


def test_log_filter_scrubs_message_args_and_exception_text() -> None:
    secrets = [KEY]
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(KeyScrubFilter(lambda: secrets))
    logger = logging.getLogger("tests.redact.filter")
    logger.addHandler(handler)
    logger.propagate = False
    logger.setLevel(logging.DEBUG)
    try:
        logger.info("sending with %s to %s", KEY[2:], "host")
        logger.info("unknown key sk-zzzzzzzzzzzzzzzz")
        try:
            raise RuntimeError(f"server said {KEY}")
        except RuntimeError:
            logger.exception("failed")
        secrets.append("a-new-secret-added-later")
        logger.warning("later: %r", "a-new-secret-added-later")
    finally:
        logger.removeHandler(handler)
    text = stream.getvalue()
    assert KEY[2:12] not in text and KEY[-10:] not in text
    assert "sk-zzzzzzzz" not in text and "***" in text
    assert "to host" in text and "RuntimeError" in text
    assert "new-secret" not in text
    assert text.count(REDACTED) >= 3


def test_log_filter_keeps_records_with_bad_args_and_survives_a_failing_source() -> None:
    def broken() -> list[str]:
        raise OSError("keyring locked")

    f = KeyScrubFilter(broken)
    record = logging.LogRecord("x", logging.INFO, __file__, 1, "plain %s", ("sk-abcdefghijklmnop",), None)
    assert f.filter(record) is True and record.getMessage() == "plain ***"
    bad = logging.LogRecord("x", logging.INFO, __file__, 1, "%d", ("nope",), None)
    assert f.filter(bad) is True
