"""Crash debris (issue 9 #6): temp files are removed on the next load, and a crash at any instant of a
save never duplicates or loses a message between project.json and the history archive."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from desktop.core.chat.types import ChatMessage
from desktop.core.config import SettingsStore, default_settings
from desktop.core.files import FileLock, LockState, _docstore
from desktop.core.store import Project, ProjectStore, new_node_state

REPO = Path(__file__).resolve().parents[2]


def _debris(folder: Path, name: str) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(f".{name}."))


def test_temp_files_of_interrupted_saves_are_removed_on_open(tmp_path: Path) -> None:
    store = ProjectStore(tmp_path)
    store.save(Project(nodes=[new_node_state(node_id="n")]))
    store.release()
    for name in (".project.json.abc123.tmp", ".project.json.bak.x1.tmp", ".project.json.bak.9.77.lnk"):
        (tmp_path / name).write_bytes(b"x" * 1000)
    (tmp_path / ".notes.tmp").write_text("the user's own file")
    (tmp_path / "project.json.tmp").write_text("not ours either")

    holder = ProjectStore(tmp_path)
    holder.open()
    reader = ProjectStore(tmp_path)
    assert reader.open().read_only
    assert _debris(tmp_path, "project.json") == []  # the writer cleaned up before the reader came
    holder.release()

    (tmp_path / ".project.json.late.tmp").write_bytes(b"y")
    with ProjectStore(tmp_path) as other:
        other.open()
        assert _debris(tmp_path, "project.json") == []
        (tmp_path / ".project.json.busy.tmp").write_bytes(b"z")  # as if `other` were saving right now
        assert ProjectStore(tmp_path).open().read_only
        assert _debris(tmp_path, "project.json") == [".project.json.busy.tmp"]  # a reader never deletes
    assert (tmp_path / ".notes.tmp").exists() and (tmp_path / "project.json.tmp").exists()


def test_settings_temp_files_are_removed_on_load(tmp_path: Path) -> None:
    store = SettingsStore(tmp_path)
    store.save(default_settings())
    store.save(default_settings())
    for name in (".settings.json.q1w2.tmp", ".settings.json.bak.z.tmp", ".settings.json.bak.1.2.lnk"):
        (tmp_path / name).write_bytes(b"partial")
    assert store.load() == default_settings()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["settings.json", "settings.json.bak"]


def test_settings_temp_files_of_a_running_save_are_kept(tmp_path: Path) -> None:
    store = SettingsStore(tmp_path)
    store.save(default_settings())
    with FileLock(tmp_path, directory=True) as saving:  # another instance is in the middle of a save
        assert saving.try_acquire() is LockState.HELD
        (tmp_path / ".settings.json.live.tmp").write_bytes(b"being written")
        assert store.load() == default_settings()
        assert (tmp_path / ".settings.json.live.tmp").exists()
    assert store.load() == default_settings()
    assert not (tmp_path / ".settings.json.live.tmp").exists()


def _history(store: ProjectStore, messages: list[ChatMessage], node_id: str) -> list[str]:
    """The ids an export shows: every archive line that parses, then the conversation (notes left out)."""
    ids: list[str] = []
    path = store.archive_path(node_id)
    if path.exists():
        for line in path.read_bytes().split(b"\n"):
            try:
                ids.append(json.loads(line)["id"])
            except (ValueError, KeyError, TypeError):
                continue  # a torn line of a killed append
    return ids + [m.id for m in messages if m.role != "note"]


def _long(i: int) -> list[ChatMessage]:
    return [ChatMessage(id=f"u{i}", role="user", content=f"question {i} " + "x" * 300, ts=i),
            ChatMessage(id=f"a{i}", role="assistant", content=f"answer {i} " + "y" * 300, ts=i)]


def test_a_crash_between_the_archive_append_and_the_replace(tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    store = ProjectStore(tmp_path, history_cap_bytes=4096)
    node = new_node_state(node_id="n")
    for i in range(3):
        node.conversation.messages.extend(_long(i))
    store.save(Project(nodes=[node]))  # under the cap: nothing archived yet
    for i in range(3, 12):
        node.conversation.messages.extend(_long(i))

    class Crash(BaseException):
        pass

    def crash(*args: object, **kwargs: object) -> None:
        raise Crash  # the process dies after the archive append, before project.json is replaced

    monkeypatch.setattr(_docstore, "atomic_write_bytes", crash)
    with pytest.raises(Crash):
        store.save(Project(nodes=[node]))
    monkeypatch.undo()
    assert store.read_archive("n")  # appended...
    assert '"u0"' in store.path.read_text(encoding="utf-8")  # ...while project.json still holds them
    store.release()

    archived = len(store.read_archive("n"))
    again = ProjectStore(tmp_path, history_cap_bytes=4096)
    result = again.open()
    assert result.repaired and any("interrupted save" in n for n in result.notices)
    conv = result.value.nodes[0].conversation.messages
    # the three saved exchanges once each (the archive also got the oldest unsaved ones: kept, not lost)
    assert archived % 2 == 0 and archived >= 6
    assert _history(again, conv, "n") == [f"{r}{i}" for i in range(archived // 2) for r in "ua"]
    assert conv[0].role == "note" and conv[0].content.startswith("6 earlier messages moved")
    again.save(result.value)
    assert not (tmp_path / ".chatnodes" / "archive-pending").exists()
    assert again.open().repaired is False


def test_an_interrupted_clear_is_not_repeated(tmp_path: Path) -> None:
    store = ProjectStore(tmp_path)
    node = new_node_state(node_id="n")
    node.conversation.messages.extend(_long(0))
    store.save(Project(nodes=[node]))
    store.archive_messages("n", node.conversation.messages)  # /clear archives, then empties the node...
    store.release()  # ...and the app dies before the next save
    result = ProjectStore(tmp_path).open()
    conv = result.value.nodes[0].conversation.messages
    assert [m.role for m in conv] == ["note"]
    assert _history(store, conv, "n") == ["u0", "a0"]


_SAVER = textwrap.dedent("""
    import sys
    from pathlib import Path
    from desktop.core.chat.types import ChatMessage
    from desktop.core.store import Project, ProjectStore, apply_trim, new_node_state

    store = ProjectStore(Path(sys.argv[1]), history_cap_bytes=1500)
    result = store.open()
    assert not result.read_only, result.read_only_reason
    project = result.value
    if not project.nodes or project.nodes[0].id != "n":
        project = Project(nodes=[new_node_state(node_id="n")])
    conv = project.nodes[0].conversation
    done = [int(m.id[1:]) for m in store.full_history("n", conv.messages) if m.role != "note"]
    i = max(done) + 1 if done else 0
    print("ready", flush=True)
    first = True
    while True:
        conv.messages.append(ChatMessage(id=f"u{i}", role="user", content=f"q{i} " + "x" * 300, ts=i))
        conv.messages.append(ChatMessage(id=f"a{i}", role="assistant", content=f"a{i} " + "y" * 300, ts=i))
        if i % 9 == 8:  # like /clear: archive everything, empty the node, save later
            store.archive_messages("n", [m for m in conv.messages if m.role != "note"])
            conv.messages.clear()
        saved = store.save(project)
        for info in saved.trimmed.values():
            apply_trim(conv, info)
        if first:  # one save is on disk: from here on the kill may strike anywhere
            print("saved", flush=True)
            first = False
        i += 1
