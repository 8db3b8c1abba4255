"""``SearchService``: the index built and updated on its own thread, queries on another, results and
status through callbacks; searches keep working while it builds; an unusable folder is a status."""

from __future__ import annotations

import os
import shutil
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from search_helpers import msg, node, save

from desktop.core.chat.conversation import append_message
from desktop.core.search import (
    INDEX_FILE,
    Facets,
    IndexStatus,
    NodeSnapshot,
    ProjectSnapshot,
    SearchIndex,
    SearchQuery,
    SearchResults,
    SearchService,
    snapshot_project,
)
from desktop.core.store import ProjectStore, RecentProjects

WAIT = 30.0  # generous: nothing below waits on time, only on the condition


class Answers:
    """Collects search results delivered on the searcher thread."""

    def __init__(self) -> None:
        self.results: list[SearchResults] = []
        self.threads: set[str] = set()
        self.arrived = threading.Event()

    def __call__(self, results: SearchResults) -> None:
        self.threads.add(threading.current_thread().name)
        self.results.append(results)
        self.arrived.set()

    def next(self) -> SearchResults:
        assert self.arrived.wait(WAIT)
        self.arrived.clear()
        return self.results[-1]


def ask(service: SearchService, text: str, **kw: object) -> SearchResults:
    answers = Answers()
    service.search(SearchQuery(text, **kw), answers)  # type: ignore[arg-type]
    return answers.next()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "proj"
    save(folder,
         node("n1", "First", [msg("u1", "user", "what about the albatross", 0)]),
         node("n2", "Second", [msg("u2", "user", "and the cormorant", 1)]))
    return folder


@pytest.fixture
def service_factory(tmp_path: Path) -> Iterator[list[SearchService]]:
    made: list[SearchService] = []
    yield made
    for service in made:
        service.close()


def test_a_missing_index_is_built_in_the_background_while_searches_go_on(
    tmp_path: Path, project: Path, service_factory: list[SearchService]
) -> None:
    statuses: list[IndexStatus] = []
    status_threads: set[str] = set()
    paused, release = threading.Event(), threading.Event()

    def on_status(status: IndexStatus) -> None:
        statuses.append(status)
        status_threads.add(threading.current_thread().name)
        if status.state == "building" and status.done > 0 and not paused.is_set():
            paused.set()  # one node is in: hold the build here
            assert release.wait(WAIT)

    service = SearchService(tmp_path / "index", known_projects=lambda: [project], on_status=on_status)
    service_factory.append(service)
    service.start()
    assert paused.wait(WAIT)
    during = ask(service, "albatross")  # the first node's word
    assert during.status.state == "building" and during.status.reason == "there was no index yet"
    assert [h.message_id for h in during.hits] == ["u1"]
    assert "Building the search index" in during.status.text
    assert ask(service, "cormorant").hits == ()  # the second node is not in yet
    release.set()
    assert service.wait_idle(WAIT)
    assert statuses[-1] == IndexStatus("ready") and service.status == IndexStatus("ready")
    building = [s for s in statuses if s.state == "building" and s.total]
    assert [s.done for s in building] == sorted(s.done for s in building)
    assert status_threads == {"search-index"}
    assert [h.message_id for h in ask(service, "cormorant").hits] == ["u2"]


def test_saves_are_indexed_off_the_calling_thread(
    tmp_path: Path, project: Path, service_factory: list[SearchService]
) -> None:
    service = SearchService(tmp_path / "index", known_projects=lambda: [project])
    service_factory.append(service)
    service.start()
    assert service.wait_idle(WAIT)
    store = ProjectStore(project)
    live = store.load()
    append_message(live.nodes[1].conversation, "assistant", "the cormorant dives for a pilchard")
    store.save(live)
    store.release()
    service.project_saved(snapshot_project(project, live))
    assert service.wait_idle(WAIT)
    answers = Answers()
    service.search(SearchQuery("pilch", as_you_type=True), answers)
    hits = answers.next().hits
    assert [h.node_id for h in hits] == ["n2"] and answers.threads == {"search-query"}
    service.forget_node(project, "n2")
    assert service.wait_idle(WAIT)
    assert ask(service, "pilchard").hits == ()
    service.forget_project(project)
    assert service.wait_idle(WAIT)
    assert ask(service, "albatross").hits == ()
    service.project_opened(project)  # opened again: indexed from its files
    assert service.wait_idle(WAIT)
    assert [h.message_id for h in ask(service, "albatross").hits] == ["u1"]


