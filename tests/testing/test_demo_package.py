"""desktop.demo is a product package: self-contained, and what desktop.testing re-exports is the same."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import desktop.demo
import desktop.demo._render
import desktop.testing
import desktop.testing._render
import desktop.testing._spec
import desktop.testing.demo
import desktop.testing.fake_provider

ROOT = Path(__file__).resolve().parents[2]
FORBIDDEN = ("desktop.testing", "desktop.ui", "desktop.app", "PySide6", "qasync")


def test_importing_the_demo_package_pulls_in_no_test_support_ui_or_qt() -> None:
    code = (
        "import json, sys\n"
        "import desktop.demo\n"
        "p = desktop.demo.start_demo_provider(tokens_per_second=None)\n"
        "p.stop()\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60, check=True
    )
    loaded = json.loads(out.stdout)
    assert "desktop.demo._server" in loaded  # the probe really imported the package
    offending = [m for m in loaded if m.startswith(FORBIDDEN)]
    assert offending == []


def test_the_demo_constants_load_without_the_server() -> None:
    code = (
        "import json, sys\n"
        "from desktop.demo import DEMO_FIRST_PROMPT, DEMO_MODEL, DEMO_MODELS, DEMO_PROVIDER_ID\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60, check=True
    )
    loaded = set(json.loads(out.stdout))
    assert "desktop.demo._constants" in loaded
    assert not loaded & {"desktop.demo._server", "desktop.demo._script", "desktop.demo._wire", "asyncio"}


def test_every_public_name_resolves_and_unknown_names_raise() -> None:
    for name in desktop.demo.__all__:
        assert getattr(desktop.demo, name) is not None, name
    assert set(desktop.demo.__all__) <= set(dir(desktop.demo))
    with pytest.raises(AttributeError, match="no_such_name"):
        _ = desktop.demo.no_such_name


def test_no_demo_module_names_a_forbidden_package() -> None:
    for path in sorted((ROOT / "desktop" / "demo").glob("*.py")):
        source = path.read_text("utf-8")
        for name in ("desktop.testing", "desktop.ui", "desktop.app"):
            assert f"import {name}" not in source and f"from {name}" not in source, (path.name, name)


def test_demo_constants() -> None:
    assert desktop.demo.DEMO_PROVIDER_ID == "demo"
    assert desktop.demo.DEMO_MODEL == "claude-sonnet-4-5"
    assert desktop.demo.DEMO_MODEL in desktop.demo.DEMO_MODELS
    assert desktop.demo.DEMO_FIRST_PROMPT == "Hi! Show me what a chat node can do."


def test_testing_reexports_are_the_demo_objects() -> None:
    assert desktop.demo.FakeProvider is desktop.demo.LoopbackProvider
    for module in (
        desktop.testing,
        desktop.testing._spec,
        desktop.testing._render,
        desktop.testing.demo,
        desktop.testing.fake_provider,
    ):
        for name in module.__all__:
            if name == "MemoryKeyring":
                continue  # the one test-only helper
            home = desktop.demo if hasattr(desktop.demo, name) else desktop.demo._render
            assert getattr(module, name) is getattr(home, name), (module.__name__, name)


def test_every_demo_module_stays_under_600_lines() -> None:
    for path in (ROOT / "desktop" / "demo").glob("*.py"):
        assert len(path.read_text("utf-8").splitlines()) <= 600, path.name
