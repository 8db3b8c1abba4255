"""Saves change nothing the user sees unless messages move to the archive (issue 28 item 1).

A node at the history cap is not trimmed again by the next save; when messages do move, the
transcript drops their views and shows the archive note without rebuilding the rest; closing a
window never builds the transcript of a node that was never shown.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_app_support import (
    close_window,
    fake_provider_entry,
    open_capped_with_three_exchanges,
    send_and_wait,
    write_capped_settings,
    write_settings,
)

from desktop.core.chat.types import ChatMessage
from desktop.testing import FakeProvider, Turn
from desktop.ui.node.loading import NodeLoading
from desktop.ui.transcript.transcript import Transcript

pytest_plugins = ["test_app_support"]  # fixtures: fake, make_context, open_window


def _count_rebuilds(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    calls: list[object] = []
    original = Transcript.set_conversation

    def counted(self: Transcript, conv: Any) -> None:
        calls.append(self)
        original(self, conv)

    monkeypatch.setattr(Transcript, "set_conversation", counted)
    return calls


def _saved_ids(project: Path) -> list[str]:
    data = json.loads((project / "project.json").read_text(encoding="utf-8"))
    return [m["id"] for m in data["nodes"][0]["data"]["conversation"]["messages"]]


def test_a_node_at_the_cap_is_not_trimmed_again(qtbot: Any, open_window: Any, fake: FakeProvider,
                                                tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project, config = tmp_path / "p", tmp_path / "c"
    window, node = open_capped_with_three_exchanges(qtbot, open_window, fake, project, config)
    assert window.save_project()
    saved = _saved_ids(project)
    rebuilds = _count_rebuilds(monkeypatch)
    revision = node.revision
    for _ in range(3):
        assert window.save_project()
    assert _saved_ids(project) == saved  # the same note, the same messages: nothing moved
    assert node.revision == revision
    assert rebuilds == []


def test_messages_moving_to_the_archive_rebuild_nothing_else(
        qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    project, config = tmp_path / "p", tmp_path / "c"
    window, node = open_capped_with_three_exchanges(qtbot, open_window, fake, project, config)
    rebuilds = _count_rebuilds(monkeypatch)
    shown = {v.message_id: v for v in node.transcript.views()}
    fake.script(Turn(text="answer 3 " + "x" * 700))
    send_and_wait(qtbot, node, "question 3")  # the save after the run moves "question 2" to the archive
    assert rebuilds == []
    ids = [m.id for m in node.conversation.messages]
    texts = node.transcript.message_texts()
    assert any("moved to the history archive" in t for t in texts)
    assert not any("question 2" in t or "answer 2" in t for t in texts)
    assert any("question 3" in t for t in texts) and any("answer 3" in t for t in texts)
    assert len(texts) == len(ids)  # one view per message: the note, the newest exchange
    for view in node.transcript.views():  # views of messages that stayed are the same widgets
        if view.message_id in shown:
            assert shown[view.message_id] is view


def _long_history(count: int) -> list[ChatMessage]:
    out: list[ChatMessage] = []
    for i in range(count):
        out.append(ChatMessage(id=f"u{i}", role="user", content=f"question {i}", ts=i))
        out.append(ChatMessage(id=f"a{i}", role="assistant", content=f"## Answer {i}\n\n" + "- item\n" * 40,
                               ts=i))
    return out


def test_closing_never_builds_a_transcript(qtbot: Any, open_window: Any, fake: FakeProvider,
                                          tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project, config = tmp_path / "p", tmp_path / "c"
    write_settings(config, fake_provider_entry(fake), default="fake")
    window = open_window(project, config, show=False)
    node = window.nodes()[0]
    node.conversation.messages[:] = _long_history(200)  # set-up: a long node, never shown
    node.touch()
    assert window.save_project()
    settings = json.loads((config / "settings.json").read_text(encoding="utf-8"))
    settings["history_cap_kib"] = 16  # the close's save moves most of it to the archive
    (config / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
    close_window(qtbot, window)
    built: list[object] = []
    original = NodeLoading._build

    def counted(self: NodeLoading) -> Transcript:
        built.append(self)
        return original(self)

    monkeypatch.setattr(NodeLoading, "_build", counted)
    from desktop.app import make_context, wire_window
    from desktop.ui.window.main_window import MainWindow

    again = MainWindow()  # as the app opens a project: transcripts after the first paint
    wire_window(again, make_context(config_dir=config))
    again.node_area.defer_loading = True
    again.open_project(project)
    close_window(qtbot, again)  # before the nodes finished loading: never shown
    archive = project / ".chatnodes" / "archive"
    assert any(archive.glob("*.jsonl"))  # the close's save trimmed the node ...
    assert built == []  # ... without building its transcript


def test_a_long_answer_moving_to_the_archive_is_deleted_in_slices(
        qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    import shiboken6

    from desktop.ui.transcript import reaper

    steps: list[int] = []
    original = reaper.Reaper.step

    def counted(self: reaper.Reaper) -> int:
        steps.append(original(self))
        return steps[-1]

    monkeypatch.setattr(reaper.Reaper, "step", counted)
    project, config = tmp_path / "p", tmp_path / "c"
    write_capped_settings(config, fake, 1)
    window = open_window(project, config)
    node = window.nodes()[0]
    code = "\n".join(f"value_{i} = compute(value_{i - 1}, {i})  # step {i}" for i in range(40))
    long_answer = "\n\n".join(f"## Part {k}\n\n```python\n{code}\n```" for k in range(30))  # 30 segments
    fake.script(Turn(text=long_answer))
    send_and_wait(qtbot, node, "question 0")
    view = node.transcript.view_for(node.conversation.messages[-1].id)
    assert view is not None
    qtbot.waitUntil(lambda: len(view.body.segments) > reaper.SLICE_PARTS and not view.body.pending,
                    timeout=10_000)  # the answer's blocks, each in its own segment once rendered
    fake.script(Turn(text="a short answer"))
    send_and_wait(qtbot, node, "question 1")  # the save after the run moves the long answer to the archive
    qtbot.waitUntil(lambda: not shiboken6.isValid(view), timeout=10_000)
    assert len([n for n in steps if n]) >= 2  # one turn at a time, the window painting between them
    assert max(steps) <= reaper.SLICE_PARTS


def test_a_view_moving_to_the_archive_frees_its_text_without_a_full_collection(
        qtbot: Any, open_window: Any, fake: FakeProvider, tmp_path: Path) -> None:
    """Issue 28 #3: a trimmed view's parts refer to one another; waiting for a full collection (which
    waits for an idle moment) kept every trimmed answer's text and HTML while answers streamed."""
    import gc
    import weakref

    import shiboken6

    project, config = tmp_path / "p", tmp_path / "c"
    write_capped_settings(config, fake, 1)
    window = open_window(project, config)
    node = window.nodes()[0]
    fake.script(Turn(text="\n\n".join(f"## Part {k}\n\n- item {k}\n\n```python\nx = {k}\n```"
                                        for k in range(12))))
    send_and_wait(qtbot, node, "question 0")
    view = node.transcript.view_for(node.conversation.messages[-1].id)
    assert view is not None
    qtbot.waitUntil(lambda: not view.body.pending, timeout=10_000)
    body = weakref.ref(view.body)
    was_enabled = gc.isenabled()
    gc.disable()  # as the app's collector between full collections: only refcounting frees
    try:
        fake.script(Turn(text="a short answer"))
        send_and_wait(qtbot, node, "question 1")  # the save after the run moves the answer to the archive
        qtbot.waitUntil(lambda: not shiboken6.isValid(view), timeout=10_000)
        assert body() is None
        assert vars(view) == {}
    finally:
        if was_enabled:
            gc.enable()