""")


@pytest.mark.slow
@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL is POSIX")
def test_kill_9_during_saves_never_duplicates_or_loses_a_message(tmp_path: Path) -> None:
    rng = random.Random(6)
    env = dict(os.environ, PYTHONPATH=str(REPO))
    for _ in range(20):
        with subprocess.Popen([sys.executable, "-c", _SAVER, str(tmp_path)], stdout=subprocess.PIPE,
                              text=True, env=env) as saver:
            assert saver.stdout is not None
            assert saver.stdout.readline().strip() == "ready"
            # Each run saves at least once (however slow the machine), then dies at a random point:
            # mid-save, mid-archive or between saves. The sleep is that random point, not a wait.
            assert saver.stdout.readline().strip() == "saved"
            time.sleep(rng.uniform(0.0, 0.12))
            saver.send_signal(signal.SIGKILL)
            saver.wait()
        assert saver.returncode == -signal.SIGKILL, "the saver died on its own"

    store = ProjectStore(tmp_path, history_cap_bytes=1500)
    result = store.open()
    assert not result.read_only
    conv = result.value.nodes[0].conversation.messages
    ids = _history(store, conv, "n")
    assert len(ids) == len(set(ids)), "a message is both archived and in project.json"
    rounds = sorted({int(x[1:]) for x in ids})
    # At least one reported save per run: 20 rounds or more, none missing.
    assert len(rounds) >= 20 and rounds == list(range(len(rounds))), "a saved message was lost"
    assert sorted(ids) == sorted(f"{r}{n}" for n in rounds for r in "ua")
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".project.json.")] == []
    store.save(result.value)
    assert _history(store, store.load().nodes[0].conversation.messages, "n") == ids