def test_only_the_latest_query_is_answered(
    tmp_path: Path, project: Path, service_factory: list[SearchService]
) -> None:
    service = SearchService(tmp_path / "index", known_projects=lambda: [project])
    service_factory.append(service)
    service.start()
    assert service.wait_idle(WAIT)
    inside, release = threading.Event(), threading.Event()
    answered: list[str] = []

    def slow(results: SearchResults) -> None:
        answered.append(results.query.text)
        inside.set()
        assert release.wait(WAIT)

    service.search(SearchQuery("a"), slow)
    assert inside.wait(WAIT)  # the searcher is busy with the first query's callback
    service.search(SearchQuery("al"), slow)
    last = Answers()
    ticket = service.search(SearchQuery("albatross"), last)
    release.set()
    assert last.next().query.text == "albatross" and ticket == 3
    assert answered == ["a"]  # "al" was replaced before it ran


def test_a_failing_callback_does_not_stop_the_searcher(
    tmp_path: Path, project: Path, service_factory: list[SearchService]
) -> None:
    service = SearchService(tmp_path / "index", known_projects=lambda: [project])
    service_factory.append(service)
    service.start()
    assert service.wait_idle(WAIT)
    failed = threading.Event()

    def broken(results: SearchResults) -> None:
        failed.set()
        raise RuntimeError("a bug in the UI")

    service.search(SearchQuery("albatross"), broken)
    assert failed.wait(WAIT)
    assert ask(service, "albatross").hits


def test_an_unusable_folder_is_a_status_and_recovers(
    tmp_path: Path, project: Path, service_factory: list[SearchService]
) -> None:
    blocker = tmp_path / "data"
    blocker.write_text("a file where the data folder should be")
    statuses: list[IndexStatus] = []
    service = SearchService(blocker / "search", known_projects=lambda: [project], on_status=statuses.append)
    service_factory.append(service)
    service.start()
    assert service.wait_idle(WAIT)
    assert service.status.state == "unavailable" and str(blocker) in (service.status.reason or "")
    assert service.status.text.startswith("Search unavailable: ")
    result = ask(service, "albatross")
    assert result.hits == () and result.status.state == "unavailable"
    service.project_opened(project)  # kept until the index can be used
    assert service.wait_idle(WAIT)
    blocker.unlink()
    service.retry()
    assert service.wait_idle(WAIT)
    assert service.status == IndexStatus("ready")
    assert [h.message_id for h in ask(service, "albatross").hits] == ["u1"]
    assert statuses[0].state == "unavailable" and statuses[-1].state == "ready"


