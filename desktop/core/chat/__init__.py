"""The provider-agnostic chat core."""

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
    Usage,
    UsageReport,
)

__all__ = [
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
    "Usage",
    "UsageReport",
]
