"""One conversation of ChatGPT's data export (``conversations.json``) to a message tree.

A ChatGPT conversation is ``{title, create_time, update_time, mapping, current_node,
conversation_id, default_model_slug}``; ``mapping`` maps node ids to ``{id, message|null, parent,
children}``. What becomes a message:

* user and assistant messages addressed to everyone (``recipient`` "all"), by content type:
  ``text``; ``multimodal_text`` (images become ``[image: name — not imported]``, audio
  transcriptions their text); ``code`` (a fenced block, also when addressed to a tool: it is what
  the model ran); ``execution_output`` (the code's output, fenced);
* ``thoughts`` become the ``thinking`` of the answer that follows them (a thought nothing
  followed stays as an answer with only its thinking);
* tool messages that show something: ``execution_output``, images (DALL·E), errors;
  ``tether_quote`` and ``tether_browsing_display`` as short notes;
* any other content type on a user or assistant message: a short note quoting its JSON.

Skipped, their children attached to the nearest kept ancestor: the root, hidden messages
(``is_visually_hidden_from_conversation``), system messages without text, the
``*_editable_context`` messages, ``reasoning_recap``, assistant text addressed to a tool, plain tool
text, and empty messages.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from typing import Any

from desktop.core.chat.types import ChatMessage, Role

from ._common import (
    UNTITLED,
    ConversationFormatError,
    fenced,
    file_placeholder,
    image_placeholder,
    make_message,
    ms_from_epoch_seconds,
    raw_note,
    text_of,
    title_of,
)
from ._model import ParsedConversation
from ._tree import TreeNode

__all__ = ["chatgpt_id", "parse_chatgpt"]

log = logging.getLogger(__name__)

_CITATION = re.compile("\ue200[^\ue201]{0,400}\ue201")  # ChatGPT's private-use citation markers
_PLUMBING = frozenset({"user_editable_context", "model_editable_context", "reasoning_recap"})
_THOUGHTS = "thoughts"
_MAX_THOUGHT_WALK = 64


def chatgpt_id(conv: dict[str, Any]) -> str:
    """The conversation's id (``conversation_id``, else ``id``, else a hash of what identifies it)."""
    for key in ("conversation_id", "id"):
        value = conv.get(key)
        if isinstance(value, str) and value:
            return value
    basis = json.dumps([conv.get("title"), conv.get("create_time"), conv.get("current_node")], default=str)
    return "sha1-" + hashlib.sha1(basis.encode("utf-8", "replace")).hexdigest()[:20]


def _attachment_names(meta: dict[str, Any]) -> dict[str, str]:
    names: dict[str, str] = {}
    raw = meta.get("attachments")
    if isinstance(raw, list):
        for a in raw:
            if isinstance(a, dict) and isinstance(a.get("id"), str):
                names[a["id"]] = text_of(a.get("name")) or a["id"]
    return names


def _pointer_id(pointer: object) -> str:
    text = text_of(pointer)
    return text.split("://", 1)[1] if "://" in text else text


def _parts(content: dict[str, Any], meta: dict[str, Any], assets: list[dict[str, Any]]) -> str:
    """The text of ``text`` / ``multimodal_text`` parts; images and audio as placeholders."""
    parts = content.get("parts")
    if not isinstance(parts, list):
        return text_of(content.get("text"))
    names = _attachment_names(meta)
    out: list[str] = []
    shown: set[str] = set()
    for part in parts:
        if isinstance(part, str):
            if part:
                out.append(text_of(part))
            continue
        if not isinstance(part, dict):
            continue
        kind = part.get("content_type")
        if kind == "audio_transcription":
            if text_of(part.get("text")):
                out.append(text_of(part.get("text")))
        elif kind == "image_asset_pointer":
            pid = _pointer_id(part.get("asset_pointer"))
            shown.add(pid)
            name = names.get(pid, pid)
            assets.append({"pointer": text_of(part.get("asset_pointer")), "name": name, "kind": "image"})
            out.append(image_placeholder(name))
        elif kind in ("audio_asset_pointer", "real_time_user_audio_video_asset_pointer"):
            out.append("[audio — not imported]")
        else:
            out.append(raw_note(f"ChatGPT content part '{text_of(kind) or '?'}'", part))
    for pid, name in names.items():  # uploaded files that are not images appear only in the metadata
        if pid not in shown:
            assets.append({"pointer": pid, "name": name, "kind": "file"})
            out.append(file_placeholder(name))
    return _CITATION.sub("", "\n\n".join(out))


