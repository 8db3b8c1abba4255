"""The MCP SDK (about 1 s to import) is never imported at start-up or by importing desktop.core.mcp."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _modules_after(code: str) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", code + "\nimport sys\nprint('\\n'.join(sorted(sys.modules)))"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
        env={"PYTHONPATH": str(ROOT), "QT_QPA_PLATFORM": "offscreen", "PATH": ""},
    )
    return set(out.stdout.split())


def test_importing_the_package_does_not_import_the_sdk() -> None:
    modules = _modules_after("import desktop.core.mcp")
    assert "desktop.core.mcp" in modules
    assert not {m for m in modules if m == "mcp" or m.startswith(("mcp.", "mcp_types", "httpx2", "anyio"))}
    assert not {m for m in modules if m.startswith(("PySide6", "qasync"))}


def test_the_app_does_not_import_the_mcp_package_at_start_up() -> None:
    modules = _modules_after("import desktop.app")
    assert "desktop.core.mcp" not in modules
    assert "mcp" not in modules
