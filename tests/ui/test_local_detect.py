"""Local models found by themselves, through the window: the first run's welcome banner and Settings →
Providers "Detect local servers", against a loopback fake Ollama and LM Studio; and a node whose local
server is down says how to start it."""

from __future__ import annotations

import json
import socket
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QDialogButtonBox, QLabel, QPushButton, QWidget
from test_app_support import write_settings

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "providers"))
from local_server_fakes import FakeServer, ollama_and_lmstudio  # noqa: E402 (the providers' own fakes)

from desktop.core.providers import LOCAL_SERVER_KINDS  # noqa: E402

pytest_plugins = ["test_app_support"]  # fixtures: fake, make_context, open_window


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def local() -> Iterator[tuple[dict[str, FakeServer], dict[str, int]]]:
    """The fakes and the ports to probe: theirs, and closed ports for llama.cpp and vLLM (whatever
    runs on this computer's usual ports never leaks into a test)."""
    with ollama_and_lmstudio() as servers:
        ports = {k.id: closed_port() for k in LOCAL_SERVER_KINDS}
        ports.update({kid: s.port for kid, s in servers.items()})
        yield servers, ports


def menu_action(window: Any, name: str) -> QAction:
    """The action ``name`` as it sits in the window's real menu bar."""
    for top in window.menuBar().actions():
        menu = top.menu()
        for action in menu.actions() if menu is not None else []:
            if action.objectName() == name:
                return action
    raise AssertionError(f"no {name} in the menus")


def click(qtbot: Any, button: QWidget) -> None:
    qtbot.waitUntil(button.isVisible, timeout=10_000)
    assert button.isEnabled(), f"{button.objectName()} is disabled"
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)


def test_the_first_run_offers_each_local_server_found(qtbot: Any, open_window: Any, tmp_path: Path,
                                                      local: Any) -> None:
    servers, ports = local
    config = tmp_path / "config"
    window = open_window(tmp_path / "project", config, show=False)
    window.first_run.local_ports = ports
    window.show()
    qtbot.waitExposed(window)
    qtbot.waitUntil(lambda: window.probe_task is not None and window.probe_task.done(), timeout=10_000)
    assert [s.kind.id for s in window.probe_task.result()] == ["ollama", "lmstudio"]
    banner = window.banner_area.find("welcomeBanner")
    buttons = banner.findChildren(QPushButton, "useLocalProviderButton")
    assert [b.text() for b in buttons] == ["Use Ollama (found on this computer, 2 models)",
                                           "Use LM Studio (found on this computer, 2 models)"]
    click(qtbot, buttons[0])
    saved = json.loads((config / "settings.json").read_text(encoding="utf-8"))
    assert saved["default_provider"] == "ollama" and saved["default_model"] == "llama3.2:latest"
    (ollama,) = [p for p in saved["providers"] if p["id"] == "ollama"]
    assert ollama["base_url"] == f"http://127.0.0.1:{servers['ollama'].port}/v1" and not ollama["needs_key"]
    assert ollama["models"] == ["llama3.2:latest", "qwen3:8b"]
    assert ollama["context_lengths"] == {"llama3.2:latest": 131072, "qwen3:8b": 40960}
    assert window.banner_area.find("welcomeBanner") is None
    assert window.context.has_usable_provider()


