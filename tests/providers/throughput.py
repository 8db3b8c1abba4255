"""Decode throughput of both drivers on a 20k-event stream served through httpx.MockTransport.

Run: ``.venv/bin/python tests/providers/throughput.py`` (not part of the test run).
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from provider_support import MockServer, Reply, anthropic_config, openai_config  # noqa: E402

from desktop.core.chat.types import ChatMessage, ProviderConfig  # noqa: E402
from desktop.core.providers import driver_for  # noqa: E402

N = 20_000


def openai_body(n: int) -> bytes:
    parts = []
    for i in range(n):
        c = {"id": "chatcmpl-x", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4o",
             "choices": [{"index": 0, "delta": {"content": f" word{i}"}, "logprobs": None,
                          "finish_reason": None}]}
        parts.append(b"data: " + json.dumps(c).encode() + b"\n\n")
    parts.append(b'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n')
    parts.append(b'data: {"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":20000}}\n\n')
    parts.append(b"data: [DONE]\n\n")
    return b"".join(parts)


def anthropic_body(n: int) -> bytes:
    def ev(kind: str, data: dict[str, object]) -> bytes:
        return f"event: {kind}\ndata: {json.dumps({'type': kind, **data})}\n\n".encode()

    parts = [ev("message_start", {"message": {"model": "claude", "usage": {"input_tokens": 5}}}),
             ev("content_block_start", {"index": 0, "content_block": {"type": "text", "text": ""}})]
    parts += [ev("content_block_delta", {"index": 0, "delta": {"type": "text_delta", "text": f" word{i}"}})
              for i in range(n)]
    parts += [ev("content_block_stop", {"index": 0}),
              ev("message_delta", {"delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": n}}),
              ev("message_stop", {})]
    return b"".join(parts)


async def measure(config: ProviderConfig, body: bytes, piece: int) -> tuple[float, int]:
    pieces = [body[i:i + piece] for i in range(0, len(body), piece)]
    server = MockServer(Reply(pieces=pieces))
    async with server.client() as client:
        driver = driver_for(config, client)
        start = time.perf_counter()
        count = 0
        async for _ in driver.stream(model="m", messages=[ChatMessage("u", "user", "x", 0)], tools=[]):
            count += 1
        return time.perf_counter() - start, count


def main() -> None:
    for name, config, body in (("openai", openai_config(), openai_body(N)),
                               ("anthropic", anthropic_config(), anthropic_body(N))):
        for piece in (65536, 4096, 256):
            best = min(asyncio.run(measure(config, body, piece))[0] for _ in range(3))
            print(f"{name:9s} {len(body) / 1e6:5.2f} MB in {piece:5d}-byte reads: {best * 1000:7.1f} ms "
                  f"= {N / best:,.0f} events/s")


if __name__ == "__main__":
    main()
