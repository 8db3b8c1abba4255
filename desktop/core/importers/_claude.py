"""One conversation of Claude's data export (``conversations.json``) to a message tree.

A Claude conversation is ``{uuid, name, created_at, updated_at, chat_messages}``; each message is
``{uuid, sender: human|assistant, text, content: [blocks], created_at, parent_message_uuid,
attachments, files}``. Branches (edits and retries) sit side by side in the flat array, linked by
``parent_message_uuid`` (the first message's parent is the all-zero uuid); a file without any
parent field is one linear conversation in array order. The shown path ends at
``current_leaf_message_uuid`` when the file has it (claude.ai's own JSON), else at the newest leaf.

Text comes from the ``text`` blocks (the top-level ``text`` only when there are none: it may hold
the thinking too); ``thinking`` blocks become the message's thinking; ``tool_use`` and
``tool_result`` blocks become short fenced sections; ``token_budget`` is skipped; any other block
becomes a short note in the text. Attachments keep the text Claude extracted from them, fenced;
uploaded files (the export holds no binaries) become ``[file: name — not imported]``.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from desktop.core.chat.types import Role

from ._common import (
    ConversationFormatError,
    fenced,
    file_placeholder,
    make_message,
    ms_from_iso,
    raw_note,
    text_of,
    title_of,
)
from ._model import ParsedConversation
from ._tree import TreeNode

__all__ = ["CLAUDE_ROOT_UUID", "parse_claude"]

log = logging.getLogger(__name__)

CLAUDE_ROOT_UUID = "00000000-0000-4000-8000-000000000000"
"""The parent a Claude export gives a conversation's first message."""
_TOOL_RESULT_CHARS = 2_000


def _json_text(value: object) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, indent=2, default=str)
    except (TypeError, ValueError, RecursionError):
        return repr(type(value))


def _result_text(block: dict[str, Any]) -> str:
    content = block.get("content")
    if isinstance(content, str):
        text = text_of(content)
    elif isinstance(content, list):
        pieces: list[str] = []
        for item in content:
            if not isinstance(item, dict):
                continue
            title = text_of(item.get("title"))
            url = text_of(item.get("url"))
            body = text_of(item.get("text"))
            if title or url:
                pieces.append(" — ".join(p for p in (title, url) if p) + (f"\n{body}" if body else ""))
            elif body:
                pieces.append(body)
        text = "\n\n".join(pieces)
    else:
        text = ""
    if len(text) > _TOOL_RESULT_CHARS:
        more = len(text) - _TOOL_RESULT_CHARS
        text = text[:_TOOL_RESULT_CHARS] + f"\n… ({more:,} more characters not imported)"
    return text


def _blocks(blocks: list[Any], assets: list[dict[str, Any]]) -> tuple[list[str], list[str], bool]:
    """``(text pieces, thinking pieces, had text blocks)`` of a message's content blocks."""
    texts: list[str] = []
    thinking: list[str] = []
    had_text = False
    for block in blocks:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text":
            had_text = True
            if text_of(block.get("text")):
                texts.append(text_of(block.get("text")))
        elif kind == "thinking":
            if text_of(block.get("thinking")):
                thinking.append(text_of(block.get("thinking")))
        elif kind == "tool_use":
            name = text_of(block.get("name")) or "tool"
            texts.append(f"**Tool call** `{name}`\n\n" + fenced(_json_text(block.get("input")), "json"))
        elif kind == "tool_result":
            name = text_of(block.get("name")) or "tool"
            label = "**Tool error**" if block.get("is_error") is True else "**Tool result**"
            body = _result_text(block)
            texts.append(f"{label} `{name}`" + (f"\n\n{fenced(body)}" if body else ""))
        elif kind == "token_budget":
            continue
        elif kind == "voice_note" and text_of(block.get("text")):
            texts.append(text_of(block.get("text")))
        elif kind == "image":
            name = text_of(block.get("file_name")) or text_of(block.get("name")) or "image"
            assets.append({"pointer": text_of(block.get("file_uuid")), "name": name, "kind": "image"})
            texts.append(file_placeholder(name if "." in name else name + ".png"))
        else:
            texts.append(raw_note(f"Claude content block '{text_of(kind) or '?'}'", block))
    return texts, thinking, had_text