def test_a_locked_index_keeps_the_job_until_it_is_free(
    tmp_path: Path, project: Path, service_factory: list[SearchService]
) -> None:
    folder = tmp_path / "index"
    seed = SearchIndex(folder)
    seed.open()
    seed.build([])
    seed.close()
    service = SearchService(folder, busy_ms=50)
    service_factory.append(service)
    service.start()
    assert service.wait_idle(WAIT) and service.status == IndexStatus("ready")
    other = sqlite3.connect(folder / INDEX_FILE, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    service.project_opened(project)
    assert service.wait_idle(WAIT)
    assert service.status.state == "unavailable" and "locked" in (service.status.reason or "")
    other.execute("ROLLBACK")
    other.close()
    service.retry()
    assert service.wait_idle(WAIT) and service.status == IndexStatus("ready")
    assert [h.message_id for h in ask(service, "albatross").hits] == ["u1"]


def test_damage_found_by_a_search_is_rebuilt(
    tmp_path: Path, project: Path, service_factory: list[SearchService]
) -> None:
    folder = tmp_path / "index"
    index = SearchIndex(folder)
    index.open()
    index.build([project])
    index.close()
    conn = sqlite3.connect(folder / INDEX_FILE)
    page_size = conn.execute("PRAGMA page_size").fetchone()[0]
    root = conn.execute("SELECT rootpage FROM sqlite_schema WHERE name='messages'").fetchone()[0]
    conn.close()
    with open(folder / INDEX_FILE, "r+b") as fh:
        fh.seek((root - 1) * page_size)
        fh.write(os.urandom(page_size))
    service = SearchService(folder, known_projects=lambda: [project])
    service_factory.append(service)
    service.start()
    assert service.wait_idle(WAIT) and service.status == IndexStatus("ready")  # it does not know yet
    damaged = ask(service, "albatross")
    assert damaged.hits == () and damaged.status.state == "building"
    assert service.wait_idle(WAIT) and service.status == IndexStatus("ready")
    assert len(list(folder.glob(f"{INDEX_FILE}.corrupt-*"))) == 1
    assert [h.message_id for h in ask(service, "albatross").hits] == ["u1"]


def test_the_registry_feeds_the_build_and_close_stops_the_threads(
    tmp_path: Path, project: Path, _isolated_env: Path
) -> None:
    recent = RecentProjects(_isolated_env)
    recent.add(project)
    service = SearchService(tmp_path / "index", known_projects=recent.folders)
    service.start()
    assert service.wait_idle(WAIT)
    assert [h.message_id for h in ask(service, "albatross").hits] == ["u1"]
    service.close()
    names = {t.name for t in threading.enumerate()}
    assert "search-index" not in names and "search-query" not in names


def test_a_rebuild_scrubs_a_key_added_later_and_closing_a_project_forgets_its_messages(
    tmp_path: Path, project: Path, service_factory: list[SearchService]
) -> None:
    keys: list[str] = []
    store = ProjectStore(project)
    live = store.load()
    append_message(live.nodes[0].conversation, "user", "my token is zz-Hq7PlmVb2Wx9 keep it")
    store.save(live)
    store.release()
    service = SearchService(tmp_path / "index", secrets=lambda: keys, known_projects=lambda: [project])
    service_factory.append(service)
    service.start()
    assert service.wait_idle(WAIT)
    assert ask(service, "Hq7PlmVb2Wx9").hits
    keys.append("zz-Hq7PlmVb2Wx9")  # the user saves it as an API key: it must leave the index
    service.rebuild()
    assert service.wait_idle(WAIT)
    assert ask(service, "Hq7PlmVb2Wx9").hits == ()
    assert ask(service, "token").hits[0].snippet.text == "my token is [redacted] keep it"
    service.project_closed(project)
    assert service.wait_idle(WAIT)
    service.rebuild(clear=True)
    assert service.wait_idle(WAIT)
    assert [h.message_id for h in ask(service, "albatross").hits] == ["u1"]


def test_filters_values_and_a_sweep_at_start_that_drops_deleted_projects(
    tmp_path: Path, project: Path, service_factory: list[SearchService]
) -> None:
    other = tmp_path / "other"
    save(other, node("n9", "Gone", [msg("u9", "assistant", "the gannet", 2, model="gpt-4.1")]))
    index = SearchIndex(tmp_path / "index")
    index.open()
    index.build([project, other])
    index.close()
    shutil.rmtree(other)  # deleted while the app was closed
    service = SearchService(tmp_path / "index", known_projects=lambda: [project])
    service_factory.append(service)
    service.start()
    assert service.wait_idle(WAIT)
    got: list[Facets] = []
    done = threading.Event()
    service.facets(lambda f: (got.append(f), done.set()))
    assert done.wait(WAIT)
    assert got[0].projects == (project.resolve(),) and got[0].models == ()
    assert ask(service, "gannet").hits == ()


def test_a_job_that_fails_is_dropped_and_the_indexer_goes_on(
    tmp_path: Path, project: Path, service_factory: list[SearchService], caplog: pytest.LogCaptureFixture
) -> None:
    service = SearchService(tmp_path / "index", known_projects=lambda: [project])
    service_factory.append(service)
    service.start()
    assert service.wait_idle(WAIT)
    broken = ProjectSnapshot(project, (NodeSnapshot("n1", "First", (None,)),))  # type: ignore[arg-type]
    service.project_saved(broken)  # a bug elsewhere hands over something that is not a message
    assert service.wait_idle(WAIT)
    assert "a search index job failed" in caplog.text
    store = ProjectStore(project)
    live = store.load()
    append_message(live.nodes[0].conversation, "assistant", "the shag")
    store.save(live)
    store.release()
    service.project_saved(snapshot_project(project, live))
    assert service.wait_idle(WAIT) and service.status == IndexStatus("ready")
    assert ask(service, "shag").hits


def test_closing_abandons_a_long_update_and_the_next_start_catches_up(
    tmp_path: Path, project: Path, service_factory: list[SearchService], monkeypatch: pytest.MonkeyPatch
) -> None:
    import time

    import desktop.core.search._index as index_module

    service = SearchService(tmp_path / "index", known_projects=lambda: [project])
    service.start()
    assert service.wait_idle(WAIT)
    started = threading.Event()
    original = index_module.sync_node
    ticks: list[int] = []

    def long_sync(*args: object) -> object:
        result = original(*args)  # type: ignore[arg-type]
        tick = args[-1]
        assert callable(tick)
        started.set()
        deadline = time.monotonic() + WAIT
        while not service._stopping and time.monotonic() < deadline:  # close() has begun
            time.sleep(0.001)
        for _ in range(300):  # much more work to do, a pace tick between pieces
            ticks.append(1)
            tick()
        return result

    monkeypatch.setattr(index_module, "sync_node", long_sync)
    store = ProjectStore(project)
    live = store.load()
    append_message(live.nodes[1].conversation, "assistant", "the cormorant dives for a pilchard")
    store.save(live)
    store.release()
    service.project_saved(snapshot_project(project, live))
    assert started.wait(WAIT)
    service.close()
    assert len(ticks) == 1  # abandoned at the first tick after close(), not run to its end
    monkeypatch.setattr(index_module, "sync_node", original)
    again = SearchService(tmp_path / "index", known_projects=lambda: [project])
    service_factory.append(again)
    again.start()
    assert again.wait_idle(WAIT)
    assert [h.node_id for h in ask(again, "pilchard").hits] == ["n2"]  # caught up from the files
