"""The incremental SSE decoder against the WHATWG framing rules."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from desktop.core.providers import SSEDecoder, SSEError, SSEEvent


def decode(*pieces: bytes) -> list[SSEEvent]:
    decoder = SSEDecoder()
    events: list[SSEEvent] = []
    for piece in pieces:
        events += decoder.feed(piece)
    return events + decoder.flush()


def test_data_lines_comments_and_event_names() -> None:
    body = b": comment\n\ndata: a\ndata:b\n\nevent: ping\ndata: {}\n\n"
    assert decode(body) == [SSEEvent("message", "a\nb"), SSEEvent("ping", "{}")]


def test_line_endings_crlf_cr_and_lf_mixed() -> None:
    body = b"data: one\r\n\r\ndata: two\r\rdata: three\n\n"
    assert [e.data for e in decode(body)] == ["one", "two", "three"]


def test_cr_and_lf_in_separate_reads_are_one_line_break() -> None:
    # "\r" ends a chunk and "\n" starts the next: one line ending, not an empty line in between.
    assert [e.data for e in decode(b"data: a\r", b"\ndata: b\r\n", b"\r\n")] == ["a\nb"]


def test_utf8_character_split_across_reads() -> None:
    raw = "data: héllo 😊\n\n".encode()
    cut = raw.index("😊".encode()) + 2
    assert decode(raw[:cut], raw[cut:])[0].data == "héllo 😊"


def test_final_event_without_blank_line_is_dispatched_at_eof() -> None:
    assert decode(b"event: message_stop\ndata: {\"type\": \"message_stop\"}") == [
        SSEEvent("message_stop", '{"type": "message_stop"}')
    ]


def test_event_without_data_is_not_dispatched_and_name_resets() -> None:
    assert decode(b"event: lonely\n\ndata: x\n\n") == [SSEEvent("message", "x")]


def test_field_without_colon_space_and_unknown_fields() -> None:
    assert decode(b"data\nretry: 10\nfoo: bar\nid: 7\ndata:x\n\n") == [SSEEvent("message", "\nx", "7")]


def test_leading_bom_is_ignored() -> None:
    assert decode(b"\xef\xbb\xbfdata: x\n\n") == [SSEEvent("message", "x")]


def test_invalid_utf8_is_replaced_not_fatal() -> None:
    assert decode(b"data: \xff\n\n")[0].data == "\ufffd"


def test_endless_line_is_an_error() -> None:
    decoder = SSEDecoder(max_line_chars=100)
    with pytest.raises(SSEError):
        for _ in range(20):
            decoder.feed(b"data: " + b"x" * 10)


@settings(max_examples=150, deadline=None)
@given(
    datas=st.lists(st.text(st.characters(blacklist_characters="\r\n", blacklist_categories=("Cs",))),
                   min_size=1, max_size=6),
    newline=st.sampled_from([b"\n", b"\r\n", b"\r"]),
    seed=st.integers(0, 2**32),
)
def test_any_split_gives_the_same_events(datas: list[str], newline: bytes, seed: int) -> None:
    body = b"".join(b"data: " + d.encode() + newline + b": c" + newline + newline for d in datas)
    rng = random.Random(seed)
    cuts = sorted(rng.sample(range(1, len(body)), min(len(body) - 1, rng.randint(0, 30))))
    pieces = [body[a:b] for a, b in zip([0, *cuts], [*cuts, len(body)], strict=True)]
    assert [e.data for e in decode(*pieces)] == datas
