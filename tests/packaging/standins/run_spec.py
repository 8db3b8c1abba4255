"""Run ``chatnodes.spec`` with recording stand-ins for PyInstaller's spec globals; print what it asked for.

Usage: ``python run_spec.py SPEC`` (the stand-in ``PyInstaller`` package must be on ``sys.path``).
Prints one JSON object: the ``Analysis``, ``EXE`` and ``COLLECT`` arguments.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

calls: dict[str, Any] = {}


class _Analysis:
    def __init__(self, scripts: list[str], **kwargs: Any) -> None:
        calls["Analysis"] = {"scripts": scripts, **kwargs}
        self.binaries: list[tuple[str, str, str]] = []
        self.datas: list[tuple[str, str, str]] = []
        self.pure: list[Any] = []
        self.scripts = scripts


def _recorder(name: str) -> Any:
    def record(*args: Any, **kwargs: Any) -> str:
        calls[name] = kwargs
        return name

    return record


spec = Path(sys.argv[1]).resolve()
namespace = {"__file__": str(spec), "__name__": "__main__", "SPECPATH": str(spec.parent),
             "Analysis": _Analysis, "PYZ": _recorder("PYZ"), "EXE": _recorder("EXE"),
             "COLLECT": _recorder("COLLECT")}
exec(compile(spec.read_text(encoding="utf-8"), str(spec), "exec"), namespace)
print(json.dumps(calls, default=str))