def _thoughts_text(content: dict[str, Any]) -> str:
    thoughts = content.get("thoughts")
    if not isinstance(thoughts, list):
        return ""
    texts = [text_of(t.get("content")) or text_of(t.get("summary")) for t in thoughts if isinstance(t, dict)]
    return "\n\n".join(t for t in texts if t)


def _tool_body(ctype: str, content: dict[str, Any], meta: dict[str, Any],
               assets: list[dict[str, Any]]) -> tuple[Role, str] | None:
    """What a tool message shows (role and text), or None for plumbing."""
    if ctype == "execution_output":
        return "assistant", "Output:\n\n" + fenced(text_of(content.get("text")))
    if ctype == "multimodal_text":
        text = _parts(content, meta, assets)
        return ("assistant", text) if assets else None
    if ctype == "system_error":
        return "note", f"Tool error: {text_of(content.get('text')) or text_of(content.get('name'))}"
    if ctype == "tether_quote":
        title = text_of(content.get("title")) or text_of(content.get("domain")) or "a source"
        url = text_of(content.get("url"))
        quote = text_of(content.get("text"))
        if len(quote) > 1_000:
            quote = quote[:1_000] + f"… ({len(quote) - 1_000:,} more characters not imported)"
        head = f"Quoted from {title}" + (f" ({url})" if url else "")
        return "note", head + ":\n\n" + "\n".join("> " + line for line in quote.splitlines())
    if ctype == "tether_browsing_display":
        result = text_of(content.get("result")) or text_of(content.get("summary"))
        if not result:
            return None
        return "note", raw_note("Browsing result", result)
    return None


_Body = tuple[Role, str, str | None, list[dict[str, Any]]]


def _body(msg: dict[str, Any], has_children: bool) -> _Body | None:
    """``(role, text, thinking, assets)`` of a message we keep, or None to skip it."""
    author = msg.get("author")
    role = author.get("role") if isinstance(author, dict) else None
    content = msg.get("content")
    if not isinstance(content, dict):
        return None
    meta = msg.get("metadata") if isinstance(msg.get("metadata"), dict) else {}
    assert isinstance(meta, dict)
    if meta.get("is_visually_hidden_from_conversation") is True:
        return None
    ctype = text_of(content.get("content_type"))
    if ctype in _PLUMBING:
        return None
    recipient = msg.get("recipient")
    to_all = recipient in (None, "all")
    assets: list[dict[str, Any]] = []
    if ctype == _THOUGHTS:
        text = _thoughts_text(content)
        return ("assistant", "", text, []) if text and not has_children else None
    if role == "system":
        text = _parts(content, meta, assets) if ctype in ("text", "multimodal_text") else ""
        return ("note", f"System message: {text}", None, assets) if text.strip() else None
    if role == "tool":
        shown = _tool_body(ctype, content, meta, assets)
        return (shown[0], shown[1], None, assets) if shown else None
    if role not in ("user", "assistant"):
        return None
    out_role: Role = "user" if role == "user" else "assistant"
    if ctype == "code":
        language = text_of(content.get("language"))
        if language in ("", "unknown"):
            language = "python" if recipient == "python" else ""
        return out_role, fenced(text_of(content.get("text")), language), None, []
    if not to_all:
        return None  # a message to a tool that is not code (a memory write...): plumbing
    if ctype in ("text", "multimodal_text"):
        text = _parts(content, meta, assets)
    elif ctype == "execution_output":
        text = "Output:\n\n" + fenced(text_of(content.get("text")))
    elif ctype in ("tether_quote", "tether_browsing_display", "system_error"):
        shown = _tool_body(ctype, content, meta, assets)
        return (shown[0], shown[1], None, assets) if shown else None
    else:
        return "note", raw_note(f"ChatGPT content '{ctype or '?'}'", content), None, []
    if not text.strip():
        return None
    return out_role, text, None, assets


