"""``SearchIndex`` on real project folders and a real SQLite file: what is found, with which facts
about it, how filters and orders work, and how incremental updates keep the rows right."""

from __future__ import annotations

import copy
import shutil
import sqlite3
import sys
from pathlib import Path

import pytest
from search_helpers import T0, msg, node, save

from desktop.core.chat.conversation import append_message
from desktop.core.chat.locate import activate_message
from desktop.core.chat.versions import regenerate
from desktop.core.search import SearchIndex, SearchQuery, UpdateStats, read_project, snapshot_project
from desktop.core.store import ProjectStore


def _ids(index: SearchIndex, text: str, **kw: object) -> list[str]:
    return [h.message_id for h in index.search(SearchQuery(text, **kw)).hits]  # type: ignore[arg-type]


def _rows(index: SearchIndex) -> int:
    conn = sqlite3.connect(index.path)
    try:
        return int(conn.execute("SELECT count(*) FROM messages").fetchone()[0])
    finally:
        conn.close()


@pytest.fixture
def two_projects(tmp_path: Path) -> tuple[Path, Path]:
    """Project A: a node with a regenerated answer (one stored version) and a second node;
    project B: one node."""
    a, b = tmp_path / "alpha", tmp_path / "beta"
    chat = node("n1", "Deploy notes", [
        msg("u1", "user", "How do I deploy the parser?", 0),
        msg("a1", "assistant", "Use the zebra deployment script.", 1, "gpt-4.1"),
    ])
    regenerate(chat.conversation, "a1")  # "zebra" now lives only in a stored version
    chat.conversation.messages.append(
        msg("a2", "assistant", "Use the giraffe pipeline instead.", 2, "claude-x"))
    other = node("n2", "Grüße", [
        msg("u2", "user", "Wer ist Herr Müller?", 3),
        msg("a3", "assistant", "Müller schreibt parse_document und QTextDocument. 流式输出需要逐块渲染", 4,
            "gpt-4.1"),
    ])
    save(a, chat, other)
    save(b, node("n3", "Other", [msg("u3", "user", "the retry policy of the parser", 5),
                                  msg("a4", "assistant", "Retries back off exponentially.", 6, "gpt-4.1")]))
    return a, b


def test_finds_every_node_every_version_with_what_opening_it_needs(
    index: SearchIndex, two_projects: tuple[Path, Path]
) -> None:
    a, b = two_projects
    for folder in (a, b):
        index.index_folder(folder)
    hit = index.search(SearchQuery("zebra")).hits[0]
    assert (hit.project, hit.project_name, hit.node_id, hit.node_title) == (a.resolve(), "alpha", "n1",
                                                                              "Deploy notes")
    assert (hit.message_id, hit.role, hit.model, hit.ts, hit.archived) == ("a1", "assistant", "gpt-4.1",
                                                                           T0 + 60_000, False)
    assert not hit.on_active_path and hit.version_path  # a version that is not shown
    # the steps are what the node needs: on the loaded conversation, the message becomes shown
    conv = copy.deepcopy(read_project(a).nodes[0].messages)
    store = ProjectStore(a)
    live = store.load().nodes[0].conversation
    store.release()
    assert [m.id for m in live.messages] == [m.id for m in conv]
    assert activate_message(live, hit.message_id)
    assert "a1" in [m.id for m in live.messages]
    assert index.search(SearchQuery("giraffe")).hits[0].on_active_path
    assert _ids(index, "parser") == ["u3", "u1"]  # both projects, newest first


def test_words_in_german_cjk_and_code(index: SearchIndex, two_projects: tuple[Path, Path]) -> None:
    index.index_folder(two_projects[0])
    for query in ("muller", "müller", "MÜLLER", "mull*", "Mül*"):
        assert "a3" in _ids(index, query), query
    assert _ids(index, "grüße") == []  # titles are not searched, messages are
    assert _ids(index, "渲染") == ["a3"]  # a two-character word inside a run of CJK
    assert _ids(index, "逐块") == ["a3"]
    assert _ids(index, "parse_document") == ["a3"]
    assert _ids(index, "document") == ["a3"]  # part of parse_document and of QTextDocument
    assert _ids(index, "TextDocument") == ["a3"]
    assert _ids(index, "parse") == ["a3"]
    assert _ids(index, "ocumen") == []  # not a substring index: words, their prefixes, camelCase parts


