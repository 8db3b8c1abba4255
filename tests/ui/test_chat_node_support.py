"""Shared fixture of the chat node tests: a real node on the real runtime, real drivers and the
loopback fake provider, with the project tools anchored in a temporary project folder."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import httpx
import pytest
import shiboken6

from desktop.core.chat.runtime import ChatRuntime, ChatRuntimeDeps, create_chat_runtime
from desktop.core.chat.types import ChatMessage
from desktop.core.config import ProviderSettings, Settings, resolve_provider
from desktop.core.providers import RetryPolicy, driver_for, list_models
from desktop.core.store import NodeState, new_node_state
from desktop.core.tools import project_tools
from desktop.testing import FakeProvider
from desktop.ui.bridge import RuntimeBridge
from desktop.ui.node.chat_node import ChatNodeWidget
from desktop.ui.services import AppServices


async def _no_sleep(_seconds: float) -> None:
    return None


def run_coro(qtbot: Any, loop: asyncio.AbstractEventLoop, coro: Any, timeout: int = 10_000) -> Any:
    """Run ``coro`` on the qasync loop, processing Qt events until it is done."""
    task = loop.create_task(coro)
    qtbot.waitUntil(task.done, timeout=timeout)
    return task.result()


@dataclass
class NodeEnv:
    """Everything a chat node test touches."""

    fake: FakeProvider
    node: ChatNodeWidget
    services: AppServices
    runtime: ChatRuntime
    bridge: RuntimeBridge
    settings: Settings
    project: Path
    archive: dict[str, list[ChatMessage]] = field(default_factory=dict)
    finished: list[str] = field(default_factory=list)


def notes_state(title: str, count: int) -> NodeState:
    """A node whose conversation holds ``count`` short notes (``n0``…), oldest first."""
    state = new_node_state(title)
    for i in range(count):
        state.conversation.messages.append(ChatMessage(id=f"n{i}", role="note", content=f"note {i}", ts=i))
    return state


def fake_settings(fake: FakeProvider, api: str = "openai", *, model: str = "gpt-4o-mini") -> Settings:
    base = fake.openai_base_url if api == "openai" else fake.anthropic_base_url
    return Settings(
        providers=[
            ProviderSettings(id="fake", name="Fake", api=api, base_url=base, needs_key=False,  # type: ignore[arg-type]
                             models=[model])
        ],
        default_provider="fake",
        default_model=model,
    )


@pytest.fixture
def make_env(
    qtbot: Any, qloop: asyncio.AbstractEventLoop, tmp_path: Path
) -> Iterator[Callable[..., NodeEnv]]:
    """``make_env(state=None, api="openai", settings=None) -> NodeEnv``; everything is closed at teardown."""
    cleanups: list[Callable[[], None]] = []

    def _make(state: NodeState | None = None, api: str = "openai", settings: Settings | None = None,
              model: str = "gpt-4o-mini") -> NodeEnv:
        fake = FakeProvider().start()
        cleanups.append(fake.stop)
        client = httpx.AsyncClient(timeout=httpx.Timeout(10.0))
        cleanups.append(lambda: run_coro(qtbot, qloop, client.aclose()))
        conf = settings or fake_settings(fake, api, model=model)
        project = tmp_path / "project"
        project.mkdir(exist_ok=True)
        tools = project_tools(project)
        bridge = RuntimeBridge()
        retry = RetryPolicy(max_retries=0, sleep=_no_sleep)
        runtime = create_chat_runtime(
            ChatRuntimeDeps(
                resolve_provider=lambda req: resolve_provider(conf, req, secrets=None, environ={}),
                broadcast=bridge.broadcast,
                tools_for=lambda req: tools,
                driver_for=lambda cfg: driver_for(cfg, client, retry=retry),
            )
        )
        cleanups.append(lambda: run_coro(qtbot, qloop, runtime.aclose()))

        async def models(provider_id: str) -> list[str]:
            cfg = resolve_provider(conf, SimpleNamespace(provider=provider_id, model=None), secrets=None,
                                   environ={})
            if cfg is None:
                raise RuntimeError("no provider")
            return await list_models(cfg, client)

        archive: dict[str, list[ChatMessage]] = {}
        services = AppServices(
            runtime=runtime,
            bridge=bridge,
            settings=lambda: conf,
            list_models=models,
            archive=lambda nid, msgs: archive.setdefault(nid, []).extend(msgs),
            read_archive=lambda nid: list(archive.get(nid, [])),
        )
        node = ChatNodeWidget(state or new_node_state("Test node"), services)

        def delete_node() -> None:
            # Delete the top-level widget here, on the GUI thread. Left to Python's cyclic GC it
            # may be destroyed on the fake server's thread, leaving Qt timers on a dead object.
            node.shutdown()
            node.close()
            shiboken6.delete(node)

        cleanups.append(delete_node)
        node.resize(640, 760)
        node.show()
        env = NodeEnv(fake, node, services, runtime, bridge, conf, project, archive)
        node.run_finished.connect(env.finished.append)
        return env

    yield _make
    for cleanup in reversed(cleanups):
        cleanup()
