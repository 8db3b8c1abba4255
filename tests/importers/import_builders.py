"""Export files shaped like the real ones (ChatGPT and Claude data exports), built in tests.

The shapes follow real exports: ChatGPT's ``mapping`` tree with a ``client-created-root`` root, a
hidden system message, ``user_editable_context``, float epoch times (null on system messages),
``metadata.model_slug``, ``recipient``; Claude's flat ``chat_messages`` with ``parent_message_uuid``
(the all-zero uuid for the first message), ISO times, content blocks, attachments and files.
"""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path
from typing import Any

ROOT = "client-created-root"
CLAUDE_ROOT = "00000000-0000-4000-8000-000000000000"


class ChatGPT:
    """One ChatGPT conversation, node by node (each call is one second after the previous one)."""

    def __init__(
        self,
        title: str | None = "Trip plans",
        conv_id: str = "conv-1",
        *,
        t0: float = 1_700_000_000.0,
        default_model: str | None = "gpt-4o",
        system: bool = True,
    ) -> None:
        self.title = title
        self.conv_id = conv_id
        self.t = t0
        self.t0 = t0
        self.default_model = default_model
        self.mapping: dict[str, dict[str, Any]] = {
            ROOT: {"id": ROOT, "message": None, "parent": None, "children": []}
        }
        self.top = ROOT
        if system:
            self.top = self.node(
                "sys",
                ROOT,
                "system",
                {"content_type": "text", "parts": [""]},
                create_time=None,
                metadata={"is_visually_hidden_from_conversation": True},
            )
            self.top = self.node(
                "ctx",
                self.top,
                "user",
                {
                    "content_type": "user_editable_context",
                    "user_profile": "I like history",
                    "user_instructions": "Be brief",
                },
                metadata={"is_visually_hidden_from_conversation": True},
            )

    def node(
        self,
        nid: str,
        parent: str,
        role: str,
        content: dict[str, Any],
        *,
        recipient: str = "all",
        metadata: dict[str, Any] | None = None,
        create_time: float | None | str = "auto",
        name: str | None = None,
        message: bool = True,
    ) -> str:
        if create_time == "auto":
            self.t += 1.0
            create_time = self.t
        msg = {
            "id": nid,
            "author": {"role": role, "name": name, "metadata": {}},
            "create_time": create_time,
            "update_time": None,
            "content": content,
            "status": "finished_successfully",
            "end_turn": True,
            "weight": 1.0,
            "metadata": metadata if metadata is not None else {},
            "recipient": recipient,
            "channel": None,
        }
        self.mapping[nid] = {"id": nid, "message": msg if message else None, "parent": parent, "children": []}
        self.mapping[parent]["children"].append(nid)
        return nid

    def text(
        self, nid: str, parent: str, role: str, text: str, *, model: str | None = None, **kw: Any
    ) -> str:
        meta = dict(kw.pop("metadata", {}) or {})
        if model is not None:
            meta["model_slug"] = model
        return self.node(nid, parent, role, {"content_type": "text", "parts": [text]}, metadata=meta, **kw)

    def to_dict(self, current: str | None = None) -> dict[str, Any]:
        return {
            "title": self.title,
            "create_time": self.t0,
            "update_time": self.t,
            "mapping": self.mapping,
            "moderation_results": [],
            "current_node": current,
            "plugin_ids": None,
            "conversation_id": self.conv_id,
            "conversation_template_id": None,
            "gizmo_id": None,
            "is_archived": False,
            "safe_urls": [],
            "default_model_slug": self.default_model,
            "id": self.conv_id,
        }


