"""Prompt caching end to end: settings → key resolution → runtime → driver → the loopback fake server.

A real send (with a tool round trip) carries the breakpoints on every request; the settings switch
turns them off; a response that read 100k tokens from the cache shows what that saved.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from provider_support import SECRET

from desktop.core.chat import (
    ChatEvent,
    ChatMessage,
    ChatRuntimeDeps,
    ChatSendRequest,
    ChatToolDef,
    create_chat_runtime,
)
from desktop.core.chat.cost import conversation_cost
from desktop.core.chat.summary import cost_tooltip, message_meta
from desktop.core.chat.types import ProviderConfig
from desktop.core.config import ProviderSettings, Settings, resolve_provider
from desktop.core.providers import driver_for
from desktop.testing._spec import ToolCallSpec, Turn
from desktop.testing.fake_provider import FakeProvider

MARK = {"type": "ephemeral"}
MODEL = "claude-sonnet-4-5"  # built-in price: input $3/M, cache read $0.30/M


@pytest.fixture()
def fake() -> Iterator[FakeProvider]:
    with FakeProvider(api_key=SECRET, models=[MODEL]) as server:
        yield server


def settings_for(fake: FakeProvider, *, prompt_caching: bool) -> Settings:
    provider = ProviderSettings(id="fake-anthropic", name="Fake", api="anthropic",
                                base_url=fake.anthropic_base_url, models=[MODEL])
    return Settings(providers=[provider], default_provider="fake-anthropic", prompt_caching=prompt_caching)


async def _lookup(args: dict[str, Any]) -> str:
    return f"found {args.get('q')}"


LOOKUP = ChatToolDef("lookup", "Look something up",
                     {"type": "object", "properties": {"q": {"type": "string"}}}, False, _lookup)


async def send(fake: FakeProvider, settings: Settings) -> tuple[list[dict[str, Any]], list[ChatMessage]]:
    """One send from the runtime; the JSON bodies of the chat requests and the final messages."""
    env = {"CHATNODES_PROVIDER_KEY_FAKE_ANTHROPIC": SECRET}
    configs: list[ProviderConfig] = []

    def resolve(req: Any) -> ProviderConfig | None:
        config = resolve_provider(settings, req, secrets=None, environ=env)
        if config is not None:
            configs.append(config)
        return config

    events: list[tuple[str, ChatEvent]] = []
    async with httpx.AsyncClient() as client:
        runtime = create_chat_runtime(ChatRuntimeDeps(
            resolve_provider=resolve,
            broadcast=lambda node, event: events.append((node, event)),
            tools_for=lambda _req: [LOOKUP],
            driver_for=lambda config: driver_for(config, client),
        ))
        result = await runtime.send(ChatSendRequest(
            "n1", [ChatMessage("u1", "user", "Find x, then answer.", 1)], system="Be brief."))
        await runtime.aclose()
    assert result.ok, result.error
    assert configs and all(c.prompt_caching is settings.prompt_caching for c in configs)
    bodies = [r.json for r in fake.requests if r.method == "POST" and r.path.endswith("/messages")]
    assert all(isinstance(b, dict) for b in bodies)
    return [b for b in bodies if isinstance(b, dict)], result.messages


def script_tool_round_trip(fake: FakeProvider) -> None:
    fake.script(
        Turn(tool_calls=[ToolCallSpec("lookup", {"q": "x"}, id="toolu_1")],
             usage={"input": 900, "output": 20, "cache_read": 0, "cache_write": 4000}),
        Turn(text="x is found.", usage={"input": 50, "output": 10, "cache_read": 100_000, "cache_write": 0}),
    )


@pytest.mark.anyio
async def test_a_real_send_carries_the_breakpoints_on_every_request(fake: FakeProvider) -> None:
    script_tool_round_trip(fake)
    bodies, messages = await send(fake, settings_for(fake, prompt_caching=True))
    assert len(bodies) == 2  # the first answer called the tool; the second request sent its result
    first, second = bodies
    for body in bodies:
        assert body["tools"][-1]["cache_control"] == MARK
        assert body["system"] == [{"type": "text", "text": "Be brief.", "cache_control": MARK}]
        assert json.dumps(body).count('"cache_control"') == 3
    assert first["messages"] == [{"role": "user", "content": [
        {"type": "text", "text": "Find x, then answer.", "cache_control": MARK}]}]
    # The follow-up marks the tool result (the last block of the last user turn), not the question.
    assert second["messages"][0]["content"] == [{"type": "text", "text": "Find x, then answer."}]
    assert second["messages"][-1] == {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": "found x", "cache_control": MARK}]}
    assert messages[-1].content == "x is found."


@pytest.mark.anyio
async def test_the_settings_switch_turns_the_breakpoints_off(fake: FakeProvider) -> None:
    script_tool_round_trip(fake)
    bodies, _ = await send(fake, settings_for(fake, prompt_caching=False))
    assert len(bodies) == 2
    for body in bodies:
        assert "cache_control" not in json.dumps(body)
        assert body["system"] == "Be brief."


@pytest.mark.anyio
async def test_a_cached_conversation_shows_what_cache_reads_saved(fake: FakeProvider) -> None:
    script_tool_round_trip(fake)
    _, messages = await send(fake, settings_for(fake, prompt_caching=True))
    cost = conversation_cost(messages, MODEL)
    # 100 000 cache reads at $0.30/M instead of $3/M input: $0.27 saved.
    assert cost.cache_saved == pytest.approx(0.27)
    assert cost_tooltip(cost).split("\n")[1] == "cache reads saved $0.2700"
    answer = messages[-1]
    assert answer.usage is not None and answer.usage.cache_read_tokens == 100_000
    assert message_meta(answer, MODEL).endswith(" · cache reads saved $0.2700")