def test_detect_local_servers_in_settings_adds_one_with_a_click(
    qtbot: Any, open_window: Any, fake: Any, tmp_path: Path, local: Any
) -> None:
    servers, ports = local
    config = tmp_path / "config"
    write_settings(config, {"id": "fake", "name": "Fake", "api": "openai", "base_url": fake.openai_base_url,
                            "needs_key": False, "models": ["gpt-4o-mini"]}, default="fake")
    window = open_window(tmp_path / "project", config)
    menu_action(window, "settingsAction").trigger()
    dialog = window.settings_dialog
    qtbot.waitExposed(dialog)
    page = dialog.providers_page
    page.local.local_ports = ports
    result = dialog.findChild(QWidget, "detectResult")
    assert not result.isVisible()
    click(qtbot, dialog.findChild(QPushButton, "detectLocalButton"))
    qtbot.waitUntil(lambda: page.local.task is not None and page.local.task.done(), timeout=10_000)
    assert result.isVisible()
    assert dialog.findChild(QLabel, "detectStatusLabel").text().startswith("Found 2 servers")
    labels = [w.text() for w in result.findChildren(QLabel, "localServerLabel")]
    assert labels == [
        f"Ollama at http://127.0.0.1:{servers['ollama'].port}/v1 — 2 models: llama3.2:latest, qwen3:8b "
        "(context 40k–131k)",
        f"LM Studio at http://127.0.0.1:{servers['lmstudio'].port}/v1 — 2 models: qwen/qwen3-8b, "
        "text-embedding-nomic",
    ]
    add = result.findChildren(QPushButton, "addLocalServerButton")
    click(qtbot, add[1])  # LM Studio
    assert add[1].text() == "Added ✓" and not add[1].isEnabled()
    assert page.current is not None and page.current.id == "lmstudio"
    assert page.base_url_edit.text() == f"http://127.0.0.1:{servers['lmstudio'].port}/v1"
    assert page.models_edit.text() == "qwen/qwen3-8b, text-embedding-nomic"
    assert not page.needs_key_check.isChecked()
    ok = dialog.findChild(QDialogButtonBox, "dialogButtons").button(QDialogButtonBox.StandardButton.Ok)
    click(qtbot, ok)
    saved = json.loads((config / "settings.json").read_text(encoding="utf-8"))
    (lmstudio,) = [p for p in saved["providers"] if p["id"] == "lmstudio"]
    assert lmstudio["base_url"] == f"http://127.0.0.1:{servers['lmstudio'].port}/v1"
    assert saved["default_provider"] == "fake"  # adding a server does not change the default


def test_detect_says_when_nothing_answers(qtbot: Any, open_window: Any, fake: Any, tmp_path: Path) -> None:
    config = tmp_path / "config"
    write_settings(config, {"id": "fake", "name": "Fake", "api": "openai", "base_url": fake.openai_base_url,
                            "needs_key": False, "models": ["gpt-4o-mini"]}, default="fake")
    window = open_window(tmp_path / "project", config)
    menu_action(window, "settingsAction").trigger()
    dialog = window.settings_dialog
    page = dialog.providers_page
    page.local.local_ports = {k.id: closed_port() for k in LOCAL_SERVER_KINDS}
    click(qtbot, dialog.findChild(QPushButton, "detectLocalButton"))
    qtbot.waitUntil(lambda: page.local.task is not None and page.local.task.done(), timeout=10_000)
    status = dialog.findChild(QLabel, "detectStatusLabel").text()
    assert status.startswith("No local model server answered (Ollama on port 11434, LM Studio on port 1234")
    assert not dialog.findChildren(QPushButton, "addLocalServerButton")
    dialog.reject()


def test_a_node_whose_ollama_is_down_says_how_to_start_it(
    qtbot: Any, open_window: Any, tmp_path: Path
) -> None:
    with socket.socket() as probe:
        if probe.connect_ex(("127.0.0.1", 11434)) == 0:
            pytest.skip("something listens on 127.0.0.1:11434 here")
    config = tmp_path / "config"
    write_settings(config, {"id": "ollama", "name": "Ollama", "api": "openai",
                            "base_url": "http://127.0.0.1:11434/v1", "needs_key": False,
                            "models": ["llama3.2"]}, default="ollama")
    window = open_window(tmp_path / "project", config)
    node = window.nodes()[0]
    qtbot.keyClicks(node.chat_input, "hello")
    with qtbot.waitSignal(node.run_finished, timeout=30_000):
        qtbot.keyClick(node.chat_input, Qt.Key.Key_Return)
    row = node.findChild(QWidget, "errorRow")
    qtbot.waitUntil(row.isVisible, timeout=10_000)
    assert row.text().startswith(
        "Ollama is not running at http://127.0.0.1:11434 — start it with `ollama serve`")
