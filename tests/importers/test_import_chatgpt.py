"""ChatGPT exports: titles, the shown path, the versions at each fork, content types, no cost."""

from __future__ import annotations

from pathlib import Path

import pytest
from import_builders import ChatGPT, branchy_chatgpt, chatgpt_zip, linear_chatgpt, write_json

from desktop.core.chat import versions as V
from desktop.core.chat.cost import conversation_cost
from desktop.core.chat.types import ChatMessage
from desktop.core.importers import (
    ImportProblem,
    ParsedConversation,
    convert_export,
    preview_export,
    read_export,
)
from desktop.core.store import NodeState


def by_content(conv_messages: list[ChatMessage]) -> dict[str, str]:
    return {m.id: m.content for m in conv_messages}


def controls(node: NodeState) -> dict[str, tuple[str, int, int]]:
    names = by_content(node.conversation.messages)
    return {names[k][:20]: (c.kind, c.k, c.n) for k, c in V.version_controls(node.conversation).items()}


def all_messages(node: NodeState) -> list[ChatMessage]:
    out = list(node.conversation.messages)
    for _, tail in V.stored_versions(node.conversation.messages):
        out += tail
    return out


def import_one(tmp_path: Path, conv: dict[str, object]) -> NodeState:
    outcome = convert_export(write_json(tmp_path / "conversations.json", [conv]))
    assert outcome.report.problems == [] and len(outcome.nodes) == 1, outcome.report
    return outcome.nodes[0]


def test_the_shown_path_is_the_path_to_current_node(tmp_path: Path) -> None:
    node = import_one(tmp_path, branchy_chatgpt())
    assert node.title == "Rome trip"
    msgs = node.conversation.messages
    assert [m.role for m in msgs] == [
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
        "assistant",
        "assistant",
        "assistant",
    ]
    assert msgs[0].content == "Plan a 3-day trip to Rome"
    assert msgs[1].content.startswith("Rome in three days")
    assert msgs[2].content == "Make it cheaper and add food"
    assert msgs[3].content == "Food plan: supplì at lunch ."  # citation markers removed
    assert msgs[3].thinking == "Looking at trattorias near the Forum."  # from the thoughts above it
    assert msgs[3].model == "o3" and msgs[1].model == "gpt-4o"
    assert msgs[4].content == "[image: photo.jpg — not imported]\n\nWhat is this place?"
    assert msgs[4].extra["imported"]["assets"] == [
        {"pointer": "file-service://file-abc", "name": "photo.jpg", "kind": "image"}
    ]
    assert msgs[5].model == "gpt-4o"  # no metadata.model_slug: the conversation's default_model_slug
    assert msgs[7].content == "```python\nprint(3 * 120)\n```"
    assert msgs[8].content == "Output:\n\n```\n360\n```"
    assert msgs[9].content == "The budget is 360 €."
    assert all(m.extra["imported"]["source"] == "chatgpt" for m in msgs)
    assert msgs[0].extra["imported"]["id"] == "u1"
    assert msgs[0].ts == 1_700_000_002_000  # float seconds to milliseconds


def test_each_fork_holds_its_versions(tmp_path: Path) -> None:
    node = import_one(tmp_path, branchy_chatgpt())
    assert controls(node) == {
        "Plan a 3-day trip to": ("edit", 1, 2),  # u1 was edited into u1b
        "Rome in three days: ": ("answer", 2, 2),  # the answer to u1 was regenerated
        "Make it cheaper and ": ("edit", 2, 2),  # u2 was edited into u2e
    }
    conv = node.conversation
    V.switch_version(conv, conv.messages[2].id, 1)
    assert [m.content for m in conv.messages][2:] == ["Make it cheaper", "Cheaper: walk everywhere."]
    V.switch_version(conv, conv.messages[1].id, 1)
    assert [m.content for m in conv.messages] == ["Plan a 3-day trip to Rome", "Day 1: the Colosseum."]
    V.switch_version(conv, conv.messages[0].id, 2)
    assert [m.content for m in conv.messages] == [
        "Plan a 3-day trip to Paris",
        "Paris: Louvre, Marais.",
        "Quoted from Louvre hours (https://example.org/louvre):\n\n> Open 9 to 6.",
        "The Louvre opens at 9.",
    ]
    assert conv.messages[2].role == "note"


