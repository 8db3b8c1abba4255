"""One chat session's message list: streaming appliers, slash commands, persistence and the history cap.

This module is the public facade (the names below are contract, see ``docs/DESIGN.md`` §2.2); the
code lives in private modules, one job each:

- ``_appliers``: ``Conversation`` and the appliers (``apply_event`` turns stream events into
  messages; the chat loop applies every event it broadcasts with it, so a UI that applies the same
  events, in order, to the messages it sent ends with exactly the loop's messages).
- ``_slash``: slash-command detection.
- ``_codec``: the persisted form of messages and conversations (format v2; v1 loads).
- ``_cap``: the history cap and the capped serialization.

Everything here is pure Python with no I/O.
"""

from __future__ import annotations

from ._appliers import (
    Conversation,
    append_delta,
    append_message,
    append_note,
    append_thinking,
    apply_event,
    create_conversation,
    find_message,
    is_valid_role,
    mark_stopped,
    new_id,
    now_ms,
    set_usage,
)
from ._cap import DEFAULT_MAX_BYTES, cap_conversation_messages, serialize_conversation, split_for_cap
from ._codec import (
    FORMAT_VERSION,
    conversation_from_dict,
    conversation_to_json,
    deserialize_conversation,
    message_from_dict,
    message_to_dict,
    repair_surrogates,
)
from ._quoted import sweep as sweep_saved_literals
from ._slash import SLASH_COMMANDS, SlashCommand, SlashCommandName, detect_slash_command

__all__ = [
    "Conversation",
    "SlashCommand",
    "SlashCommandName",
    "SLASH_COMMANDS",
    "DEFAULT_MAX_BYTES",
    "FORMAT_VERSION",
    "new_id",
    "now_ms",
    "create_conversation",
    "append_message",
    "append_delta",
    "append_thinking",
    "set_usage",
    "mark_stopped",
    "append_note",
    "apply_event",
    "find_message",
    "is_valid_role",
    "detect_slash_command",
    "message_to_dict",
    "message_from_dict",
    "serialize_conversation",
    "conversation_to_json",
    "deserialize_conversation",
    "conversation_from_dict",
    "repair_surrogates",
    "split_for_cap",
    "cap_conversation_messages",
    "sweep_saved_literals",
]
