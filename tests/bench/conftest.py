"""The benchmarks package lives at the repository root and is not installed: make it importable also
when pytest is started as a script (``.venv/bin/pytest``) rather than ``python -m pytest``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

_ROOT = str(Path(__file__).resolve().parents[2])
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)


@pytest.fixture(autouse=True)
def _qapp_from_pytest_qt(qapp: Any) -> None:
    """The session's QApplication is pytest-qt's, made before a benchmark asks for one: a benchmark
    that makes it applies the app's theme (``benchmarks._qt.app_and_loop``), and that app-wide style
    sheet then stayed for every later UI test (a bare ``MarkdownView`` got a 7 px frame and
    ``test_render_perf`` failed in the full suite only)."""
