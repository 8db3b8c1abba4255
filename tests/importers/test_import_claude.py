"""Claude exports: branches by parent uuid, the newest leaf or current leaf, blocks and attachments."""

from __future__ import annotations

from pathlib import Path

from import_builders import Claude, branchy_claude, write_json, write_zip

from desktop.core.chat import versions as V
from desktop.core.importers import convert_export, preview_export
from desktop.core.store import NodeState


def import_nodes(tmp_path: Path, *convs: dict[str, object], zipped: bool = False) -> list[NodeState]:
    if zipped:
        path = write_zip(
            tmp_path / "claude.zip",
            {"conversations.json": list(convs), "users.json": [], "projects.json": [], "memories.json": []},
        )
    else:
        path = write_json(tmp_path / "conversations.json", list(convs))
    outcome = convert_export(path)
    assert outcome.report.problems == [] and outcome.report.format == "claude", outcome.report
    return outcome.nodes


def test_branches_and_the_newest_leaf(tmp_path: Path) -> None:
    node = import_nodes(tmp_path, branchy_claude(), zipped=True)[0]
    assert node.title == "Which town"
    msgs = node.conversation.messages
    assert [m.role for m in msgs] == ["user", "assistant", "user", "assistant"]
    assert msgs[1].content == "Ravello."
    assert msgs[2].content == (
        "Why Ravello and not Amalfi?\n\n**Attachment** `notes.txt`\n\n```\nhotel list\n```"
        "\n\n[image: map.png — not imported]"
    )
    assert msgs[3].content == (
        '**Tool call** `web_search`\n\n```json\n{\n  "query": "ravello amalfi"\n}\n```'
        "\n\n**Tool result** `web_search`\n\n```\nRavello guide — https://example.org/r\n"
        "Quieter.\n```\n\nRavello is quieter."
    )
    ctl = {
        next(m.content for m in msgs if m.id == k)[:12]: (c.kind, c.k, c.n)
        for k, c in V.version_controls(node.conversation).items()
    }
    assert ctl == {"Ravello.": ("answer", 2, 2), "Why Ravello ": ("edit", 2, 2)}
    V.switch_version(node.conversation, msgs[1].id, 1)
    assert node.conversation.messages[1].content == "Positano."
    assert node.conversation.messages[1].thinking == "Comparing the towns."
    assert all(
        m.usage is None and m.extra["imported"]["source"] == "claude" for m in node.conversation.messages
    )
    assert node.extra["imported"] == {"source": "claude", "id": "claude-branchy"}


def test_current_leaf_decides_the_shown_path(tmp_path: Path) -> None:
    conv = branchy_claude()
    conv["current_leaf_message_uuid"] = "m3"
    node = import_nodes(tmp_path, conv)[0]
    assert [m.content for m in node.conversation.messages] == [
        "Which town should I stay in?",
        "Ravello.",
        "Why Ravello?",
    ]


def test_without_parent_fields_a_conversation_is_linear_in_array_order(tmp_path: Path) -> None:
    c = Claude("Old export", "claude-old")
    for i, sender in enumerate(["human", "assistant", "human", "assistant"]):
        c.add(f"x{i}", None, sender, f"text {i}")
    conv = c.to_dict()
    for m in conv["chat_messages"]:  # type: ignore[union-attr]
        del m["parent_message_uuid"]
    node = import_nodes(tmp_path, conv)[0]
    assert [m.content for m in node.conversation.messages] == ["text 0", "text 1", "text 2", "text 3"]
    assert V.version_controls(node.conversation) == {}


def test_top_level_text_is_used_only_without_text_blocks(tmp_path: Path) -> None:
    c = Claude(None, "claude-text")
    u = c.add("u", None, "human", "question")
    c.add("a", u, "assistant", "Recovered from the flat text field.", content=[])
    c.add("b", "a", "human", "thinking leaked here", content=[{"type": "text", "text": "real text"}])
    node = import_nodes(tmp_path, c.to_dict())[0]
    assert node.title == "Untitled conversation"
    assert [m.content for m in node.conversation.messages] == [
        "question",
        "Recovered from the flat text field.",
        "real text",
    ]


def test_unknown_blocks_are_noted(tmp_path: Path) -> None:
    c = Claude("Blocks", "claude-blocks")
    u = c.add("u", None, "human", "hi")
    c.add("a", u, "assistant", content=[{"type": "hologram", "data": 1}, {"type": "text", "text": "ok"}])
    node = import_nodes(tmp_path, c.to_dict())[0]
    assert node.conversation.messages[1].content == (
        '[Claude content block \'hologram\' — not shown: {"type": "hologram", "data": 1}]\n\nok'
    )


def test_a_bad_sender_fails_that_conversation_only(tmp_path: Path) -> None:
    bad = Claude("Bad", "claude-bad")
    bad.add("u", None, "robot", "beep")
    path = write_json(tmp_path / "conversations.json", [bad.to_dict(), branchy_claude()])
    outcome = convert_export(path)
    assert [i.title for i in outcome.report.imported] == ["Which town"]
    assert [str(p) for p in outcome.report.problems] == [
        "conversation 1 'Bad' (id claude-bad): 'chat_messages[0].sender' must be 'human' or 'assistant', "
        "got 'robot'"
    ]
    preview = preview_export(path)
    assert [(e.title, e.messages, e.branches) for e in preview.entries] == [("Which town", 6, 3)]
