"""The autosave of a long project is written on the save worker (issue 28 item 1).

Real windows on real temp folders: the GUI thread only hands a detached copy to one worker thread,
edits made meanwhile do not reach the file being written, writes stay in order, the close waits for
the last write, and a write that fails on the worker still shows the same banners as before.
"""

from __future__ import annotations

import errno
import json
import threading
from pathlib import Path
from typing import Any

import pytest

import desktop.core.files._docstore as docstore
from desktop.core.chat.conversation import Conversation
from desktop.core.chat.types import ChatMessage
from desktop.core.store import NodeState, Project, ProjectStore
from desktop.ui.window.save_worker import BACKGROUND_SAVE_CHARS

pytest_plugins = ["test_app_support"]  # fixtures: fake, make_context, open_window

MESSAGES = 30
TEXT = 4000  # 30 × 4,000 characters: a long project (over BACKGROUND_SAVE_CHARS), under the cap


def _write_long(project: Path) -> None:
    assert MESSAGES * TEXT > BACKGROUND_SAVE_CHARS
    messages = [ChatMessage(f"m{i}", "user" if i % 2 == 0 else "assistant", f"message {i} " + "x" * TEXT,
                            1_764_547_200_000 + i) for i in range(MESSAGES)]
    store = ProjectStore(project)
    store.save(Project(nodes=[NodeState(id="n0", title="Long", conversation=Conversation("c0", messages))]))
    store.release()  # the window takes the project's lock


def _last_text(project: Path) -> str:
    data = json.loads((project / "project.json").read_text(encoding="utf-8"))
    return str(data["nodes"][0]["data"]["conversation"]["messages"][-1]["content"])


