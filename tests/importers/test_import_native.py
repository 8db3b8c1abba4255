"""Our own format: export nodes (or a whole project) and import them back with nothing lost."""

from __future__ import annotations

import json
from pathlib import Path

from desktop.core.chat import versions as V
from desktop.core.chat.conversation import append_message, message_to_dict
from desktop.core.chat.types import ChatMessage, ToolCall, Usage
from desktop.core.importers import (
    IMPORTED_FROM_KEY,
    ImportOptions,
    convert_export,
    export_nodes,
    import_into_project,
    preview_export,
)
from desktop.core.store import NodeState, Project, ProjectStore, new_node_state

SMALL_CAP = 4 * 1024
BIG_CAP = 64 * 1024 * 1024


def answer(conv_node: NodeState, text: str, usage: Usage, model: str = "claude-sonnet-4-6") -> ChatMessage:
    msg = append_message(conv_node.conversation, "assistant", text)
    msg.usage = usage
    msg.model = model
    return msg


def rich_project() -> Project:
    a = new_node_state("Design review", model="claude-sonnet-4-6", provider="anthropic", system="Be terse.")
    a.extra["tools_off"] = ["write_file"]
    a.extra["canvas"] = {"colour": "teal"}
    a.data_extra["draft"] = "half-typed"
    conv = a.conversation
    for i in range(12):  # long enough for the history cap to archive the oldest exchanges
        append_message(conv, "user", f"question {i} " + "x" * 300)
        answer(a, f"answer {i} " + "y" * 300, Usage(100 + i, 50, cache_read_tokens=10, reasoning_tokens=5))
    u = append_message(conv, "user", "Look at this picture")
    u.extra["attachments"] = [{"sha256": "ab" * 32, "name": "plan.png", "mime": "image/png", "size": 1234}]
    first = answer(a, "It shows a plan.", Usage(300, 40, cache_write_tokens=7))
    first.thinking = "Looking."
    first.thinking_blocks = [{"type": "thinking", "thinking": "Looking.", "signature": "sig=="}]
    V.regenerate(conv, first.id)
    second = answer(a, "A floor plan.", Usage(310, 20))
    second.tool_calls = [ToolCall("call-1", "read_file", '{"path": "a.md"}', "text", False, "done")]
    edited = V.edit_user_message(conv, u.id, "Look at this picture again")
    edited.extra["attachments"] = u.extra["attachments"]
    answer(a, "Still a floor plan.", Usage(320, 22), model="gpt-5.4")
    b = new_node_state("Fork of review")
    b.conversation.messages = V.fork_prefix(conv, conv.messages[3].id)
    answer(b, "Forked answer.", Usage(10, 5))
    c = new_node_state("Sketch")
    c.kind = "sketch"
    c.data_extra = {"strokes": [[0, 0], [1, 1]]}
    return Project(nodes=[a, b, c], extra={"view": "tabs"})


def full(store: ProjectStore, node: NodeState) -> list[dict[str, object]]:
    return [message_to_dict(m) for m in store.full_history(node.id, node.conversation.messages)]


def test_round_trip_keeps_everything(tmp_path: Path) -> None:
    src = tmp_path / "src"
    with ProjectStore(src, history_cap_bytes=SMALL_CAP) as store:
        store.save(rich_project())
        project = store.load()
        assert store.read_archive(project.nodes[0].id), "the cap should have archived something"
        originals = {n.id: (n, full(store, n)) for n in project.nodes}
        out = tmp_path / "export.json"
        export_nodes(out, project.nodes, store.read_archive)
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert doc["format"] == "chatnodes-export" and doc["version"] == 1 and len(doc["nodes"]) == 3
    preview = preview_export(out)
    assert preview.format == "chatnodes"
    assert [(e.title, e.branches) for e in preview.entries] == [
        ("Design review", 3),
        ("Fork of review", 1),
        ("Sketch", 0),
    ]

    dst = tmp_path / "dst"
    with ProjectStore(dst, history_cap_bytes=BIG_CAP) as store:
        outcome, _ = import_into_project(store, out)
        assert outcome.report.ok and len(outcome.report.imported) == 3
        imported = store.load().nodes
        assert len(imported) == 3
        for node in imported:
            original_id = node.extra[IMPORTED_FROM_KEY]["id"]
            original, history = originals[original_id]
            assert node.id != original_id
            assert node.extra[IMPORTED_FROM_KEY] == {"source": "chatnodes", "id": original_id}
            assert {k: v for k, v in node.extra.items() if k != IMPORTED_FROM_KEY} == original.extra
            assert (node.title, node.kind, node.model, node.provider, node.system, node.data_extra) == (
                original.title,
                original.kind,
                original.model,
                original.provider,
                original.system,
                original.data_extra,
            )
            assert (node.width, node.height) == (original.width, original.height)
            assert full(store, node) == history  # every message, version, usage, fork link, extra
            if node.kind == "chat":
                assert node.conversation.id == original.conversation.id
                assert node.conversation.created_at == original.conversation.created_at
    review = next(n for n in imported if n.title == "Design review")
    split = V.cost_split(review.conversation, review.model)
    orig_review = next(n for n, _ in originals.values() if n.title == "Design review")
    from desktop.core.chat.conversation import Conversation

    orig_all = Conversation("x", [m for m in store_history(src, orig_review)], 0)
    assert split.total == V.cost_split(orig_all, orig_review.model).total
    assert split.other.usd > 0  # the other versions' cost came along
    fork = next(n for n in imported if n.title == "Fork of review")
    ids = {m.id for m in review.conversation.messages}
    assert all(m.extra[V.FORKED_FROM_KEY] in ids for m in fork.conversation.messages[:-1])


def store_history(folder: Path, node: NodeState) -> list[ChatMessage]:
    with ProjectStore(folder, history_cap_bytes=SMALL_CAP) as store:
        return store.full_history(node.id, node.conversation.messages)


def test_importing_an_export_into_its_own_project_skips_every_node(tmp_path: Path) -> None:
    folder = tmp_path / "p"
    with ProjectStore(folder) as store:
        store.save(rich_project())
        project = store.load()
        out = tmp_path / "e.json"
        export_nodes(out, project.nodes[:1], store.read_archive)
        outcome, saved = import_into_project(store, out)
        assert saved is None and [s.reason for s in outcome.report.skipped] == ["already imported"]
        outcome, _ = import_into_project(store, out, options=ImportOptions(replace=True))
        assert outcome.report.replaced_node_ids == [project.nodes[0].id]
        titles = [n.title for n in store.load().nodes]
    assert titles == ["Fork of review", "Sketch", "Design review"]


def test_a_bad_node_is_named_and_the_others_come_in(tmp_path: Path) -> None:
    out = tmp_path / "e.json"
    export_nodes(out, rich_project().nodes[:2])
    doc = json.loads(out.read_text(encoding="utf-8"))
    doc["nodes"][0]["node"]["data"]["conversation"]["messages"][3]["usage"] = {"inputTokens": -1}
    deep: object = "x"
    for _ in range(120):
        deep = [deep]
    doc["nodes"].append({"node": {"id": "n-deep", "title": "Deep", "data": {"x": deep}}})
    out.write_text(json.dumps(doc), encoding="utf-8")
    outcome = convert_export(out)
    assert [i.title for i in outcome.report.imported] == ["Fork of review"]
    problems = [str(p) for p in outcome.report.problems]
    assert problems[0].startswith(
        "node 1 'Design review': node.data.conversation: message 3: 'usage.inputTokens'"
    )
    assert problems[1] == "node 3 'Deep': nested more than 96 levels deep: it could not be saved"
