"""Local model servers found by themselves: real fake servers on loopback, ephemeral ports."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from local_server_fakes import FakeServer, lmstudio_route, ollama_route

from desktop.core.chat.types import ChatError, ChatMessage, ProviderConfig
from desktop.core.providers import (
    LOCAL_SERVER_KINDS,
    OpenAIDriver,
    RetryPolicy,
    list_models,
    local_server_error,
    local_server_hint,
    probe_local_servers,
)


@pytest.fixture
def servers() -> Iterator[dict[str, FakeServer]]:
    made = {
        "ollama": FakeServer(ollama_route),
        "lmstudio": FakeServer(lmstudio_route),
        "vllm": FakeServer(lambda m, p, b: (200, b"<html>not a model server</html>")),
        "llamacpp": FakeServer(lambda m, p, b: None),
    }
    try:
        yield made
    finally:
        for s in made.values():
            s.close()


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.anyio
async def test_ollama_and_lm_studio_are_found_with_their_models(servers: dict[str, FakeServer]) -> None:
    ports = {k: s.port for k, s in servers.items()}
    async with httpx.AsyncClient() as client:
        found = await probe_local_servers(client, ports=ports, timeout=0.3)
    assert [s.kind.id for s in found] == ["ollama", "lmstudio"]  # the HTML page and the silent server are not
    ollama, lmstudio = found
    assert ollama.base_url == f"http://127.0.0.1:{servers['ollama'].port}/v1"
    assert ollama.models == ("llama3.2:latest", "qwen3:8b")
    assert dict(ollama.context_lengths) == {"llama3.2:latest": 131072, "qwen3:8b": 40960}
    shown = sorted(json.loads(b)["model"] for m, p, b in servers["ollama"].requests if p == "/api/show")
    assert shown == ["llama3.2:latest", "qwen3:8b"]
    provider = ollama.provider()
    assert (provider.id, provider.name, provider.api, provider.needs_key, provider.key_env) == (
        "ollama",
        "Ollama",
        "openai",
        False,
        None,
    )
    assert provider.models == ["llama3.2:latest", "qwen3:8b"] and provider.base_url == ollama.base_url
    assert provider.context_lengths == {"llama3.2:latest": 131072, "qwen3:8b": 40960}  # for the meter
    assert lmstudio.models == ("qwen/qwen3-8b", "text-embedding-nomic")
    assert lmstudio.provider().id == "lmstudio" and lmstudio.provider().needs_key is False


@pytest.mark.anyio
async def test_nothing_running_finds_nothing_and_never_raises() -> None:
    ports = {k.id: closed_port() for k in LOCAL_SERVER_KINDS}
    async with httpx.AsyncClient() as client:
        assert await probe_local_servers(client, ports=ports) == []
    closed = httpx.AsyncClient()
    await closed.aclose()
    assert await probe_local_servers(closed, ports=ports) == []  # a closed client: still no exception


@pytest.mark.anyio
async def test_a_server_of_unknown_kind_becomes_a_plain_preset() -> None:
    server = FakeServer(lambda m, p, b: (200, {"data": [{"id": "mistral-7b", "max_model_len": 32768}]}))
    try:
        async with httpx.AsyncClient() as client:
            found = await probe_local_servers(
                client, ports={"vllm": server.port}, kinds=[k for k in LOCAL_SERVER_KINDS if k.id == "vllm"]
            )
    finally:
        server.close()
    (vllm,) = found
    assert vllm.context_lengths == {"mistral-7b": 32768}
    provider = vllm.provider()
    assert (provider.id, provider.name, provider.models, provider.needs_key) == (
        "vllm",
        "vLLM",
        ["mistral-7b"],
        False,
    )


def test_the_hint_names_the_server_and_how_to_start_it() -> None:
    assert local_server_hint("http://localhost:11434/v1") == (
        "Ollama is not running at http://localhost:11434 — start it with `ollama serve`"
    )
    assert local_server_hint("http://127.0.0.1:1234/v1").startswith("LM Studio is not running at")
    assert local_server_hint("http://[::1]:8080/v1") == (
        "llama.cpp server is not running at http://[::1]:8080 — start it with `llama-server -m MODEL.gguf`"
    )
    assert local_server_hint("https://api.openai.com/v1") is None
    assert local_server_hint("http://192.168.1.20:11434/v1") is None  # another machine: no guess
    assert local_server_hint("http://localhost:9999/v1") is None
    assert local_server_hint("not a url :: at all") is None
    err = ChatError("network error: cannot connect (refused)", provider="ollama", kind="network")
    assert local_server_error(err, "http://localhost:11434/v1").message == (
        "Ollama is not running at http://localhost:11434 — start it with `ollama serve` "
        "(network error: cannot connect (refused))"
    )
    auth = ChatError("401 unauthorized", provider="ollama", status=401, kind="auth")
    assert local_server_error(auth, "http://localhost:11434/v1") is auth


@pytest.mark.anyio
async def test_a_node_whose_local_server_is_down_says_how_to_start_it() -> None:
    port = closed_port()
    kinds = [k for k in LOCAL_SERVER_KINDS if k.id == "ollama"]
    config = ProviderConfig(id="ollama", name="Ollama", api="openai", base_url=f"http://127.0.0.1:{port}/v1")
    # A refused connection through the real driver, explained for a server on this (ephemeral) port.
    async with httpx.AsyncClient() as client:
        driver = OpenAIDriver(config, client=client, retry=RetryPolicy(max_retries=0))
        with pytest.raises(ChatError) as info:
            async for _ in driver.stream(
                model="llama3.2", messages=[ChatMessage("m1", "user", "hi", 0)], tools=[]
            ):
                pass
    moved = [type(k)(k.id, k.name, port, k.models_path, k.start_hint) for k in kinds]
    assert local_server_error(info.value, config.base_url, moved).message.startswith(
        f"Ollama is not running at http://127.0.0.1:{port} — start it with `ollama serve` (network error: "
    )


@pytest.mark.anyio
async def test_the_drivers_hook_on_the_usual_port() -> None:
    with socket.socket() as probe:
        if probe.connect_ex(("127.0.0.1", 11434)) == 0:
            pytest.skip("something listens on 127.0.0.1:11434 here")
    config = ProviderConfig(id="ollama", name="Ollama", api="openai", base_url="http://127.0.0.1:11434/v1")
    async with httpx.AsyncClient() as client:
        driver = OpenAIDriver(config, client=client, retry=RetryPolicy(max_retries=0))
        with pytest.raises(ChatError) as info:
            async for _ in driver.stream(
                model="llama3.2", messages=[ChatMessage("m1", "user", "hi", 0)], tools=[]
            ):
                pass
        assert info.value.message.startswith(
            "Ollama is not running at http://127.0.0.1:11434 — start it with `ollama serve` (network error"
        )
        with pytest.raises(ChatError) as listing:
            await list_models(config, client)
        assert listing.value.message.startswith("Ollama is not running at")


def test_a_found_server_updates_its_entry_or_is_added() -> None:
    from desktop.core.config import default_settings
    from desktop.core.providers import LocalServer

    ollama = LocalServer(LOCAL_SERVER_KINDS[0], "http://127.0.0.1:5555/v1", ("llama3.2:latest",),
                         {"llama3.2:latest": 131072})
    settings = default_settings()
    settings.providers[-2].name = "My Ollama"
    count = len(settings.providers)
    entry = ollama.add_to(settings.providers)
    assert len(settings.providers) == count and entry is settings.providers[-2]
    assert (entry.name, entry.base_url, entry.models, entry.context_lengths, entry.needs_key) == (
        "My Ollama", "http://127.0.0.1:5555/v1", ["llama3.2:latest"], {"llama3.2:latest": 131072}, False)
    providers: list[Any] = []
    added = ollama.add_to(providers)
    assert providers == [added] and added.name == "Ollama"