def test_imported_messages_carry_no_cost(tmp_path: Path) -> None:
    node = import_one(tmp_path, branchy_chatgpt())
    everything = all_messages(node)
    assert len(everything) == 17
    assert all(m.usage is None for m in everything)
    assert V.all_responses(node.conversation) and all(
        m.usage is None for m in V.all_responses(node.conversation)
    )
    cost = conversation_cost(V.all_responses(node.conversation), None)
    assert cost.usd == 0 and cost.estimated and cost.unpriced == 0
    assert node.extra["imported"] == {"source": "chatgpt", "id": "conv-branchy"}
    assert node.model is None and node.provider is None  # the next message goes to the user's own provider


def test_null_title_metadata_and_times(tmp_path: Path) -> None:
    c = ChatGPT(None, "conv-null", default_model=None)
    u = c.text("u", c.top, "user", "hi", create_time=None)
    c.node("a", u, "assistant", {"content_type": "text", "parts": ["hello"]}, metadata=None, create_time=None)
    conv = c.to_dict(current="a")
    conv["mapping"]["a"]["message"]["metadata"] = None
    conv["create_time"] = None
    node = import_one(tmp_path, conv)
    assert node.title == "Untitled conversation"
    assert [m.content for m in node.conversation.messages] == ["hi", "hello"]
    assert node.conversation.messages[1].model is None


def test_unknown_content_types_become_short_notes_never_dropped(tmp_path: Path) -> None:
    c = ChatGPT("Odd", "conv-odd")
    u = c.text("u", c.top, "user", "show me")
    c.node("x", u, "assistant", {"content_type": "hologram", "payload": {"frames": 3}, "blob": "z" * 5000})
    c.node("e", "x", "tool", {"content_type": "system_error", "name": "err", "text": "timed out"})
    c.node(
        "b", "e", "tool", {"content_type": "tether_browsing_display", "result": "3 results", "summary": None}
    )
    node = import_one(tmp_path, c.to_dict(current="b"))
    msgs = node.conversation.messages
    assert msgs[1].role == "note" and msgs[1].content.startswith("[ChatGPT content 'hologram' — not shown: {")
    assert "more characters not shown" in msgs[1].content and len(msgs[1].content) < 800
    assert msgs[2].content == "Tool error: timed out"
    assert msgs[3].content.startswith("[Browsing result — not shown:")


def test_hidden_and_plumbing_messages_are_skipped_and_their_children_kept(tmp_path: Path) -> None:
    c = ChatGPT("Plumbing", "conv-pl")
    u = c.text("u", c.top, "user", "search it")
    call = c.text("call", u, "assistant", "search('x')", recipient="browser")
    res = c.text("res", call, "tool", "raw page text", name="browser")
    hid = c.text("hid", res, "assistant", "internal", metadata={"is_visually_hidden_from_conversation": True})
    c.text("a", hid, "assistant", "Found it.")
    node = import_one(tmp_path, c.to_dict(current="a"))
    assert [m.content for m in node.conversation.messages] == ["search it", "Found it."]


def test_a_thought_with_nothing_after_it_is_kept_as_thinking(tmp_path: Path) -> None:
    c = ChatGPT("Stopped", "conv-th")
    u = c.text("u", c.top, "user", "think")
    c.node("th", u, "assistant", {"content_type": "thoughts", "thoughts": [{"summary": "S", "content": ""}]})
    node = import_one(tmp_path, c.to_dict(current="th"))
    assert node.conversation.messages[1].thinking == "S" and node.conversation.messages[1].content == ""