def branchy_chatgpt(conv_id: str = "conv-branchy", title: str | None = "Rome trip") -> dict[str, Any]:
    """A conversation with branches in three places and every content type the importer handles.

    The shown path (``current_node`` = ``a4``): u1 → a1r → u2e → a2e (thinking) → u3 (image) → a3 → u4 →
    c4 (code) → o4 (output) → a4. Forks: u1 was edited (u1b, a Paris branch with a quote), the answer
    to u1 was regenerated (a1 → a1r), u2 was edited (u2 → u2e).
    """
    c = ChatGPT(title, conv_id)
    u1 = c.text("u1", c.top, "user", "Plan a 3-day trip to Rome")
    c.text("a1", u1, "assistant", "Day 1: the Colosseum.", model="gpt-4o")
    a1r = c.text("a1r", u1, "assistant", "Rome in three days: Forum, Vatican, Trastevere.", model="gpt-4o")
    u2 = c.text("u2", a1r, "user", "Make it cheaper")
    c.text("a2", u2, "assistant", "Cheaper: walk everywhere.", model="gpt-4o")
    u2e = c.text("u2e", a1r, "user", "Make it cheaper and add food")
    th = c.node(
        "th",
        u2e,
        "assistant",
        {
            "content_type": "thoughts",
            "thoughts": [{"summary": "Food", "content": "Looking at trattorias near the Forum."}],
            "source_analysis_msg_id": "x",
        },
        metadata={"model_slug": "o3"},
    )
    rr = c.node(
        "rr", th, "assistant", {"content_type": "reasoning_recap", "content": "Thought for 5 seconds"}
    )
    a2e = c.text(
        "a2e", rr, "assistant", "Food plan: supplì at lunch \ue200cite\ue202turn0search0\ue201.", model="o3"
    )
    c.text("bio", a2e, "assistant", "User likes trattorias", recipient="bio")
    u3 = c.node(
        "u3",
        a2e,
        "user",
        {
            "content_type": "multimodal_text",
            "parts": [
                {
                    "content_type": "image_asset_pointer",
                    "asset_pointer": "file-service://file-abc",
                    "size_bytes": 1234,
                    "width": 800,
                    "height": 600,
                    "fovea": None,
                    "metadata": None,
                },
                "What is this place?",
            ],
        },
        metadata={
            "attachments": [{"id": "file-abc", "name": "photo.jpg", "mime_type": "image/jpeg", "size": 1234}]
        },
    )
    a3 = c.text("a3", u3, "assistant", "That is the Pantheon.", model=None)
    u4 = c.text("u4", a3, "user", "Compute the budget in Python")
    c4 = c.node(
        "c4",
        u4,
        "assistant",
        {"content_type": "code", "language": "unknown", "text": "print(3 * 120)"},
        recipient="python",
        metadata={"model_slug": "gpt-4o"},
    )
    o4 = c.node("o4", c4, "tool", {"content_type": "execution_output", "text": "360"}, name="python")
    c.text("a4", o4, "assistant", "The budget is 360 €.", model="gpt-4o")
    u1b = c.text("u1b", c.top, "user", "Plan a 3-day trip to Paris")
    a1b = c.text("a1b", u1b, "assistant", "Paris: Louvre, Marais.", model="gpt-4o")
    q = c.node(
        "q",
        a1b,
        "tool",
        {
            "content_type": "tether_quote",
            "url": "https://example.org/louvre",
            "domain": "example.org",
            "title": "Louvre hours",
            "text": "Open 9 to 6.",
        },
        name="myfiles_browser",
    )
    c.text("a1c", q, "assistant", "The Louvre opens at 9.", model="gpt-4o")
    return c.to_dict(current="a4")


def linear_chatgpt(
    n_messages: int, conv_id: str = "conv-long", title: str = "Long chat", words: int = 12
) -> dict[str, Any]:
    """A conversation of ``n_messages`` alternating user and assistant messages, no branches."""
    c = ChatGPT(title, conv_id)
    parent = c.top
    for i in range(n_messages):
        role = "user" if i % 2 == 0 else "assistant"
        text = f"message {i}: " + " ".join(f"word{j}" for j in range(words))
        parent = c.text(f"m{i}", parent, role, text, model="gpt-4o" if role == "assistant" else None)
    return c.to_dict(current=parent)


def deep_branching_chatgpt(levels: int, conv_id: str = "conv-deep", title: str = "Deep") -> dict[str, Any]:
    """Forks nested ``levels`` deep: at each level the answer was regenerated, and the conversation
    went on below the *older* answer (the shown path is the newest answer of the first question)."""
    c = ChatGPT(title, conv_id)
    parent = c.top
    first_new = ""
    for level in range(levels):
        u = c.text(f"u{level}", parent, "user", f"question {level}")
        old = c.text(f"old{level}", u, "assistant", f"first answer {level}", model="gpt-4o")
        new = c.text(f"new{level}", u, "assistant", f"regenerated answer {level}", model="gpt-4o")
        first_new = first_new or new
        parent = old
    return c.to_dict(current=first_new)