def test_phrases_prefixes_and_typing(index: SearchIndex, two_projects: tuple[Path, Path]) -> None:
    index.index_folder(two_projects[1])
    assert _ids(index, '"retry policy"') == ["u3"]
    assert _ids(index, '"policy retry"') == []
    assert _ids(index, "retr*") == ["a4", "u3"]
    assert _ids(index, "retr") == []
    assert _ids(index, "retr", as_you_type=True) == ["a4", "u3"]
    assert _ids(index, "exponen", as_you_type=True) == ["a4"]
    assert _ids(index, "exponen ", as_you_type=True) == []


def test_filters_and_orders(index: SearchIndex, two_projects: tuple[Path, Path], tmp_path: Path) -> None:
    a, b = two_projects
    index.index_folder(a)
    index.index_folder(b)
    assert _ids(index, "parser", projects=(b,)) == ["u3"]
    assert _ids(index, "parser", projects=(tmp_path / "nowhere",)) == []
    assert _ids(index, "use", roles=("assistant",)) == ["a2", "a1"]
    assert _ids(index, "use", models=("claude-x",)) == ["a2"]
    assert _ids(index, "use", node_ids=("n2",)) == []
    assert _ids(index, "parser", since_ms=T0 + 60_000) == ["u3"]
    assert _ids(index, "parser", until_ms=T0 + 60_000) == ["u1"]
    assert _ids(index, "parser", since_ms=T0, until_ms=T0) == ["u1"]
    assert _ids(index, "parser", archived=True) == []
    assert _ids(index, "the") == ["u3", "a2", "a1", "u1"]
    best = index.search(SearchQuery("parser", order="best")).hits
    assert {h.message_id for h in best} == {"u1", "u3"} and best[0].score <= best[1].score
    page = index.search(SearchQuery("the", limit=2))
    assert [h.message_id for h in page.hits] == ["u3", "a2"] and page.more
    rest = index.search(SearchQuery("the", limit=2, offset=2))
    assert [h.message_id for h in rest.hits] == ["a1", "u1"] and not rest.more


@pytest.mark.parametrize(
    "text", ['"', "*", "NEAR(", "-", ":", '"unbalanced', "AND OR NOT", "body:x", "(", "''"])
def test_fts_syntax_queries_never_raise(
    index: SearchIndex, two_projects: tuple[Path, Path], text: str
) -> None:
    index.index_folder(two_projects[0])
    for order in ("newest", "best"):
        result = index.search(SearchQuery(text, order=order, as_you_type=True))  # type: ignore[arg-type]
        assert result.status.state == "ready"


def test_the_archive_is_indexed_and_a_message_moving_there_is_not_doubled(
    index: SearchIndex, tmp_path: Path
) -> None:
    folder = tmp_path / "capped"
    old = [msg(f"m{i}", "user" if i % 2 == 0 else "assistant", f"message {i} about walrus{i}", i)
           for i in range(40)]
    chat = node("n1", "Long", old)
    project = save(folder, chat, cap=2_000)  # most of it goes to .chatnodes/archive/n1.jsonl
    index.update_project(snapshot_project(folder, project))  # the project as passed to save (untrimmed)
    hit = index.search(SearchQuery("walrus0")).hits[0]
    assert hit.archived and hit.message_id == "m0"
    assert _ids(index, "walrus39") == ["m39"]
    assert not index.search(SearchQuery("walrus39")).hits[0].archived
    assert _rows(index) == 40  # once each, archive or conversation
    chat.conversation.messages.append(msg("m40", "user", "and one more walrus40", 40))
    ProjectStore(folder, history_cap_bytes=2_000).save(project)
    stats = index.update_project(snapshot_project(folder, project))
    assert stats.nodes == 1 and _rows(index) == 41
    assert _ids(index, "walrus40") == ["m40"]


