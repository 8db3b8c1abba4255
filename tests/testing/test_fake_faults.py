"""Every fault the fake provider injects, on both protocols."""

from __future__ import annotations

import json
import threading
import time

import httpx
import pytest
from fakesse import anthropic_blocks, anthropic_events, openai_chunks, openai_text, parse_sse

from desktop.testing import FakeProvider, Fault, Turn, huge_text
from desktop.testing.clock import RecordingClock

PROTOCOLS = ["openai", "anthropic"]


def _url(fp: FakeProvider, protocol: str) -> str:
    return fp.openai_base_url + "/chat/completions" if protocol == "openai" else fp.base_url + "/v1/messages"


def _body(stream: bool = True) -> dict[str, object]:
    return {
        "model": "m",
        "max_tokens": 100,
        "stream": stream,
        "stream_options": {"include_usage": True},
        "messages": [{"role": "user", "content": "hi"}],
    }


@pytest.mark.parametrize(
    ("status", "etype"),
    [
        (400, "invalid_request_error"),
        (401, "authentication_error"),
        (403, "permission_error"),
        (404, "not_found_error"),
        (429, "rate_limit_error"),
        (500, "api_error"),
        (503, "api_error"),
        (529, "overloaded_error"),
    ],
)
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_http_error_bodies(
    fp: FakeProvider, client: httpx.Client, protocol: str, status: int, etype: str
) -> None:
    fp.script(Turn(text="never sent", fault=Fault.http(status)))
    r = client.post(_url(fp, protocol), json=_body())
    assert r.status_code == status
    body = r.json()
    if protocol == "anthropic":
        assert body["type"] == "error" and body["error"]["type"] == etype
        assert body["error"]["message"] and body["request_id"].startswith("req_")
    else:
        assert set(body["error"]) == {"message", "type", "param", "code"}
        assert body["error"]["type"] == etype and body["error"]["message"]
    assert "retry-after" not in r.headers


def test_retry_after_headers_and_custom_message(fp: FakeProvider, client: httpx.Client) -> None:
    fp.script(
        Turn(fault=Fault.http(429, retry_after=2, retry_after_ms=1500, message="slow down")),
        Turn(fault=Fault.http(503, retry_after="Wed, 21 Oct 2015 07:28:00 GMT")),
        Turn(fault=Fault.http(429, retry_after=1.5)),
    )
    r = client.post(_url(fp, "anthropic"), json=_body())
    assert r.status_code == 429 and r.headers["retry-after"] == "2" and r.headers["retry-after-ms"] == "1500"
    assert r.json()["error"] == {"type": "rate_limit_error", "message": "slow down"}
    r = client.post(_url(fp, "openai"), json=_body())
    assert r.status_code == 503 and r.headers["retry-after"] == "Wed, 21 Oct 2015 07:28:00 GMT"
    r = client.post(_url(fp, "openai"), json=_body())
    assert r.headers["retry-after"] == "1.5"
    assert r.json()["error"]["code"] == "rate_limit_exceeded"


def test_http_error_custom_bodies(fp: FakeProvider, client: httpx.Client) -> None:
    fp.script(
        Turn(fault=Fault.http(502, body="<html>Bad gateway</html>")),
        Turn(fault=Fault.http(400, body={"error": {"code": 400, "message": "odd", "metadata": {}}})),
    )
    r = client.post(_url(fp, "openai"), json=_body())
    assert r.status_code == 502 and r.text == "<html>Bad gateway</html>"
    assert r.headers["content-type"].startswith("text/html")
    r = client.post(_url(fp, "openai"), json=_body())
    assert r.json() == {"error": {"code": 400, "message": "odd", "metadata": {}}}


def test_midstream_error_anthropic(fp: FakeProvider, client: httpx.Client) -> None:
    fp.script(Turn(text="partial answer here", fault=Fault.midstream_error(after_events=5)))
    r = client.post(_url(fp, "anthropic"), json=_body())
    assert r.status_code == 200
    events = anthropic_events(r.content)
    assert len(events) == 6
    assert events[-1] == (
        "error",
        {
            "type": "error",
            "error": {"type": "overloaded_error", "message": "Overloaded"},
            "request_id": events[-1][1]["request_id"],
        },
    )
    assert "message_stop" not in [n for n, _ in events]
    assert anthropic_blocks(events[:-1])[0]["text"] == "partial "


def test_midstream_error_openai(fp: FakeProvider, client: httpx.Client) -> None:
    fp.script(
        Turn(text="abcdefgh", fault=Fault.midstream_error(2, error_type="server_error", message="boom"))
    )
    r = client.post(_url(fp, "openai"), json=_body())
    assert r.status_code == 200
    chunks = openai_chunks(r.content)
    assert chunks[-1] == {"error": {"message": "boom", "type": "server_error", "param": None, "code": None}}
    assert "[DONE]" not in chunks and openai_text(chunks[:-1]) == "abcd"


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_drop_mid_stream(fp: FakeProvider, client: httpx.Client, protocol: str) -> None:
    fp.script(Turn(text="x" * 40, fault=Fault.drop(after_events=4)))
    received = b""
    with (
        pytest.raises(httpx.RemoteProtocolError),
        client.stream("POST", _url(fp, protocol), json=_body()) as r,
    ):
        assert r.status_code == 200
        for piece in r.iter_bytes():
            received += piece
    assert len(parse_sse(received)) == 4
    assert b"[DONE]" not in received and b"message_stop" not in received


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_drop_with_clean_eof(fp: FakeProvider, client: httpx.Client, protocol: str) -> None:
    fp.script(Turn(text="x" * 40, fault=Fault.drop(after_events=3, clean_eof=True)), Turn(text="after"))
    r = client.post(_url(fp, protocol), json=_body())
    assert r.status_code == 200 and len(parse_sse(r.content)) == 3
    assert b"[DONE]" not in r.content and b"message_stop" not in r.content
    # The connection was closed; the next request opens a new one and works.
    assert client.post(_url(fp, protocol), json=_body()).status_code == 200