class Claude:
    """One Claude conversation (flat ``chat_messages``, parents by uuid)."""

    def __init__(self, name: str | None = "Claude chat", uuid: str = "claude-1", *, minute: int = 0) -> None:
        self.name = name
        self.uuid = uuid
        self.messages: list[dict[str, Any]] = []
        self.second = minute * 60

    def _time(self) -> str:
        self.second += 1
        return f"2025-12-08T17:{self.second // 60 % 60:02d}:{self.second % 60:02d}.000000Z"

    def add(
        self,
        uuid: str,
        parent: str | None,
        sender: str,
        text: str = "",
        *,
        content: list[dict[str, Any]] | None = None,
        **extra: Any,
    ) -> str:
        blocks = (
            content
            if content is not None
            else [
                {
                    "start_timestamp": None,
                    "stop_timestamp": None,
                    "type": "text",
                    "text": text,
                    "citations": [],
                }
            ]
        )
        msg = {
            "uuid": uuid,
            "text": text,
            "content": blocks,
            "sender": sender,
            "created_at": self._time(),
            "updated_at": None,
            "attachments": [],
            "files": [],
            "parent_message_uuid": parent if parent is not None else CLAUDE_ROOT,
        }
        msg.update(extra)
        self.messages.append(msg)
        return uuid

    def to_dict(self, **extra: Any) -> dict[str, Any]:
        out = {
            "uuid": self.uuid,
            "name": self.name,
            "summary": "",
            "created_at": "2025-12-08T17:00:00.000000Z",
            "updated_at": "2025-12-08T18:00:00.000000Z",
            "account": {"uuid": "acc-1"},
            "chat_messages": self.messages,
        }
        out.update(extra)
        return out


def branchy_claude(uuid: str = "claude-branchy") -> dict[str, Any]:
    """m1 → (m2a | m2b retried) ; m2b → (m3 | m3e edited) → m4. Newest leaf: m4."""
    c = Claude("Which town", uuid)
    m1 = c.add("m1", None, "human", "Which town should I stay in?")
    c.add(
        "m2a",
        m1,
        "assistant",
        content=[
            {"type": "thinking", "thinking": "Comparing the towns.", "summaries": []},
            {"type": "text", "text": "Positano."},
        ],
    )
    m2b = c.add("m2b", m1, "assistant", "Ravello.")
    c.add("m3", m2b, "human", "Why Ravello?")
    m3e = c.add(
        "m3e",
        m2b,
        "human",
        "Why Ravello and not Amalfi?",
        attachments=[
            {
                "file_name": "notes.txt",
                "file_type": "text/plain",
                "file_size": 12,
                "extracted_content": "hotel list",
            }
        ],
        files=[{"file_uuid": "f-2", "file_name": "map.png"}],
    )
    c.add(
        "m4",
        m3e,
        "assistant",
        content=[
            {"type": "tool_use", "id": "tu1", "name": "web_search", "input": {"query": "ravello amalfi"}},
            {
                "type": "tool_result",
                "tool_use_id": "tu1",
                "name": "web_search",
                "is_error": False,
                "content": [
                    {
                        "type": "knowledge",
                        "title": "Ravello guide",
                        "url": "https://example.org/r",
                        "text": "Quieter.",
                    }
                ],
            },
            {"type": "token_budget"},
            {"type": "text", "text": "Ravello is quieter."},
        ],
    )
    return c.to_dict()


def write_json(path: Path, obj: Any) -> Path:
    path.write_text(json.dumps(obj, ensure_ascii=False), encoding="utf-8")
    return path


def write_zip(path: Path, files: dict[str, Any], *, compression: int = zipfile.ZIP_DEFLATED) -> Path:
    """A zip of ``{name: bytes | str | JSON value}``."""
    with zipfile.ZipFile(path, "w", compression=compression) as zf:
        for name, value in files.items():
            if isinstance(value, bytes):
                data = value
            elif isinstance(value, str):
                data = value.encode("utf-8")
            else:
                data = json.dumps(value, ensure_ascii=False).encode("utf-8")
            zf.writestr(name, data)
    return path


def chatgpt_zip(
    path: Path,
    conversations: list[dict[str, Any]],
    *,
    shards: int = 0,
    manifest: bool = True,
    drop_shard: int | None = None,
) -> Path:
    """A ChatGPT export zip: ``conversations.json`` or ``shards`` shards with ``export_manifest.json``."""
    files: dict[str, Any] = {
        "user.json": {"id": "user-1", "email": "ada@example.org"},
        "message_feedback.json": [],
        "chat.html": "<html></html>",
    }
    if shards:
        size = max(1, -(-len(conversations) // shards))
        names = [f"conversations-{i:03d}.json" for i in range(shards)]
        for i, name in enumerate(names):
            if i != drop_shard:
                files[name] = conversations[i * size : (i + 1) * size]
        if manifest:
            files["export_manifest.json"] = {
                "version": 1,
                "manifest_file": "export_manifest.json",
                "logical_files": {"conversations.json": {"files": names, "sharded": True}},
            }
        files["file-abc.dat"] = b"\x89PNG fake"
    else:
        files["conversations.json"] = conversations
    return write_zip(path, files)


def zip_bytes(files: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, data in files.items():
            zf.writestr(name, data)
    return buf.getvalue()