def test_messages_appended_to_the_archive_are_indexed_without_reading_it_all_again(
    index: SearchIndex, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A long session trims on every save: each update used to read the node's whole archive again,
    # so updates grew slower (and the writer thread's memory larger) the longer the session ran.
    from desktop.core.store import HistoryArchive

    folder = tmp_path / "capped"
    old = [msg(f"m{i}", "user" if i % 2 == 0 else "assistant", f"message {i} about walrus{i}", i)
           for i in range(40)]
    chat = node("n1", "Long", old)
    project = save(folder, chat, cap=2_000)
    index.update_project(snapshot_project(folder, project))
    full_reads: list[str] = []
    read = HistoryArchive.read

    def counting(self: HistoryArchive, node_id: str) -> object:
        if sys._getframe(1).f_code.co_filename.endswith("_sync.py"):  # the index's reads (not the store's)
            full_reads.append(node_id)
        return read(self, node_id)

    monkeypatch.setattr(HistoryArchive, "read", counting)
    store = ProjectStore(folder, history_cap_bytes=2_000)
    for i in range(40, 60):  # every save moves older messages to the archive
        chat.conversation.messages.append(msg(f"m{i}", "user" if i % 2 == 0 else "assistant",
                                              f"later message {i} about walrus{i}", i))
        store.save(project)
        index.update_project(snapshot_project(folder, project))
    assert full_reads == []  # only what each save appended was read
    assert _rows(index) == 60  # each message once, archived or not
    monkeypatch.setattr(HistoryArchive, "read", read)
    archive = HistoryArchive(folder)
    archived = {m.id for m in archive.read("n1").messages}
    assert {f"m{i}" for i in range(42)} <= archived  # the later saves archived m40 and m41 too
    for i in range(60):
        hits = index.search(SearchQuery(f"walrus{i}")).hits
        assert [h.message_id for h in hits] == [f"m{i}"], i
        assert hits[0].archived == (f"m{i}" in archived), i
    archive.path("n1").write_bytes(archive.path("n1").read_bytes()[:-5])  # cut: read it all again
    index.update_project(snapshot_project(folder, project))
    assert _ids(index, "walrus0") == ["m0"]


def test_keys_are_scrubbed_before_anything_is_stored(tmp_path: Path) -> None:
    secret = "prov-key-Zq8w3Xr9Tt5Yu1Io"
    folder = tmp_path / "p"
    project = save(folder, node("n1", f"title {secret}", [
        msg("u1", "user", f"my key is {secret} and sk-proj-abcdefghijklmnop1234 ok", 0)]))
    index = SearchIndex(tmp_path / "index", secrets=lambda: [secret, None])
    index.open()
    index.update_project(snapshot_project(folder, project))
    assert _ids(index, "key") == ["u1"]
    assert _ids(index, secret) == [] and _ids(index, "abcdefghijklmnop1234") == []
    snippet = index.search(SearchQuery("key")).hits[0].snippet.text
    assert secret not in snippet and "[redacted]" in snippet and "***" in snippet
    index.close()
    for path in (tmp_path / "index").iterdir():
        data = path.read_bytes()
        assert secret.encode() not in data and b"abcdefghijklmnop1234" not in data, path


def test_deleting_a_node_a_version_or_a_project_removes_its_rows(
    index: SearchIndex, two_projects: tuple[Path, Path]
) -> None:
    a, b = two_projects
    index.index_folder(a)
    index.index_folder(b)
    total = _rows(index)
    store = ProjectStore(a)
    project = store.load()
    n1 = project.nodes[0]
    n1.conversation.messages[0].extra = {}  # the stored version (with "zebra") is deleted
    index.update_project(snapshot_project(a, project))
    assert _ids(index, "zebra") == [] and _rows(index) == total - 1
    del project.nodes[1]  # a node is deleted
    store.save(project)
    store.release()
    index.update_project(snapshot_project(a, project))
    assert _ids(index, "müller") == [] and _rows(index) == total - 3
    index.remove_node(a, "n1")
    assert _ids(index, "giraffe") == []
    shutil.rmtree(b)  # a project folder is deleted
    index.index_folder(b)
    assert _ids(index, "retry") == [] and _rows(index) == 0
    assert index.projects() == [a.resolve()]


def test_incremental_updates_touch_only_what_changed(
    index: SearchIndex, two_projects: tuple[Path, Path]
) -> None:
    a, _ = two_projects
    store = ProjectStore(a)
    project = store.load()
    store.release()
    first = index.update_project(snapshot_project(a, project))
    assert first.inserted == 5 and first.nodes == 2
    again = index.update_project(snapshot_project(a, project))
    assert (again.inserted, again.removed, again.nodes) == (0, 0, 0)
    n2 = project.nodes[1].conversation
    append_message(n2, "assistant", "a brand new okapi answer")
    one = index.update_project(snapshot_project(a, project))
    assert (one.inserted, one.removed, one.nodes) == (1, 0, 1)
    assert len(_ids(index, "okapi")) == 1
    n2.messages[-1].content = "the text changed to a narwhal"  # a message changed in place (streaming)
    changed = index.update_project(snapshot_project(a, project))
    assert (changed.inserted, changed.removed) == (1, 1)
    assert _ids(index, "okapi") == [] and len(_ids(index, "narwhal")) == 1
    project.nodes[0].title = "Renamed"
    index.update_project(snapshot_project(a, project))
    assert index.search(SearchQuery("giraffe")).hits[0].node_title == "Renamed"
    # a new process (no memory of earlier updates) compares row digests and writes nothing
    fresh = SearchIndex(index.folder)
    fresh.open()
    assert fresh.update_project(snapshot_project(a, project)).inserted == 0
    assert fresh.index_folder(a) == UpdateStats()  # project.json as when last indexed: not read
    assert fresh.index_folder(a, force=True).removed == 1  # the file lacks the unsaved narwhal
    assert _ids(fresh, "narwhal") == []
    fresh.close()


def test_a_full_build_indexes_known_projects_and_reports_progress(
    tmp_path: Path, two_projects: tuple[Path, Path]
) -> None:
    index = SearchIndex(tmp_path / "fresh")
    assert index.open() == "there was no index yet"
    assert not index.is_complete()
    seen: list[tuple[int, int]] = []
    index.build(two_projects, progress=lambda d, t: seen.append((d, t)))
    assert seen[-1][0] == seen[-1][1] > 0 and [d for d, _ in seen] == sorted(d for d, _ in seen)
    assert index.is_complete() and index.rebuild_reason is None
    assert _rows(index) == 7
    index.close()
    assert SearchIndex(tmp_path / "fresh").open() is None  # complete: nothing to do next start


def test_forgetting_a_closed_project_makes_the_next_update_compare_rows(
    index: SearchIndex, two_projects: tuple[Path, Path]
) -> None:
    a, _ = two_projects
    project = read_project(a)
    index.update_project(project)
    assert index.update_project(project).nodes == 0  # remembered: unchanged nodes skipped
    index.forget_cache(a)
    again = index.update_project(project)
    assert (again.nodes, again.inserted, again.removed) == (2, 0, 0)  # compared, nothing written


def test_idle_upkeep_merges_until_nothing_is_left(
    index: SearchIndex, two_projects: tuple[Path, Path]
) -> None:
    assert not index.maintain()  # nothing written yet
    a, b = two_projects
    index.index_folder(a)
    index.index_folder(b)
    rounds = 0
    while index.maintain(budget_s=0.0):  # one merge step per call
        rounds += 1
        assert rounds < 1_000
    assert not index.maintain()
    assert _ids(index, "parser") == ["u3", "u1"]


def test_an_interrupted_query_says_so(index: SearchIndex, two_projects: tuple[Path, Path]) -> None:
    from desktop.core.search._read import QueryInterrupted, open_reader, search_on
    from desktop.core.search._search import IndexStatus

    index.index_folder(two_projects[0])
    conn = open_reader(index.folder)
    assert conn is not None
    conn.set_progress_handler(lambda: 1, 1)  # what Connection.interrupt() from another thread does
    with pytest.raises(QueryInterrupted):
        search_on(conn, SearchQuery("parser"), IndexStatus("ready"), index.folder)
    conn.set_progress_handler(None, 1)
    assert search_on(conn, SearchQuery("parser"), IndexStatus("ready"), index.folder).hits
    conn.close()
