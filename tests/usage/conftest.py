"""The benchmarks package lives at the repository root and is not installed: make it importable here too
(the ledger's 100k-line timing test builds its ledger with ``benchmarks.ledger``)."""

from __future__ import annotations

import sys
from pathlib import Path

_ROOT = str(Path(__file__).resolve().parents[2])
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)