def test_missing_child_links_follow_parents(tmp_path: Path) -> None:
    conv = branchy_chatgpt()
    for entry in conv["mapping"].values():  # type: ignore[union-attr]
        entry["children"] = []
    node = import_one(tmp_path, conv)
    assert len(node.conversation.messages) == 10 and len(V.version_controls(node.conversation)) == 3


def test_a_parent_cycle_imports_every_message(tmp_path: Path) -> None:
    conv = branchy_chatgpt()
    mapping = conv["mapping"]
    mapping["u1b"]["parent"] = "a1c"  # type: ignore[index]  # u1b → a1b → q → a1c → u1b
    nodes = convert_export(write_json(tmp_path / "c.json", [conv])).nodes
    ids = {m.extra["imported"]["id"] for node in nodes for m in all_messages(node)}
    assert ids == {
        "u1",
        "a1",
        "a1r",
        "u2",
        "a2",
        "u2e",
        "a2e",
        "u3",
        "a3",
        "u4",
        "c4",
        "o4",
        "a4",
        "u1b",
        "a1b",
        "q",
        "a1c",
    }
    assert preview_export(tmp_path / "c.json").entries[0].messages == 17


def test_a_conversation_without_mapping_is_named_in_the_problem(tmp_path: Path) -> None:
    good = branchy_chatgpt("conv-good", "Good")
    bad = {"title": "Broken", "conversation_id": "conv-bad", "create_time": 1.0, "mapping": None}
    outcome = convert_export(write_json(tmp_path / "conversations.json", [good, bad]))
    assert [i.title for i in outcome.report.imported] == ["Good"]
    assert [str(p) for p in outcome.report.problems] == [
        "conversation 2 'Broken' (id conv-bad): 'mapping' is missing (the conversation holds no messages)"
    ]


def test_a_wrongly_shaped_mapping_entry_fails_only_that_conversation(tmp_path: Path) -> None:
    bad = branchy_chatgpt("conv-bad", "Bad")
    bad["mapping"]["u2"]["message"] = ["not", "an", "object"]  # type: ignore[index]
    items = list(read_export(write_json(tmp_path / "c.json", [bad, branchy_chatgpt()])))
    assert (
        isinstance(items[0], ImportProblem)
        and "'mapping['u2'].message' must be an object" in items[0].message
    )
    assert isinstance(items[1], ParsedConversation)


@pytest.mark.slow
def test_a_conversation_with_2000_messages(tmp_path: Path) -> None:
    conv = linear_chatgpt(2000)
    mapping = conv["mapping"]
    # A regeneration near the end, and an edit near the start: forks far apart in a long chain.
    mapping["alt"] = {
        "id": "alt",
        "parent": "m1998",
        "children": [],
        "message": {
            "id": "alt",
            "author": {"role": "assistant"},
            "create_time": 1_700_005_000.0,
            "content": {"content_type": "text", "parts": ["regenerated"]},
            "metadata": {},
            "recipient": "all",
        },
    }
    mapping["m1998"]["children"].append("alt")
    mapping["edit"] = {
        "id": "edit",
        "parent": "m1",
        "children": [],
        "message": {
            "id": "edit",
            "author": {"role": "user"},
            "create_time": 1_700_005_001.0,
            "content": {"content_type": "text", "parts": ["edited"]},
            "metadata": {},
            "recipient": "all",
        },
    }
    mapping["m1"]["children"].append("edit")
    path = chatgpt_zip(tmp_path / "export.zip", [conv])
    preview = preview_export(path)
    assert (preview.entries[0].messages, preview.entries[0].branches) == (2002, 3)
    node = convert_export(path).nodes[0]
    msgs = node.conversation.messages
    assert len(msgs) == 2000 and msgs[-1].content.startswith("message 1999")
    ctl = V.version_controls(node.conversation)
    assert sorted((c.kind, c.k, c.n) for c in ctl.values()) == [("answer", 1, 2), ("edit", 1, 2)]
    V.switch_version(node.conversation, msgs[1999].id, 2)
    assert node.conversation.messages[-1].content == "regenerated"
    assert all(m.usage is None for m in all_messages(node))