def parse_chatgpt(conv: object, index: int) -> ParsedConversation:
    """Convert one ChatGPT conversation to its message tree.

    Args:
        conv: The decoded conversation object.
        index: Its position in the file (for messages).

    Raises:
        ConversationFormatError: A field has the wrong shape (the message names it).
    """
    if not isinstance(conv, dict):
        raise ConversationFormatError(f"conversation {index + 1} is not a JSON object")
    conv_id = chatgpt_id(conv)
    title = title_of(conv.get("title"))
    created = ms_from_epoch_seconds(conv.get("create_time"))
    updated = ms_from_epoch_seconds(conv.get("update_time"))
    mapping = conv.get("mapping")
    if mapping is None:
        raise ConversationFormatError("'mapping' is missing (the conversation holds no messages)")
    if not isinstance(mapping, dict):
        raise ConversationFormatError(f"'mapping' must be an object, got {type(mapping).__name__}")
    default_model = text_of(conv.get("default_model_slug")) or None
    parent_of: dict[str, str | None] = {}
    raw: dict[str, dict[str, Any] | None] = {}
    has_children: set[str] = set()
    for key, entry in mapping.items():
        if not isinstance(entry, dict):
            raise ConversationFormatError(f"'mapping[{key!r}]' must be an object")
        msg = entry.get("message")
        if msg is not None and not isinstance(msg, dict):
            raise ConversationFormatError(f"'mapping[{key!r}].message' must be an object or null")
        parent = entry.get("parent")
        parent_of[key] = parent if isinstance(parent, str) else None
        raw[key] = msg
        kids = entry.get("children")
        if isinstance(kids, list) and kids:
            has_children.add(key)
    for parent in parent_of.values():  # some exports omit child links: the parent is what counts
        if parent is not None:
            has_children.add(parent)
    base = created if created is not None else 0
    kept: dict[str, TreeNode] = {}
    thinking_of: dict[str, str] = {}
    notes: list[str] = []
    for seq, (key, msg) in enumerate(raw.items()):
        if msg is None:
            continue
        body = _body(msg, key in has_children)
        if body is None:
            continue
        role, text, thinking, assets = body
        meta = msg.get("metadata") if isinstance(msg.get("metadata"), dict) else {}
        assert isinstance(meta, dict)
        ts = ms_from_epoch_seconds(msg.get("create_time"))
        model = text_of(meta.get("model_slug")) or default_model
        message: ChatMessage = make_message(role, text, ts if ts is not None else base, source="chatgpt",
                                            original_id=key, model=model, thinking=thinking, assets=assets)
        if role == "note" and text.startswith("[ChatGPT content"):
            notes.append(f"message {key}: {text.split(' — ')[0][1:]} kept as a note")
        kept[key] = TreeNode(key, None, message, (float(ts if ts is not None else base), seq))
        if role == "assistant" and thinking is None:
            found = _thinking_above(key, parent_of, raw)
            if found:
                thinking_of[key] = found
    for key, text in thinking_of.items():
        kept[key].message.thinking = text
    nearest = _nearest_kept(parent_of, kept)
    for key, node in kept.items():
        node.parent = nearest(key)
    current = conv.get("current_node")
    active = current if isinstance(current, str) else None
    if active is not None and active not in kept:
        active = nearest(active) if active in parent_of else None
    return ParsedConversation(
        source="chatgpt", original_id=conv_id, title=title if title else UNTITLED,
        created_at=created if created is not None else min((n.message.ts for n in kept.values()), default=0),
        updated_at=updated, nodes=list(kept.values()), active_leaf=active, notes=notes,
    )


def _thinking_above(key: str, parent_of: dict[str, str | None], raw: dict[str, dict[str, Any] | None]) -> str:
    """The thoughts right above an answer (through ``thoughts`` and ``reasoning_recap`` messages)."""
    texts: list[str] = []
    x = parent_of.get(key)
    for _ in range(_MAX_THOUGHT_WALK):
        if x is None:
            break
        msg = raw.get(x)
        content = msg.get("content") if isinstance(msg, dict) else None
        ctype = content.get("content_type") if isinstance(content, dict) else None
        if ctype == _THOUGHTS:
            assert isinstance(content, dict)
            texts.append(_thoughts_text(content))
        elif ctype != "reasoning_recap":
            break
        x = parent_of.get(x)
    return "\n\n".join(t for t in reversed(texts) if t)


def _nearest_kept(parent_of: dict[str, str | None], kept: dict[str, TreeNode]) -> Any:
    """A function giving the nearest kept strict ancestor of a node (None at the top or in a cycle)."""
    memo: dict[str, str | None] = {}

    def nearest(key: str) -> str | None:
        walked: list[str] = []
        seen: set[str] = set()
        x = parent_of.get(key)
        while x is not None and x not in kept and x not in memo and x not in seen:
            seen.add(x)
            walked.append(x)
            x = parent_of.get(x)
        if x is None or x in seen:
            result: str | None = None
        elif x in kept:
            result = x
        else:
            result = memo[x]
        for w in walked:
            memo[w] = result
        return result

    return nearest
