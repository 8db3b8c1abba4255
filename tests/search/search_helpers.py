"""Helpers of the search tests: real project folders written by ``ProjectStore``."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from desktop.core.chat.conversation import Conversation
from desktop.core.chat.types import ChatMessage
from desktop.core.store import NodeState, Project, ProjectStore

T0 = 1_764_547_200_000  # 2025-12-01 00:00 UTC


def msg(mid: str, role: str, text: str, minute: int, model: str | None = None) -> ChatMessage:
    """A message at ``T0 + minute`` minutes."""
    return ChatMessage(mid, role, text, T0 + minute * 60_000, model=model)  # type: ignore[arg-type]


def node(node_id: str, title: str, messages: Iterable[ChatMessage]) -> NodeState:
    """A chat node holding ``messages``."""
    return NodeState(id=node_id, title=title, conversation=Conversation(f"c-{node_id}", list(messages), T0))


def save(folder: Path, *nodes: NodeState, cap: int = 200 * 1024) -> Project:
    """Write a project of ``nodes`` into ``folder`` (the history cap applies) and return it."""
    project = Project(nodes=list(nodes))
    with ProjectStore(folder, history_cap_bytes=cap) as store:
        store.save(project)
    return project
