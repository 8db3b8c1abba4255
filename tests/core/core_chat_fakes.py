"""Honest scripted fakes for driving the chat loop and runtime without a network."""

from __future__ import annotations

import asyncio
import copy
import dataclasses
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from desktop.core.chat import (
    ChatEvent,
    ChatMessage,
    ChatToolDef,
    Conversation,
    ProviderConfig,
    ToolCallRequested,
    apply_event,
)

HANG = "hang"  # a step that waits until the stream is cancelled
YIELD = "yield"  # a step that gives the event loop one turn


@dataclass
class StreamCall:
    """What one ``stream`` call received."""

    model: str
    messages: list[ChatMessage]
    tools: list[str]
    system: str | None


@dataclass
class ScriptedDriver:
    """A ``ChatDriver`` whose every ``stream`` call plays the next script.

    A script is a list of steps: an event is yielded, an exception is raised, ``YIELD`` gives the
    loop a turn, ``HANG`` waits for cancellation. With no script left the stream ends empty.
    """

    scripts: list[list[Any]]
    calls: list[StreamCall] = field(default_factory=list)
    closed: int = 0
    cancelled: int = 0
    completed_call_ids: list[str] = field(default_factory=list)  # calls of streams that ended cleanly

    async def stream(
        self,
        *,
        model: str,
        messages: Sequence[ChatMessage],
        tools: Sequence[ChatToolDef],
        system: str | None = None,
    ) -> AsyncIterator[ChatEvent]:
        self.calls.append(StreamCall(model, copy.deepcopy(list(messages)), [t.name for t in tools], system))
        script = self.scripts.pop(0) if self.scripts else []
        yielded: list[str] = []
        try:
            for step in script:
                if isinstance(step, BaseException):
                    raise step
                if step == YIELD:
                    await asyncio.sleep(0)
                elif step == HANG:
                    await asyncio.Event().wait()
                else:
                    if isinstance(step, ToolCallRequested):
                        yielded.append(step.call.id)
                    yield step
            self.completed_call_ids.extend(yielded)
        except asyncio.CancelledError:
            self.cancelled += 1
            raise
        finally:
            self.closed += 1


def make_tool(
    name: str,
    *,
    needs_approval: bool = False,
    result: str = "ok",
    error: BaseException | None = None,
    hang: bool = False,
    seen: list[dict[str, Any]] | None = None,
) -> ChatToolDef:
    """A tool that records its arguments and returns ``result`` (or raises ``error``)."""

    async def run(args: dict[str, Any]) -> str:
        if seen is not None:
            seen.append(args)
        if hang:
            await asyncio.Event().wait()
        if error is not None:
            raise error
        return result

    return ChatToolDef(name, f"{name} tool", {"type": "object"}, needs_approval, run)


def provider(model: str | None = "fake-model") -> ProviderConfig:
    return ProviderConfig(id="fake", name="Fake", api="openai", base_url="http://127.0.0.1:9", model=model)


def without_ts(messages: Sequence[ChatMessage]) -> list[ChatMessage]:
    """Messages with timestamps zeroed, for comparisons "timestamps aside"."""
    return [dataclasses.replace(m, ts=0) for m in messages]


def replay(history: Sequence[ChatMessage], events: Sequence[ChatEvent]) -> list[ChatMessage]:
    """What a UI holds after applying ``events`` in order to a copy of ``history``."""
    conv = Conversation("ui", copy.deepcopy(list(history)), 0)
    for event in events:
        apply_event(conv, event)
    return conv.messages
