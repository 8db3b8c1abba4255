"""The core never imports Qt: import desktop.core and every submodule in a clean interpreter."""

from __future__ import annotations

import json
import subprocess
import sys

SCRIPT = r"""
import importlib, json, pkgutil, sys
import desktop.core
names = ["desktop.core"]
for info in pkgutil.walk_packages(desktop.core.__path__, "desktop.core."):
    importlib.import_module(info.name)
    names.append(info.name)
forbidden = sorted(m for m in sys.modules if m.split(".")[0] in {"PySide6", "qasync", "shiboken6"})
print(json.dumps({"imported": names, "forbidden": forbidden}))
"""


def test_core_imports_no_qt() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120, check=False
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    for module in (
        "desktop.core.chat.conversation",
        "desktop.core.chat.cost",
        "desktop.core.chat.loop",
        "desktop.core.chat.runtime",
        "desktop.core.chat.types",
    ):
        assert module in report["imported"]
    assert report["forbidden"] == []
