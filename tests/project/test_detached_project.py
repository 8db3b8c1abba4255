"""``detached_project``: the copy a background save writes is not reached by later in-place edits."""

from __future__ import annotations

import threading
from pathlib import Path

from desktop.core.chat.conversation import Conversation
from desktop.core.chat.types import ChatMessage, ToolCall
from desktop.core.store import NodeState, Project, ProjectStore, detached_project


def _project() -> Project:
    call = ToolCall("call-1", "read_file", '{"path": "a"}', result="text", status="done")
    messages = [
        ChatMessage("m0", "user", "question", 1, extra={"attachments": [{"name": "a.png"}]}),
        ChatMessage("m1", "assistant", "answer", 2, thinking="hm", thinking_blocks=[{"type": "thinking",
                    "thinking": "hm"}], tool_calls=[call]),
    ]
    node = NodeState(id="n0", conversation=Conversation("c0", messages), always_allow=["read_file"],
                     extra={"canvas": {"x": 1}})
    closed = NodeState(id="n1", conversation=Conversation("c1", [ChatMessage("m2", "user", "x", 3)]))
    return Project(nodes=[node], extra={"layout": "tiled", "board": {"zoom": 1.0}}, closed=[closed])


def test_in_place_edits_of_the_live_project_do_not_reach_the_copy() -> None:
    live = _project()
    copy = detached_project(live)
    msgs = live.nodes[0].conversation.messages
    msgs[1].content += " grown"  # what streaming does
    msgs[1].thinking_blocks[0]["signature"] = "sig"  # type: ignore[index]
    msgs[1].tool_calls[0].result = "changed"  # type: ignore[index]
    msgs[0].extra["stored"] = True
    msgs.append(ChatMessage("m3", "user", "new", 4))
    live.nodes[0].always_allow.append("write_file")
    live.nodes[0].extra["canvas"]["x"] = 2
    live.extra["board"]["zoom"] = 2.0
    live.closed[0].conversation.messages.clear()

    kept = copy.nodes[0].conversation.messages
    assert [m.id for m in kept] == ["m0", "m1"]
    assert kept[1].content == "answer" and kept[1].thinking_blocks == [{"type": "thinking", "thinking": "hm"}]
    assert kept[1].tool_calls is not None and kept[1].tool_calls[0].result == "text"
    assert "stored" not in kept[0].extra and kept[0].extra["attachments"] == [{"name": "a.png"}]
    assert copy.nodes[0].always_allow == ["read_file"] and copy.nodes[0].extra == {"canvas": {"x": 1}}
    assert copy.extra == {"layout": "tiled", "board": {"zoom": 1.0}}
    assert [m.id for m in copy.closed[0].conversation.messages] == ["m2"]


def test_the_copy_saves_to_the_same_file(tmp_path: Path) -> None:
    live = _project()
    with ProjectStore(tmp_path / "a") as first, ProjectStore(tmp_path / "b") as second:
        first.save(live)
        second.save(detached_project(live))
        written = [(tmp_path / name / "project.json").read_bytes() for name in ("a", "b")]
        assert written[0] == written[1]


def test_a_save_on_another_thread_and_archive_reads_do_not_interleave(tmp_path: Path) -> None:
    messages = [ChatMessage(f"m{i}", "user" if i % 2 == 0 else "assistant", "x" * 2000, i) for i in range(60)]
    live = Project(nodes=[NodeState(id="n0", conversation=Conversation("c0", messages))])
    with ProjectStore(tmp_path / "p", history_cap_bytes=20_000) as store:
        errors: list[BaseException] = []

        def save() -> None:
            try:
                for _ in range(5):
                    store.save(detached_project(live))
            except BaseException as exc:  # noqa: BLE001 - the assertion below reports it
                errors.append(exc)

        worker = threading.Thread(target=save)
        worker.start()
        while worker.is_alive():
            ids = [m.id for m in store.read_archive("n0")]
            assert len(ids) == len(set(ids))  # never a torn or repeated line
        worker.join()
        assert errors == []
        archived = [m.id for m in store.read_archive("n0")]
        assert archived == [f"m{i}" for i in range(len(archived))] and archived
