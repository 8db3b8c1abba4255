"""The provider-agnostic chat core.

The chat loop and the runtime (``loop``, ``runtime``: they import asyncio) load on first use of one of
their names, so the model, cost and export modules can be imported before the app's first paint.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .commands import COMMAND_HELP, HELP_TEXT, CommandContext, CommandEffect, archive_failed_note, run_command
from .conversation import (
    Conversation,
    SlashCommand,
    append_delta,
    append_message,
    append_note,
    append_thinking,
    apply_event,
    cap_conversation_messages,
    conversation_from_dict,
    conversation_to_json,
    create_conversation,
    deserialize_conversation,
    detect_slash_command,
    find_message,
    is_valid_role,
    mark_stopped,
    message_from_dict,
    message_to_dict,
    new_id,
    repair_surrogates,
    serialize_conversation,
    set_usage,
    split_for_cap,
)
from .cost import (
    DEFAULT_PRICES,
    ConversationCost,
    Cost,
    Price,
    cache_savings,
    conversation_cache_savings,
    conversation_cost,
    cost_of,
    format_cost,
    message_cost,
    price_for,
)
from .export import TokenTotals, code_fence, conversation_markdown, token_totals
from .summary import (
    cost_breakdown,
    cost_tooltip,
    format_tokens,
    message_meta,
    token_chip_text,
    token_tooltip,
)
from .types import (
    ChatDriver,
    ChatError,
    ChatEvent,
    ChatMessage,
    ChatToolDef,
    Delta,
    Done,
    Notice,
    ProviderConfig,
    Thinking,
    ToolCall,
    ToolCallFinished,
    ToolCallRequested,
    ToolOutput,
    Usage,
    UsageReport,
)

if TYPE_CHECKING:
    from .loop import DEFAULT_MAX_ITERATIONS, ChatLoopHooks, ChatLoopResult, run_chat_loop
    from .runtime import ChatRuntime, ChatRuntimeDeps, ChatSendRequest, ChatSendResult, create_chat_runtime

_LAZY = {
    "DEFAULT_MAX_ITERATIONS": "loop", "ChatLoopHooks": "loop", "ChatLoopResult": "loop",
    "run_chat_loop": "loop", "ChatRuntime": "runtime", "ChatRuntimeDeps": "runtime",
    "ChatSendRequest": "runtime", "ChatSendResult": "runtime", "create_chat_runtime": "runtime",
}


def __getattr__(name: str) -> Any:
    """The loop's and the runtime's names, imported on first use (they pull in asyncio)."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


__all__ = [
    "cache_savings",
    "conversation_cache_savings",
    "ChatDriver",
    "ChatError",
    "ChatEvent",
    "ChatMessage",
    "ChatToolDef",
    "Delta",
    "Done",
    "Notice",
    "ProviderConfig",
    "Thinking",
    "ToolCall",
    "ToolCallFinished",
    "ToolCallRequested",
    "ToolOutput",
    "Usage",
    "UsageReport",
    # conversation
    "Conversation",
    "SlashCommand",
    "append_delta",
    "append_message",
    "append_note",
    "append_thinking",
    "apply_event",
    "cap_conversation_messages",
    "create_conversation",
    "conversation_from_dict",
    "deserialize_conversation",
    "repair_surrogates",
    "detect_slash_command",
    "find_message",
    "is_valid_role",
    "mark_stopped",
    "message_from_dict",
    "message_to_dict",
    "new_id",
    "serialize_conversation",
    "conversation_to_json",
    "set_usage",
    "split_for_cap",
    # cost
    "DEFAULT_PRICES",
    "ConversationCost",
    "Cost",
    "Price",
    "conversation_cost",
    "cost_of",
    "format_cost",
    "message_cost",
    "price_for",
    # export and summary
    "TokenTotals",
    "code_fence",
    "conversation_markdown",
    "token_totals",
    "cost_breakdown",
    "cost_tooltip",
    "format_tokens",
    "message_meta",
    "token_chip_text",
    "token_tooltip",
    # slash-command effects
    "COMMAND_HELP",
    "HELP_TEXT",
    "CommandContext",
    "CommandEffect",
    "archive_failed_note",
    "run_command",
    # loop and runtime
    "DEFAULT_MAX_ITERATIONS",
    "ChatLoopHooks",
    "ChatLoopResult",
    "run_chat_loop",
    "ChatRuntime",
    "ChatRuntimeDeps",
    "ChatSendRequest",
    "ChatSendResult",
    "create_chat_runtime",
]