class _GatedSaves:
    """Records every ``ProjectStore.save`` (thread, start and end, in order); a save off the main
    thread waits for ``gate`` first, so the test decides when the worker's write happens."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.gate = threading.Event()
        self.events: list[tuple[str, bool]] = []
        original = ProjectStore.save
        gated = self

        def save(store: ProjectStore, project: Project, *, force: bool = False) -> Any:
            main = threading.current_thread() is threading.main_thread()
            gated.events.append(("start", main))
            if not main:
                assert gated.gate.wait(10.0)
            try:
                return original(store, project, force=force)
            finally:
                gated.events.append(("end", main))

        monkeypatch.setattr(ProjectStore, "save", save)


def _autosave(qtbot: Any, window: Any) -> None:
    """Let the autosave's debounce end now (the product's timer, not a direct call); from its
    timeout on, later changes (a banner resizing the area) wait an hour: only the saves the test
    asks for happen."""
    timer = window.projects.autosave

    def later() -> None:
        timer.setInterval(3_600_000)
        timer.timeout.disconnect(later)

    timer.timeout.connect(later)  # runs right after the product's slot, in the same emission
    timer.setInterval(0)
    with qtbot.waitSignal(timer.timeout, timeout=10_000):
        window.schedule_save()


def test_a_long_autosave_writes_a_detached_copy_on_a_worker_and_the_close_waits(
        qtbot: Any, open_window: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project, config = tmp_path / "p", tmp_path / "c"
    _write_long(project)
    window = open_window(project, config)
    node = window.nodes()[0]
    saves = _GatedSaves(monkeypatch)

    _autosave(qtbot, window)
    qtbot.waitUntil(lambda: saves.events != [], timeout=10_000)
    assert saves.events == [("start", False)]  # the write runs on another thread; the GUI goes on
    live = node.conversation.messages[-1]
    live.content += " edited"  # as a stream grows a message in place, while the worker waits
    with qtbot.waitSignal(window.saved, timeout=10_000):
        saves.gate.set()
    assert _last_text(project) == f"message {MESSAGES - 1} " + "x" * TEXT  # the copy, not the edit
    assert live.content.endswith(" edited")  # the live message is the window's, untouched

    saves.gate.clear()
    _autosave(qtbot, window)  # this one holds the edit; the worker waits again
    qtbot.waitUntil(lambda: len(saves.events) == 3, timeout=10_000)
    live.content += " twice"
    opener = threading.Timer(0.3, saves.gate.set)  # the write ends while the window is closing
    opener.start()
    try:
        with qtbot.waitSignal(window.closed, timeout=10_000):
            window.close()
    finally:
        opener.cancel()
    # The close waited for the worker's write, then wrote the newest state itself: in that order.
    assert saves.events[2:] == [("start", False), ("end", False), ("start", True), ("end", True)]
    assert _last_text(project).endswith(" edited twice")
    assert not window.projects.writer.busy


def test_a_failing_background_write_shows_the_error_banner(
        qtbot: Any, open_window: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project, config = tmp_path / "p", tmp_path / "c"
    _write_long(project)
    window = open_window(project, config)
    before = (project / "project.json").read_bytes()
    threads: list[bool] = []
    original = docstore.atomic_write_bytes

    def full_disk(*args: Any, **kwargs: Any) -> None:
        threads.append(threading.current_thread() is threading.main_thread())
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(docstore, "atomic_write_bytes", full_disk)
    _autosave(qtbot, window)
    qtbot.waitUntil(lambda: window.banner_area.find("saveErrorBanner") is not None, timeout=10_000)
    assert threads == [False]  # it failed on the worker, and the window was told
    banner = window.banner_area.find("saveErrorBanner")
    assert "No space left on device" in banner.text()
    assert (project / "project.json").read_bytes() == before  # the previous file is unchanged
    assert not window.projects.writer.busy

    monkeypatch.setattr(docstore, "atomic_write_bytes", original)  # space again: the next one works
    with qtbot.waitSignal(window.saved, timeout=10_000):
        _autosave(qtbot, window)
    assert window.banner_area.find("saveErrorBanner") is None


def test_a_file_changed_on_disk_stops_a_background_write_with_the_changed_banner(
        qtbot: Any, open_window: Any, tmp_path: Path) -> None:
    project, config = tmp_path / "p", tmp_path / "c"
    _write_long(project)
    window = open_window(project, config)
    theirs = json.loads((project / "project.json").read_text(encoding="utf-8"))
    theirs["nodes"][0]["title"] = "Changed elsewhere"
    (project / "project.json").write_text(json.dumps(theirs), encoding="utf-8")
    _autosave(qtbot, window)
    qtbot.waitUntil(lambda: window.banner_area.find("projectChangedBanner") is not None, timeout=10_000)
    assert json.loads((project / "project.json").read_text(encoding="utf-8"))["nodes"][0]["title"] == \
        "Changed elsewhere"  # not overwritten


def test_back_to_back_long_answers_keep_the_history_cap(
        qtbot: Any, open_window: Any, fake: Any, tmp_path: Path) -> None:
    from test_app_support import write_capped_settings

    from desktop.testing import Turn

    project, config = tmp_path / "p", tmp_path / "c"
    write_capped_settings(config, fake, 200)
    window = open_window(project, config)
    node = window.nodes()[0]
    answer = "A line of a long answer, long enough to need the save worker.\n\n" * 1400  # ~90 KB
    assert len(answer) > BACKGROUND_SAVE_CHARS
    counts = []
    fake.script(*[Turn(text=f"answer {i}\n\n" + answer, chunk_chars=400, tokens_per_second=2000)
                  for i in range(6)])
    rounds = [0]

    def next_round(_reason: str) -> None:  # the next question at once: the saves land mid-stream
        counts.append(len(node.conversation.messages))
        rounds[0] += 1
        if rounds[0] < 6:
            node.submit(f"question {rounds[0]}")

    node.run_finished.connect(next_round)
    node.submit("question 0")
    qtbot.waitUntil(lambda: rounds[0] == 6, timeout=60_000)
    qtbot.waitUntil(lambda: not window.projects.writer.busy, timeout=10_000)
    assert len(node.conversation.messages) <= 5, counts  # the note and the last exchanges, not all 12



def test_a_background_save_trimming_several_nodes_gives_them_their_trims_one_per_turn(
        qtbot: Any, open_window: Any, tmp_path: Path) -> None:
    """Eight long nodes trimmed by one save froze the window ~40 ms when all took it in at once."""
    project = tmp_path / "p"
    nodes = []
    for n in range(3):  # each over the default 200 KiB cap: the window's first save archives their oldest
        messages = [ChatMessage(f"n{n}m{i}", "user" if i % 2 == 0 else "assistant", f"{n}/{i} " + "y" * 9000,
                                1_764_547_200_000 + i) for i in range(40)]
        nodes.append(NodeState(id=f"n{n}", title=f"Long {n}", conversation=Conversation(f"c{n}", messages)))
    store = ProjectStore(project, history_cap_bytes=10**9)
    store.save(Project(nodes=nodes))
    store.release()
    window = open_window(project, tmp_path / "config")
    controller = window.projects
    waiting_after_delivery: list[int] = []
    started: list[bool] = []

    def delivered() -> None:  # right after the outcome: ask for the next save at once
        waiting_after_delivery.append(len(controller.trims))
        controller.autosave_now()
        started.append(controller.writer.busy)

    controller.saved.connect(delivered)
    with qtbot.waitSignal(controller.saved, timeout=20_000):
        _autosave(qtbot, window)
    assert waiting_after_delivery == [3]  # none taken in during the delivery itself
    assert started == [False] and controller.autosave.isActive()  # the next save waits for them
    qtbot.waitUntil(lambda: not len(controller.trims), timeout=5_000)
    for node in window.nodes():  # each took its trim in: the archive's note first, the oldest gone
        ids = [m.id for m in node.conversation.messages]
        assert f"{node.node_id}m0" not in ids and node.conversation.messages[0].role == "note"
    controller.saved.disconnect(delivered)
    assert window.save_project()  # the explicit save trims nothing more: the nodes are at the cap
    assert not len(controller.trims)
