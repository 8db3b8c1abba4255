"""The main window: nodes in the MDI area, layouts, persistence, banners, errors, export and cost."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QRect, QTimer
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QLabel, QMdiArea, QPushButton
from test_app_support import close_window, fake_provider_entry, files_containing, write_settings

from desktop.testing import FakeProvider, Turn
from desktop.ui.banner import Banner
from desktop.ui.node.chat_node import ChatNodeWidget
from desktop.ui.window.project_controller import AUTOSAVE_DELAY_MS

pytest_plugins = ["test_app_support"]  # fixtures: fake, make_context, open_window


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    return tmp_path / "project", tmp_path / "config"


def _send(qtbot: Any, node: ChatNodeWidget, text: str) -> None:
    with qtbot.waitSignal(node.run_finished, timeout=10_000):
        node.submit(text)


def test_window_is_fully_wired(qtbot: Any, open_window: Any, fake: FakeProvider, dirs: Any) -> None:
    project, config = dirs
    write_settings(config, fake_provider_entry(fake), default="fake")
    window = open_window(project, config)
    mdi = window.findChild(QMdiArea, "mdiArea")
    assert mdi is window.mdi
    nodes = window.nodes()
    assert len(nodes) == 1 and nodes[0].objectName() == "chatNode"
    assert window.findChild(QLabel, "projectPathLabel").text() == str(project.resolve())
    assert window.banner_area.find("welcomeBanner") is None  # a provider is configured
    assert (project / "project.json").is_file()  # a new project is written at once
    fake.script(Turn(text="Hello from the fake!"))
    _send(qtbot, nodes[0], "hi")
    assert [m.role for m in nodes[0].conversation.messages] == ["user", "assistant"]
    assert nodes[0].conversation.messages[1].content == "Hello from the fake!"


def test_new_close_tile_tabbed(qtbot: Any, open_window: Any, fake: FakeProvider, dirs: Any) -> None:
    project, config = dirs
    write_settings(config, fake_provider_entry(fake), default="fake")
    window = open_window(project, config)
    window.act_new_node.trigger()
    window.act_new_node.trigger()
    assert len(window.nodes()) == 3
    assert window.act_new_node.shortcut().toString() == "Ctrl+N"
    window.tile()
    rects = [window.subwindow_of(n).geometry() for n in window.nodes()]
    for i, a in enumerate(rects):
        for b in rects[i + 1:]:
            assert not a.intersects(b), (a, b)
    before = {n.node_id: window.subwindow_of(n).geometry() for n in window.nodes()}
    window.act_tabbed.trigger()
    assert window.is_tabbed() and window.mdi.viewMode() == QMdiArea.ViewMode.TabbedView
    saved = window.current_project()
    assert saved.extra["view_mode"] == "tabbed"
    assert {n.id: QRect(n.x, n.y, n.width, n.height) for n in saved.nodes} == before  # normal geometry kept
    window.act_tabbed.trigger()
    assert not window.is_tabbed()
    assert {n.node_id: window.subwindow_of(n).geometry() for n in window.nodes()} == before
    window.cascade()
    victim = window.nodes()[1]
    window.close_node(victim)
    assert victim.node_id not in [n.node_id for n in window.nodes()]
    assert len(window.nodes()) == 2
    assert window.save_project()
    data = json.loads((project / "project.json").read_text(encoding="utf-8"))
    assert len(data["nodes"]) == 2 and victim.node_id not in [n["id"] for n in data["nodes"]]


def test_geometry_and_conversations_survive_reopen(qtbot: Any, open_window: Any, fake: FakeProvider,
                                                   dirs: Any) -> None:
    project, config = dirs
    write_settings(config, fake_provider_entry(fake), default="fake")
    window = open_window(project, config)
    first = window.nodes()[0]
    second = window.add_node()
    window.subwindow_of(first).setGeometry(QRect(10, 20, 430, 390))
    window.subwindow_of(second).setGeometry(QRect(460, 30, 470, 410))
    fake.script(Turn(text="first answer"), Turn(text="second answer"))
    _send(qtbot, first, "question one")
    _send(qtbot, second, "question two")
    ids = [first.node_id, second.node_id]
    close_window(qtbot, window)

    again = open_window(project, config)
    nodes = again.nodes()
    assert [n.node_id for n in nodes] == ids
    assert again.subwindow_of(nodes[0]).geometry() == QRect(10, 20, 430, 390)
    assert again.subwindow_of(nodes[1]).geometry() == QRect(460, 30, 470, 410)
    assert [m.content for m in nodes[0].conversation.messages] == ["question one", "first answer"]
    assert [m.content for m in nodes[1].conversation.messages] == ["question two", "second answer"]


def test_autosave_is_debounced_after_a_change(qtbot: Any, open_window: Any, fake: FakeProvider,
                                              dirs: Any) -> None:
    project, config = dirs
    write_settings(config, fake_provider_entry(fake), default="fake")
    window = open_window(project, config)
    saves: list[int] = []
    window.saved.connect(lambda: saves.append(1))
    timer = window.projects.autosave
    assert timer.isSingleShot() and timer.interval() == AUTOSAVE_DELAY_MS  # the product's debounce
    # The test sets the deadline itself: an hour, so nothing can fire while it looks, then "now".
    timer.setInterval(3_600_000)
    sub = window.subwindow_of(window.nodes()[0])
    sub.setGeometry(QRect(5, 6, 400, 380))
    assert timer.isActive() and saves == []  # a change schedules a save, it does not save
    first_run = timer.timerId()
    sub.setGeometry(QRect(7, 8, 410, 390))
    # The second change restarted the debounce (Qt gives every start a new timer id): a save waits
    # for a quiet period after the last change, not a fixed time after the first.
    assert timer.isActive() and timer.timerId() != first_run and saves == []
    with qtbot.waitSignal(window.saved, timeout=10_000):
        timer.setInterval(0)  # the deadline comes
    assert len(saves) == 1 and not timer.isActive()  # one save for both changes
    node = json.loads((project / "project.json").read_text(encoding="utf-8"))["nodes"][0]
    assert (node["x"], node["y"], node["width"], node["height"]) == (7, 8, 410, 390)


def test_corrupt_project_is_kept_aside_and_reported(qtbot: Any, open_window: Any, dirs: Any) -> None:
    project, config = dirs
    project.mkdir(parents=True)
    (project / "project.json").write_text("{not json", encoding="utf-8")
    window = open_window(project, config)
    banner = window.banner_area.find("projectCorruptBanner")
    assert banner is not None and banner.isVisible()
    kept = list(project.glob("project.json.corrupt-*"))
    assert len(kept) == 1 and kept[0].read_text(encoding="utf-8") == "{not json"
    assert str(kept[0]) in banner.text()
    assert len(window.nodes()) == 1  # a fresh project


def test_no_provider_shows_the_welcome_banner_and_the_demo_works(qtbot: Any, open_window: Any,
                                                                dirs: Any) -> None:
    project, config = dirs
    window = open_window(project, config)
    banner = window.banner_area.find("welcomeBanner")
    assert banner is not None and banner.isVisible()
    assert banner.findChild(QPushButton, "openSettingsButton") is not None
    demo_button = banner.findChild(QPushButton, "tryDemoButton")
    assert window.probe_task is not None
    qtbot.waitUntil(window.probe_task.done, timeout=10_000)
    demo_button.click()
    assert window.context.demo
    assert window.banner_area.find("welcomeBanner") is None
    assert window.context.has_usable_provider()
    assert window.context.effective_settings().default_provider == "demo"
    assert window.context.settings.provider("demo") is None  # never saved
    assert "demo" not in (config / "settings.json").read_text(encoding="utf-8") \
        if (config / "settings.json").exists() else True


@pytest.mark.qt_no_exception_capture
def test_unhandled_exception_shows_a_banner_and_the_app_keeps_running(
    qtbot: Any, open_window: Any, fake: FakeProvider, dirs: Any, memory_keyring: Any
) -> None:
    project, config = dirs
    write_settings(config, fake_provider_entry(fake, needs_key=True), default="fake")
    secret = "sk-secret-in-an-exception-1234"
    memory_keyring.passwords[("chatnodes", "fake")] = secret

    def boom() -> None:
        raise RuntimeError(f"slot failed with {secret}")

    window = open_window(project, config)
    QTimer.singleShot(0, boom)
    qtbot.waitUntil(lambda: window.banner_area.find("errorBanner") is not None, timeout=10_000)
    banner = window.banner_area.find("errorBanner")
    assert isinstance(banner, Banner) and banner.kind() == "error"
    assert "RuntimeError: slot failed with ***" in banner.text()
    assert secret not in banner.text()
    assert window.isVisible()
    window.add_node()  # still working
    assert len(window.nodes()) == 2


def test_a_worker_thread_exception_shows_a_banner_without_the_key(
    qtbot: Any, open_window: Any, fake: FakeProvider, dirs: Any, memory_keyring: Any
) -> None:
    project, config = dirs
    write_settings(config, fake_provider_entry(fake, needs_key=True), default="fake")
    secret = "stored-key-no-known-shape-42"  # only the context's known keys can scrub this one
    memory_keyring.passwords[("chatnodes", "fake")] = secret
    window = open_window(project, config)

    def work() -> None:
        raise OSError(f"worker saw {secret}")

    worker = threading.Thread(target=work)
    worker.start()
    worker.join(5)
    qtbot.waitUntil(lambda: window.banner_area.find("errorBanner") is not None, timeout=10_000)
    banner = window.banner_area.find("errorBanner")
    assert "OSError: worker saw ***" in banner.text() and secret not in banner.text()
    assert window.error_reporter.last_error == "OSError: worker saw ***"


def test_export_writes_markdown(qtbot: Any, open_window: Any, fake: FakeProvider, dirs: Any,
                                tmp_path: Path) -> None:
    project, config = dirs
    write_settings(config, fake_provider_entry(fake), default="fake")
    window = open_window(project, config)
    fake.script(Turn(text="An **answer**."))
    _send(qtbot, window.nodes()[0], "a question")
    out = window.export_conversation(tmp_path / "out.md", window.nodes()[0])
    assert out is not None
    text = out.read_text(encoding="utf-8")
    assert "a question" in text and "An **answer**." in text


def test_session_cost_sums_the_nodes(qtbot: Any, open_window: Any, fake: FakeProvider, dirs: Any) -> None:
    project, config = dirs
    write_settings(config, fake_provider_entry(fake), default="fake", model="gpt-4o-mini")
    window = open_window(project, config)
    label = window.findChild(QLabel, "sessionCostLabel")
    assert label.text() == "Project $0.00"  # no response yet: nothing spent (n/a means "no price")
    second = window.add_node()
    usage = {"input": 100_000, "output": 10_000, "cache_read": 0, "cache_write": 0}
    fake.script(Turn(text="one", usage=usage, model="gpt-4o-mini"), Turn(text="two", usage=usage,
                                                                        model="gpt-4o-mini"))
    _send(qtbot, window.nodes()[0], "q1")
    _send(qtbot, second, "q2")
    # gpt-4o-mini: $0.15 / M input, $0.60 / M output -> 0.015 + 0.006 = $0.021 per node
    assert [n.cost().usd for n in window.nodes()] == [pytest.approx(0.021), pytest.approx(0.021)]
    cost = window.session_cost()
    assert cost.usd == pytest.approx(0.042) and cost.unpriced == 0 and not cost.estimated
    assert label.text() == "Project $0.0420"


def test_no_key_reaches_any_file(qtbot: Any, open_window: Any, dirs: Any, memory_keyring: Any,
                                 tmp_path: Path) -> None:
    key = "sk-live-never-on-disk-5678"
    project, config = dirs
    with FakeProvider(api_key=key) as server:
        write_settings(config, fake_provider_entry(server, needs_key=True), default="fake")
        memory_keyring.passwords[("chatnodes", "fake")] = key
        window = open_window(project, config)
        server.script(Turn(text="authorised"))
        _send(qtbot, window.nodes()[0], "hello")
        assert window.nodes()[0].conversation.messages[-1].content == "authorised"  # the key was used
        assert window.save_project()
        window.export_conversation(project / "export.md")
        close_window(qtbot, window)
    assert files_containing(tmp_path, key) == []


def test_quit_action_closes_cleanly(qtbot: Any, open_window: Any, dirs: Any) -> None:
    project, config = dirs
    window = open_window(project, config, demo=True)
    server = window.context.demo_server
    assert server is not None
    assert len(window.nodes()) == 2
    assert all(n.to_state().provider is None for n in window.nodes())  # they follow the demo default
    with qtbot.waitSignal(window.closed, timeout=10_000):
        window.act_quit.trigger()
    assert window.context.client.is_closed
    assert window.context.demo_server is None
    data = json.loads((project / "project.json").read_text(encoding="utf-8"))
    assert len(data["nodes"]) == 2


def test_welcome_banner_goes_away_once_a_key_is_saved(qtbot: Any, open_window: Any, dirs: Any,
                                                      memory_keyring: Any) -> None:
    project, config = dirs
    window = open_window(project, config)
    assert window.banner_area.find("welcomeBanner") is not None
    dialog = window.open_settings()
    assert dialog.isVisible()  # open(): a window-modal sheet, the loop (and this test) keep running
    dialog.select_provider("openai")
    dialog.set_key("sk-from-the-welcome-flow-0001")
    dialog.history_cap_spin.setValue(64)
    dialog.accept()
    assert memory_keyring.passwords[("chatnodes", "openai")] == "sk-from-the-welcome-flow-0001"
    assert window.banner_area.find("welcomeBanner") is None
    assert window.store is not None and window.store.history_cap_bytes == 64 * 1024
    assert files_containing(config, "sk-from-the-welcome-flow-0001") == []


def test_view_usage_opens_the_dashboard_on_the_ledger(qtbot: Any, open_window: Any, fake: FakeProvider,
                                                      dirs: Any) -> None:
    project, config = dirs
    write_settings(config, fake_provider_entry(fake), default="fake", model="gpt-4o-mini")
    window = open_window(project, config)
    usage = {"input": 100_000, "output": 10_000, "cache_read": 0, "cache_write": 0}
    fake.script(Turn(text="one", usage=usage, model="gpt-4o-mini"))
    _send(qtbot, window.nodes()[0], "q1")
    action = window.findChild(QAction, "usageAction")
    assert action is not None
    action.trigger()
    dialog = window.money.usage_dialog
    assert dialog is not None and dialog.objectName() == "usageDialog"
    qtbot.waitExposed(dialog)
    qtbot.waitUntil(lambda: dialog.summary is not None, timeout=10_000)  # read on a worker thread
    assert dialog.findChild(QLabel, "monthTotal").text() == "$0.0210"
    action.trigger()  # a second trigger raises the same dialog
    assert window.money.usage_dialog is dialog
    dialog.close()
