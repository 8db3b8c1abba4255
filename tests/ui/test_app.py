"""Bootstrap: command line, config dir resolution, the smoke test, demo wiring and secrets hygiene."""

from __future__ import annotations

import io
import logging
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from desktop.app import (
    AppContext,
    default_project_dir,
    install_key_scrub_filter,
    parse_args,
    resolve_config_dir,
)
from desktop.core.redact import KeyScrubFilter
from desktop.testing.demo import DEMO_MODEL

pytest_plugins = ["test_app_support"]  # fixtures: fake, make_context, open_window

ROOT = Path(__file__).resolve().parents[2]


def test_parse_args() -> None:
    args = parse_args(["some/dir", "--demo", "--config-dir", "/tmp/cfg", "--smoke-test"])
    assert args.project_dir == Path("some/dir") and args.demo and args.smoke_test
    assert args.config_dir == Path("/tmp/cfg")
    plain = parse_args([])
    assert plain.project_dir is None and not plain.demo and not plain.smoke_test and plain.config_dir is None
    with pytest.raises(SystemExit):
        parse_args(["--no-such-option"])


def test_config_dir_precedence(tmp_path: Path) -> None:
    env = {"CHATNODES_CONFIG_DIR": str(tmp_path / "env")}
    assert resolve_config_dir(tmp_path / "cli", env) == tmp_path / "cli"
    assert resolve_config_dir(None, env) == tmp_path / "env"
    fallback = resolve_config_dir(None, {})
    assert fallback.name == "chatnodes"


def test_default_project_dir_is_created(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    folder = default_project_dir()
    assert folder.name == "Default project" and folder.is_dir()


def test_demo_context_keeps_the_demo_provider_in_memory(make_context: Any, tmp_path: Path) -> None:
    ctx: AppContext = make_context(demo=True)
    assert ctx.demo and ctx.demo_server is not None
    eff = ctx.effective_settings()
    assert eff.default_provider == "demo" and eff.default_model == DEMO_MODEL
    config = ctx.provider_config(None)
    assert config is not None and config.api == "anthropic"
    assert config.base_url == ctx.demo_server.anthropic_base_url
    ctx.save_settings(eff)  # even saving the effective settings never writes the demo provider
    text = (tmp_path / "config" / "settings.json").read_text(encoding="utf-8")
    assert '"demo"' not in text and "127.0.0.1" not in text
    assert ctx.settings.default_provider == "openai"


def test_scrub_removes_known_and_key_shaped_secrets(make_context: Any, memory_keyring: Any) -> None:
    memory_keyring.passwords[("chatnodes", "anthropic")] = "ant-secret-value-9999"
    ctx: AppContext = make_context(environ={"OPENAI_API_KEY": "env-secret-value-7777"})
    text = ctx.scrub("a ant-secret-value-9999 b env-secret-value-7777 c sk-abcdefghijklmnop d")
    assert text == "a *** b *** c *** d"


def test_tools_are_rooted_at_the_project(make_context: Any, tmp_path: Path) -> None:
    ctx: AppContext = make_context()
    assert ctx.tools_for(object()) == []
    ctx.project_dir = tmp_path
    names = {t.name for t in ctx.tools_for(object())}
    assert {"read_file", "write_file"} <= names


def _smoke(tmp_path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    return subprocess.run(
        [sys.executable, "-m", "desktop", str(tmp_path / "proj"), "--config-dir", str(tmp_path / "cfg"),
         "--smoke-test", *extra],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=60,
    )


def test_smoke_test_exits_zero_after_the_first_paint(tmp_path: Path) -> None:
    result = _smoke(tmp_path)
    assert result.returncode == 0, result.stderr
    assert "first_paint_ms=" in result.stderr
    assert (tmp_path / "proj" / "project.json").is_file()
    assert "Traceback" not in result.stderr


def test_smoke_test_in_demo_mode(tmp_path: Path) -> None:
    result = _smoke(tmp_path, "--demo")
    assert result.returncode == 0, result.stderr
    assert "first_paint_ms=" in result.stderr
    assert not (tmp_path / "cfg" / "settings.json").exists() or \
        '"demo"' not in (tmp_path / "cfg" / "settings.json").read_text(encoding="utf-8")


def test_the_log_filter_scrubs_key_shapes_from_every_record() -> None:
    root = logging.getLogger("chatnodes-test-root")
    root.propagate = False
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.setFormatter(logging.Formatter("%(name)s %(message)s"))
    root.addHandler(handler)
    try:
        installed = install_key_scrub_filter(root)
        assert isinstance(installed, KeyScrubFilter)
        install_key_scrub_filter(root)  # a handler never gets a second filter
        assert len(handler.filters) == 1
        child = logging.getLogger("chatnodes-test-root.child")  # propagates to the root's handler
        child.warning("request with %s failed", "sk-abcdefghijklmnop")
        try:
            raise RuntimeError("echoed gsk_ABCDEFGHIJKL")
        except RuntimeError:
            child.exception("call failed")
        child.error("plain AIza%s", "A" * 30)
    finally:
        root.removeHandler(handler)
    text = out.getvalue()
    assert "request with *** failed" in text
    assert "RuntimeError: echoed ***" in text and "Traceback" in text
    assert "plain ***" in text
    assert "sk-abcdefghijklmnop" not in text and "gsk_ABCDEFGHIJKL" not in text and "AIza" not in text


def test_the_app_injects_the_scrubber_and_the_demo_into_the_context(make_context: Any) -> None:
    ctx: AppContext = make_context()
    assert ctx.scrub("key sk-abcdefghijklmnop") == "key ***"
    assert ctx.demo_offer is not None and ctx.demo_offer.provider_id == "demo"
    assert ctx.demo_offer.model == DEMO_MODEL and DEMO_MODEL in ctx.demo_offer.models
    assert not ctx.demo  # offered, not started


def test_the_screenshot_tool_renders_every_image(tmp_path: Path) -> None:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    result = subprocess.run([sys.executable, "-m", "desktop.screenshots", str(tmp_path)], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    names = {"main-window.png", "main-window-dark.png", "permission-card.png", "settings.png",
             "settings-dark.png", "attachments.png", "canvas.png", "branch-map.png", "search.png",
             "sidebar-closed.png", "import.png"}
    assert {p.name for p in tmp_path.iterdir()} == names
    for name in names:
        assert (tmp_path / name).read_bytes().startswith(b"\x89PNG")
    assert "Traceback" not in result.stderr


def test_a_new_window_puts_the_keyboard_focus_in_the_message_input(qtbot: Any, open_window: Any,
                                                                   tmp_path: Path) -> None:
    window = open_window(tmp_path / "p", tmp_path / "c")
    node = window.nodes()[0]
    assert window.focusWidget() is node.chat_input  # not the title field: first keys type a message
