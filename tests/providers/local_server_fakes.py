"""Loopback fakes of local model servers (Ollama, LM Studio): real HTTP servers on ephemeral ports.

Used by ``tests/providers/test_local_servers.py`` and the window's tests (first run, Settings →
Providers "Detect local servers"), which put this folder on ``sys.path``.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Route = Callable[[str, str, bytes], tuple[int, object] | None]


class _Handler(BaseHTTPRequestHandler):
    route: Route
    requests: list[tuple[str, str, bytes]]
    release: threading.Event

    def _serve(self, method: str) -> None:
        body = self.rfile.read(int(self.headers.get("content-length") or 0))
        self.requests.append((method, self.path, body))
        answer = self.route(method, self.path, body)
        if answer is None:  # hang (a server that never answers) until the test ends
            self.release.wait(30)
            return
        status, payload = answer
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        self.send_response(status)
        self.send_header(
            "content-type", "application/json" if not isinstance(payload, bytes) else "text/html"
        )
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:  # noqa: N802 - http.server API
        self._serve("GET")

    def do_POST(self) -> None:  # noqa: N802 - http.server API
        self._serve("POST")

    def log_message(self, *args: Any) -> None:
        pass


class FakeServer:
    """A small real HTTP server on 127.0.0.1 with an ephemeral port, in its own thread."""

    def __init__(self, route: Route) -> None:
        self.requests: list[tuple[str, str, bytes]] = []
        self.release = threading.Event()
        handler = type(
            "H",
            (_Handler,),
            {"route": staticmethod(route), "requests": self.requests, "release": self.release},
        )
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()


def ollama_route(method: str, path: str, body: bytes) -> tuple[int, object] | None:
    if method == "GET" and path == "/api/tags":
        return 200, {
            "models": [
                {
                    "name": "llama3.2:latest",
                    "model": "llama3.2:latest",
                    "size": 2019393189,
                    "details": {"family": "llama"},
                },
                {"name": "qwen3:8b", "model": "qwen3:8b", "details": {"family": "qwen3"}},
            ]
        }
    if method == "POST" and path == "/api/show":
        name = json.loads(body)["model"]
        if name.startswith("llama"):
            return 200, {
                "parameters": 'stop "<|eot_id|>"',
                "model_info": {
                    "general.architecture": "llama",
                    "llama.context_length": 131072,
                    "llama.embedding_length": 3072,
                },
            }
        return 200, {"model_info": {"general.architecture": "qwen3", "qwen3.context_length": 40960}}
    return 404, {"error": "not found"}


def lmstudio_route(method: str, path: str, body: bytes) -> tuple[int, object] | None:
    if method == "GET" and path == "/v1/models":
        return 200, {
            "object": "list",
            "data": [
                {"id": "qwen/qwen3-8b", "object": "model", "owned_by": "organization_owner"},
                {"id": "text-embedding-nomic", "object": "model"},
            ],
        }
    return 404, {"error": "Unexpected endpoint"}



@contextmanager
def ollama_and_lmstudio() -> Iterator[dict[str, FakeServer]]:
    """A fake Ollama and a fake LM Studio, running for the ``with`` block: ``{kind id: server}``."""
    made = {"ollama": FakeServer(ollama_route), "lmstudio": FakeServer(lmstudio_route)}
    try:
        yield made
    finally:
        for s in made.values():
            s.close()
