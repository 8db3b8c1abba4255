"""A copy of a project that a background save can write while the window keeps changing the original.

The window's ``Project`` shares its conversations with the live nodes: streaming grows a message's
text and thinking blocks in place, sending sets keys of a message's ``extra``, a node appends and
removes messages. :func:`detached_project` copies everything a save reads that may change in place,
so ``ProjectStore.save`` can run on a worker thread with the copy while the GUI thread goes on.

Strings, numbers, ``Usage`` (frozen) and the values inside a message's ``extra`` are shared: the
version records there are replaced, never changed in place (``chat.versions``; the search index's
snapshot relies on the same rule). Copying is cheap next to serialising: one small object per
message, no text.
"""

from __future__ import annotations

import dataclasses
import logging
from typing import Any

from ..chat.conversation import Conversation
from ..chat.types import ChatMessage
from ._format import NodeState, Project

log = logging.getLogger(__name__)

__all__ = ["detached_project", "detached_message"]


def _json_copy(value: Any) -> Any:
    """A copy of JSON-like data (dicts and lists copied all the way down, the rest shared)."""
    if isinstance(value, dict):
        return {k: _json_copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_json_copy(v) for v in value]
    return value


def detached_message(message: ChatMessage) -> ChatMessage:
    """A copy of ``message`` that later in-place changes of the original do not reach.

    Args:
        message: A live message (possibly still streaming).

    Returns:
        A new message: its own ``extra`` dict, thinking blocks and tool calls; the strings shared.
    """
    blocks = message.thinking_blocks
    calls = message.tool_calls
    return ChatMessage(
        message.id,
        message.role,
        message.content,
        message.ts,
        message.thinking,
        [dict(block) for block in blocks] if blocks is not None else None,
        [call.copy() for call in calls] if calls is not None else None,
        message.usage,
        message.model,
        message.stopped,
        dict(message.extra),
    )


def _detached_node(node: NodeState) -> NodeState:
    conv = node.conversation
    copied = Conversation(conv.id, [detached_message(m) for m in conv.messages], conv.created_at)
    return dataclasses.replace(
        node,
        conversation=copied,
        always_allow=list(node.always_allow),
        requested_always_allow=list(node.requested_always_allow),
        extra=_json_copy(node.extra),
        data_extra=_json_copy(node.data_extra),
    )


def detached_project(project: Project) -> Project:
    """A copy of ``project`` a worker thread may save while the original keeps changing.

    Args:
        project: The project as the window would save it now (sharing the live conversations).

    Returns:
        A project with its own node states, conversations, message objects and extras.
    """
    return Project(
        version=project.version,
        nodes=[_detached_node(n) for n in project.nodes],
        extra=_json_copy(project.extra),
        closed=[_detached_node(n) for n in project.closed],
    )