def test_stall_keeps_socket_open_then_resumes(client: httpx.Client) -> None:
    # The stall waits on a clock the test holds: it lasts until the test lets it go, however slow the
    # machine, and the lines that arrive before that were all sent before the stall.
    clock = RecordingClock(hold=True)
    with FakeProvider(clock=clock) as fp:
        fp.script(Turn(text="abcdefgh", chunk_chars=1, fault=Fault.stall(after_events=3, seconds=0.4)))
        arrivals: list[tuple[bool, str]] = []  # (sent after the stall, data line)

        def read() -> None:
            with client.stream("POST", _url(fp, "openai"), json=_body()) as r:
                for line in r.iter_lines():
                    if line.startswith("data:"):
                        arrivals.append((released.is_set(), line))

        released = threading.Event()
        reader = threading.Thread(target=read)
        reader.start()
        try:
            assert clock.wait_held(), "the stall never began"
            deadline = time.monotonic() + 30  # a hang guard: the three lines were sent before the stall
            while len(arrivals) < 3 and time.monotonic() < deadline:
                time.sleep(0.01)
        finally:
            released.set()
            clock.release()
        reader.join(30)
    assert not reader.is_alive()
    assert clock.sleeps == [0.4]  # the stall asked for its seconds, and nothing else waited
    assert len(arrivals) == 1 + 8 + 3  # role, 8 deltas, finish, usage, [DONE]: the same socket resumed
    assert [after for after, _ in arrivals] == [False] * 3 + [True] * 9  # held after the 3rd event


def test_stall_trips_a_client_read_timeout(fp: FakeProvider) -> None:
    # An hour of silence: the client's own 0.2 s read timeout is what ends the request.
    fp.script(Turn(text="abcdefgh", fault=Fault.stall(after_events=2, seconds=3600)))
    with httpx.Client(timeout=httpx.Timeout(30.0, read=0.2)) as c:
        with pytest.raises(httpx.ReadTimeout), c.stream("POST", _url(fp, "anthropic"), json=_body()) as r:
            for _ in r.iter_bytes():
                pass


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_malformed_json_line(fp: FakeProvider, client: httpx.Client, protocol: str) -> None:
    fp.script(Turn(text="hello world", fault=Fault.malformed(after_events=3)))
    r = client.post(_url(fp, protocol), json=_body())
    assert r.status_code == 200
    datas = [d for _, d in parse_sse(r.content)]
    bad = []
    for i, d in enumerate(datas):
        if d == "[DONE]":
            continue
        try:
            json.loads(d)
        except ValueError:
            bad.append(i)
    assert bad == [3]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_huge_chunk(fp: FakeProvider, client: httpx.Client, protocol: str) -> None:
    fp.script(Turn(text="small ", fault=Fault.huge_chunk()))
    r = client.post(_url(fp, protocol), json=_body())
    assert r.status_code == 200
    if protocol == "openai":
        chunks = openai_chunks(r.content)
        sizes = [
            len(c["choices"][0]["delta"].get("content") or "")
            for c in chunks
            if isinstance(c, dict) and c.get("choices")
        ]
        assert openai_text(chunks) == "small " + huge_text(1_000_000)
    else:
        events = anthropic_events(r.content)
        sizes = [len(p["delta"].get("text", "")) for n, p in events if n == "content_block_delta"]
        assert anthropic_blocks(events)[0]["text"] == "small " + huge_text(1_000_000)
    assert max(sizes) == 1_000_000


def test_slow_drip_rate(client: httpx.Client) -> None:
    clock = RecordingClock()  # virtual time: each wait is recorded and spent at once
    with FakeProvider(clock=clock) as fp:
        fp.script(Turn(text="abcd" * 20, chunk_chars=4, tokens_per_second=100))
        r = client.post(_url(fp, "anthropic"), json=_body())
    deltas = [p for n, p in anthropic_events(r.content) if n == "content_block_delta"]
    assert len(deltas) == 20 and anthropic_blocks(anthropic_events(r.content))[0]["text"] == "abcd" * 20
    # One wait of 1/100 s before each of the 20 text deltas, nothing else: 100 tokens per second.
    assert clock.sleeps == pytest.approx([0.01] * 20)
    assert clock.time() == pytest.approx(0.2)


def test_delay_first_byte(client: httpx.Client) -> None:
    clock = RecordingClock()
    with FakeProvider(clock=clock) as fp:
        fp.script(Turn(text="late", delay_first_byte=0.3))
        r = client.post(_url(fp, "openai"), json=_body())
    assert r.status_code == 200 and openai_text(openai_chunks(r.content)) == "late"
    assert clock.sleeps == [0.3]


def test_faults_on_non_streaming_requests(fp: FakeProvider, client: httpx.Client) -> None:
    fp.script(Turn(fault=Fault.midstream_error(0)), Turn(fault=Fault.malformed(0)), Turn(fault=Fault.drop(0)))
    r = client.post(_url(fp, "anthropic"), json=_body(stream=False))
    assert r.status_code == 529 and r.json()["error"]["type"] == "overloaded_error"
    r = client.post(_url(fp, "openai"), json=_body(stream=False))
    assert r.status_code == 200
    with pytest.raises(ValueError):
        r.json()
    with pytest.raises(httpx.RemoteProtocolError):
        client.post(_url(fp, "openai"), json=_body(stream=False))