def _attachments(msg: dict[str, Any], assets: list[dict[str, Any]]) -> list[str]:
    out: list[str] = []
    named: set[str] = set()
    for a in msg.get("attachments") or []:
        if not isinstance(a, dict):
            continue
        name = text_of(a.get("file_name")) or "attachment"
        named.add(name)
        extracted = text_of(a.get("extracted_content"))
        if extracted:
            out.append(f"**Attachment** `{name}`\n\n" + fenced(extracted))
        else:
            assets.append({"pointer": "", "name": name, "kind": "file"})
            out.append(file_placeholder(name))
    for f in msg.get("files") or msg.get("files_v2") or []:
        if not isinstance(f, dict):
            continue
        name = text_of(f.get("file_name")) or "file"
        if name in named:
            continue
        named.add(name)
        assets.append({"pointer": text_of(f.get("file_uuid")), "name": name, "kind": "file"})
        out.append(file_placeholder(name))
    return out


def parse_claude(conv: object, index: int) -> ParsedConversation:
    """Convert one Claude conversation to its message tree.

    Args:
        conv: The decoded conversation object.
        index: Its position in the file (for messages).

    Raises:
        ConversationFormatError: A field has the wrong shape (the message names it).
    """
    if not isinstance(conv, dict):
        raise ConversationFormatError(f"conversation {index + 1} is not a JSON object")
    conv_id = text_of(conv.get("uuid")) or text_of(conv.get("id"))
    if not conv_id:
        raise ConversationFormatError("'uuid' is missing")
    messages = conv.get("chat_messages")
    if not isinstance(messages, list):
        raise ConversationFormatError("'chat_messages' must be an array")
    created = ms_from_iso(conv.get("created_at"))
    updated = ms_from_iso(conv.get("updated_at"))
    model = text_of(conv.get("model")) or None
    linear = not any(isinstance(m, dict) and "parent_message_uuid" in m for m in messages)
    base = created if created is not None else 0
    nodes: list[TreeNode] = []
    seen: set[str] = set()
    previous: str | None = None
    for seq, m in enumerate(messages):
        if not isinstance(m, dict):
            raise ConversationFormatError(f"'chat_messages[{seq}]' must be an object")
        key = text_of(m.get("uuid")) or f"#{seq}"
        if key in seen:
            key = f"{key}#{seq}"
        seen.add(key)
        sender = m.get("sender")
        role: Role
        if sender == "human":
            role = "user"
        elif sender == "assistant":
            role = "assistant"
        else:
            raise ConversationFormatError(f"'chat_messages[{seq}].sender' must be 'human' or 'assistant', "
                                          f"got {sender!r}")
        assets: list[dict[str, Any]] = []
        blocks = m.get("content")
        texts, thinking, had_text = _blocks(blocks, assets) if isinstance(blocks, list) else ([], [], False)
        if not had_text and text_of(m.get("text")):
            texts.insert(0, text_of(m.get("text")))
        texts.extend(_attachments(m, assets))
        ts = ms_from_iso(m.get("created_at"))
        message = make_message(role, "\n\n".join(texts), ts if ts is not None else base, source="claude",
                               original_id=key, model=model, thinking="\n\n".join(thinking) or None,
                               assets=assets)
        if linear:
            parent = previous
        else:
            raw_parent = m.get("parent_message_uuid")
            parent = raw_parent if isinstance(raw_parent, str) and raw_parent != CLAUDE_ROOT_UUID else None
        nodes.append(TreeNode(key, parent, message, (float(ts if ts is not None else base), seq)))
        previous = key
    leaf = conv.get("current_leaf_message_uuid")
    return ParsedConversation(
        source="claude", original_id=conv_id, title=title_of(conv.get("name")),
        created_at=created if created is not None else min((n.message.ts for n in nodes), default=0),
        updated_at=updated, nodes=nodes, active_leaf=leaf if isinstance(leaf, str) else None,
    )
